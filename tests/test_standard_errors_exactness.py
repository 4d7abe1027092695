"""A standard error is 0 only for an exact value; intervals cover at smallest budgets.

Games over 6 columns, one group each: a smooth function with interactions
of all orders, an AND-like game (``prod_k 1[x_k > 0]``: against a background
row below 0 everywhere it is 1 on the full coalition only, so every drawn
coalition agrees) and a majority game (``1[#{k: x_k > 0} >= 4]``), each with
4 background rows and with one (an anchored game, as for an image against a
baseline). Oracles: the exact Shapley values for ``kernel_shap`` and
``permutation_shap``, each method's value with every coalition for ``lime``
and ``rise``, the exact index values for the interaction indices.
"""

import itertools

import numpy as np
import pytest

import skdecomp._methods._sampled as sampled
from skdecomp import Explainer
from skdecomp._methods._indices import INDICES, index_terms
from skdecomp._methods._registry import min_samples
from skdecomp._methods._sampled_indices import (
    check_index_budget,
    min_budget,
    sampled_interactions,
    smallest_index_budget,
)

K = 6
METHODS = ["kernel_shap", "permutation_shap", "lime", "rise"]
GAMES = ["smooth", "and", "majority"]
CASES = [(g, b) for g in GAMES for b in (4, 1)]


def _model(name):
    if name == "smooth":
        r = np.random.default_rng(3)
        a, c = r.normal(size=K), r.normal(size=K)
        B = np.triu(r.normal(size=(K, K)), 1)

        def f(X):
            X = np.asarray(X, dtype=float)
            return (np.sin(X) @ a + np.einsum("ni,ij,nj->n", X, B, X)
                    + np.tanh(X @ c) + X[:, 0] * X[:, 2] * X[:, 4])
        return f
    if name == "and":
        return lambda X: np.all(np.asarray(X, dtype=float) > 0, axis=1).astype(float)
    return lambda X: (np.sum(np.asarray(X, dtype=float) > 0, axis=1) >= 4).astype(float)


_CACHE = {}


def _problem(name, n_background):
    """Fitted explainer, explained rows and the scale of the game's values."""
    if (name, n_background) not in _CACHE:
        rng = np.random.RandomState(0)
        X = rng.normal(size=(400, K)) + 0.8
        every = np.flatnonzero(np.all(X > 0, axis=1))
        some = np.flatnonzero(~np.all(X > 0, axis=1))
        rows = X[np.r_[every[:3], some[:3]]]
        # below 0 everywhere, above 0 everywhere, then mostly below 0
        bg = rng.normal(size=(n_background, K)) - 0.3
        bg[0] = -np.abs(bg[0])
        if n_background > 1:
            bg[1] = np.abs(bg[1])
        ex = Explainer(_model(name), background=bg, random_state=0).fit(X)
        scale = max(np.ptp(np.r_[ex.game_.predict(rows).ravel(),
                                 ex.game_.background_prediction.ravel()]), 1.0)
        _CACHE[name, n_background] = ex, rows, scale
    return _CACHE[name, n_background]


def _smallest(method):
    if method in INDICES:
        spec = INDICES[method]
        return smallest_index_budget(K, spec, spec.order or 2)
    return min_samples(method, K)


def _reference(ex, rows, method):
    if method in INDICES:
        spec = INDICES[method]
        return np.asarray(ex.interactions(rows, index=method,
                                          max_order=spec.order or 2).values)
    if method in ("kernel_shap", "permutation_shap"):
        return ex.set_params(method="shapley").transform(rows)
    return sampled.sampled_attributions(
        ex.game_, rows, [method], np.random.RandomState(0), n_samples=1 << K
    )[method]


def _public(ex, rows, method, budget, seed):
    """Values and standard errors through the public API."""
    ex.set_params(random_state=seed)
    if method in INDICES:
        spec = INDICES[method]
        res = ex.interactions(rows, index=method, max_order=spec.order or 2,
                              n_samples=budget)
    else:
        res = ex.set_params(n_samples=budget).explain(rows, methods=[method])[method]
    return np.asarray(res.values), np.asarray(res.standard_errors)


def _fast(ex, rows, method, budget, seed):
    """The same, from the estimators (no checks, no result objects)."""
    if method in INDICES:
        spec = INDICES[method]
        value, se = sampled_interactions(ex.game_, rows, spec, spec.order or 2,
                                         budget, seed)
        return value[..., 0], se[..., 0]
    errors = {}
    value = sampled.sampled_attributions(
        ex.game_, rows, [method], np.random.RandomState(seed), n_samples=budget,
        errors=errors,
    )[method]
    return value, errors[method]


def _budgets(method):
    low = _smallest(method)
    return sorted({low, low + 6, 40, 60} - {b for b in (40, 60) if b < low})


@pytest.mark.parametrize("method", METHODS + list(INDICES))
def test_no_inexact_value_has_a_zero_standard_error(method):
    checked = 0
    for game, n_bg in CASES:
        ex, rows, scale = _problem(game, n_bg)
        target = _reference(ex, rows, method)
        for budget in _budgets(method):
            for seed in (0, 1):
                value, se = _public(ex, rows, method, budget, seed)
                inexact = np.abs(value - target) > 1e-9 * scale
                # never 0, nor of rounding size
                assert np.all(se[inexact] > 1e-12 * scale), (game, n_bg, budget, seed)
                # an exact value's standard error is 0 or positive, never rounding
                assert np.all((se == 0) | (se > 1e-12 * scale))
                checked += inexact.sum()
    # Moebius terms are exact from the coalitions inside them
    assert checked > 0 or method == "Moebius"


@pytest.mark.parametrize("method", METHODS + ["k-SII"])
def test_every_coalition_gives_the_closed_form_and_zero(method):
    ex, rows, _ = _problem("and", 1)
    value, se = _public(ex, rows, method, 1 << K, 0)
    np.testing.assert_allclose(value, _reference(ex, rows, method), atol=1e-10)
    np.testing.assert_array_equal(se, 0.0)


def test_agreeing_permutations_get_a_bound_not_zero():
    # AND against one background row below 0: every marginal contribution is
    # 0 but the last one, so a group never last in the drawn pairs agrees on
    # 0 and one last in every pair agrees too; the exact value is 1/6
    ex, rows, _ = _problem("and", 1)
    value, se = _public(ex, rows[:3], "permutation_shap", 30, 0)
    assert np.all(se > 0.01)
    assert np.all(np.abs(value - 1 / K) <= 1.96 * se)


@pytest.mark.parametrize("method", ["lime", "rise"])
def test_masks_that_all_agree_get_a_bound_not_zero(method):
    # AND against one background row: unless the full coalition is drawn,
    # every mask has value 0, the fit or the mean is 0 and the draws agree
    ex, rows, _ = _problem("and", 1)
    target = _reference(ex, rows[:3], method)
    for seed in range(5):
        value, se = _public(ex, rows[:3], method, _smallest(method), seed)
        assert np.all(se > 0)
        assert np.all(np.abs(value - target) <= 1.96 * se + 1e-12)


@pytest.mark.parametrize("method", METHODS + ["k-SII", "FSII"])
def test_a_game_of_one_undrawn_coalition_is_not_called_exact(method):
    # v(S) = 1 for S = {0, 1, 2} only: at a small budget of 8 groups no draw
    # may hold it, every value seen is 0, and so is every estimate
    def f(X):
        X = np.asarray(X)
        return (np.all(X[:, :3] > 0, axis=1) & np.all(X[:, 3:] < 0, axis=1)) * 1.0

    x, z = np.ones((1, 8)), -np.ones((1, 8))
    ex = Explainer(f, background=z).fit(np.vstack([x, z]))
    low = (smallest_index_budget(8, INDICES[method], 2) if method in INDICES
           else min_samples(method, 8))
    for seed in range(3):
        value, se = _public(ex, x, method, low, seed)
        if method in INDICES:  # the empty term is v({}), exactly
            value, se = value[:, 1:], se[:, 1:]
        assert np.all(se[np.abs(value) < 1e-12] > 0.01), seed


def test_moebius_terms_are_exact_from_the_small_coalitions():
    ex, rows, _ = _problem("majority", 1)
    exact = ex.interactions(rows, index="Moebius", max_order=2)
    low = smallest_index_budget(K, INDICES["Moebius"], 2)
    assert low == K + K * (K - 1) // 2
    est = ex.interactions(rows, index="Moebius", max_order=2, n_samples=low)
    np.testing.assert_allclose(est.values, exact.values, atol=1e-12)
    np.testing.assert_array_equal(est.standard_errors, 0.0)
    with pytest.raises(ValueError, match=f"at least n_samples={low}: each term"):
        ex.interactions(rows, index="Moebius", max_order=2, n_samples=low - 1)


def test_exact_index_terms_have_zero_and_the_others_not():
    # STII of order 2: a singleton is v({i}) - v({}), from the layer of one
    # group taken whole; the pairs depend on every coalition
    ex, rows, scale = _problem("majority", 4)
    exact = np.asarray(ex.interactions(rows, index="STII", max_order=2).values)
    value, se = _public(ex, rows, "STII", _smallest("STII"), 0)
    singles = slice(1, 1 + K)
    np.testing.assert_allclose(value[:, singles], exact[:, singles], atol=1e-12)
    np.testing.assert_array_equal(se[:, singles], 0.0)
    assert np.all(se[:, 1 + K:] > 1e-12 * scale)


def test_the_smallest_permutation_budget_says_why():
    ex, rows, _ = _problem("smooth", 1)
    with pytest.raises(ValueError, match=r"n_samples=30, the smallest .*three "
                                         r"permutations and their reverses per game"):
        ex.set_params(n_samples=29).explain(rows, methods=["permutation_shap"])


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS + list(INDICES))
def test_intervals_cover_at_the_smallest_budget(method):
    # 40 seeds x 6 rows x the groups or terms, per game; measured in
    # benchmarks/bench_coverage_games.py (0.91 to 1.00)
    budget = _smallest(method)
    for game, n_bg in CASES:
        ex, rows, scale = _problem(game, n_bg)
        target = _reference(ex, rows, method)
        inside = []
        for seed in range(40):
            value, se = _fast(ex, rows, method, budget, seed)
            miss = np.abs(value - target)
            inside.append((miss <= 1e-9 * scale) | (miss <= 1.96 * se))
        inside = np.array(inside)
        if method in INDICES:
            inside = inside[:, :, 1:]  # the empty term is v({}) or a constant
        assert inside.mean() >= 0.90, (game, n_bg, inside.mean())


ORDER3 = ["SII", "k-SII", "STII", "FSII", "BII", "FBII"]


def _layers_whole_then_four_pairs(K, top):
    """Coalitions of 1 to top groups and of all but 1 to top, then 4 pairs a layer."""
    sizes = {s for t in range(1, top + 1) for s in (t, K - t)}
    whole = sum(1 for S in itertools.product((0, 1), repeat=K) if sum(S) in sizes)
    return whole + 8 * (K // 2 - top)


def test_order_three_takes_the_layers_of_one_and_two_groups_whole():
    assert [min_budget(K, 3) for K in (6, 8, 10)] == [
        _layers_whole_then_four_pairs(K, 2) for K in (6, 8, 10)] == [50, 88, 134]
    assert min_budget(10, 2) == _layers_whole_then_four_pairs(10, 1) == 52
    ex, rows, scale = _problem("majority", 4)
    for index in ORDER3:
        with pytest.raises(ValueError, match=r"n_samples=50: every coalition of 1 "
                                             r"to 2 groups .* rest mostly on those"):
            ex.interactions(rows, index=index, max_order=3, n_samples=49)
    # STII's singletons and pairs are Moebius components: exact from those layers
    exact = np.asarray(ex.interactions(rows, index="STII", max_order=3).values)
    res = ex.set_params(random_state=0).interactions(rows, index="STII", max_order=3,
                                                     n_samples=50)
    value, se = np.asarray(res.values), np.asarray(res.standard_errors)
    low = slice(1, 1 + K + K * (K - 1) // 2)
    np.testing.assert_allclose(value[:, low], exact[:, low], atol=1e-12)
    np.testing.assert_array_equal(se[:, low], 0.0)
    assert np.all(se[:, low.stop:] > 1e-12 * scale)


@pytest.mark.parametrize("index", ORDER3)
def test_no_inexact_order_three_value_has_a_zero_standard_error(index):
    for game, n_bg in CASES:
        ex, rows, scale = _problem(game, n_bg)
        target = np.asarray(ex.interactions(rows, index=index, max_order=3).values)
        for budget in (50, 56):
            res = ex.set_params(random_state=0).interactions(
                rows, index=index, max_order=3, n_samples=budget)
            value, se = np.asarray(res.values), np.asarray(res.standard_errors)
            inexact = np.abs(value - target) > 1e-9 * scale
            assert np.all(se[inexact] > 1e-12 * scale), (game, n_bg, budget)


def test_kernel_shap_counts_the_degrees_of_freedom_its_fit_spends():
    # the leverages of all coalitions in the constrained fit sum to K - 1
    # (the trace of its hat matrix): the drawn ones spend part of that
    for k in (6, 8):
        Z, w, pairs, draws = sampled._kernel_design(k, 8 * k, np.random.RandomState(0))
        estimator = sampled._kernel_estimator(8 * k)(k, np.random.RandomState(0))
        gram = Z.T.astype(float) @ (w[:, None] * Z)
        inv = np.linalg.inv(gram)
        M = inv - np.outer(inv.sum(axis=1), inv.sum(axis=0)) / inv.sum()
        lev = w * np.einsum("uk,kj,uj->u", Z.astype(float), M, Z.astype(float))
        assert lev.sum() == pytest.approx(k - 1)
        fitted = estimator[3].fitted
        assert fitted == pytest.approx(lev[pairs.ravel()].sum())
        assert 0 < fitted < k - 1
        assert estimator[3].spent() == pytest.approx(1 - fitted / estimator[3].dof)


@pytest.mark.slow
@pytest.mark.parametrize("index", ORDER3)
def test_order_three_intervals_cover_each_size_of_term(index):
    # 40 seeds x 6 rows x the terms of each size, per game; measured in
    # benchmarks/bench_coverage_games.py (0.927 to 1.00); 0.82 to 0.89 for
    # the singletons of k-SII, FSII and FBII with 28 coalitions
    sizes = np.array([len(t) for t in index_terms(K, 3)])
    budget = min_budget(K, 3)
    for game, n_bg in CASES:
        ex, rows, scale = _problem(game, n_bg)
        target = np.asarray(ex.interactions(rows, index=index, max_order=3).values)
        inside = []
        for seed in range(40):
            value, se = sampled_interactions(ex.game_, rows, INDICES[index], 3,
                                             budget, seed)
            miss = np.abs(value[..., 0] - target)
            inside.append((miss <= 1e-9 * scale) | (miss <= 1.96 * se[..., 0]))
        inside = np.array(inside)
        for s in (1, 2, 3):
            assert inside[:, :, sizes == s].mean() >= 0.90, (game, n_bg, s)


def test_order_2_fsii_and_fbii_need_six_pairs_a_layer():
    # their singletons weigh every size; with 4 pairs a layer they covered 87 %
    for name in ("FSII", "FBII"):
        spec = INDICES[name]
        # 2K coalitions whole, then 6 pairs for each of the K // 2 - 1 other sizes
        assert [smallest_index_budget(K, spec, 2) for K in (6, 8)] == [12 + 24, 16 + 36]
        assert smallest_index_budget(6, spec, 3) == min_budget(6, 3) == 50
    assert smallest_index_budget(6, INDICES["SII"], 2) == min_budget(6, 2) == 28
    with pytest.raises(ValueError, match=r"at least n_samples=36: .* then 6 pairs .*"
                                         r"FSII's singletons weigh every size"):
        check_index_budget(6, 2, 35, INDICES["FSII"])
    check_index_budget(6, 2, 35, INDICES["BII"])
