"""The report's analysis: encodings, data checks, round-off, checks before the fit."""

import datetime
import json
import re
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline

from skdecomp import _report
from skdecomp.__main__ import main
from skdecomp._report import DataError, analyse
from skdecomp.datasets import make_mixed_table


def quiet(*args):
    pass


@pytest.fixture
def fit_forbidden(monkeypatch):
    """Fail the test if any pipeline is fitted."""

    def forbidden(self, *args, **kwargs):
        raise AssertionError("a model was fitted before the arguments were checked")

    monkeypatch.setattr(Pipeline, "fit", forbidden)


# -- arguments are checked before any fit ------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(estimator="xgb"), "unknown estimator 'xgb'"),
        (dict(methods=["shap"]), "unknown methods ['shap']"),
        (dict(n_rows=0), "n_rows must be a positive integer"),
        (dict(drop=["nope"]), "--drop names column 'nope' not in the table"),
        (dict(groups=[["a"], ["a", "b"]]), "groups overlap"),
        (dict(groups="clusters"), "groups must be 'auto', 'columns'"),
        (dict(test_size=1.5), "test_size must be between 0 and 1"),
        (dict(methods=["shapley"], estimator="linear"), "at most 16"),
    ],
)
def test_arguments_refused_before_fit(kwargs, message, fit_forbidden):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    if kwargs.get("methods") == ["shapley"]:
        X = pd.DataFrame(rng.normal(size=(40, 20)), columns=[f"x{j}" for j in range(20)])
    with pytest.raises(DataError) as info:
        analyse(X, pd.Series(rng.normal(size=40), name="y"), log=quiet, **kwargs)
    assert message in str(info.value)


def test_constant_target_refused_before_fit(fit_forbidden):
    X = pd.DataFrame({"a": np.arange(30.0)})
    with pytest.raises(DataError, match="same value"):
        analyse(X, pd.Series([1.0] * 30, name="y"), log=quiet)


def test_exact_methods_allowed_on_wide_tables_for_tree_models():
    X = pd.DataFrame(np.zeros((5, 40)))
    _report.check_exact_limit(["shapley"], X, "auto", tree=True)  # 40 <= 62
    with pytest.raises(DataError, match="at most 16"):
        _report.check_exact_limit(["shapley"], X, "auto", tree=False)
    # occlusion and PDP need 2K coalitions only: any number of columns
    _report.check_exact_limit(["occlusion", "arch"], X, "auto", tree=False)


def test_cli_drop_of_unknown_column_is_an_error_before_fit(tmp_path, capsys, fit_forbidden):
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": np.arange(30.0), "y": np.arange(30.0) % 7}).to_csv(path, index=False)
    code = main(["report", str(path), "--target", "y", "--drop", "nope",
                 "--out", str(tmp_path / "rep")])
    err = capsys.readouterr().err
    assert code == 1
    assert "--drop names column 'nope'" in err and "Traceback" not in err
    assert not (tmp_path / "rep").exists()


# -- dates -----------------------------------------------------------------------------
def test_year_first_text_is_read_as_dates():
    text = pd.Series(["2021-03-04", "2021/03/05", None, "2021-03-06 12:30",
                      "2021-03-07T00:00:00Z"])
    dates = _report.parse_dates_of(text)
    assert dates is not None and dates.isna().tolist() == [False, False, True, False, False]
    days = _report.days_since_epoch(dates)
    epoch = datetime.date(1970, 1, 1)
    expected = [(datetime.date(2021, 3, d) - epoch).days for d in (4, 5)]
    assert days.iloc[:2].tolist() == expected
    assert days.iloc[3] == pytest.approx(expected[1] + 1.5 + 0.5 / 24)
    for other in (["03/04/2021", "2021-03-04"], ["2021Q1", "2021Q2"], ["a", "b"],
                  ["2021-13-45"]):
        assert _report.parse_dates_of(pd.Series(other)) is None


def test_date_column_becomes_days_and_its_trend_is_found(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 300
    day = rng.integers(0, 1500, size=n)
    dates = pd.Timestamp("2019-01-01") + pd.to_timedelta(day, unit="D")
    df = pd.DataFrame({
        "when": dates.strftime("%Y-%m-%d"),
        "noise": rng.normal(size=n),
        "y": day / 365.0 + 0.5 * rng.normal(size=n),
    })
    path = tmp_path / "dates.csv"
    df.to_csv(path, index=False)
    X, _ = _report.load_table(path, "y")
    assert pd.api.types.is_datetime64_any_dtype(X["when"])
    out = tmp_path / "rep"
    code = main(["report", str(path), "--target", "y", "--estimator", "linear",
                 "--groups", "columns", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    res = json.loads((out / "results.json").read_text())
    dates_check = [c for c in res["checks"] if c["kind"] == "dates"]
    assert dates_check and dates_check[0]["columns"] == ["when"]
    part = res["partitions"]["columns"]
    k = part["group_names"].index("when")
    assert part["order"][0] == k
    assert part["direction"][k].startswith("higher values raise the prediction")
    # a linear model of the days: the attribution of 'when' rises by about 1/365
    # a day, the slope of the target
    phi = np.asarray(part["attributions"]["shapley"])[:, k]
    days = day[np.asarray(part["row_ids"])]
    slope = np.polyfit(days, phi, 1)[0]
    assert slope == pytest.approx(1 / 365.0, rel=0.1)
    assert np.corrcoef(days, phi)[0, 1] > 0.999
    assert "&#x27;higher&#x27; means &#x27;later&#x27;" in (out / "index.html").read_text()


def test_a_given_model_keeps_date_text_as_it_is(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"d": ["2020-01-01"] * 20, "y": np.arange(20.0)}).to_csv(path, index=False)
    X, _ = _report.load_table(path, "y", parse_dates=False)
    assert isinstance(X["d"].dtype, pd.CategoricalDtype)


# -- data checks -----------------------------------------------------------------------
def test_identifier_detection():
    n = 50
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        "rownames": np.arange(1, n + 1),                       # monotone index
        "customer": [f"c{i}" for i in rng.permutation(n)],     # unique text
        "code": rng.permutation(n) + 1000,                     # shuffled compact ids
        "income": rng.integers(10_000, 90_000, size=n),        # unique, spread out
        "height": rng.normal(size=n),                          # continuous floats
        "age": rng.integers(20, 30, size=n),                   # repeats
    })
    _, checks = _report.prepare_table(X)
    flagged = sorted(c["columns"][0] for c in checks if c["kind"] == "id")
    assert flagged == ["code", "customer", "rownames"]


def test_constant_columns_are_left_out_and_flagged():
    X = pd.DataFrame({"a": np.arange(30.0), "same": 2.0, "never": np.nan})
    kept, checks = _report.prepare_table(X)
    assert list(kept.columns) == ["a"]
    messages = {c["columns"][0]: c["message"] for c in checks if c["kind"] == "constant"}
    assert "same value (2.0) in every row" in messages["same"]
    assert "is always missing" in messages["never"]
    with pytest.raises(DataError, match="every column has the same value"):
        _report.prepare_table(X[["same"]])


def test_report_html_shows_all_three_data_warnings(tmp_path, capsys):
    data = make_mixed_table(300, n_categorical=12, id_column=True, constant_column=True,
                            leak=True, random_state=0)
    path = tmp_path / "bad.csv"
    data.frame.to_csv(path, index=False)
    out = tmp_path / "rep"
    code = main(["report", str(path), "--target", "y", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    page = (out / "index.html").read_text()
    checks_section = page.split("<h2>Data checks</h2>")[1].split("<h2>")[0]
    assert "Column &#x27;id&#x27; looks like a row identifier" in checks_section
    assert ("Column &#x27;constant&#x27; has the same value (1.0) in every row"
            in checks_section)
    assert re.search(r"Column &#x27;target_copy&#x27; (alone predicts|carries)",
                     checks_section)
    assert checks_section.count("class='warn'") == 3
    res = json.loads((out / "results.json").read_text())
    assert "constant" not in res["columns"] and "id" in res["columns"]
    # the leaked copy dominates the attributions, as the warning says
    part = res["partitions"]["columns"]
    assert part["group_names"][part["order"][0]] == "target_copy"
    # the same warnings are printed by the command line
    assert err.count("warning: ") == 3
    # 23 columns: the tables show 15 and count the rest
    assert "and 8 more columns, not shown" in page
    for note in res["notes"]:
        assert page.count(_report._e(note)) == 1


def test_leak_found_from_attributions_alone():
    # a column that dwarfs the others without predicting the target on its own
    part = {"importance": {"shapley": [0.1, 5.0, 0.2]}, "main_method": "shapley",
            "order": [1, 2, 0], "group_names": ["a", "b", "c"]}
    leak = _report._leak_check(part, {"r2": 0.5})
    assert leak is not None and "'b' carries 94% of all attributions, 25 times" in \
        leak["message"]
    part["importance"]["shapley"] = [0.1, 5.0, 0.6]  # only 8 times the next one
    assert _report._leak_check(part, {"r2": 0.5}) is None


def test_tiny_sample_warning():
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 3)))
    X.columns = ["a", "b", "c"]
    _, checks = _report.prepare_table(X)
    assert [c["kind"] for c in checks] == ["tiny"]
    _, checks = _report.prepare_table(pd.concat([X] * 3, ignore_index=True))
    assert checks == []


# -- round-off ----------------------------------------------------------------------------
def test_round_off_shows_as_zero():
    assert _report._num(0.0) == "0" and _report._num(1.5e-3) == "0.0015"
    assert _report._pct(0.0) == "0%" and _report._pct(1e-5) == "<0.1%"
    np.testing.assert_array_equal(_report._clean([1e-15, -3e-13, 2e-12, 1.0], 1.0),
                                  [0.0, 0.0, 2e-12, 1.0])
    np.testing.assert_array_equal(_report._clean([1e-9], 1e4), [0.0])


def test_heatmap_of_round_off_is_not_stretched():
    plt = pytest.importorskip("matplotlib.pyplot")
    fig = _report._heatmap(plt, np.zeros((3, 3)), ["a", "b", "c"], "t", floor=5.0)
    assert fig.axes[0].images[0].get_clim() == (0.0, 5.0)
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert texts == {"0"}
    plt.close(fig)
    fig = _report._heatmap(plt, np.array([[0, 0.2], [0.2, 0]]), ["a", "b"], "t", floor=5.0)
    assert fig.axes[0].images[0].get_clim() == (0.0, 20.0)
    plt.close(fig)


def test_additive_model_report_has_no_round_off_numbers():
    # a linear model has no interactions: every exact method gives
    # coef_j * (x_j - mean of the background), and the AGREED loss is round-off
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 4)), columns=["a", "b", "c", "d"])
    y = pd.Series(X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.normal(size=200),
                  name="y")
    model = LinearRegression().fit(X, y)
    res = analyse(X, y, model=model, background=200, n_rows=10, log=quiet)
    part = res["partitions"]["columns"]
    expected = model.coef_ * (X.iloc[:10].to_numpy() - X.to_numpy().mean(axis=0))
    for m in ("shapley", "banzhaf", "occlusion", "arch"):
        np.testing.assert_allclose(part["attributions"][m], expected, atol=1e-10)
    assert part["mean_disagreement_rms"] == 0.0
    assert np.all(np.asarray(part["disagreement_rms"]) == 0.0)
    assert res["agreed"]["initial_loss"] == 0.0 and res["agreed"]["no_interactions"]
    page = _report.render_html(res, _report.make_figures(res))
    text = re.sub(r"<img[^>]*>", "", page)
    assert not re.search(r"\d\.?\d*e-\d", text)
    assert "agree exactly (up to round-off)" in text
    assert "no interactions between columns" in text


# -- timing and labels -------------------------------------------------------------
def test_report_time_is_the_wall_time_of_the_whole_run(tmp_path, capsys, monkeypatch):
    path = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120),
                  "y": rng.normal(size=120)}).to_csv(path, index=False)
    load, figures = _report.load_table, _report.make_figures

    def slow_load(*args, **kwargs):
        time.sleep(1.0)
        return load(*args, **kwargs)

    def slow_figures(*args, **kwargs):
        time.sleep(1.0)
        return figures(*args, **kwargs)

    monkeypatch.setattr(_report, "load_table", slow_load)
    monkeypatch.setattr(_report, "make_figures", slow_figures)
    start = time.perf_counter()
    code = main(["report", str(path), "--target", "y", "--estimator", "linear",
                 "--out", str(tmp_path / "rep")])
    wall = time.perf_counter() - start
    assert code == 0, capsys.readouterr().err
    seconds = json.loads((tmp_path / "rep" / "results.json").read_text())["seconds"]
    # the report rounds to hundredths of a second
    assert 2.0 <= seconds <= wall + 0.005


def test_long_group_names_are_shortened():
    assert _report._label("a", ["a"]) == "a"
    assert _report._label("g", ["age", "bmi"]) == "age + bmi"
    cols = [f"column_{j}" for j in range(6)]
    assert _report._label("g", cols) == "column_0 + 5 more"
    assert len(_report._label("x" * 50, ["x" * 50])) == 28


# -- every estimator on a messy table -----------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("estimator", ["hgb", "rf", "linear", "mlp"])
def test_every_estimator_on_a_mixed_table(estimator, task, tmp_path, capsys):
    data = make_mixed_table(300, n_categorical=12, task=task, random_state=0)
    path = tmp_path / "mixed.csv"
    data.frame.to_csv(path, index=False)
    out = tmp_path / "rep"
    code = main(["report", str(path), "--target", "y", "--estimator", estimator,
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    res = json.loads((out / "results.json").read_text())
    assert res["columns"] == list(data.data.columns)
    assert res["score"]["held_out"] and res["score"]["n_rows"] == 75
    part = res["partitions"]["columns"]
    # tree models keep the exact tree path through their encodings
    assert part["algorithm"].startswith("tree" if estimator in ("hgb", "rf")
                                        else "model_agnostic")
    # efficiency: the Shapley values (exact or estimated) of a row add up to its
    # output minus the average output
    phi = np.asarray(part["attributions"][part["main_method"]])
    gap = np.asarray(part["prediction"]) - part["expected_value"]
    np.testing.assert_allclose(phi.sum(axis=1), gap, atol=1e-8 * part["output_spread"])
    assert phi.shape == (50, 21)
    # the model found some of the columns the target depends on
    top = [part["group_names"][k] for k in part["order"][:3]]
    assert set(top) & set(data.informative_columns), top
    assert "data:image/png;base64," in (out / "index.html").read_text()


def test_report_draws_each_method_in_its_display_colour():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from skdecomp.plot import method_color

    part = {"order": [0, 1], "methods": ["shapley", "occlusion"], "n_rows": 5,
            "group_labels": ["a", "b"],
            "importance": {"shapley": [2.0, 1.0], "occlusion": [3.0, 0.5]}}
    fig = _report._drivers_figure(plt, part)
    bars = fig.axes[0].patches
    assert {to_hex(b.get_facecolor()) for b in bars[:2]} == {method_color("shapley").lower()}
    assert {to_hex(b.get_facecolor()) for b in bars[2:]} == {method_color("occlusion").lower()}
    plt.close(fig)
