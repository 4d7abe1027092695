"""Past the exact limit on the model-call path, interactions fail fast and clearly."""

import numpy as np
import pytest

from skdecomp import MAX_EXACT_GROUPS, Explainer


def test_interactions_past_the_exact_limit_name_the_limit_and_the_fix():
    n_groups = MAX_EXACT_GROUPS + 1
    X = np.random.default_rng(0).normal(size=(20, n_groups))
    calls = []

    def model(Z):
        calls.append(len(Z))
        return np.asarray(Z).sum(axis=1)

    explainer = Explainer(model, background=5, random_state=0).fit(X)
    assert explainer.n_groups_ == n_groups
    assert explainer.algorithm_.startswith("model_agnostic")
    n_calls = len(calls)
    with pytest.raises(ValueError) as info:
        explainer.interactions(X[:2], index="k-SII", max_order=2)
    message = str(info.value)
    assert "through model calls" in message
    assert f"{n_groups} groups" in message
    assert f"at most {MAX_EXACT_GROUPS})" in message
    assert "fewer groups" in message and "AdaptiveGrouper" in message
    assert "tree ensemble" in message and "sampled" not in message
    # raised before any model call: no 2**17 hybrid rows are built
    assert len(calls) == n_calls
    # at the limit, the same model gives exact, efficient indices
    explainer = Explainer(model, groups=[[j] for j in range(4)],
                          background=np.zeros((1, 4))).fit(X[:, :4])
    res = explainer.interactions(X[:2, :4], index="k-SII", max_order=2)
    np.testing.assert_allclose(res.values[:, 1:5], X[:2, :4], atol=1e-12)
    np.testing.assert_allclose(res.values[:, 5:], 0.0, atol=1e-12)
