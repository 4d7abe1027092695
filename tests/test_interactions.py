"""ArchDetect pair strengths against the grouped decomposition."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from skdecomp import Explainer
from skdecomp.interactions import arch_detect


def _model(X):
    return X[:, 0] * X[:, 1] + np.sin(X[:, 1] * X[:, 2] * X[:, 3]) + X[:, 4] ** 2


@pytest.fixture(scope="module")
def data():
    return np.random.RandomState(0).normal(size=(30, 5))


@pytest.mark.parametrize("groups", [None, [[0, 4], [1], [2, 3]]])
def test_matches_components(data, groups):
    ex = Explainer(_model, groups=groups, background=data[:4]).fit(data)
    X = data[4:8]
    strengths = arch_detect(ex, X)
    K = ex.n_groups_
    assert strengths.shape == (4, K, K)
    dec = ex.decompose(X)
    F = dec.components
    for i in range(K):
        assert np.all(strengths[:, i, i] == 0)
        for j in range(i + 1, K):
            pair = 1 << i | 1 << j
            pure = F[:, pair]
            full = sum(F[:, m] for m in range(1 << K) if m & pair == pair)
            np.testing.assert_allclose(strengths[:, i, j], (pure**2 + full**2) / 2, atol=1e-10)
            np.testing.assert_array_equal(strengths[:, i, j], strengths[:, j, i])


def test_additive_group_has_no_interaction(data):
    ex = Explainer(_model, background=data[:3]).fit(data)
    strengths = arch_detect(ex, data[5:9])
    np.testing.assert_allclose(strengths[:, 4, :], 0, atol=1e-20)
    assert np.all(strengths[:, 0, 1] > 0)


def test_many_groups_and_outputs():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(60, 20))
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
    clf = LogisticRegression().fit(X, y)
    ex = Explainer(clf, method="kernel_shap", background=2, random_state=0).fit(X)
    strengths = arch_detect(ex, X[:2])
    assert strengths.shape == (2, 20, 20, 3)
    assert np.all(np.isfinite(strengths)) and np.all(strengths >= 0)


def test_validation(data):
    with pytest.raises(ValueError, match="explainer"):
        arch_detect("not an explainer", data)
    with pytest.raises(NotFittedError):
        arch_detect(Explainer(_model), data)
