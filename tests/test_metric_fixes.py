"""Sensitivity-n on too few coalitions, summed disagreement, PAIRWISE scores."""

import warnings

import numpy as np
import pytest

from skdecomp import Explainer, PairwiseGrouper
from skdecomp.metrics import disagreement, sensitivity_n


def _explainer(groups, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(40, 3))

    def f(X):
        return X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.5 * X[:, 0] * X[:, 2]

    return Explainer(f, groups=groups, background=X[:15]).fit(X), X[15:27]


# -- sensitivity-n ----------------------------------------------------------------
def test_sensitivity_1_on_two_groups_is_nan_with_warning():
    explainer, X = _explainer([[0, 1], [2]])
    phi = np.random.RandomState(1).normal(size=(len(X), 2))
    with pytest.warns(RuntimeWarning, match="fewer than 3 distinct"):
        res = sensitivity_n(explainer, X, attributions=phi, n=1)
    assert np.all(np.isnan(res.scores))
    assert np.isnan(res.score)


def test_sensitivity_n_on_three_groups_has_a_score_on_every_row():
    explainer, X = _explainer([[0], [1], [2]])
    phi = np.random.RandomState(1).normal(size=(len(X), 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = sensitivity_n(explainer, X, attributions=phi, n=1)
    assert np.all(np.isfinite(res.scores))
    assert res.score == pytest.approx(res.scores.mean())


def test_sensitivity_n_skips_nan_rows_in_the_score():
    # x1 copies x0 in the background; on row 0 (x0 == x1) groups 0 and 1
    # have the same attribution and the same deletion drop, so the three
    # coalitions of n=1 give only two distinct points
    rng = np.random.RandomState(0)
    background = rng.normal(size=(15, 3))
    background[:, 1] = background[:, 0]
    X = rng.normal(size=(6, 3))
    X[0, 1] = X[0, 0]
    explainer = Explainer(lambda X: X[:, 0] + X[:, 1] + X[:, 2] ** 2,
                          groups=[[0], [1], [2]], background=background).fit(X)
    phi = rng.normal(size=(6, 3))
    phi[0, 1] = phi[0, 0]
    with pytest.warns(RuntimeWarning, match="1 of 6 rows"):
        res = sensitivity_n(explainer, X, attributions=phi)
    assert np.isnan(res.scores[0]) and np.all(np.isfinite(res.scores[1:]))
    assert res.score == pytest.approx(res.scores[1:].mean())


# -- disagreement ------------------------------------------------------------------
def test_disagreement_normalize_sum_and_mean():
    rng = np.random.RandomState(0)
    a, b, c = rng.normal(size=(3, 10, 5))
    mean = disagreement([a, b, c])
    total = disagreement([a, b, c], normalize="sum")
    np.testing.assert_allclose(total.scores, 5 * mean.scores)
    np.testing.assert_allclose(total.pairwise, 5 * mean.pairwise)
    pairs = [(a, b), (a, c), (b, c)]
    np.testing.assert_allclose(
        total.scores, np.mean([((p - q) ** 2).sum(1) for p, q in pairs], 0)
    )
    assert disagreement([a, b], normalize="mean").score == disagreement([a, b]).score
    with pytest.raises(ValueError, match="measure='l2' only"):
        disagreement([a, b], measure="pearson", normalize="sum")
    with pytest.raises(ValueError, match="normalize"):
        disagreement([a, b], normalize="max")


def test_summed_disagreement_falls_while_the_mean_rises():
    # two explainers differ on groups 0 and 1; after merging them into one
    # group the summed gap falls (2 -> 1.69) while the mean over groups
    # rises (0.4 -> 0.42), because the number of groups fell from 5 to 4
    a, b = np.array([[1.0, -1.0, 0.0, 0.0, 0.0]]), np.zeros((1, 5))
    a2, b2 = np.array([[0.0, 0.0, 0.0, 1.3]]), np.zeros((1, 4))
    assert disagreement([a2, b2], normalize="sum").score == pytest.approx(1.69)
    assert disagreement([a, b], normalize="sum").score == pytest.approx(2.0)
    assert disagreement([a2, b2]).score > disagreement([a, b]).score


# -- PAIRWISE ----------------------------------------------------------------------
def test_pairwise_loss_scores_keep_their_sign():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 6))

    def f(X):
        return X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] * X[:, 4] + X[:, 5]

    grouper = PairwiseGrouper(f, max_samples=20, pair_score="loss", random_state=0).fit(X)
    assert np.any(grouper.interactions_ < 0)
    np.testing.assert_allclose(grouper.interactions_, grouper.interactions_.T)
    np.testing.assert_array_equal(np.diag(grouper.interactions_), 0.0)


def test_pairwise_default_threshold_is_relative_to_interaction_loss():
    # the interaction is about 0.1 % of the variance, all of the loss
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 4))

    def f(X):
        return 10 * X[:, 0] + 10 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3]

    grouper = PairwiseGrouper(f, max_samples=40, random_state=0).fit(X)
    assert grouper.interactions_[2, 3] < 0.01
    assert grouper.singleton_loss_ > 0
    assert grouper.groups_ == [[0], [1], [2, 3]]


def test_pairwise_without_interaction_keeps_columns_apart():
    X = np.random.RandomState(0).normal(size=(50, 4))
    grouper = PairwiseGrouper(lambda X: X.sum(1), max_samples=20, random_state=0).fit(X)
    assert grouper.singleton_loss_ == pytest.approx(0.0, abs=1e-12)
    assert grouper.n_groups_ == 4
