"""The guide's mapping to shap's numbers ("Coming from shap") holds."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor

from skdecomp import Explainer

shap = pytest.importorskip("shap")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3])
    model = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0)
    return X, model.fit(X, y)


def test_path_dependent_shapley_values_are_tree_explainers(problem):
    X, model = problem
    ours = Explainer(model, imputer="path_dependent").fit(X).transform(X[:20])
    np.testing.assert_allclose(ours, shap.TreeExplainer(model).shap_values(X[:20]),
                               rtol=0, atol=1e-12)


def test_shap_interaction_values_are_k_sii_with_halved_pairs(problem):
    X, model = problem
    # the guide's snippet, as written
    res = Explainer(model, imputer="path_dependent").fit(X).interactions(
        X[:5], index="k-SII", max_order=2)
    K = len(res.feature_names)
    matrix = np.zeros((len(res.values), K, K))
    for t, term in enumerate(res.terms):
        if len(term) == 1:
            matrix[:, term[0], term[0]] = res.values[:, t]
        elif len(term) == 2:
            matrix[:, term[0], term[1]] = matrix[:, term[1], term[0]] = res.values[:, t] / 2
    ref = shap.TreeExplainer(model).shap_interaction_values(X[:5])
    np.testing.assert_allclose(matrix, ref, rtol=0, atol=1e-12)
    # SII: the same pairs, Shapley values (not k-SII singles) on the diagonal
    sii = Explainer(model, imputer="path_dependent").fit(X).interactions(
        X[:5], index="SII", max_order=2)
    pairs = [t for t, term in enumerate(sii.terms) if len(term) == 2]
    np.testing.assert_allclose(sii.values[:, pairs], res.values[:, pairs], atol=1e-12)
