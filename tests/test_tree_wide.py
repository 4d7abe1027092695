"""Exact attributions on the tree path beyond 62 groups."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

from skdecomp import Explainer

METHODS = ["shapley", "banzhaf", "occlusion", "arch"]


def _wide(d=70, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3]) + X[:, 4] * X[:, 5]
    return X, y


def test_null_columns_leave_every_method_unchanged():
    # a model that splits on 6 of 70 columns: the other 64 are null players,
    # which change no Shapley, Banzhaf, occlusion or arch value of the six;
    # the oracle is exact enumeration through model calls over the six
    # columns and one group holding all the others
    X, y = _wide()
    wide = np.zeros(70)
    wide[:6] = 1.0
    bg, rows = X[:40], X[100:106]
    # fitted on 70 columns of which the last 64 are constant: never split on
    big = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0)
    big.fit(X * wide, y)
    tree = Explainer(big, background=bg, random_state=0).fit(X)
    assert tree.algorithm_ == "tree" and tree.n_groups_ == 70
    got = tree.explain(rows, methods=METHODS)
    groups = [[j] for j in range(6)] + [list(range(6, 70))]
    ref = Explainer(ModelCalls(big), groups=groups, background=bg,
                    algorithm="model_agnostic", random_state=0).fit(X)
    want = ref.explain(rows, methods=METHODS)
    for m in METHODS:
        np.testing.assert_allclose(got[m].values[:, :6], want[m].values[:, :6],
                                   rtol=1e-9, atol=1e-9, err_msg=m)
        np.testing.assert_array_equal(got[m].values[:, 6:], 0.0)


class ModelCalls:
    """A tree model seen through model calls only."""

    def __init__(self, model):
        self.model = model

    def predict(self, Z):
        return self.model.predict(np.asarray(Z, dtype=np.float64))


def test_single_group_methods_match_model_calls_at_80_groups():
    # occlusion and arch need 2K coalitions: model calls are an oracle at any K
    X, y = _wide(d=80)
    model = RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0).fit(X, y)
    bg, rows = X[:30], X[200:204]
    tree = Explainer(model, background=bg, random_state=0).fit(X)
    calls = Explainer(ModelCalls(model), background=bg, random_state=0).fit(X)
    assert tree.algorithm_ == "tree" and calls.algorithm_ != "tree"
    got = tree.explain(rows, methods=["occlusion", "arch", "shapley"])
    want = calls.explain(rows, methods=["occlusion", "arch"])
    for m in ("occlusion", "arch"):
        np.testing.assert_allclose(got[m].values, want[m].values, atol=1e-10, err_msg=m)
    # efficiency of the exact Shapley values
    np.testing.assert_allclose(
        got["shapley"].values.sum(axis=1),
        model.predict(rows) - model.predict(bg).mean(), atol=1e-10,
    )


def test_shapley_equals_shap_on_100_singletons():
    shap = pytest.importorskip("shap")
    X, y = _wide(d=100, n=400)
    model = GradientBoostingRegressor(n_estimators=40, max_depth=4, random_state=0)
    model.fit(X, y)
    bg, rows = X[:50], X[300:330]
    explainer = Explainer(model, background=bg, random_state=0).fit(X)
    assert explainer.method_ == "shapley" and explainer.algorithm_ == "tree"
    phi = explainer.transform(rows)
    sv = shap.TreeExplainer(model, bg, feature_perturbation="interventional").shap_values(rows)
    np.testing.assert_allclose(phi, sv, atol=1e-6)


def test_decompose_keeps_its_limit():
    X, y = _wide()
    model = GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    explainer = Explainer(model, background=20, random_state=0).fit(X)
    with pytest.raises(ValueError, match="2\\*\\*K"):
        explainer.decompose(X[:2])


def test_auto_method_beyond_the_exact_limit_is_a_stated_sampled_estimate():
    X, y = _wide(d=20, n=200)

    def f(Z):
        Z = np.asarray(Z)
        return Z[:, 0] * Z[:, 1] + Z[:, 2]

    explainer = Explainer(f, background=10, n_samples=200, random_state=0).fit(X)
    assert explainer.method_ == "permutation_shap"
    result = explainer.explain(X[:3], methods=[explainer.method_])["permutation_shap"]
    assert result.n_samples == 200 and "n_samples=200" in repr(result)
    np.testing.assert_allclose(result.values, explainer.transform(X[:3]))
    # a sampled Shapley estimate keeps efficiency
    np.testing.assert_allclose(result.values.sum(axis=1),
                               f(X[:3]) - f(explainer.background_).mean(), atol=1e-8)
