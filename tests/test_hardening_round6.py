"""Hardening, round 6: deep hierarchies, shap's plots, polars without pyarrow,
saliency maps of several images, samplers that write, label-map messages and
the report's check of large values."""

import re

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from skdecomp import Explainer


# -- 1. hierarchies deeper than Python's recursion limit --------------------------------
def _chain(n):
    """[[[0, 1], 2], ..., n - 1], built in a loop, and the same chain as a linkage."""
    spec = [0, 1]
    for j in range(2, n):
        spec = [spec, j]
    Z = np.array([[0, 1, 1, 2]] + [[n + t - 1, t + 1, t + 1, t + 2]
                                   for t in range(1, n - 1)], dtype=float)
    return spec, Z


@pytest.mark.parametrize("depth", [900, pytest.param(3000, marks=pytest.mark.slow)])
def test_a_hierarchy_deeper_than_the_recursion_limit_gives_the_shallow_values(depth):
    n = depth + 1
    rng = np.random.default_rng(0)
    X = np.zeros((40, n))
    X[:, :3] = rng.normal(size=(40, 3))
    # the model reads columns 0-2 only: the others are dummies, so the chain's
    # values equal those of a shallow tree with the same block over 0-2
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(
        X, X[:, 0] * X[:, 1] + X[:, 2])
    spec, Z = _chain(n)

    def owen(h):
        return Explainer(model, method="owen", hierarchy=h, background=X[:5]).fit(
            X[:5]).transform(X[10:13])

    deep = owen(spec)
    np.testing.assert_allclose(deep, owen(Z), atol=1e-12)
    np.testing.assert_allclose(deep, owen([[[0, 1], 2], *range(3, n)]), atol=1e-12)
    assert np.abs(deep[:, :3]).max() > 0 and not deep[:, 3:].any()
    explainer = Explainer(model, method="owen", hierarchy=spec,
                          background=X[:5]).fit(X[:5])
    assert explainer.hierarchy_.depth == depth
    e = explainer.explain(X[10:12], methods=["owen"])["owen"]
    top = e.at_level(3)
    np.testing.assert_allclose(top.values.sum(axis=1), e.values.sum(axis=1))
    assert e.to_shap().clustering is not None


def test_errors_of_a_deep_hierarchy_name_the_block():
    spec = [0, 1, []]
    for j in range(2, 1200):
        spec = [spec, j]
    X = np.zeros((5, 1200))
    path = "hierarchy" + "[0]" * 1198 + "[2]"
    with pytest.raises(ValueError, match=rf"the block {re.escape(path)} is empty; give"):
        Explainer(lambda Z: Z[:, 0], method="owen", hierarchy=spec,
                  background=X[:2]).fit(X)
