"""disagreement_sources: dependence that is there, and none that is not."""

import warnings

import numpy as np
import pytest

from skdecomp.inspection import disagreement_sources

MODELS = {
    "additive": lambda X: X.sum(axis=1),
    "interacting": lambda X: X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, 4],
}


@pytest.mark.parametrize("name", list(MODELS))
def test_no_dependence_between_independent_columns(name):
    # the true dependence is 0; one sampler fitted on the rows it explains
    # gave 2.5-3.5 % of Var f here (benchmarks/bench_sources_null.py)
    f = MODELS[name]
    values = []
    for seed in range(3):
        X = np.random.RandomState(seed).normal(size=(1000, 5))
        res = disagreement_sources(f, X, random_state=seed)
        assert res.dependence < 0.02
        # below the bound of its own error: no dependence claimed
        assert res.dependence <= res.dependence_noise
        values.append(res.dependence)
    assert np.mean(values) < 0.01


def test_dependence_that_is_there_is_found_above_its_noise():
    rng = np.random.RandomState(0)
    X = rng.multivariate_normal([0, 0, 0], [[1, .9, 0], [.9, 1, 0], [0, 0, 1]], 1000)
    res = disagreement_sources(lambda X: X.sum(axis=1), X, random_state=0)
    assert res.interaction < 1e-12
    assert res.dependence > 5 * res.dependence_noise
    # the two dependent columns carry it, the independent one almost none
    assert res.dependence_per_group[2] < 0.1 * res.dependence_per_group[:2].min()


def test_too_few_rows_are_refused_and_few_draw_a_warning():
    X = np.random.RandomState(0).normal(size=(15, 3))
    with pytest.raises(ValueError, match="at least 20 rows"):
        disagreement_sources(lambda X: X.sum(axis=1), X, random_state=0)
    X = np.random.RandomState(0).normal(size=(40, 3))
    with pytest.warns(UserWarning, match="too few to tell dependence from noise"):
        res = disagreement_sources(lambda X: X[:, 0] * X[:, 1], X, random_state=0)
    assert res.dependence_noise > 0.1


def test_the_user_data_is_not_modified():
    X = np.random.RandomState(0).normal(size=(200, 3))
    before = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        disagreement_sources(lambda X: X.sum(axis=1), X, random_state=0)
    np.testing.assert_array_equal(X, before)
