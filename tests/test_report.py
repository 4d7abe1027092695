"""The report's analysis: encodings, data checks, round-off, checks before the fit."""

import datetime
import json
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from markupsafe import escape
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline

from skdecomp import _report
from skdecomp._report import _common, _figures, _output, _page, _verdict
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
    # a date target is a number too: days since 1970-01-01
    _, when = _report.load_table(path, "when")
    expected = (dates - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
    np.testing.assert_array_equal(when.to_numpy(), np.asarray(expected, dtype=float))
    assert not _report.is_classification(when)
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
    assert "&#39;higher&#39; means &#39;later&#39;" in (out / "index.html").read_text()


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
    assert "Column &#39;id&#39; looks like a row identifier" in checks_section
    assert ("Column &#39;constant&#39; has the same value (1.0) in every row"
            in checks_section)
    assert re.search(r"Column &#39;target_copy&#39; (alone predicts|carries)",
                     checks_section)
    assert checks_section.count('class="warn"') == 3
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
        assert page.count(str(escape(note))) == 1


def test_leak_found_from_attributions_alone():
    # a column that dwarfs the others without predicting the target on its own
    part = {"importance": {"shapley": [0.1, 5.0, 0.2]}, "main_method": "shapley",
            "order": [1, 2, 0], "group_names": ["a", "b", "c"]}
    leak = _verdict._leak_check(part, {"r2": 0.5})
    assert leak is not None and "'b' carries 94% of all attributions, 25 times" in \
        leak["message"]
    part["importance"]["shapley"] = [0.1, 5.0, 0.6]  # only 8 times the next one
    assert _verdict._leak_check(part, {"r2": 0.5}) is None


def test_tiny_sample_warning():
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 3)))
    X.columns = ["a", "b", "c"]
    _, checks = _report.prepare_table(X)
    assert [c["kind"] for c in checks] == ["tiny"]
    _, checks = _report.prepare_table(pd.concat([X] * 3, ignore_index=True))
    assert checks == []


# -- round-off ----------------------------------------------------------------------------
def test_round_off_shows_as_zero():
    assert _page._num(0.0) == "0" and _page._num(1.5e-3) == "0.0015"
    assert _page._pct(0.0) == "0%" and _page._pct(1e-5) == "<0.1%"
    np.testing.assert_array_equal(_common._clean([1e-15, -3e-13, 2e-12, 1.0], 1.0),
                                  [0.0, 0.0, 2e-12, 1.0])
    np.testing.assert_array_equal(_common._clean([1e-9], 1e4), [0.0])


def test_heatmap_of_round_off_is_not_stretched():
    plt = pytest.importorskip("matplotlib.pyplot")
    fig = _figures._heatmap(plt, np.zeros((3, 3)), ["a", "b", "c"], "t", floor=5.0)
    assert fig.axes[0].images[0].get_clim() == (0.0, 5.0)
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert texts == {"0"}
    plt.close(fig)
    fig = _figures._heatmap(plt, np.array([[0, 0.2], [0.2, 0]]), ["a", "b"], "t", floor=5.0)
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
    monkeypatch.setattr(_output, "make_figures", slow_figures)
    start = time.perf_counter()
    code = main(["report", str(path), "--target", "y", "--estimator", "linear",
                 "--out", str(tmp_path / "rep")])
    wall = time.perf_counter() - start
    assert code == 0, capsys.readouterr().err
    seconds = json.loads((tmp_path / "rep" / "results.json").read_text())["seconds"]
    # the report rounds to hundredths of a second
    assert 2.0 <= seconds <= wall + 0.005


def test_long_group_names_are_shortened():
    assert _common._label("a", ["a"]) == "a"
    assert _common._label("g", ["age", "bmi"]) == "age + bmi"
    cols = [f"column_{j}" for j in range(6)]
    assert _common._label("g", cols) == "column_0 + 5 more"
    assert len(_common._label("x" * 50, ["x" * 50])) == 28


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
    fig = _figures._drivers_figure(plt, part)
    bars = fig.axes[0].patches
    assert {to_hex(b.get_facecolor()) for b in bars[:2]} == {method_color("shapley").lower()}
    assert {to_hex(b.get_facecolor()) for b in bars[2:]} == {method_color("occlusion").lower()}
    plt.close(fig)


# -- the analysis is unchanged from the recorded one --------------------------------
#: results the analysis gained after the recording (new sections, not changes)
ADDED_SINCE_RECORDING = {"results['interactions']['index']", "results['regions']",
                         "results['agreed']['path']"} | {
    f"results['partitions'][{key!r}][{name!r}]"
    for key in ("columns", "given", "agreed")
    for name in ("importance_se", "constant_output")
}


def _compare(new, old, path="results"):
    """Same keys and strings; numbers equal up to a relative tolerance."""
    if isinstance(old, dict):
        assert isinstance(new, dict), path
        added = {k for k in set(new) - set(old)
                 if f"{path}[{k!r}]" in ADDED_SINCE_RECORDING}
        assert set(new) - added == set(old), (path, set(new) ^ set(old))
        for key in old:
            _compare(new[key], old[key], f"{path}[{key!r}]")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), path
        for i, (a, b) in enumerate(zip(new, old)):
            _compare(a, b, f"{path}[{i}]")
    elif isinstance(old, float) and not isinstance(new, str):
        assert new == pytest.approx(old, rel=1e-6, abs=1e-9), path
    else:
        assert new == old, path


def _recorded(case):
    import importlib.util

    here = Path(__file__).resolve().parent / "data"
    spec = importlib.util.spec_from_file_location("record", here / "record_report_analysis.py")
    record = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record)
    old = json.loads((here / "report_analysis.json").read_text())[case]
    return record.run(case), old


@pytest.mark.parametrize("case", ["demo", "messy",
                                  pytest.param("blocks", marks=pytest.mark.slow)])
def test_analysis_equals_the_recorded_one(case):
    # recorded by tests/data/record_report_analysis.py before the report was split
    # into its own package; the page changed, the analysis must not
    new, old = _recorded(case)
    _compare(new, old)


# -- hostile names are escaped and inert -----------------------------------------------
HOSTILE = ["<script>alert(1)</script>", "\"quoted\" 'single'", "{braces}", "{{ 7*7 }}",
           "{% if 1 %}jinja{% endif %}", "<img src=x onerror=alert(2)>"]


class _ProductModel(RegressorMixin, BaseEstimator):
    """A fitted model of the first two columns' product plus a small sum of the rest."""

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X):
        a = np.asarray(X, dtype=float)
        return 4.0 * a[:, 0] * a[:, 1] + 0.3 * a[:, 2:].sum(axis=1)


def test_hostile_column_names_are_escaped_and_inert():
    from html.parser import HTMLParser

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(120, len(HOSTILE))), columns=HOSTILE)
    y = pd.Series(X.iloc[:, 0] * X.iloc[:, 1] + X.iloc[:, 2], name="{{ target }}<b>")
    res = analyse(X, y, estimator="linear", n_rows=5, background=20, log=quiet,
                  groups={"<script>g</script>": HOSTILE[:2], "{{ 7*7 }}": HOSTILE[2:]})
    res["seconds"] = 1.0
    res["checks"].append({"kind": "id", "level": "warning", "columns": [HOSTILE[0]],
                          "message": f"Column {HOSTILE[0]} ... --drop {HOSTILE[0]}."})
    page = _report.render_html(res, {}, title="<script>t</script> {{ 7*7 }}")

    class Elements(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.handlers = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.handlers += [k for k, _ in attrs if k.startswith("on")]

    parsed = Elements()
    parsed.feed(page)
    assert "script" not in parsed.tags and parsed.handlers == []
    assert parsed.tags.count("img") == 0  # no figures were given
    for name in HOSTILE:
        assert name not in page or not set(name) & set("<>\"'&"), name
        assert str(escape(name)) in page, name
    # Jinja syntax in the data is text, never evaluated
    assert "{{ 7*7 }}" in page and "{% if 1 %}jinja{% endif %}" in page
    assert "&lt;script&gt;t&lt;/script&gt; {{ 7*7 }}" in page
    assert "{{ target }}&lt;b&gt;" in page
    # the --drop hint is code, its column escaped inside it
    assert "<code>--drop &lt;script&gt;alert(1)&lt;/script&gt;</code>" in page


def test_page_and_figures_read_only_the_results():
    # the same results give the same page: no model, no state
    res = json.loads((Path(__file__).parent / "data" / "report_analysis.json").read_text())
    res = dict(res["blocks"], seconds=2.0)
    assert _report.render_html(res, {}) == _report.render_html(json.loads(json.dumps(res)), {})


def test_agreed_section_words_for_one_and_many_columns_left():
    from skdecomp._report._page import page_context

    res = json.loads((Path(__file__).parent / "data" / "report_analysis.json").read_text())
    res = dict(res["blocks"], seconds=2.0)
    page = _report.render_html(res, {})
    assert "The other 2 columns stay on their own." in page
    a = dict(res["agreed"], groups=[["x0", "x1"], ["x2", "x3", "x4"], ["x5"]], n_groups=3)
    page = _report.render_html(dict(res, agreed=a), {})
    assert "The other column stays on its own." in page
    assert "The other 1 columns" not in page
    a = dict(a, groups=[["x0", "x1"], ["x2", "x3"], ["x4", "x5"]])
    page = _report.render_html(dict(res, agreed=a), {})
    assert "stay on their own" not in page and "stays on its own" not in page
    sections = [s["id"] for s in page_context(res)["sections"]]
    assert sections == ["data-checks", "verdict", "model", "drivers", "agreement",
                        "sources", "interactions", "regions", "agreed"]


def test_headline_disagreement_is_named_as_the_root_mean_square_it_is():
    res = json.loads((Path(__file__).parent / "data" / "report_analysis.json").read_text())
    part = res["demo"]["partitions"]["columns"]
    rms = np.asarray(part["disagreement_rms"])
    upper = rms[np.triu_indices(len(rms), 1)]
    # the headline is the root mean square over pairs, not their mean
    assert part["mean_disagreement_rms"] == pytest.approx(np.sqrt(np.mean(upper**2)))
    assert part["mean_disagreement_rms"] > upper.mean() + 0.01
    page = _report.render_html(dict(res["demo"], seconds=1.0), {})
    assert "averaged over pairs of methods" not in page
    assert "root\nmean square over the rows and over the pairs of methods" in page
    i, j = np.unravel_index(np.argmax(np.triu(rms, 1)), rms.shape)
    assert f"by {100 * rms[i, j]:.1f}%" in page


def test_merge_chart_draws_both_curves_visibly():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    res = json.loads((Path(__file__).parent / "data" / "report_analysis.json").read_text())
    fig = _figures._agreed_curve(plt, res["blocks"]["agreed"])
    sample, held_out = [line for line in fig.axes[0].get_lines()
                        if line.get_label().startswith("on ")]
    assert sample.get_label() == "on the sample"
    # the in-sample line lies on top, the held-out one is dashed with open markers
    # larger than the in-sample ones, so where they coincide both are seen
    assert sample.get_zorder() > held_out.get_zorder()
    assert held_out.get_linestyle() == "--" and sample.get_linestyle() == "-"
    assert held_out.get_markerfacecolor() == "none"
    assert held_out.get_markersize() > sample.get_markersize()
    plt.close(fig)


def test_wide_table_one_merge_away_is_not_explained_twice(monkeypatch):
    from skdecomp._report import _analysis

    rng = np.random.default_rng(0)
    p = _common.WIDE_COLUMNS + 1
    X = pd.DataFrame(rng.uniform(-1, 1, size=(200, p)), columns=[f"c{j}" for j in range(p)])
    model = _ProductModel().fit(X)
    y = pd.Series(model.predict(X), name="y")
    calls = []
    explain = _analysis._explain_partition

    def counting(*args, **kwargs):
        calls.append(kwargs["what"])
        return explain(*args, **kwargs)

    monkeypatch.setattr(_analysis, "_explain_partition", counting)
    res = analyse(X, y, model=model, n_rows=3, background=10, log=quiet)
    assert res["agreed"]["groups"][0] == ["c0", "c1"]
    assert res["agreed"]["n_groups"] == p - 1
    assert calls == ["one group per column"]
    assert "agreed" not in res["partitions"]
    assert "AGREED merged only 'c0' and 'c1'" in " ".join(res["verdict"])
    page = _report.render_html(dict(res, seconds=1.0), {})
    assert "not explained a\nsecond time" in page


def test_every_template_is_package_data():
    # a non-editable install ships what pyproject.toml lists as package data
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["skdecomp._report"]
    folder = root / "skdecomp" / "_report"
    files = [p.relative_to(folder).as_posix() for p in (folder / "templates").rglob("*")
             if p.is_file()]
    assert len(files) >= 9
    listed = {p.relative_to(folder).as_posix() for pat in patterns for p in folder.glob(pat)}
    missing = [f for f in files if f not in listed]
    assert not missing, missing
    assert any(d.startswith("jinja2") for d in config["project"]["dependencies"])


# -- regions and the interaction index -------------------------------------------------
@pytest.mark.slow
def test_regions_section_when_regions_help():
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skdecomp._report._explain import _regions

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, (400, 3)), columns=["a", "b", "c"])
    y = X.a * np.sign(X.b) + X.c
    res = analyse(X, y, estimator="linear", n_rows=5, background=20, log=quiet)
    res["seconds"] = 1.0
    model = HistGradientBoostingRegressor(max_iter=40, random_state=0).fit(X, y)
    regions = _regions(model, X, True, background=20, random_state=0, n_jobs=None,
                       target=None, response_method="auto")
    # the FD-Tree splits on b near 0 and removes most of the PDP-PFI gap
    assert regions["n_regions"] >= 2 and regions["rules"][0].startswith("b <=")
    assert regions["share_left"] < 0.3
    res["regions"] = regions
    page = _report.render_html(res, {}, title="t")
    section = page[page.index('<section id="regions">'):]
    section = section[: section.index("</section>")]
    assert "b &lt;=" in section and _page._pct(regions["share_left"]) in section
    # regions that leave most of the loss are not shown
    res["regions"] = dict(regions, share_left=0.9)
    assert 'id="regions"' not in _report.render_html(res, {}, title="t")


@pytest.mark.slow
def test_interaction_index_in_the_report_adds_up():
    # k-SII of order 2 at the explained rows: the terms add up to the prediction
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 4)), columns=["a", "b", "c", "d"])
    y = X.a * X.b + X.c
    res = analyse(X, y, estimator="hgb", groups=None, n_rows=4, background=10, log=quiet)
    index = res["interactions"]["index"]
    assert index["index"] == "k-SII" and index["terms"][0] == []
    values = np.asarray(index["values"])
    part = res["partitions"]["columns"]
    # efficient: the terms (the base value first) add up to the explained prediction,
    # which the Shapley values of the same rows also add up to
    np.testing.assert_allclose(values.sum(axis=1), part["prediction"], atol=1e-8)
    np.testing.assert_allclose(values[:, 0], part["expected_value"], atol=1e-8)
    figures = _figures.make_figures(res)
    assert "interaction_terms" in figures
    page = _report.render_html(dict(res, seconds=1.0), figures, title="t")
    assert 'data-figure="interaction_terms"' in page and "k-SII" in page


def test_data_checks_flag_renamed_duplicate_headers(tmp_path):
    rng = np.random.default_rng(0)
    body = "\n".join(",".join(map(str, rng.integers(0, 9, 4))) for _ in range(30))
    path = tmp_path / "dup.csv"
    path.write_text("a,b,a,y\n" + body + "\n")
    X, _ = _report.load_table(path, "y")
    assert list(X.columns) == ["a", "b", "a.1"]
    _, checks = _report.prepare_table(X, fit=True)
    found = [c for c in checks if c["kind"] == "duplicate_names"]
    assert len(found) == 1 and found[0]["columns"] == ["a", "a.1"]
    assert "repeats column names" in found[0]["message"]
    # a header without repeats gives no such check
    path.write_text("a,b,c,y\n" + body + "\n")
    _, checks = _report.prepare_table(_report.load_table(path, "y")[0], fit=True)
    assert not [c for c in checks if c["kind"] == "duplicate_names"]


# -- where the disagreement comes from -----------------------------------------------
def _recording():
    path = Path(__file__).parent / "data" / "report_analysis.json"
    return json.loads(path.read_text())


def _section(page, name):
    start = page.index(f'<section id="{name}">')
    return page[start: page.index("</section>", start)]


def test_sources_section_of_the_demo_shows_the_numbers_of_the_results():
    res = dict(_recording()["demo"], seconds=1.0)
    src = res["sources"]
    from skdecomp._report._explain import _source_rows

    # 10 columns on the tree path: 70 rows keep the draws within the budget
    assert src["columns"] == res["columns"]
    assert src["n_rows"] == _source_rows(10, res["n_fit_rows"], tree=True) == 70
    for key in ("interaction", "dependence"):
        per = np.asarray(src[f"{key}_per_column"])
        assert per.min() >= 0 and per.sum() == pytest.approx(src[key])
        assert sum(src[f"{key}_parts"]) == pytest.approx(1.0)
        top = [c["column"] for c in src[f"top_{key}"]]
        assert top == [src["columns"][k] for k in np.argsort(-per, kind="stable")[:3]]
    # the diabetes columns s1..s6 are strongly dependent: far above the noise
    assert src["dependence"] > 5 * src["dependence_noise"] > 0
    figures = _figures.make_figures(res)
    page = _report.render_html(res, figures)
    sections = [s["id"] for s in _page.page_context(res)["sections"]]
    assert sections.index("sources") == sections.index("agreement") + 1
    section = _section(page, "sources")
    assert "<h3>Where the disagreement comes from</h3>" in section
    assert f"on\n{src['n_rows']} rows" in section or f"on {src['n_rows']} rows" in section
    assert "The game matters more than the method." in section
    assert 'Explainer(model, imputer="conditional")' in section
    assert 'AdaptiveGrouper(model, imputer="conditional")' in section
    assert 'data-figure="sources"' in section


def test_sources_rows_shrink_for_wide_tables_and_model_calls():
    from skdecomp._report._explain import _source_rows

    assert _source_rows(2, 332, tree=True) == _common.SOURCE_ROWS
    assert _source_rows(2, 50, tree=True) == 50
    assert _source_rows(10, 332, tree=False) < _common.SOURCE_ROWS
    assert _source_rows(40, 332, tree=True) < _source_rows(10, 332, tree=True)
    assert _source_rows(10_000, 332, tree=False) == _common.SOURCE_MIN_ROWS
    for K in (1, 10, 40, 200):
        N = _source_rows(K, 10_000, tree=False)
        assert (N == _common.SOURCE_MIN_ROWS
                or 4 * K * N**2 <= _common.SOURCE_EVALUATIONS)


def test_agreed_section_says_what_the_next_coarser_partitions_buy():
    res = dict(_recording()["demo"], seconds=1.0)
    path = res["agreed"]["path"]
    # the demo keeps the ten columns; the path goes on to one group
    assert [p["n_groups"] for p in path][:2] == [10, 9] and path[0]["chosen"]
    assert path[-1]["n_groups"] == 1 and path[-1]["remaining_share"] == pytest.approx(0)
    steps = _page._path_steps(res["agreed"])
    assert [s["words"] for s in steps] == ["cut the disagreement left in half",
                                           "cut it to a tenth"]
    for s, target in zip(steps, (0.5, 0.1)):
        hit = next(p for p in path[1:] if p["remaining_share"] <= target)
        assert (s["n_groups"], s["largest"]) == (hit["n_groups"], hit["largest_group"])
        assert s["merges"][0] == " + ".join(path[1]["merged"])
        assert len(s["merges"]) + s["more"] == 10 - hit["n_groups"]
    section = _section(_report.render_html(res, _figures.make_figures(res)), "agreed")
    assert "next merges would buy:" in section
    assert f"{steps[0]['n_groups']} groups, the\nlargest of {steps[0]['largest']}" in section
    assert 'data-figure="agreed_path"' in section
    # a partition that leaves nothing has nothing to buy
    done = dict(res["agreed"], path=[dict(p, chosen=p["n_groups"] == 1) for p in path])
    assert _page._path_steps(done) == []


def test_infinite_values_are_read_as_missing_with_a_warning():
    X = pd.DataFrame({"a": [1.0, np.inf, 3.0, -np.inf] * 10, "b": np.arange(40.0)})
    out, checks = _report.prepare_table(X, fit=True)
    assert out["a"].isna().sum() == 20 and np.isfinite(out["a"].dropna()).all()
    assert X["a"].isin([np.inf, -np.inf]).sum() == 20  # the caller's frame is unchanged
    check = next(c for c in checks if c["kind"] == "infinite")
    assert check["columns"] == ["a"] and "'a' (20)" in check["message"]
