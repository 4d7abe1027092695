"""Faithfulness metrics and disagreement measures."""

from itertools import combinations
from math import comb

import numpy as np
import pytest
from scipy.stats import spearmanr

from skdecomp import Explainer
from skdecomp.metrics import (
    deletion_error,
    disagreement,
    faithfulness_correlation,
    infidelity,
    insertion_error,
    metric_disagreement,
    sensitivity_n,
    shapley_weighted_faithfulness,
)

EXACT = ("arch", "occlusion", "shapley", "banzhaf")
METRIC_CALLS = {
    "sensitivity_1": (sensitivity_n, {}),
    "sensitivity_2": (sensitivity_n, {"n": 2}),
    "infidelity": (infidelity, {}),
    "insertion_singletons": (insertion_error, {}),
    "insertion_bernoulli": (insertion_error, {"coalitions": "bernoulli", "p": 0.3}),
    "insertion_shapley": (insertion_error, {"coalitions": "shapley"}),
    "deletion_singletons": (deletion_error, {}),
    "deletion_bernoulli": (deletion_error, {"coalitions": "bernoulli", "fit_intercept": True}),
    "swf": (shapley_weighted_faithfulness, {}),
    "faithfulness_correlation": (faithfulness_correlation, {}),
}


def additive(X):
    # groupwise additive w.r.t. [[0, 1], [2], [3]]: interactions only inside groups
    return X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 3] ** 2


def interacting(X):
    return (
        X[:, 0] * X[:, 1]
        + np.sin(X[:, 2])
        + X[:, 3]
        + 0.8 * X[:, 0] * X[:, 2]
        + 0.5 * X[:, 1] * X[:, 2] * X[:, 3]
    )


def _fit(f, groups, n=40, n_bg=15, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    explainer = Explainer(f, groups=groups, background=X[:n_bg]).fit(X)
    return explainer, X[n_bg:n_bg + 8]


@pytest.fixture(scope="module")
def additive_case():
    return _fit(additive, [[0, 1], [2], [3]])


@pytest.fixture(scope="module")
def interacting_case():
    explainer, X = _fit(interacting, [[0], [1], [2], [3]])
    return explainer, X, explainer.decompose(X)


@pytest.mark.parametrize("name", list(METRIC_CALLS))
def test_additive_model_every_metric_is_zero_for_every_explainer(additive_case, name):
    # groupwise additive: every explainer gives the main effects, every metric is 0
    explainer, X = additive_case
    func, kw = METRIC_CALLS[name]
    dec = explainer.decompose(X)
    for method in EXACT:
        res = func(explainer, X, attributions=dec.attributions(method), **kw)
        assert res.scores.shape == (X.shape[0],)
        assert abs(res.score) <= 1e-10 and np.all(np.abs(res.scores) <= 1e-10)


@pytest.mark.parametrize("name", list(METRIC_CALLS))
def test_closed_form_equals_model_calls(interacting_case, name):
    explainer, X, dec = interacting_case
    func, kw = METRIC_CALLS[name]
    for method in ("arch", "shapley"):
        phi = dec.attributions(method)
        by_model = func(explainer, X, attributions=phi, **kw)
        closed = func(None, None, attributions=phi, decomposition=dec, **kw)
        np.testing.assert_allclose(closed.scores, by_model.scores, rtol=1e-9, atol=1e-12)


def test_sampled_closed_form_equals_model_calls(interacting_case):
    # fewer samples than coalitions: both paths draw the same coalitions
    explainer, X, dec = interacting_case
    phi = dec.attributions("banzhaf")
    for func, kw in [
        (infidelity, {}),
        (shapley_weighted_faithfulness, {}),
        (sensitivity_n, {"n": 2}),
        (insertion_error, {"coalitions": "bernoulli"}),
    ]:
        a = func(explainer, X, attributions=phi, n_samples=5, random_state=3, **kw)
        b = func(None, None, attributions=phi, decomposition=dec, n_samples=5,
                 random_state=3, **kw)
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-9, atol=1e-12)


def test_default_attributions_come_from_the_explainer_method(interacting_case):
    explainer, X, dec = interacting_case
    default = infidelity(explainer, X)
    given = infidelity(explainer, X, attributions=dec.attributions(explainer.method_))
    np.testing.assert_allclose(default.scores, given.scores, rtol=1e-12)


def _subset_sums(dec):
    """Closed-form insertion and deletion games from the components, by loops."""
    F = dec.components
    n, n_masks = F.shape
    K = dec.n_groups
    ins = np.zeros((n, n_masks))
    dele = np.zeros((n, n_masks))
    for S in range(n_masks):
        for U in range(1, n_masks):
            if U & S == U:
                ins[:, S] += F[:, U]
            if U & S:
                dele[:, S] += F[:, U]
    return ins, dele, K


def test_games_against_component_sums(interacting_case):
    # singleton errors: mean_k (phi_k - F_k)**2 and mean_k (phi_k - sum_{U∋k} F_U)**2
    explainer, X, dec = interacting_case
    ins, dele, K = _subset_sums(dec)
    phi = dec.attributions("shapley")
    singles = [1 << k for k in range(K)]
    expected_ins = ((phi - ins[:, singles]) ** 2).mean(axis=1)
    expected_del = ((phi - dele[:, singles]) ** 2).mean(axis=1)
    np.testing.assert_allclose(
        insertion_error(explainer, X, attributions=phi).scores, expected_ins, rtol=1e-9
    )
    np.testing.assert_allclose(
        deletion_error(explainer, X, attributions=phi).scores, expected_del, rtol=1e-9
    )
    # infidelity with p=1/2: uniform over all 2**K coalitions
    masks = np.arange(1 << K)
    A = ((masks[:, None] >> np.arange(K)) & 1).astype(float)
    expected = ((phi @ A.T - dele) ** 2).mean(axis=1)
    np.testing.assert_allclose(
        infidelity(explainer, X, attributions=phi).scores, expected, rtol=1e-9
    )


def test_infidelity_matches_yeh_with_a_single_baseline_row():
    # Dirac background: f(x) - f(x - I) with I = (x - b) on the removed groups
    rng = np.random.RandomState(1)
    X = rng.normal(size=(6, 4))
    b = rng.normal(size=4)
    groups = [[0, 1], [2], [3]]
    explainer = Explainer(interacting, groups=groups, background=b).fit(X)
    phi = rng.normal(size=(6, 3))
    expected = np.zeros(6)
    for mask in range(8):
        members = [k for k in range(3) if mask >> k & 1]
        cols = [c for k in members for c in groups[k]]
        pert = np.zeros_like(X)
        pert[:, cols] = (X - b)[:, cols]
        drop = interacting(X) - interacting(X - pert)
        expected += (phi[:, members].sum(axis=1) - drop) ** 2 / 8
    np.testing.assert_allclose(
        infidelity(explainer, X, attributions=phi).scores, expected, rtol=1e-9
    )


def test_sensitivity_n_matches_pearson_over_subsets(interacting_case):
    explainer, X, dec = interacting_case
    _, dele, K = _subset_sums(dec)
    phi = dec.attributions("banzhaf")
    subsets = [sum(1 << k for k in c) for c in combinations(range(K), 2)]
    A = ((np.array(subsets)[:, None] >> np.arange(K)) & 1).astype(float)
    expected = [
        1 - np.corrcoef(A @ phi[i], dele[i, subsets])[0, 1] for i in range(len(X))
    ]
    got = sensitivity_n(explainer, X, attributions=phi, n=2)
    np.testing.assert_allclose(got.scores, expected, rtol=1e-9, atol=1e-12)


def test_occlusion_is_optimal_for_sensitivity_1(interacting_case):
    explainer, X, dec = interacting_case
    scores = {m: sensitivity_n(explainer, X, attributions=dec.attributions(m)).score
              for m in EXACT}
    assert scores["occlusion"] <= 1e-12
    assert all(scores[m] > 1e-3 for m in ("arch", "shapley", "banzhaf"))


def _optimum_check(metric, dec, phi_star, rng, **kw):
    """phi_star minimises a quadratic metric: zero gradient, positive curvature."""
    base = metric(None, None, attributions=phi_star, decomposition=dec, **kw).score
    for _ in range(3):
        delta = rng.normal(size=phi_star.shape) * 0.1
        plus = metric(None, None, attributions=phi_star + delta, decomposition=dec, **kw).score
        minus = metric(None, None, attributions=phi_star - delta, decomposition=dec, **kw).score
        assert abs(plus - minus) <= 1e-9 * (1 + plus)
        assert plus > base


def _p_banzhaf(dec, p):
    F = dec.components
    K = dec.n_groups
    phi = np.zeros((F.shape[0], K))
    for U in range(1, 1 << K):
        size = bin(U).count("1")
        for k in range(K):
            if U >> k & 1:
                phi[:, k] += p ** (size - 1) * F[:, U]
    return phi


def test_least_squares_optimum_is_the_named_explainer(interacting_case):
    # each metric's least-squares optimum is the explainer its docstring names
    explainer, X, dec = interacting_case
    rng = np.random.RandomState(0)
    _optimum_check(insertion_error, dec, dec.attributions("arch"), rng)
    _optimum_check(deletion_error, dec, dec.attributions("occlusion"), rng)
    _optimum_check(shapley_weighted_faithfulness, dec, dec.attributions("shapley"), rng)
    _optimum_check(insertion_error, dec, dec.attributions("banzhaf"), rng,
                   coalitions="bernoulli", fit_intercept=True)
    _optimum_check(insertion_error, dec, _p_banzhaf(dec, 0.3), rng,
                   coalitions="bernoulli", p=0.3, fit_intercept=True)
    # ... and each named optimum is beaten elsewhere
    swf_arch = shapley_weighted_faithfulness(explainer, X, attributions=dec.attributions("arch"))
    swf_shap = shapley_weighted_faithfulness(explainer, X, attributions=dec.attributions("shapley"))
    assert swf_shap.score < swf_arch.score


def test_swf_minimiser_solves_the_weighted_least_squares(interacting_case):
    # solve the SWF normal equations row by row; the solution is Shapley
    _, _, dec = interacting_case
    ins, _, K = _subset_sums(dec)
    masks = np.arange(1, (1 << K) - 1)
    sizes = np.array([bin(m).count("1") for m in masks])
    w = (K - 1) / (np.array([comb(K, s) for s in sizes]) * sizes * (K - sizes))
    w = w / w.sum()
    A = ((masks[:, None] >> np.arange(K)) & 1).astype(float)
    M = A - sizes[:, None] / K
    shap = dec.attributions("shapley")
    for i in range(dec.n_samples):
        total = ins[i, -1]
        lhs = np.vstack([M * np.sqrt(w)[:, None], np.ones((1, K))])
        rhs = np.concatenate([(ins[i, masks] - sizes / K * total) * np.sqrt(w), [total]])
        sol = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
        np.testing.assert_allclose(sol, shap[i], atol=1e-10)


def test_metrics_rank_explainers_differently(interacting_case):
    explainer, X, _ = interacting_case
    res = metric_disagreement(explainer, X, random_state=0)
    assert res.scores.shape == (6, 4)
    assert res.explainer_names == ["arch", "shapley", "banzhaf", "occlusion"]
    best = dict(zip(res.metric_names, res.best))
    assert best["sensitivity_n"] == "occlusion"
    assert best["insertion_error"] == "arch"
    assert best["deletion_error"] == "occlusion"
    assert best["shapley_weighted_faithfulness"] == "shapley"
    assert len(set(res.best)) >= 3
    assert res.score > 0
    assert np.all(res.agreement <= 1) and np.allclose(np.diag(res.agreement), 1)


def test_metrics_agree_on_additive_model(additive_case):
    explainer, X = additive_case
    res = metric_disagreement(explainer, X, metrics=["infidelity", "deletion_error",
                                                     "shapley_weighted_faithfulness"])
    assert np.all(np.abs(res.scores) <= 1e-10)
    assert res.score == 0.0


def test_metric_disagreement_with_given_attributions_and_params(interacting_case):
    explainer, X, dec = interacting_case
    atts = {"pdp": dec.attributions("arch"), "pfi": dec.attributions("occlusion")}
    res = metric_disagreement(
        explainer, X, attributions=atts, metrics=["insertion_error", "deletion_error"],
        metric_params={"insertion_error": {"coalitions": "singletons"}},
    )
    assert res.best == ["pdp", "pfi"]
    assert res.score == 1.0
    with pytest.raises(ValueError, match="Unknown metrics"):
        metric_disagreement(explainer, X, attributions=atts, metrics=["nope"])


def test_multi_output_scores_average_outputs():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(20, 3))

    def f2(X):
        return np.column_stack([X[:, 0] * X[:, 1], X[:, 2] + X[:, 0] * X[:, 2]])

    from sklearn.base import BaseEstimator, RegressorMixin

    class Two(RegressorMixin, BaseEstimator):
        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def predict(self, X):
            return f2(np.asarray(X, dtype=float))

    explainer = Explainer(Two().fit(X), background=X[:8]).fit(X)
    Xe = X[8:12]
    dec = explainer.decompose(Xe)
    phi = dec.attributions("arch")  # (n, K, 2)
    both = deletion_error(explainer, Xe, attributions=phi).scores
    per = [deletion_error(None, None, attributions=phi[:, :, o],
                          decomposition=_one_output(dec, o)).scores for o in range(2)]
    np.testing.assert_allclose(both, np.mean(per, axis=0), rtol=1e-9)


def _one_output(dec, o):
    from skdecomp import Decomposition

    F = np.moveaxis(dec.components, -1, 1)[:, o:o + 1, :]
    return Decomposition(F, dec.group_names, [dec.output_names[o]], dec.prediction[:, o:o + 1])


def test_bad_inputs_raise_clear_errors(interacting_case):
    explainer, X, dec = interacting_case
    with pytest.raises(ValueError, match="expected \\(8, 4\\)"):
        infidelity(explainer, X, attributions=np.zeros((8, 3)))
    with pytest.raises(ValueError, match="NaN"):
        infidelity(explainer, X, attributions=np.full((8, 4), np.nan))
    with pytest.raises(ValueError, match="larger than the number of groups"):
        sensitivity_n(explainer, X, n=5)
    with pytest.raises(ValueError, match="decomposition"):
        infidelity(None, None, attributions=np.zeros((8, 4)))
    with pytest.raises(ValueError, match="rows"):
        infidelity(explainer, X[:3], decomposition=dec)


# -- disagreement -------------------------------------------------------------------
def test_disagreement_measures_against_direct_formulas():
    rng = np.random.RandomState(0)
    a, b, c = rng.normal(size=(3, 10, 5))
    res = disagreement({"a": a, "b": b, "c": c})
    pairs = [(a, b), (a, c), (b, c)]
    np.testing.assert_allclose(res.scores, np.mean([((p - q) ** 2).mean(1) for p, q in pairs], 0))
    assert res.pairwise.shape == (3, 3) and res.names == ["a", "b", "c"]
    pear = disagreement([a, b], measure="pearson").scores
    np.testing.assert_allclose(pear, [1 - np.corrcoef(a[i], b[i])[0, 1] for i in range(10)])
    spear = disagreement([a, b], measure="spearman").scores
    np.testing.assert_allclose(
        spear, [1 - spearmanr(abs(a[i]), abs(b[i]))[0] for i in range(10)]
    )


def test_top_k_agreements_by_hand():
    a = np.array([[5.0, -4.0, 3.0, 0.1]])
    b = np.array([[-4.0, 5.0, 0.2, 3.0]])
    # top-2 sets {0, 1} and {1, 0}: shared fully, no position equal, signs differ
    assert disagreement([a, b], measure="feature_agreement", top_k=2).score == 0.0
    assert disagreement([a, b], measure="rank_agreement", top_k=2).score == 1.0
    assert disagreement([a, b], measure="sign_agreement", top_k=2).score == 1.0
    # top-3: {0, 1, 2} vs {0, 1, 3}: 2 of 3 shared
    np.testing.assert_allclose(
        disagreement([a, b], measure="feature_agreement", top_k=3).score, 1 / 3
    )


def test_identical_explanations_do_not_disagree():
    a = np.random.RandomState(0).normal(size=(4, 6))
    for measure in ("l2", "pearson", "spearman", "feature_agreement",
                    "rank_agreement", "sign_agreement"):
        assert abs(disagreement([a, a.copy()], measure=measure).score) <= 1e-12


def test_disagreement_bad_inputs():
    a = np.zeros((3, 4))
    with pytest.raises(ValueError, match="at least two"):
        disagreement([a])
    with pytest.raises(ValueError, match="share one shape"):
        disagreement([a, np.zeros((3, 5))])
    with pytest.raises(ValueError, match="top_k"):
        disagreement([a, a], measure="rank_agreement", top_k=9)
    with pytest.raises(ValueError, match="2-D"):
        disagreement([np.zeros((2, 3, 4)), np.zeros((2, 3, 4))])


def test_disagreement_of_explainers_is_driven_by_interactions(additive_case, interacting_case):
    # explainers differ only through the between-group interaction components
    for (explainer, X, *_), expect_zero in ((additive_case, True), (interacting_case, False)):
        dec = explainer.decompose(X)
        res = disagreement([dec.attributions(m) for m in EXACT])
        assert (res.score <= 1e-20) == expect_zero


@pytest.mark.slow
def test_sampled_metrics_approach_exact_values():
    # 10 groups: 1024 coalitions enumerated exactly, or 1000 drawn
    rng = np.random.RandomState(0)
    X = rng.normal(size=(10, 10))

    def f(X):
        return X @ np.arange(1, 11) + X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] * X[:, 4]

    explainer = Explainer(f, background=X[:4]).fit(X)
    dec = explainer.decompose(X[4:7])
    phi = dec.attributions("arch")
    for func in (infidelity, shapley_weighted_faithfulness, faithfulness_correlation):
        exact = func(None, None, attributions=phi, decomposition=dec, n_samples=1024)
        approx = func(None, None, attributions=phi, decomposition=dec, n_samples=1000,
                      random_state=0)
        assert approx.score != exact.score
        np.testing.assert_allclose(approx.score, exact.score, rtol=0.15)
