"""Past the exact limit on the model-call path, interactions are estimated from a budget."""

import numpy as np
import pytest

from skdecomp import MAX_EXACT_GROUPS, Explainer


def test_interactions_past_the_exact_limit_are_estimated_within_the_budget():
    n_groups = MAX_EXACT_GROUPS + 1
    X = np.random.default_rng(0).normal(size=(20, n_groups))
    calls = []

    def model(Z):
        calls.append(len(Z))
        return np.asarray(Z).sum(axis=1)

    explainer = Explainer(model, background=5, random_state=0).fit(X)
    assert explainer.n_groups_ == n_groups
    assert explainer.algorithm_.startswith("model_agnostic")
    n_calls = sum(calls)
    res = explainer.interactions(X[:2], index="k-SII", max_order=2, n_samples=500)
    # at most 500 coalitions per row and background row, not 2**17
    assert sum(calls) - n_calls <= 2 * (500 * 5 + 1)
    assert res.standard_errors is not None
    # an additive game is fitted exactly: pairs 0, singletons x - E x
    np.testing.assert_allclose(res.values[:, n_groups + 1:], 0.0, atol=1e-10)
    # at the limit, the same model gives exact, efficient indices
    explainer = Explainer(model, groups=[[j] for j in range(4)],
                          background=np.zeros((1, 4))).fit(X[:, :4])
    res = explainer.interactions(X[:2, :4], index="k-SII", max_order=2)
    np.testing.assert_allclose(res.values[:, 1:5], X[:2, :4], atol=1e-12)
    np.testing.assert_allclose(res.values[:, 5:], 0.0, atol=1e-12)
