"""Hardening: shap's plots of hierarchical explanations, budgets beyond memory, report words.

Each test reproduces a finding and shows it fixed:

1. ``Explanation.to_shap()`` of Owen/Winter values (and of their cuts, down to
   one node) gives a ``shap.Explanation`` that ``shap.plots.bar`` and
   ``shap.plots.waterfall`` draw: shap keeps one clustering per row.
2. A budget of a sampled method that cannot fit in the working memory is
   refused at once, naming the largest budget that fits, and that one runs.
3. ``skdecomp report --methods shapley`` (one method) works.
4. The report never calls an undefined R² good (values near 1e300 are refused
   up front), and never gives shares of a constant output's round-off.
5. ``--drop`` of the target says that the target is never a feature.
"""

import html
import json
import re
import time

import numpy as np
import pandas as pd
import pytest
from sklearn import config_context

from skdecomp import Explainer
from skdecomp.__main__ import main

# -- 1. to_shap of every kind of explanation draws with shap's plots ---------------------


def f(X):
    X = np.asarray(X, dtype=float)
    return (X[:, 0] * X[:, 1] + X[:, 1] * X[:, 3] + np.sin(X[:, 2] * X[:, 4])
            + X[:, 5] ** 2 * X[:, 0] + 0.5 * X[:, 6] * X[:, 7] * X[:, 2])


@pytest.fixture(scope="module")
def data():
    X = np.random.default_rng(0).normal(size=(60, 8))
    return X


@pytest.fixture
def plots():
    shap = pytest.importorskip("shap")
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield shap, plt
    plt.close("all")


def _heights(hierarchy):
    """Height of every node: 0 for the players, one more than its highest child."""
    h = np.zeros(hierarchy.n_nodes)
    for a, ch in enumerate(hierarchy.children, start=hierarchy.n_players):
        h[a] = max(h[c] for c in ch) + 1
    return h


def _lowest_common_height(hierarchy, i, j):
    h = _heights(hierarchy)
    above_i = set(hierarchy.ancestors(i))
    return next(h[a] for a in hierarchy.ancestors(j) if a in above_i)


def _draw(shap, plt, expl):
    """Draw ``expl.to_shap()`` with shap's bar and waterfall plots, whole and by row."""
    e = expl.to_shap()
    n = np.shape(expl.values)[0]
    shap.plots.bar(e, show=False)
    plt.close("all")
    shap.plots.bar(e, show=False, clustering_cutoff=10.0)  # the whole tree drawn
    plt.close("all")
    for r in range(n):
        shap.plots.waterfall(e[r], show=False)
        plt.close("all")
        shap.plots.bar(e[r], show=False)
        plt.close("all")
    one = expl[n - 1].to_shap()  # a selection of one row
    shap.plots.waterfall(one, show=False)
    plt.close("all")
    shap.plots.bar(one, show=False)
    plt.close("all")
    return e


HIERARCHIES = {
    "binary": [[[0, 1], [2, 3]], [[4, 5], [6, 7]]],
    "unbalanced": [[0, [1, 2]], [3], [[4, 5], 6, 7]],
    "non-binary deep": [[[0, 1, 2], [3, 4]], [5, [6, 7]]],
}


@pytest.mark.parametrize("method, n_samples", [
    ("shapley", None), ("banzhaf", None), ("occlusion", None), ("arch", None),
    ("kernel_shap", 64), ("permutation_shap", 56), ("lime", 64), ("rise", 64),
])
def test_to_shap_of_flat_explanations_draws(data, plots, method, n_samples):
    shap, plt = plots
    X = data
    expl = Explainer(f, background=X[:5], n_samples=n_samples, random_state=0).fit(
        X).explain(X[10:13], methods=[method])[method]
    e = _draw(shap, plt, expl)
    assert e.clustering is None
    np.testing.assert_array_equal(e.values, expl.values)


@pytest.mark.parametrize("name", list(HIERARCHIES))
@pytest.mark.parametrize("n_samples, estimator", [(None, "permutation"), (56, "permutation"),
                                                  (12, "partition")],
                         ids=["exact", "sampled", "partition"])
def test_to_shap_of_owen_values_at_every_cut_draws(data, plots, name, n_samples, estimator):
    from scipy.cluster.hierarchy import cophenet, is_monotonic, is_valid_linkage

    from skdecomp._methods._owen import owen_coalition_count

    shap, plt = plots
    X = data
    explainer = Explainer(f, background=X[:4], method="owen", hierarchy=HIERARCHIES[name],
                          n_samples=n_samples, random_state=0,
                          method_params={"estimator": estimator}).fit(X)
    res = explainer.explain(X[10:13], methods=["owen"])["owen"]
    sampled = n_samples is not None and owen_coalition_count(explainer.hierarchy_) > n_samples
    assert (res.standard_errors is not None) == (sampled and estimator == "permutation")
    sizes = res.hierarchy.cut_sizes()
    assert sizes[0] == 1 and sizes[-1] == 8
    for n_groups in sizes:
        cut = res.at_level(n_groups)
        before = cut.values.copy()
        e = _draw(shap, plt, cut)
        np.testing.assert_array_equal(cut.values, before)  # nothing written
        np.testing.assert_allclose(e.values.sum(axis=1), res.values.sum(axis=1),
                                   atol=1e-10)
        if n_groups == 1:  # one node: nothing to merge
            assert e.clustering is None
            continue
        C = np.asarray(e.clustering)
        assert C.shape == (3, n_groups - 1, 4)  # one linkage per row, as shap keeps it
        for Z in C:
            assert is_valid_linkage(Z) and is_monotonic(Z)
        # the cophenetic distance of two groups is the height of their lowest
        # common node in the (pruned) hierarchy, many children or two
        h = cut.hierarchy
        d = cophenet(C[0])
        pairs = [(i, j) for i in range(n_groups) for j in range(i + 1, n_groups)]
        np.testing.assert_array_equal(
            d, [_lowest_common_height(h, i, j) for i, j in pairs])


def test_to_shap_of_one_node_and_of_one_row(data, plots):
    shap, plt = plots
    X = data
    res = Explainer(f, background=X[:4], method="owen",
                    hierarchy=HIERARCHIES["binary"]).fit(X).explain(
        X[:2], methods=["owen"])["owen"]
    top = res.at_level(1)
    e = top.to_shap()
    assert e.values.shape == (2, 1) and e.clustering is None
    shap.plots.bar(e, show=False)
    plt.close("all")
    shap.plots.waterfall(e[0], show=False)
    plt.close("all")
    one = res[0].to_shap()
    assert np.asarray(one.clustering).shape == (7, 4)  # one row: one linkage


# -- 2. budgets beyond the working memory are refused before any work -------------------
K = 40


@pytest.fixture(scope="module")
def wide():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, K))
    w = rng.normal(size=K)
    calls = []

    def model(Z):
        calls.append(len(Z))
        Z = np.asarray(Z)
        return Z @ w + Z[:, 0] * Z[:, 1]

    return X, model, calls


def _largest(message):
    m = re.search(r"largest budget that fits is n_samples=(\d+)", message)
    assert m, message
    return int(m.group(1))


@pytest.mark.parametrize("method", ["kernel_shap", "permutation_shap", "lime", "rise"])
def test_huge_budget_refused_at_fit_at_once(wide, method):
    # finding: n_samples=10**9 at 40 groups allocated 298 GiB, then died
    X, model, _ = wide
    start = time.perf_counter()
    with pytest.raises(ValueError, match="working_memory") as info:
        Explainer(model, method=method, n_samples=10**9, background=5).fit(X)
    assert time.perf_counter() - start < 1.0
    message = str(info.value)
    assert "n_samples=1000000000" in message and f"{K} groups" in message
    assert _largest(message) < 10**9


@pytest.mark.parametrize("method", ["kernel_shap", "permutation_shap", "lime", "rise"])
def test_largest_budget_named_runs_and_the_next_is_refused(wide, method):
    from skdecomp._config import working_memory_bytes
    from skdecomp._methods._registry import budget_bytes, min_samples

    X, model, calls = wide
    with config_context(working_memory=8):  # MiB: a budget of a few thousand
        explainer = Explainer(model, method=method, background=5, random_state=0).fit(X)
        explainer.set_params(n_samples=10**9)
        calls.clear()
        start = time.perf_counter()
        with pytest.raises(ValueError, match="working_memory") as info:
            explainer.explain(X[:2], methods=[method])
        assert time.perf_counter() - start < 1.0
        assert calls == []  # refused before the model was called
        best = _largest(str(info.value))
        assert best >= min_samples(method, K)
        # the bound: the named budget fits, the next one does not
        n_bg = 1 if method in ("lime", "rise") else 5
        assert budget_bytes(method, K, best, n_bg) <= working_memory_bytes()
        assert budget_bytes(method, K, best + 1, n_bg) > working_memory_bytes()
        explainer.set_params(n_samples=best)
        res = explainer.explain(X[:1], methods=[method])[method]
        assert res.n_samples == best and np.isfinite(res.values).all()
        explainer.set_params(n_samples=best + 1)
        with pytest.raises(ValueError, match=f"n_samples={best}"):
            explainer.explain(X[:1], methods=[method])


def test_sampled_owen_budget_beyond_memory_refused_naming_one_that_runs(wide):
    X, model, calls = wide
    # two blocks of 20: the exact value needs about 4 million coalitions per row
    H = [list(range(20)), list(range(20, 40))]
    with pytest.raises(ValueError, match="working_memory"):  # in fit
        Explainer(model, method="owen", hierarchy=H, background=3, random_state=0,
                  n_samples=10**9).fit(X)
    explainer = Explainer(model, method="owen", hierarchy=H, background=3,
                          random_state=0, n_samples=1000).fit(X)
    explainer.set_params(n_samples=10**9)  # and in explain, set after fit
    calls.clear()
    start = time.perf_counter()
    with pytest.raises(ValueError, match="working_memory") as info:
        explainer.explain(X[:2], methods=["owen"])
    assert time.perf_counter() - start < 1.0 and calls == []
    with config_context(working_memory=4):
        with pytest.raises(ValueError, match="working_memory") as info:
            explainer.explain(X[:2], methods=["owen"])
        best = _largest(str(info.value))
        explainer.set_params(n_samples=best)
        res = explainer.explain(X[:1], methods=["owen"])["owen"]
        assert res.standard_errors is not None  # sampled
        np.testing.assert_allclose(res.values.sum(), model(X[:1])[0]
                                   - explainer.expected_value_, atol=1e-8)
        explainer.set_params(n_samples=best + 1)
        with pytest.raises(ValueError, match=f"n_samples={best}"):
            explainer.explain(X[:1], methods=["owen"])


def test_default_budgets_still_fit(wide):
    X, model, _ = wide
    for method in ("kernel_shap", "permutation_shap", "lime", "rise"):
        res = Explainer(model, method=method, background=5, random_state=0).fit(
            X).explain(X[:1], methods=[method])[method]
        assert np.isfinite(res.values).all()


# -- the report ------------------------------------------------------------------------
def run_cli(args, capsys):
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err):
    lines = [line for line in err.splitlines() if not line.startswith("[skdecomp]")]
    assert len(lines) == 1, err
    assert lines[0].startswith("skdecomp: error: "), err
    assert "Traceback" not in err and "unexpected" not in err
    return lines[0]


def page_text(path):
    t = (path / "index.html").read_text()
    t = re.sub(r'src="data:image/png;base64,[^"]*"', "", t)
    t = re.sub(r"<style.*?</style>", "", t, flags=re.DOTALL)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", t)))


@pytest.fixture
def small_csv(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30)})
    df["y"] = df["a"] - 2 * df["b"]
    path = tmp_path / "small.csv"
    df.to_csv(path, index=False)
    return path


# -- 3. one method ---------------------------------------------------------------------
def test_report_with_one_method(small_csv, tmp_path, capsys):
    # finding: "disagreement needs at least two ... This is unexpected"
    out = tmp_path / "out"
    code, _, err = run_cli(["report", small_csv, "--target", "y", "--out", out,
                            "--estimator", "linear", "--groups", "columns",
                            "--n-rows", "2", "--methods", "shapley"], capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    part = results["partitions"]["columns"]
    assert part["methods"] == ["shapley"]
    assert part["mean_disagreement_rms"] is None and part["mean_disagreement_l2"] is None
    verdict = " ".join(results["verdict"])
    assert "Only one method (Shapley) was run" in verdict
    assert "agree" not in verdict.replace("agree.", "")  # no agreement is claimed
    page = (out / "index.html").read_text()
    assert 'id="agreement"' not in page  # no section comparing methods
    assert "Only one method (Shapley) was run" in page_text(out)


def test_report_with_one_method_and_agreed_groups(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    df["y"] = 3 * df["a"] * df["b"] + df["c"]
    path = tmp_path / "inter.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, err = run_cli(["report", path, "--target", "y", "--out", out,
                            "--n-rows", "5", "--methods", "shapley"], capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert all(p["mean_disagreement_rms"] is None
               for p in results["partitions"].values())
    assert "agreed" in results["partitions"]  # AGREED merged 'a' and 'b'
    assert any("AGREED chose 2 groups" in s for s in results["verdict"])
    text = page_text(out)
    assert "Only one method (Shapley) was run" in text
    agreed = text.split("AGREED: groups of columns the methods agree on")[-1]
    assert "only Shapley was run, and there is no other explanation" in agreed


# -- 4a. values near 1e300 -------------------------------------------------------------
def test_table_of_huge_values_refused_naming_the_columns(tmp_path, capsys):
    # finding: R² was NaN and the page said "The model's fit is good"
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=40) * 1e300, "b": rng.normal(size=40),
                       "c": rng.normal(size=40)})
    df["y"] = df["a"] + df["b"]
    path = tmp_path / "huge.csv"
    df.to_csv(path, index=False)
    code, _, err = run_cli(["report", path, "--target", "y", "--out",
                            tmp_path / "o1"], capsys)
    line = one_line_error(err)
    assert code != 0 and "target column 'y'" in line and "overflow" in line
    assert "Rescale" in line
    # the target is fine, a column is not, for a model that standardises it
    # (HistGradientBoosting, the default, takes it: tests/test_hardening_round6.py)
    df["y"] = df["b"] - df["c"]
    df.to_csv(path, index=False)
    code, _, err = run_cli(["report", path, "--target", "y", "--out",
                            tmp_path / "o2", "--estimator", "linear"], capsys)
    line = one_line_error(err)
    assert code != 0 and "column 'a'" in line and "overflow" in line
    assert "--drop a" in line
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


def test_undefined_r2_is_never_called_good():
    from skdecomp._report._analysis import _score
    from skdecomp._report._verdict import _verdict

    class Model:  # a given model: finite predictions of a target near 1e300
        def predict(self, X):
            return np.zeros(len(X))

    y = pd.Series(np.linspace(-1, 1, 12) * 1e300)
    X = pd.DataFrame({"a": np.arange(12.0)})
    score = _score(Model(), X, y, classification=False, held_out=True)
    assert score["r2"] is None
    assert "undefined" in score["text"] and "overflow" in score["text"]
    assert "nan" not in score["text"].lower()
    verdict = _verdict({"score": score, "partitions": {}, "checks": []})
    assert "good" not in verdict[0] and "R² is undefined" in verdict[0]
    assert "overflow" in verdict[0]


def test_given_model_with_huge_target_says_r2_is_undefined(tmp_path, capsys):
    skops_io = pytest.importorskip("skops.io")
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    model = LinearRegression().fit(df, df["a"] - df["b"])
    df["y"] = (df["a"] - df["b"]) * 1e300  # the target in other units
    model_path = tmp_path / "m.skops"
    skops_io.dump(model, model_path)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, err = run_cli(["report", path, "--target", "y", "--model", model_path,
                            "--out", out, "--groups", "columns", "--n-rows", "3"],
                           capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert results["score"]["r2"] is None
    verdict = results["verdict"][0]
    assert "R² is undefined" in verdict and "good" not in verdict
    text = page_text(out)
    assert "fit is good" not in text and "R² is undefined" in text
    assert not re.search(r"\bnan\b", text.lower())


# -- 4b. a model that predicts a constant -----------------------------------------------
def test_constant_model_gives_no_shares_of_round_off(tmp_path, capsys):
    # finding: "depend most on a, b, c (60 %)", "disagree by 60,674 %" from the
    # round-off of a model that predicts one value
    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.normal(size=(12, 4)), columns=list("abcd"))
    df["y"] = np.round(df["a"] + rng.normal(size=12), 2)
    path = tmp_path / "const.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, err = run_cli(["report", path, "--target", "y", "--out", out,
                            "--imputer", "conditional", "--groups", "columns"], capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    part = results["partitions"]["columns"]
    assert part["constant_output"] is True and part["output_spread"] == 0.0
    for m, values in part["attributions"].items():
        assert np.all(np.asarray(values) == 0.0), m
        assert np.all(np.asarray(part["importance"][m]) == 0.0), m
    assert part["mean_disagreement_rms"] == 0.0
    verdict = results["verdict"]
    assert any("predicts the same value" in s for s in verdict)
    assert not any("%" in s for s in verdict), verdict
    assert not any("depend most on" in s or "disagree" in s.replace(
        "nothing for the methods to disagree on", "") for s in verdict), verdict
    text = page_text(out)
    assert "the model predicts the same value" in text
    assert "depend most on" not in text
    assert "% of the prediction spread" not in text
    drivers = text.split("What drives the predictions")[-1].split(
        "Do the explanation methods agree?")[0]
    assert "Nothing: the model predicts the same value" in drivers
    assert "%" not in drivers
    agreement = text.split("Do the explanation methods agree?")[-1]
    assert "have nothing to disagree on: the model predicts a constant" in agreement


def test_constant_detection_is_relative_to_the_output_scale():
    """Round-off of a large constant is no spread; a small real spread is one."""
    from skdecomp._report._explain import _explain_partition

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=list("abc"))

    def constant(level, tilt=0.0):
        def predict(Z):
            Z = np.asarray(Z, dtype=float)
            # one value, with round-off in its last bits, plus an optional tilt
            return level + level * 1e-16 * (Z[:, 0] > 0) + tilt * Z[:, 1]

        return predict

    assert 0 < np.ptp(constant(1e6)(X)) < 1e-9  # round-off, not 0
    common = {"background": 10, "random_state": 0, "n_jobs": None, "notes": [],
              "log": lambda m: None}
    flat = _explain_partition(constant(1e6), X, X.iloc[:5], None, ["shapley", "arch"],
                              **common)
    assert flat["constant_output"] and flat["output_spread"] == 0.0
    assert np.all(np.asarray(flat["attributions"]["shapley"]) == 0.0)
    tilted = _explain_partition(constant(1e6, 1e-3), X, X.iloc[:5], None,
                                ["shapley", "arch"], **common)
    assert not tilted["constant_output"] and tilted["output_spread"] > 0
    imp = np.asarray(tilted["importance"]["shapley"])
    assert imp[1] > 0 and imp[1] == imp.max()


# -- 5. --drop of the target ------------------------------------------------------------
def test_drop_of_the_target_says_it_is_never_a_feature(small_csv, tmp_path, capsys,
                                                        monkeypatch):
    from skdecomp import _report
    from skdecomp._report import _analysis

    def forbidden(*args, **kwargs):
        raise AssertionError("model work started before the input was checked")

    monkeypatch.setattr(_report, "analyse", forbidden)
    monkeypatch.setattr(_analysis, "make_model", forbidden)
    code, _, err = run_cli(["report", small_csv, "--target", "y", "--out",
                            tmp_path / "out", "--drop", "y"], capsys)
    line = one_line_error(err)
    assert code != 0
    assert "'y', the target column" in line and "needs no --drop" in line
    assert "not in the table" not in line
    # with another column too: the target is named first
    code, _, err = run_cli(["report", small_csv, "--target", "y", "--out",
                            tmp_path / "out", "--drop", "a", "y"], capsys)
    assert "'y', the target column" in one_line_error(err)


def test_drop_of_the_target_in_analyse():
    from skdecomp._report import DataError, analyse

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(30, 2)), columns=["a", "b"])
    y = (X["a"] - X["b"]).rename("y")
    with pytest.raises(DataError, match="'y', the target column"):
        analyse(X, y, drop=["y"], log=lambda m: None)
