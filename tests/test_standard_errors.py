"""Standard errors of the sampled attributions: coverage, scaling, shapes, checks.

Oracles: the exact Shapley values of the same game (``method="shapley"``),
and for LIME and RISE their own value with every coalition (a budget that
covers all of them gives each method's closed form).
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import RandomForestRegressor

from skdecomp import Explainer, Explanation

from .conftest import random_function

K = 8
ROWS = 12


@pytest.fixture(scope="module")
def problem():
    f = random_function(3, K)
    X = np.random.RandomState(0).normal(size=(60, K))
    return f, X, X[:5], X[20:20 + ROWS]


def _runs(problem, method, n_samples, seeds, **params):
    f, X, bg, rows = problem
    est, se = [], []
    for seed in seeds:
        ex = Explainer(f, method=method, background=bg, n_samples=n_samples,
                       random_state=seed, method_params=params or None).fit(X)
        e = ex.explain(rows, methods=[method])[method]
        est.append(e.values)
        se.append(e.standard_errors)
    return np.array(est), np.array(se)


def _reference(problem, method, **params):
    f, X, bg, rows = problem
    if method in ("kernel_shap", "permutation_shap"):
        method, n_samples = "shapley", None
    else:
        n_samples = 2**K  # every coalition: the method's closed form
    ex = Explainer(f, method=method, background=bg, n_samples=n_samples,
                   method_params=params or None).fit(X)
    return ex.transform(rows)


def _coverage(est, se, target):
    inside = np.abs(est - target[None]) <= 1.96 * se
    return inside.mean()


@pytest.mark.parametrize("method, n_samples", [
    ("permutation_shap", 200), ("kernel_shap", 120),
])
def test_intervals_cover_the_exact_shapley_values(problem, method, n_samples):
    est, se = _runs(problem, method, n_samples, range(10))
    exact = _reference(problem, method)
    assert np.all(se > 0)
    # 10 seeds x 12 rows x 8 groups = 960 intervals
    assert _coverage(est, se, exact) >= 0.88
    # the standard errors match the spread over seeds
    ratio = np.median(se.mean(axis=0) / est.std(axis=0, ddof=1))
    assert 0.75 < ratio < 1.3


@pytest.mark.parametrize("method, params", [
    ("lime", {}), ("lime", {"kernel": "distance", "alpha": 0.01}), ("rise", {}),
])
def test_lime_and_rise_cover_their_full_enumeration_value(problem, method, params):
    est, se = _runs(problem, method, 150, range(10), **params)
    target = _reference(problem, method, **params)
    assert _coverage(est, se, target) >= 0.9
    ratio = np.median(se.mean(axis=0) / est.std(axis=0, ddof=1))
    assert 0.75 < ratio < 1.3


def test_standard_errors_shrink_with_the_budget(problem):
    se = {b: _runs(problem, "permutation_shap", b, [0])[1].mean()
          for b in (56, 224)}
    # four times the permutations, half the standard error
    assert 1.6 < se[56] / se[224] < 2.5
    kernel = [_runs(problem, "kernel_shap", b, [0])[1].mean() for b in (64, 120, 200)]
    assert kernel[0] > kernel[1] > kernel[2] > 0


def test_the_estimates_do_not_change(problem):
    f, X, bg, rows = problem
    methods = ["kernel_shap", "permutation_shap", "lime", "rise"]
    ex = Explainer(f, background=bg, n_samples=100, random_state=4).fit(X)
    res = ex.explain(rows, methods=methods)
    # the same estimates without their errors (one shared design)
    plain = ex._attributions(rows, methods)
    for m in methods:
        np.testing.assert_array_equal(res[m].values, plain[m], err_msg=m)
        # and alone, each from its own design
        np.testing.assert_array_equal(
            ex.explain(rows, methods=[m])[m].values,
            ex.set_params(method=m).transform(rows), err_msg=m
        )


def test_exact_results_have_none_and_full_budgets_zero(problem):
    f, X, bg, rows = problem
    ex = Explainer(f, background=bg, n_samples=2**K,
                   method_params={"n_steps": 4}).fit(X)
    res = ex.explain(rows[:3], methods=["shapley", "banzhaf", "occlusion",
                                        "integrated_gradients", "kernel_shap",
                                        "permutation_shap", "lime", "rise"])
    for m in ("shapley", "banzhaf", "occlusion", "integrated_gradients"):
        assert res[m].standard_errors is None, m
        assert "standard_error" not in repr(res[m])
    for m in ("kernel_shap", "permutation_shap", "lime", "rise"):
        # every coalition is evaluated: nothing is left to chance
        np.testing.assert_array_equal(res[m].standard_errors, 0.0, err_msg=m)
    assert "max_standard_error=0" in repr(res["kernel_shap"])


def test_dummy_groups_get_zero():
    f = random_function(1, K)
    X = np.random.RandomState(1).normal(size=(30, K))
    X[:, 4] = 2.0  # every background row equals the explained rows there
    ex = Explainer(f, background=X[:4], n_samples=64, random_state=0).fit(X)
    res = ex.explain(X[10:14], methods=["kernel_shap", "permutation_shap", "lime"])
    for m, e in res.items():
        assert np.all(e.standard_errors[:, 4] == 0.0), m
        assert np.all(np.delete(e.standard_errors, 4, axis=1) > 0.0), m


@pytest.mark.parametrize("imputer", ["path_dependent", "conditional"])
def test_games_off_the_anchors(imputer):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 6))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 3] * X[:, 4]
    model = RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0)
    model.fit(X, y)
    rows = X[:10]
    exact = Explainer(model, method="shapley", imputer=imputer, random_state=0)
    exact = exact.fit(X).transform(rows)
    inside = []
    for seed in range(6):
        ex = Explainer(model, method="permutation_shap", imputer=imputer,
                       n_samples=100, random_state=0).fit(X)
        e = ex.set_params(random_state=seed).explain(rows, methods=["kernel_shap",
                                                                    "permutation_shap"])
        for m in ("kernel_shap", "permutation_shap"):
            se = e[m].standard_errors
            assert se.shape == rows.shape and np.all(np.isfinite(se))
            inside.append(np.abs(e[m].values - exact) <= 1.96 * se + 1e-12)
    assert np.mean(inside) >= 0.85


def test_several_outputs_and_selections():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 5))

    def f(A):
        A = np.asarray(A)
        return np.c_[A[:, 0] * A[:, 1], np.sin(A[:, 2]) + A[:, 2] * A[:, 3] * A[:, 4]]

    # 5 groups: KernelSHAP's smallest budget covers every coalition
    ex = Explainer(f, background=X[:4], n_samples=24, random_state=0).fit(X)
    res = ex.explain(X[10:16], methods=["permutation_shap", "lime", "rise"])
    for m, e in res.items():
        se = e.standard_errors
        assert se.shape == (6, 5, 2), m
        if m == "permutation_shap":
            # output 0 has no interaction beyond pairs: estimated exactly, yet
            # not from every coalition, so its agreeing draws get a bound
            exact = Explainer(f, background=X[:4], method="shapley").fit(X)
            np.testing.assert_allclose(e.values[:, :, 0],
                                       exact.transform(X[10:16])[:, :, 0], atol=1e-12)
            assert np.all(se[:, :2, 0] > 0), m
            assert np.all(se[:, 2:, 1] > 0), m
        one = ex.set_params(target=1).fit(X).explain(
            X[10:16], methods=["permutation_shap", "lime", "rise"])[m]
        np.testing.assert_allclose(one.standard_errors, se[:, :, 1], atol=1e-12)
        ex.set_params(target=None).fit(X)
        assert e[0].standard_errors.shape == (5, 2)
        assert e[:, 1].standard_errors.shape == (6, 2)
        assert e[..., 1].standard_errors.shape == (6, 5)
        assert e[2, [0, 3], 1].standard_errors.shape == (2,)
        np.testing.assert_array_equal(e[2, [0, 3], 1].standard_errors,
                                      se[2, [0, 3], 1])
        frame = e.to_frame(standard_errors=True)
        assert frame.shape == (6, 10)
        np.testing.assert_array_equal(frame[e.output_names[1]].to_numpy(), se[:, :, 1])


def test_the_constructor_checks_the_standard_errors():
    values = np.zeros((3, 2))
    e = Explanation(values, standard_errors=np.full((3, 2), 0.1))
    np.testing.assert_array_equal(e.standard_errors, 0.1)
    assert e[1:].standard_errors.shape == (2, 2)
    assert Explanation(values).standard_errors is None
    with pytest.raises(ValueError, match=r"shape \(2, 2\); expected \(3, 2\)"):
        Explanation(values, standard_errors=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="finite and >= 0.*at \\(1, 0\\)"):
        Explanation(values, standard_errors=[[0, 0], [-1, 0], [0, 0]])
    with pytest.raises(ValueError, match="finite and >= 0"):
        Explanation(values, standard_errors=np.full((3, 2), np.nan))
    with pytest.raises(TypeError, match="standard_errors must be real numbers"):
        Explanation(values, standard_errors=np.full((3, 2), "a"))
    with pytest.raises(ValueError, match="exact and have no standard errors"):
        Explanation(values, method="shapley").to_frame(standard_errors=True)


def test_the_bar_chart_draws_error_bars(problem):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp.plot import AttributionDisplay

    f, X, bg, rows = problem
    ex = Explainer(f, background=bg, n_samples=100, random_state=0).fit(X)
    res = ex.explain(rows[:3], methods=["shapley", "permutation_shap"])
    for row in (0, None):
        disp = AttributionDisplay.from_explanation(res, kind="bar", row=row)
        assert disp.artists_["shapley"].errorbar is None
        bars = disp.artists_["permutation_shap"].errorbar
        assert bars is not None
        se = res["permutation_shap"].standard_errors
        shown = se[0] if row == 0 else se.mean(axis=0)
        (segments,) = bars.lines[2]
        widths = [abs(s[1][0] - s[0][0]) for s in segments.get_segments()]
        np.testing.assert_allclose(widths, 2 * 1.96 * shown[disp.order_])
        assert "1.96 " in disp.ax_.get_xlabel()
        plt.close(disp.figure_)
    disp = AttributionDisplay.from_explanation(res["shapley"], kind="bar", row=0)
    assert "1.96" not in disp.ax_.get_xlabel()
    plt.close(disp.figure_)


def test_the_waterfall_draws_error_bars_at_the_end_of_each_step(problem):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp.plot import AttributionDisplay

    f, X, bg, rows = problem
    ex = Explainer(f, background=bg, n_samples=100, random_state=0).fit(X)
    res = ex.explain(rows[:2], methods=["permutation_shap", "shapley"])
    e = res["permutation_shap"]
    disp = AttributionDisplay.from_explanation(e, kind="waterfall", row=1,
                                               max_groups=e.values.shape[1] + 1)
    (segments,) = disp.error_bars_.lines[2]
    segs = segments.get_segments()
    # steps from the bottom: the smallest group first; each bar ends where
    # its interval is centred, and the interval is 1.96 standard errors wide
    order = disp.order_[::-1]
    widths = [abs(s[1][0] - s[0][0]) for s in segs]
    np.testing.assert_allclose(widths, 2 * 1.96 * e.standard_errors[1][order])
    ends = e.base_values[1] + np.cumsum(e.values[1][order])
    np.testing.assert_allclose([(s[0][0] + s[1][0]) / 2 for s in segs], ends)
    assert "1.96 " in disp.ax_.get_xlabel()
    plt.close(disp.figure_)
    disp = AttributionDisplay.from_explanation(res["shapley"], kind="waterfall", row=1)
    assert disp.error_bars_ is None and "1.96" not in disp.ax_.get_xlabel()
    plt.close(disp.figure_)


class _FourWay(RegressorMixin, BaseEstimator):
    """A fitted model: four columns interact, twelve add a little each."""

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X):
        a = np.asarray(X, dtype=float)
        return 3 * a[:, 0] * a[:, 1] * a[:, 2] * a[:, 3] + 0.1 * a[:, 4:].sum(axis=1)


def test_the_report_says_which_columns_sampling_cannot_order():
    import pandas as pd

    from skdecomp._report import _page, analyse

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(200, 16)),
                     columns=[f"c{i}" for i in range(16)])
    model = _FourWay().fit(X)
    y = pd.Series(model.predict(X), name="y")
    res = analyse(X, y, model=model, groups="columns", n_rows=8, background=10,
                  methods=["kernel_shap", "permutation_shap"], log=lambda *a, **k: None)
    part = res["partitions"]["columns"]
    assert set(part["importance_se"]) == {"kernel_shap", "permutation_shap"}
    html = _page.render_html(res)
    said = [s for s in html.split("<p>") if "cannot be told apart" in s]
    assert said and all(
        "at this budget (their difference is within 2 standard errors)." in s
        for s in said
    )
    # every pair named is within 2 standard errors of the method's ranking
    for m in ("kernel_shap", "permutation_shap"):
        imp, se = np.array(part["importance"][m]), np.array(part["importance_se"][m])
        for a, b in (map(int, s.split(": c")[1].split(" cannot")[0].split(" and c"))
                     for s in said if s.startswith(_page.method_label(m) + ":")):
            assert abs(imp[a] - imp[b]) <= 2 * np.hypot(se[a], se[b])


# the smallest budget of each method for K = 8 groups
SMALLEST = {"kernel_shap": 64, "permutation_shap": 42, "lime": 18, "rise": 9}


@pytest.mark.parametrize("method", sorted(SMALLEST))
def test_inexact_values_never_have_a_zero_standard_error(problem, method):
    f, X, bg, rows = problem
    ex = Explainer(f, method=method, background=bg, n_samples=SMALLEST[method],
                   random_state=0).fit(X)
    e = ex.explain(rows[:4], methods=[method])[method]
    target = _reference(problem, method)[:4]
    assert np.all(np.abs(e.values - target) > 1e-9)  # none is exact
    assert np.all(e.standard_errors > 0)


@pytest.fixture(scope="module")
def forest_problem():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, K))
    y = X[:, 0] * X[:, 1] * X[:, 2] + np.sin(X[:, 3]) + (X[:, 4] > 0) * X[:, 5]
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0)
    return model.fit(X, y + 0.1 * X[:, 6]), X, X[:10], X[20:30]


@pytest.mark.parametrize("method", sorted(SMALLEST))
def test_a_forest_never_gives_an_inexact_value_a_zero_standard_error(forest_problem,
                                                                      method):
    # a tree may use a group only in orders that were not drawn: every drawn
    # pair then agrees on it (24 such values here before the floor)
    model, X, bg, rows = forest_problem
    target = _reference(forest_problem, method)
    inside = []
    for seed in range(5):
        ex = Explainer(model, method=method, background=bg,
                       n_samples=SMALLEST[method], random_state=seed).fit(X)
        e = ex.explain(rows, methods=[method])[method]
        inexact = np.abs(e.values - target) > 1e-9
        assert np.all(e.standard_errors[inexact] > 0)
        inside.append(np.abs(e.values - target) <= 1.96 * e.standard_errors + 1e-9)
    assert np.mean(inside) >= 0.9


def test_agreeing_draws_get_a_floor_that_falls_with_the_budget(forest_problem):
    # the rule-of-three bound falls as 1 / n
    model, X, bg, rows = forest_problem
    target = _reference(forest_problem, "permutation_shap")
    ratio = {}
    for n_samples in (42, 168):
        ex = Explainer(model, method="permutation_shap", background=bg,
                       n_samples=n_samples, random_state=0).fit(X)
        e = ex.explain(rows, methods=["permutation_shap"])["permutation_shap"]
        assert np.all(e.standard_errors[np.abs(e.values - target) > 1e-9] > 0)
        ratio[n_samples] = np.median(e.standard_errors)
    assert ratio[42] > ratio[168] > 0


def test_rise_gives_a_group_only_kept_where_the_game_is_0_a_spread():
    # v(M) = 0 in every mask that kept group 0: its terms all agree at 0
    def f(A):
        A = np.asarray(A)
        return np.where(A[:, 0] > 0, 0.0, 1.0 + A[:, 1])

    X = np.abs(np.random.RandomState(0).normal(size=(30, 4)))
    bg = -X[:1]
    ex = Explainer(f, method="rise", background=bg, n_samples=5, random_state=0).fit(X)
    e = ex.explain(X[:3], methods=["rise"])["rise"]
    exact = Explainer(f, method="rise", background=bg, n_samples=16).fit(X)
    assert np.all(np.abs(e.values[:, 0]) < 1e-12)
    assert np.all(exact.transform(X[:3])[:, 0] == 0.0)
    assert np.all(e.standard_errors[:, 0] > 0)


@pytest.mark.parametrize("method", sorted(SMALLEST))
def test_a_budget_below_the_smallest_names_it(problem, method):
    f, X, bg, rows = problem
    low = SMALLEST[method]
    ex = Explainer(f, method=method, background=bg, n_samples=low - 1).fit
    with pytest.raises(ValueError, match=f"needs at least n_samples={low}, the smallest"):
        ex(X)
    ex = Explainer(f, background=bg, n_samples=low - 1).fit(X)
    with pytest.raises(ValueError, match=f"at least n_samples={low}"):
        ex.explain(rows[:1], methods=[method])


def test_three_permutation_pairs_per_game_pool_over_the_background():
    # at the smallest budget each game has three draws: two degrees of
    # freedom per game, pooled over the 5 background rows
    f = random_function(3, K)
    X = np.random.RandomState(0).normal(size=(60, K))
    bg, rows = X[:5], X[20:32]
    exact = Explainer(f, method="shapley", background=bg).fit(X).transform(rows)
    inside = []
    for seed in range(8):
        ex = Explainer(f, method="permutation_shap", background=bg,
                       n_samples=SMALLEST["permutation_shap"], random_state=seed).fit(X)
        e = ex.explain(rows, methods=["permutation_shap"])["permutation_shap"]
        inside.append(np.abs(e.values - exact) <= 1.96 * e.standard_errors)
    assert np.mean(inside) >= 0.88
