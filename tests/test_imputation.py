"""The imputation of the game: conditional games for any model, checked
against closed forms, and the disagreement split into its two sources."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression

from skdecomp import AdaptiveGrouper, Explainer, PairwiseGrouper
from skdecomp.inspection import agreed_loss, disagreement_sources

from . import _naive

RHO = 0.8
COV = np.array([[1.0, RHO, 0.0], [RHO, 1.0, 0.0], [0.0, 0.0, 1.0]])
B = np.array([1.0, -0.5, 2.0])
C = 1.5


def _linear_product(X):
    return X @ B + C * X[:, 0] * X[:, 1]


def _conditional_value(x, S):
    """E[f(X) | X_S = x_S] for zero-mean Gaussians with covariance COV, closed form."""
    S = list(S)
    U = [j for j in range(3) if j not in S]
    mean = np.zeros(3)
    cov = np.zeros((3, 3))
    mean[S] = x[S]
    if S and U:
        A = COV[np.ix_(U, S)] @ np.linalg.inv(COV[np.ix_(S, S)])
        mean[U] = A @ x[S]
        cov[np.ix_(U, U)] = COV[np.ix_(U, U)] - A @ COV[np.ix_(S, U)]
    elif not S:
        cov = COV.copy()
    return float(mean @ B + C * (cov[0, 1] + mean[0] * mean[1]))


@pytest.fixture(scope="module")
def gaussian():
    rng = np.random.RandomState(0)
    return rng.multivariate_normal(np.zeros(3), COV, size=3000)


def test_conditional_shapley_matches_closed_form(gaussian):
    X = gaussian
    rows = X[:40]
    explainer = Explainer(_linear_product, imputer="conditional", background=400,
                          random_state=0).fit(X)
    assert explainer.imputer_ == "conditional"
    assert explainer.algorithm_.startswith("model_agnostic")
    phi = explainer.transform(rows)
    exact = np.array([
        _naive.shapley({S: _conditional_value(x, S) for S in _naive.powerset(range(3))}, 3)
        for x in rows
    ])
    spread = _linear_product(X).std()
    rmse = np.sqrt(np.mean((phi - exact) ** 2))
    assert rmse < 0.1 * spread, (rmse, spread)
    # the marginal game is far from it: the check can fail
    marginal = Explainer(_linear_product, background=400, random_state=0).fit(X)
    assert np.sqrt(np.mean((marginal.transform(rows) - exact) ** 2)) > 2 * rmse
    # efficiency: the empty coalition is the mean output over the background
    pred = _linear_product(rows)
    np.testing.assert_allclose(phi.sum(axis=1), pred - explainer.expected_value_,
                               atol=1e-9)


def test_conditional_sampled_methods_and_n_jobs(gaussian):
    X = gaussian[:500]
    base = dict(imputer="conditional", background=50, random_state=1)
    one = Explainer(_linear_product, **base).fit(X)
    two = Explainer(_linear_product, n_jobs=2, batch_size=64, **base).fit(X)
    rows = X[:5]
    # the draws do not depend on how model calls are chunked or shared
    np.testing.assert_array_equal(one.transform(rows), two.transform(rows))
    res = one.explain(rows, methods=["shapley", "kernel_shap", "permutation_shap",
                                     "occlusion", "arch", "lime"])
    pred = _linear_product(rows)
    for m in ("shapley", "kernel_shap", "permutation_shap"):
        np.testing.assert_allclose(res[m].values.sum(axis=1),
                                   pred - one.expected_value_, atol=1e-8)
    # occlusion and arch are the single-group coalitions of the same game
    v = one.game_.values(rows, np.eye(3, dtype=bool))
    np.testing.assert_allclose(res["arch"].values, v[:, :, 0] - one.expected_value_)
    # a budget that enumerates every coalition gives the exact values
    full = clone(one).set_params(method="kernel_shap", n_samples=8).fit(X)
    np.testing.assert_allclose(full.transform(rows), res["shapley"].values, atol=1e-8)


class _MeanSampler:
    """Draws the absent columns from the column means: a user sampler."""

    def __init__(self):
        self.fitted = 0

    def fit(self, X):
        self.mean_ = np.asarray(X).mean(axis=0)
        self.fitted += 1
        return self

    def sample(self, X, known, n_draws, random_state=None):
        out = np.broadcast_to(self.mean_, (X.shape[0], n_draws, X.shape[1])).copy()
        return np.where(known[:, None, :], X[:, None, :], out)


def test_user_sampler_is_cloned_and_used(gaussian):
    sampler = _MeanSampler()
    X = gaussian[:200]
    explainer = Explainer(LinearRegression().fit(X, X @ B), imputer=sampler,
                          background=3, random_state=0).fit(X)
    assert sampler.fitted == 0 and explainer.sampler_ is not sampler
    assert explainer.imputer_ == "conditional"
    # a linear model with the absent columns at their means: the Shapley
    # value of a column is its coefficient times its distance to the mean
    rows = X[:4]
    np.testing.assert_allclose(explainer.transform(rows),
                               (rows - X.mean(axis=0)) * B, atol=1e-9)


def test_conditional_frames_keep_their_columns(gaussian):
    X = pd.DataFrame(gaussian[:300], columns=["a", "b", "c"])
    model = LinearRegression().fit(X, _linear_product(gaussian[:300]))
    explainer = Explainer(model, imputer="conditional", background=20,
                          groups={"ab": ["a", "b"], "c": ["c"]}, random_state=0).fit(X)
    phi = explainer.transform(X.iloc[:3])
    np.testing.assert_allclose(phi.sum(axis=1),
                               model.predict(X.iloc[:3]) - explainer.expected_value_)


def test_disagreement_sources_separate_interaction_from_dependence():
    rng = np.random.RandomState(0)
    cov = np.array([[1, 0.9, 0], [0.9, 1, 0], [0, 0, 1]])
    X = rng.multivariate_normal(np.zeros(3), cov, size=600)
    additive = disagreement_sources(lambda X: X.sum(axis=1), X, random_state=0)
    assert additive.interaction < 1e-12
    assert additive.dependence > 0.2
    # the dependence sits on the correlated pair
    assert additive.dependence_per_group[2] < 0.2 * additive.dependence_per_group[0]
    Z = rng.normal(size=(600, 3))
    product = disagreement_sources(lambda X: X[:, 0] * X[:, 1] + X[:, 2], Z,
                                   random_state=0)
    assert product.dependence < 0.03
    assert product.interaction > 0.5
    assert product.dependence >= 0 and additive.interaction >= 0
    # the interaction part is the AGREED loss on the same rows, per variance
    explainer = Explainer(lambda X: X[:, 0] * X[:, 1] + X[:, 2], background=200,
                          random_state=0).fit(Z)
    rows = Z[np.sort(np.random.RandomState(0).choice(600, 200, replace=False))]
    loss = agreed_loss(explainer, rows) / _naive_var(rows)
    assert product.interaction == pytest.approx(loss, rel=1e-9)


def _naive_var(rows):
    return float(np.var(rows[:, 0] * rows[:, 1] + rows[:, 2]))


def test_disagreement_sources_of_an_explainer_uses_its_groups(gaussian):
    X = gaussian[:300]
    explainer = Explainer(_linear_product, groups=[[0, 1], [2]], background=30,
                          random_state=0).fit(X)
    res = disagreement_sources(explainer, X, max_samples=100, random_state=0)
    assert res.group_names == list(explainer.group_names_)
    # x0 and x1 in one group, independent of x2: neither source is left but
    # the sampling noise of a 100-row background (a few per cent)
    assert res.interaction < 1e-12 and res.dependence < 0.05


def test_conditional_agreed_merges_the_dependent_pair():
    rng = np.random.RandomState(0)
    cov = np.eye(5)
    cov[0, 1] = cov[1, 0] = 0.9
    X = rng.multivariate_normal(np.zeros(5), cov, size=1000)

    def f(X):
        return X @ np.array([1.0, 1.0, 1.5, 1.0, 1.0])

    default = AdaptiveGrouper(f, random_state=0).fit(X)
    assert default.n_groups_ == 5
    conditional = AdaptiveGrouper(f, imputer="conditional", random_state=0).fit(X)
    assert sorted(map(list, conditional.groups_)) == [[0, 1], [2], [3], [4]]
    assert conditional.imputer_ == "conditional"
    # the explainer passes its imputer on to the grouper
    explainer = Explainer(f, imputer="conditional", groups=AdaptiveGrouper(),
                          random_state=0, background=50).fit(X)
    assert explainer.grouper_.imputer == "conditional"
    assert sorted(map(list, explainer.groups_)) == [[0, 1], [2], [3], [4]]
    pairwise = PairwiseGrouper(f, imputer="conditional", n_groups=4,
                               random_state=0).fit(X)
    assert sorted(map(list, pairwise.groups_)) == [[0, 1], [2], [3], [4]]


def test_bad_imputers(gaussian):
    X = gaussian[:50]
    with pytest.raises(ValueError, match="imputer"):
        Explainer(_linear_product, imputer="gaussian").fit(X)
    with pytest.raises(ValueError, match="path_dependent.*tree"):
        Explainer(_linear_product, imputer="path_dependent").fit(X)
    with pytest.raises(ValueError, match="algorithm='tree'"):
        Explainer(_linear_product, imputer="conditional", algorithm="tree").fit(X)
    with pytest.raises(ValueError, match="integrated_gradients"):
        Explainer(_linear_product, imputer="conditional",
                  method="integrated_gradients").fit(X)
    explainer = Explainer(_linear_product, imputer="conditional", background=5).fit(X)
    with pytest.raises(ValueError, match="integrated_gradients"):
        explainer.explain(X[:2], methods=["integrated_gradients"])
    with pytest.raises(ValueError, match="marginal"):
        explainer.game_.hybrid_predictions(X[:2], np.array([1]))
    frame = pd.DataFrame({"a": X[:, 0], "b": ["u", "v"] * 25})
    with pytest.raises(ValueError, match="non-numeric"):
        Explainer(lambda D: D["a"].to_numpy(), imputer="conditional").fit(frame)
    with pytest.raises(ValueError, match="NaN"):
        Explainer(lambda Z: np.nan_to_num(Z).sum(axis=1),
                  imputer="conditional").fit(np.where(X > 1, np.nan, X))
    with pytest.raises(ValueError, match="fitted"):
        disagreement_sources(LinearRegression(), X)


def test_conditional_permutation_importance_and_m_plot_closed_forms():
    # y = x0 + x1 + x2 with corr(x0, x1) = RHO: permuting x0 costs 2 Var(x0)
    # of squared error, drawing it given x1 only 2 Var(x0 | x1) = 2 (1 - RHO**2);
    # the M-plot of x0 is E[f | x0 = g] = g (1 + RHO), the PDP g
    from skdecomp.inspection import partial_dependence, permutation_importance

    X = np.random.RandomState(1).multivariate_normal(np.zeros(3), COV, size=4000)
    y = X.sum(axis=1)
    model = LinearRegression().fit(X, y)
    kw = dict(scoring="neg_mean_squared_error", n_repeats=5, random_state=0)
    marginal = permutation_importance(model, X, y, **kw)
    conditional = permutation_importance(model, X, y, imputer="conditional", **kw)
    np.testing.assert_allclose(marginal.importances_mean, 2.0, rtol=0.08)
    np.testing.assert_allclose(conditional.importances_mean,
                               [2 * (1 - RHO**2)] * 2 + [2.0], rtol=0.08)
    grid = [[-1.0], [0.0], [1.5]]
    pdp = partial_dependence(model, X, 0, grid=grid)
    mplot = partial_dependence(model, X, 0, grid=grid, imputer="conditional",
                               random_state=0)
    g = np.ravel(grid)
    np.testing.assert_allclose(pdp.average[0], g + X[:, 1:].sum(axis=1).mean(),
                               atol=1e-9)
    np.testing.assert_allclose(mplot.average[0], g * (1 + RHO), atol=0.08)
    # the same seed, the same draws; a frame gives the same numbers
    again = permutation_importance(model, X, y, imputer="conditional", **kw)
    np.testing.assert_array_equal(again.importances, conditional.importances)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    by_name = permutation_importance(LinearRegression().fit(frame, y), frame, y,
                                     imputer="conditional", **kw)
    np.testing.assert_allclose(by_name.importances, conditional.importances)


def test_conditional_inspection_refuses_what_it_cannot_do(gaussian):
    from skdecomp.inspection import partial_dependence, permutation_importance

    X = gaussian[:100]
    model = LinearRegression().fit(X, X @ B)
    with pytest.raises(ValueError, match="ICE"):
        partial_dependence(model, X, 0, imputer="conditional", kind="both")
    with pytest.raises(ValueError, match="sample_weight"):
        partial_dependence(model, X, 0, imputer="conditional",
                           sample_weight=np.ones(100))
    with pytest.raises(ValueError, match="imputer"):
        permutation_importance(model, X, X @ B, imputer="path_dependent")
    frame = pd.DataFrame({"a": X[:, 0], "b": ["u", "v"] * 50})
    with pytest.raises(ValueError, match="non-numeric"):
        permutation_importance(model, frame, X[:, 0], imputer="conditional")
    # a user sampler is cloned and fitted on X, not the one passed
    sampler = _MeanSampler()
    res = permutation_importance(model, X, X @ B, imputer=sampler,
                                 scoring="neg_mean_squared_error", random_state=0)
    assert sampler.fitted == 0
    # the column at its mean: the error is Var(b_j x_j) exactly
    np.testing.assert_allclose(res.importances_mean, B**2 * X.var(axis=0), rtol=1e-9)


class _IndependentNormal:
    """The exact conditional sampler of independent standard normal columns."""

    def fit(self, X):
        return self

    def sample(self, X, known, n_draws, random_state=None):
        rng = np.random.RandomState(random_state)
        draws = rng.normal(size=(X.shape[0], n_draws, X.shape[1]))
        return np.where(known[:, None, :], X[:, None, :], draws)


def _additive(X):
    X = np.asarray(X)
    return np.sin(X[:, 0]) + X[:, 1] ** 2 + X[:, 2:].sum(axis=1)


def _conditional_stats(f, X, n_draws, seed, sampler, split=True):
    from skdecomp._game import AnchoredStatistics, CoalitionGame
    from skdecomp._game._imputation import ConditionalImputer

    game = CoalitionGame(f, X, np.arange(X.shape[1]),
                         imputer=ConditionalImputer(sampler, n_draws, seed))
    return AnchoredStatistics(game, X, split=split)


def test_conditional_loss_is_free_of_the_draws_noise():
    # independent columns and an additive model: the conditional game is
    # additive, every PDP-PFI gap is 0, yet means over 20 draws have noise
    # whose square a plain estimate adds to every group's loss
    X = np.random.RandomState(0).normal(size=(60, 5))
    var = _additive(X).var()
    singles = [[j] for j in range(5)]
    split, plain = [], []
    for seed in range(12):
        for out, flag in ((split, True), (plain, False)):
            stats = _conditional_stats(_additive, X, 20, seed, _IndependentNormal(), flag)
            out.append(stats.loss(singles) / var)
    split, plain = np.array(split), np.array(plain)
    # the plain estimate: about 5 groups x 2 values x Var(f | x_S) / 20
    assert plain.mean() > 0.1
    # unbiased: the split estimate scatters around 0
    assert abs(split.mean()) < 3 * split.std(ddof=1) / np.sqrt(split.size) + 1e-3
    assert abs(split.mean()) < 0.05 * plain.mean()
    # the same in the held-out loss and on the merge path: nothing to merge
    for seed in range(4):
        g = AdaptiveGrouper(_additive, imputer=_IndependentNormal(), max_samples=60,
                            random_state=seed).fit(np.random.RandomState(seed).normal(
                                size=(240, 5)))
        assert g.n_groups_ == 5, g.history_


def test_conditional_estimate_agrees_with_many_draws_on_dependent_data():
    # the dependent Gaussian and the product model above: the mean of the
    # split estimates with 20 draws matches a reference of 4,000 draws
    rng = np.random.RandomState(1)
    X = rng.multivariate_normal(np.zeros(3), COV, size=40)
    from skdecomp import GaussianCopulaSampler

    sampler = GaussianCopulaSampler().fit(X)
    for groups in ([[0], [1], [2]], [[0, 1], [2]]):
        ref = _conditional_stats(_linear_product, X, 4000, 99, sampler, split=False)
        rows, cols = ref.group_means(groups)
        s = rows + cols
        s = s - s.mean(axis=-1, keepdims=True)  # centred on the sample, as split
        reference = (s**2).mean(axis=-1).sum(axis=-1)
        est, plain = (np.array([
            _conditional_stats(_linear_product, X, 20, seed, sampler, split).potentials(groups)
            for seed in range(32)
        ]) for split in (True, False))
        se = est.std(axis=0, ddof=1) / np.sqrt(est.shape[0])
        assert np.all(np.abs(est.mean(axis=0) - reference) < 4 * se), (est.mean(0), reference)
        # the plain means over the same 20 draws sit well above it
        assert np.all(plain.mean(axis=0) - reference > 4 * se), (plain.mean(0), reference)
