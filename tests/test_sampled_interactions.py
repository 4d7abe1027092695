"""Interaction indices estimated from a budget of coalitions, with standard errors."""

import time

import numpy as np
import pytest

from skdecomp import Explainer, InteractionExplanation
from skdecomp._methods._indices import INDICES
from skdecomp._methods._sampled_indices import min_budget

INDEX_NAMES = [name for name, spec in INDICES.items() if spec.order is None]


def model(Z):
    Z = np.asarray(Z, dtype=np.float64)
    return (Z.sum(axis=1) / 2 + Z[:, 0] * Z[:, 1] + Z[:, 2] * Z[:, 3] * Z[:, 4]
            + np.prod(np.tanh(Z[:, 3:7]), axis=1) + np.sin(Z[:, 1] + Z[:, 6]) * Z[:, 5])


def fitted(K, n_background=8, random_state=0):
    X = np.random.RandomState(0).normal(size=(60, K))
    return Explainer(model, background=X[:n_background], random_state=random_state).fit(X), X


@pytest.mark.parametrize("index", INDEX_NAMES + ["SV", "BV"])
def test_full_budget_gives_the_exact_values(index):
    ex, X = fitted(7)
    exact = ex.interactions(X[:3], index=index, max_order=3)
    full = ex.interactions(X[:3], index=index, max_order=3, n_samples=2**7)
    assert exact.standard_errors is None
    np.testing.assert_allclose(full.values, exact.values, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(full.standard_errors, 0.0)
    assert full.terms == exact.terms


@pytest.mark.parametrize("index", ["k-SII", "STII", "FSII", "BII"])
def test_estimates_close_in_and_the_intervals_cover(index):
    ex, X = fitted(12)
    rows = X[10:14]
    exact = ex.interactions(rows, index=index, max_order=2).values
    K = 12
    pairs = slice(1 + K, None)
    covered, errors = [], []
    for seed in range(3):
        ex.set_params(random_state=seed)
        est = ex.interactions(rows, index=index, max_order=2, n_samples=600)
        err = est.values[:, pairs] - exact[:, pairs]
        se = est.standard_errors[:, pairs]
        covered.append(np.abs(err) <= 1.96 * se + 1e-12)
        errors.append(np.mean(err**2))
    coverage = np.mean(covered)
    # measured over 264 pairs x 3 seeds: 0.93 (k-SII), 0.95 (STII), 0.94 (FSII),
    # 0.94 (BII); 0.89, 0.92, 0.88 and 0.89 without the leverage correction
    assert coverage >= 0.88, coverage
    assert np.mean(errors) < 1e-2 * np.mean(exact[:, pairs] ** 2) + 1e-6


def test_as_close_as_shapiqs_kernelshapiq_on_the_same_game():
    shapiq = pytest.importorskip("shapiq")
    ex, X = fitted(11, n_background=5)
    rows = X[20:23]
    exact = ex.interactions(rows, index="k-SII", max_order=2)
    budget = 400
    ours = ex.interactions(rows, index="k-SII", max_order=2, n_samples=budget - 2)
    theirs = []
    for r in range(rows.shape[0]):
        def game(coalitions, x=rows[r : r + 1]):
            return ex.game_.values(x, np.asarray(coalitions, dtype=bool))[0, :, 0]

        iv = shapiq.KernelSHAPIQ(11, max_order=2, index="k-SII", random_state=0)
        iv = iv.approximate(budget, game)
        theirs.append([iv[t] for t in exact.terms])
    theirs = np.array(theirs)
    pairs = slice(12, None)
    mse_ours = np.mean((ours.values[:, pairs] - exact.values[:, pairs]) ** 2)
    mse_theirs = np.mean((theirs[:, pairs] - exact.values[:, pairs]) ** 2)
    assert mse_ours <= mse_theirs, (mse_ours, mse_theirs)


@pytest.mark.slow
def test_thirty_two_groups_through_model_calls_add_up():
    K, budget = 32, 2048
    ex, X = fitted(K, n_background=10)
    assert ex.algorithm_.startswith("model_agnostic")
    start = time.perf_counter()
    res = ex.interactions(X[:4], index="k-SII", max_order=2, n_samples=budget)
    elapsed = time.perf_counter() - start
    assert elapsed < 20, elapsed
    assert res.values.shape == (4, 1 + K + K * (K - 1) // 2)
    assert res.standard_errors.shape == res.values.shape
    np.testing.assert_allclose(
        res.values[:, 1:].sum(axis=1), model(X[:4]) - res.base_values, atol=1e-10
    )
    # the default budget and the same draws for the same random_state
    again = ex.interactions(X[:4], index="k-SII", max_order=2, n_samples=budget)
    np.testing.assert_array_equal(again.values, res.values)
    default = ex.interactions(X[:1], index="STII", max_order=2)
    assert default.standard_errors is not None
    np.testing.assert_allclose(default.values[:, 1:].sum(axis=1),
                               model(X[:1]) - default.base_values, atol=1e-10)


def test_results_carry_the_standard_errors():
    ex, X = fitted(7)
    res = ex.interactions(X[:3], index="k-SII", max_order=2, n_samples=40)
    assert (res.standard_errors[:, 1:] > 0).any()
    frame = res.to_frame(standard_errors=True)
    np.testing.assert_array_equal(frame.to_numpy(), res.standard_errors[:, 1:])
    summary = res.summary()
    assert "se_mean" in summary.columns
    sub = res[[0, 2]]
    np.testing.assert_array_equal(sub.standard_errors, res.standard_errors[[0, 2]])
    exact = ex.interactions(X[:3], index="k-SII", max_order=2)
    assert "se_mean" not in exact.summary().columns
    with pytest.raises(ValueError, match="exact and have no standard errors"):
        exact.to_frame(standard_errors=True)
    pytest.importorskip("shapiq")
    assert res.to_shapiq(0).estimated and not exact.to_shapiq(0).estimated


def test_refusals_are_clear():
    ex, X = fitted(20)
    with pytest.raises(ValueError, match="n_samples=10 is too small"):
        ex.interactions(X[:1], index="k-SII", max_order=2, n_samples=10)
    with pytest.raises(ValueError, match="n_samples must be a positive int"):
        ex.interactions(X[:1], index="k-SII", max_order=2, n_samples=0)
    with pytest.raises(ValueError, match="lower max_order or n_samples"):
        ex.interactions(X[:1], index="k-SII", max_order=8, n_samples=300_000)
    # order 8 takes the layers of 1 to 7 groups whole: 4096 is too few
    with pytest.raises(ValueError, match="n_samples=275982: every coalition of 1 to 7"):
        ex.interactions(X[:1], index="k-SII", max_order=8, n_samples=4096)
    res = ex.interactions(X[:1], index="BII", max_order=1, n_samples=112)
    with pytest.raises(ValueError, match="standard_errors have shape"):
        InteractionExplanation(res.values, res.terms, res.base_values,
                               res.feature_names, "BII", 1,
                               standard_errors=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="finite and >= 0"):
        InteractionExplanation(res.values, res.terms, res.base_values,
                               res.feature_names, "BII", 1,
                               standard_errors=-np.ones(res.values.shape))


def test_smallest_budget_is_named_and_measures_its_spread():
    # 2K for the groups alone and all but one, then 4 pairs for each other size
    assert [min_budget(K) for K in (3, 4, 10, 14, 30)] == [6, 14, 52, 76, 172]
    ex, X = fitted(10)
    with pytest.raises(ValueError, match="give at least n_samples=52:"):
        ex.interactions(X[:1], index="k-SII", max_order=2, n_samples=51)
    exact = ex.interactions(X[:3], index="STII", max_order=2).values
    for budget in (52, 60, 200):
        for seed in range(3):
            ex.set_params(random_state=seed)
            res = ex.interactions(X[:3], index="STII", max_order=2, n_samples=budget)
            inexact = np.abs(res.values - exact) > 1e-9
            assert inexact.any()
            # a value that is not exact never has a standard error of 0
            assert (res.standard_errors[inexact] > 0).all(), (budget, seed)


def test_intervals_cover_at_the_smallest_budget_and_past_the_fit_of_pairs():
    # at 2 to 4 coalitions a coefficient of the order-2 fit (55 for 10
    # groups), where the spread of the residuals alone gave 79 % coverage of
    # the pairs, and at the smallest budget
    ex, X = fitted(10, n_background=5)
    rows = X[10:13]
    exact = ex.interactions(rows, index="k-SII", max_order=2).values
    for budget, low in ((52, 0.88), (110, 0.9)):
        covered = []
        for seed in range(12):
            ex.set_params(random_state=seed)
            est = ex.interactions(rows, index="k-SII", max_order=2, n_samples=budget)
            err = np.abs(est.values[:, 1:] - exact[:, 1:])
            covered.append(err <= 1.96 * est.standard_errors[:, 1:] + 1e-12)
        assert np.mean(covered) >= low, (budget, np.mean(covered))
