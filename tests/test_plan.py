"""The command line's plan (evaluations, time, memory within a budget) and strict JSON."""

import json
import math
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.preprocessing import StandardScaler

from skdecomp import Explainer
from skdecomp.__main__ import main
from skdecomp._json import strict_json
from skdecomp._plan import (
    SCREEN_COLUMNS,
    PlanError,
    _partition_evaluations,
    check_model_object,
    plan_report,
    screen_columns,
)


def strict_loads(text):
    """json.loads that refuses NaN and infinity, as strict JSON parsers do."""
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def wide(n=30, d=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"c{j}" for j in range(d)])
    y = pd.Series(2 * X["c7"] - X["c3"] + 0.01 * rng.normal(size=n), name="y")
    return X, y


# -- strict JSON -------------------------------------------------------------------------
def test_strict_json_turns_undefined_numbers_into_null_with_reasons():
    results = {"score": {"r2": float("nan"), "n_rows": 3},
               "spread": [1.0, np.float64(np.inf), np.array([2.0, -np.inf])],
               "ok": True, "name": "x"}
    out = strict_json(results)
    text = json.dumps(out, allow_nan=False)
    back = strict_loads(text)
    assert back["score"] == {"r2": None, "n_rows": 3}
    assert back["spread"] == [1.0, None, [2.0, None]]
    assert back["ok"] is True and back["name"] == "x"
    paths = {u["path"]: u for u in back["undefined"]}
    assert set(paths) == {"score.r2", "spread.1", "spread.2.1"}
    assert "target is constant" in paths["score.r2"]["reason"]
    assert paths["spread.1"]["value"] == "inf"
    assert "undefined" not in strict_json({"a": 1.0})
    with pytest.raises(ValueError):
        json.dumps(results, allow_nan=False)  # what was written before


# -- the estimates against counts ---------------------------------------------------------
@pytest.mark.parametrize("methods, K", [
    (["shapley", "banzhaf", "occlusion", "arch"], 4),
    (["occlusion", "arch"], 5),
    (["kernel_shap"], 6),
])
def test_partition_evaluations_match_the_model_calls(methods, K):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, K))
    model = LinearRegression().fit(X, X @ rng.normal(size=K))
    calls = []

    def f(Z):
        calls.append(len(Z))
        return model.predict(Z)

    n_rows, n_bg = 3, 7
    expected, tree_work = _partition_evaluations(K, methods, n_rows, n_bg, tree=False)
    sampled = "kernel_shap" in methods
    n_samples = None
    if sampled:
        budget = 1_500_000 // (n_rows * n_bg)
        n_samples = min(2 * K + 2048, max(4 * (K + 1), budget))
    e = Explainer(f, background=n_bg, random_state=0, n_samples=n_samples).fit(X)
    calls.clear()
    e.explain(X[:n_rows], methods=methods)
    assert tree_work == 0
    # the coalitions the methods need, counted from the model calls (the
    # empty and full coalitions need no hybrid rows: the estimate is a bound)
    assert sum(calls) <= expected <= sum(calls) + 2 * n_rows * n_bg


def test_screen_keeps_the_columns_related_to_the_target():
    X, y = wide()
    kept = screen_columns(X, y, 5)
    assert {"c7", "c3"} <= set(kept) and len(kept) == 5
    assert kept == [c for c in X.columns if c in kept]  # table order
    corr = np.abs([np.corrcoef(X[c], y)[0, 1] for c in X.columns])
    assert set(kept) == set(X.columns[np.argsort(-corr)[:5]])
    assert screen_columns(X.iloc[:, :3], y, 5) == list(X.columns[:3])


# -- plans ---------------------------------------------------------------------------------
def test_small_table_is_planned_unchanged():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    plan = plan_report(X, y, estimator="linear")
    assert plan.changes == [] and plan.groups == "auto" and plan.n_rows == 50
    assert plan.drop == [] and plan.seconds < 120


def test_wide_table_is_screened_for_a_fitted_model():
    X, y = wide(n=30, d=400)
    plan = plan_report(X, y, estimator="hgb")
    assert len(plan.drop) == 400 - 30  # one column per row
    assert {"c7", "c3"}.isdisjoint(plan.drop)
    assert "the table has 400 columns and 30 rows" in plan.changes[0]
    X, y = wide(n=150, d=400)
    assert len(plan_report(X, y, estimator="hgb").drop) == 400 - SCREEN_COLUMNS


def test_wide_table_is_pooled_for_a_given_model():
    X, y = wide(n=150, d=400)
    model = LinearRegression().fit(X, y)
    plan = plan_report(X, y, model=model, budget=None)
    assert isinstance(plan.groups, dict) and "other columns" in plan.groups
    assert len(plan.groups) == SCREEN_COLUMNS + 1
    assert sum(len(c) for c in plan.groups.values()) == 400 and plan.drop == []


def test_budget_reduces_what_was_left_to_the_plan():
    X, y = wide(d=60)
    full = plan_report(X, y, estimator="mlp", budget=None)
    # (the sampled methods share one design, so the last reductions gain less)
    tight = plan_report(X, y, estimator="mlp", budget=full.seconds / 2.5)
    assert tight.seconds <= full.seconds / 2.5 < full.seconds
    assert tight.changes and tight.n_rows == 20


def test_refusal_names_the_options():
    X, y = wide(d=300)
    with pytest.raises(PlanError, match=r"more than the budget of 1 s.*--budget \d+"):
        plan_report(X, y, estimator="linear", n_rows=30, groups="auto",
                    methods=["kernel_shap"], budget=1)
    with pytest.raises(PlanError, match=r"--max-memory \d+"):
        plan_report(X, y, estimator="linear", n_rows=30, groups="auto", max_memory=1)


# -- model files ---------------------------------------------------------------------------
@pytest.mark.parametrize("obj, fragment", [
    ({"model": 1}, "holds a dict with keys ['model'], not a fitted model"),
    (np.zeros((2, 3)), "holds a NumPy array of shape (2, 3), not a fitted model"),
    ([1, 2], "holds a list of 2 items"),
    (LinearRegression, "holds the class LinearRegression"),
    (LinearRegression(), "holds an unfitted LinearRegression"),
    (StandardScaler().fit(np.zeros((3, 2))), "holds a transformer (StandardScaler)"),
])
def test_model_files_without_a_fitted_model(obj, fragment):
    with pytest.raises(PlanError) as info:
        check_model_object(obj, "m.skops")
    assert fragment in str(info.value) and "skops.io.dump" in str(info.value)


def test_fitted_model_passes():
    check_model_object(LinearRegression().fit(np.zeros((3, 2)), [0, 1, 2]))


def _cli(args, capsys):
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    _, err = capsys.readouterr()
    return code, err


def test_cli_refuses_before_model_work(tmp_path, capsys):
    X, y = wide(d=300)
    X.assign(y=y).to_csv(tmp_path / "t.csv", index=False)
    start = time.perf_counter()
    code, err = _cli(["report", tmp_path / "t.csv", "--target", "y", "--estimator",
                      "linear", "--n-rows", "30", "--groups", "auto", "--methods",
                      "kernel_shap", "--budget", "1", "--out", tmp_path / "r"], capsys)
    assert code == 1 and "--budget" in err.splitlines()[-1]
    assert "fitting" not in err and time.perf_counter() - start < 30
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("obj, fragment", [
    ({"a": [1, 2]}, "holds a dict"),
    (np.arange(4.0), "holds a NumPy array of shape (4,)"),
    (StandardScaler().fit(np.zeros((3, 2))), "save the whole Pipeline"),
])
def test_cli_model_file_without_a_model(obj, fragment, tmp_path, capsys):
    sio = pytest.importorskip("skops.io")
    X, y = wide(d=10)
    X.assign(y=y).to_csv(tmp_path / "t.csv", index=False)
    sio.dump(obj, tmp_path / "m.skops")
    code, err = _cli(["report", tmp_path / "t.csv", "--target", "y", "--model",
                      tmp_path / "m.skops", "--out", tmp_path / "r"], capsys)
    last = err.splitlines()[-1]
    assert code == 1 and fragment in last and "unexpected" not in last


@pytest.mark.slow
def test_cli_on_a_30_by_5000_table_ends_within_two_minutes(tmp_path, capsys):
    X, y = wide(n=30, d=5000)
    X.assign(y=y).to_csv(tmp_path / "t.csv", index=False)
    start = time.perf_counter()
    code, err = _cli(["report", tmp_path / "t.csv", "--target", "y",
                      "--out", tmp_path / "r"], capsys)
    seconds = time.perf_counter() - start
    assert code == 0, err[-2000:]
    assert seconds < 120
    results = strict_loads((tmp_path / "r" / "results.json").read_text())
    assert "5000 columns" in results["plan"]["changes"][0]
    assert math.isfinite(results["seconds"])


# -- every step of the analysis is planned ---------------------------------------------------
def _interacting(n=80, seed=0, text=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 4)), columns=list("abcd"))
    y = pd.Series(4 * X["a"] * X["b"] + X["c"] + 0.05 * rng.normal(size=n), name="y")
    if text:
        X["e"] = np.asarray(["low", "mid", "high", "top"])[(X["d"] > -0.5).astype(int)
                                                            + (X["d"] > 0) + (X["d"] > 0.5)]
        y = y + X["e"].isin(["low", "high"])  # no one threshold on the codes
    return X, y


def _logged_steps(X, y, **options):
    from skdecomp._plan import step_of
    from skdecomp._report import analyse

    lines = []
    analyse(X, y, log=lines.append, n_rows=5, background=10, **options)
    return [step_of(m) for m in lines if step_of(m)], lines


@pytest.mark.parametrize("estimator", ["rf", "linear"])
def test_every_step_the_analysis_runs_has_an_estimate(estimator):
    from skdecomp._plan import STEPS

    X, y = _interacting(text=estimator == "rf")
    plan = plan_report(X, y, estimator=estimator, groups="auto", n_rows=5, budget=None)
    logged, lines = _logged_steps(X, y, estimator=estimator, groups="auto")
    assert set(logged) <= set(plan.steps), (set(logged) - set(plan.steps), lines)
    assert {"fit", "columns", "interactions", "agreed"} <= set(logged)
    assert list(plan.steps) == [s for s in STEPS if s in plan.steps]
    assert plan.seconds == pytest.approx(sum(plan.steps.values()))
    if estimator == "rf":  # the columns interact: the regions are searched and planned
        assert "regions" in logged
    else:  # a linear model has no interactions to search regions for
        assert "regions" not in logged and "regions" not in plan.steps


def test_the_imputer_changes_the_plan():
    import inspect

    from skdecomp._report import analyse

    X, y = _interacting()
    marginal = plan_report(X, y, estimator="hgb", budget=None)
    conditional = plan_report(X, y, estimator="hgb", budget=None, imputer="conditional")
    path = plan_report(X, y, estimator="hgb", budget=None, imputer="path_dependent")
    # the conditional game is explained through model calls, each value over
    # as many draws as background rows; neither other game searches regions
    assert marginal.evaluations < conditional.evaluations
    assert conditional.evaluations >= 50 * 50 * (2**4 - 1)
    assert path.evaluations == 0 and "regions" in marginal.steps
    assert "regions" not in conditional.steps and "regions" not in path.steps
    with pytest.raises(PlanError, match="imputer must be one of"):
        plan_report(X, y, imputer="cover")
    if "imputer" in inspect.signature(analyse).parameters:
        logged, _ = _logged_steps(X, y, estimator="linear", groups="columns",
                                  imputer="conditional")
        plan = plan_report(X, y, estimator="linear", groups="columns", n_rows=5,
                           budget=None, imputer="conditional")
        assert set(logged) <= set(plan.steps)


def test_cli_imputer_option(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for game in ("marginal", "path_dependent", "conditional"):
        assert game in help_text
    with pytest.raises(SystemExit) as info:
        main(["report", "t.csv", "--target", "y", "--imputer", "cover"])
    assert info.value.code == 2 and "--imputer" in capsys.readouterr().err


def test_regions_of_trees_are_read_from_the_leaves_with_categories_too():
    from threadpoolctl import threadpool_limits

    from skdecomp._report._explain import _region_path
    from skdecomp._report._models import make_model

    def fitted(X):
        model = make_model("hgb", X, y, random_state=0)[0]
        model.set_params(**{f"{model.steps[-1][0]}__max_iter": 10})
        # one thread: OpenMP threads on busy cores wait for each other
        with threadpool_limits(1):
            return model.fit(X, y)

    X, y = _interacting(n=200, text=True)
    # a text column split as a set of categories
    assert _region_path(fitted(X), X, tree=True) == (200, None)  # read from the leaves
    X = X.drop(columns="e")
    assert _region_path(fitted(X), X, tree=True) == (200, None)
    # a large forest through model calls of its explained output
    from sklearn.ensemble import RandomForestRegressor

    forest = RandomForestRegressor(n_estimators=150, random_state=0).fit(X, y)
    N, function = _region_path(forest, X, tree=True)
    assert function is not None and N == 100
    assert np.allclose(function(X.iloc[:5]).ravel(), forest.predict(X.iloc[:5]))
    # through model calls, K N**2 within a budget, on a least a few rows
    from skdecomp._report._common import REGION_EVALUATIONS, REGION_MIN_ROWS

    wide_X = pd.DataFrame(np.zeros((500, 400)))
    assert _region_path(None, wide_X, tree=False)[0] == REGION_MIN_ROWS
    N = _region_path(None, wide_X.iloc[:, :50], tree=False)[0]
    assert REGION_MIN_ROWS < N and 50 * N**2 <= REGION_EVALUATIONS
