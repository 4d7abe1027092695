"""The path-dependent (cover-weighted) game on the tree path: values, components,
attributions and interaction indices against brute force, shap and shapiq."""

import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from skdecomp._methods._indices import INDICES, get_index, index_values
from skdecomp._model import resolve_response
from skdecomp._tree import (
    TreeUnsupportedError,
    extract_tree_model,
    path_dependent_attributions,
    path_dependent_components,
    path_dependent_expected_value,
    path_dependent_interactions,
    path_dependent_values,
    tree_predict,
)

from . import _naive

GROUPS = [[0, 3], [1, 5], [2, 4]]
LABELS = np.array([0, 1, 2, 0, 2, 1])


def _weights(K):
    sizes = np.arange(1, K + 1, dtype=float)
    return {"shapley": np.r_[0.0, 1.0 / sizes],
            "banzhaf": np.r_[0.0, 0.5 ** (sizes - 1)]}


def _data(n=200, d=6, nan=0.0, seed=0):
    rng = np.random.default_rng(seed)
    # values exact in float32, so that scikit-learn's float32 splits and the
    # float64 oracle agree
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    y = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + X[:, 3] * (X[:, 4] > 0)
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    return X, y


def _tree_model(model, X):
    response, _ = resolve_response(model, "auto", None, X[:1])
    return extract_tree_model(model, response)


def _mask_tuple(mask, K):
    return tuple(k for k in range(K) if (mask >> k) & 1)


def _oracle(kind):
    X, y = _data(150)
    if kind == "forest":
        model = RandomForestRegressor(n_estimators=6, max_depth=5, random_state=0)
        model.fit(X, y)
        trees = [_naive.sklearn_tree_arrays(e, 1 / 6) for e in model.estimators_]
        offset = np.zeros(1)
        f = model.predict
    else:
        model = GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0)
        model.fit(X, y > 0)
        lr = model.learning_rate
        trees = [_naive.sklearn_tree_arrays(e, lr) for e in model.estimators_[:, 0]]
        x0 = X[:1]
        offset = model.decision_function(x0) - sum(
            lr * e.predict(x0) for e in model.estimators_[:, 0])
        f = model.decision_function
    return model, trees, np.atleast_1d(offset), f, X


@pytest.mark.parametrize("kind", ["forest", "boosting"])
def test_grouped_game_equals_brute_force(kind):
    model, trees, offset, f, X = _oracle(kind)
    tm = _tree_model(model, X)
    K = len(GROUPS)
    rows = X[:6]
    phi = path_dependent_attributions(tm, rows, LABELS, K, _weights(K))
    F = path_dependent_components(tm, rows, LABELS, K)
    v = path_dependent_values(tm, rows, LABELS, np.arange(1 << K))
    ev = path_dependent_expected_value(tm)
    for i, x in enumerate(rows):
        game = _naive.path_dependent_game(trees, offset, x, GROUPS)
        game = {S: float(val[0]) for S, val in game.items()}
        np.testing.assert_allclose(game[tuple(range(K))], f(x[None])[0], atol=1e-12)
        mob = _naive.moebius(game, K)
        expected_v = [game[_mask_tuple(m, K)] for m in range(1 << K)]
        expected_F = [mob[_mask_tuple(m, K)] for m in range(1 << K)]
        np.testing.assert_allclose(v[i, :, 0], expected_v, rtol=0, atol=1e-9)
        np.testing.assert_allclose(F[i, 0], expected_F, rtol=0, atol=1e-9)
        np.testing.assert_allclose(phi["shapley"][i, 0], _naive.shapley(game, K),
                                   rtol=0, atol=1e-9)
        np.testing.assert_allclose(phi["banzhaf"][i, 0], _naive.banzhaf(game, K),
                                   rtol=0, atol=1e-9)
        np.testing.assert_allclose(ev, [game[()]], rtol=0, atol=1e-12)


def _shap_layout(values, n_rows):
    """shap's values as (n_rows, n_outputs, n_features)."""
    sv = np.asarray(values)
    if sv.ndim == 3 and sv.shape[0] != n_rows:  # a list of outputs
        sv = np.moveaxis(sv, 0, -1)
    if sv.ndim == 2:
        sv = sv[:, :, None]
    return np.moveaxis(sv, 2, 1)


def _boosters():
    out = []
    for name in ("xgboost", "lightgbm", "catboost"):
        try:
            __import__(name)
        except ImportError:
            continue
        out.append(name)
    return out


def _make(kind, task):
    if kind == "forest":
        return RandomForestRegressor(n_estimators=8, max_depth=7, random_state=0)
    if kind == "gb":
        if task == "regression":
            return GradientBoostingRegressor(n_estimators=10, max_depth=3,
                                             random_state=0)
        return GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0)
    if kind == "hgb":
        cls = (HistGradientBoostingRegressor if task == "regression"
               else HistGradientBoostingClassifier)
        return cls(max_iter=10, max_leaf_nodes=12, random_state=0)
    if kind == "xgboost":
        import xgboost

        cls = xgboost.XGBRegressor if task == "regression" else xgboost.XGBClassifier
        return cls(n_estimators=15, max_depth=4, n_jobs=1, random_state=0)
    if kind == "lightgbm":
        import lightgbm

        cls = (lightgbm.LGBMRegressor if task == "regression"
               else lightgbm.LGBMClassifier)
        return cls(n_estimators=15, num_leaves=10, min_child_samples=5, verbose=-1,
                   n_jobs=1, random_state=0)
    import catboost

    cls = (catboost.CatBoostRegressor if task == "regression"
           else catboost.CatBoostClassifier)
    return cls(iterations=15, depth=4, verbose=0, random_seed=0, thread_count=1,
               allow_writing_files=False)


_SHAP_CASES = [
    ("forest", "regression"), ("gb", "regression"), ("gb", "binary"),
    ("hgb", "regression"), ("hgb", "binary"),
] + [(lib, task) for lib in _boosters() for task in ("regression", "multiclass")]


@pytest.mark.parametrize("kind, task", _SHAP_CASES)
def test_singletons_equal_shap_tree_path_dependent(kind, task):
    shap = pytest.importorskip("shap")
    nan = 0.1 if kind in ("hgb", "xgboost", "lightgbm", "catboost") else 0.0
    X, y = _data(300, nan=nan)
    s = np.nan_to_num(y)
    target = {"regression": s, "binary": (s > 0).astype(int),
              "multiclass": np.digitize(s, [-0.5, 0.5])}[task]
    model = _make(kind, task).fit(X, target)
    tm = _tree_model(model, X)
    rows = X[:25]
    phi = path_dependent_attributions(tm, rows, np.arange(6), 6, _weights(6))["shapley"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explainer = shap.TreeExplainer(model)
        theirs = _shap_layout(explainer.shap_values(rows), rows.shape[0])
    assert theirs.shape == phi.shape
    # XGBoost computes its path-dependent values in float32
    atol = 1e-5 if kind == "xgboost" else 1e-9
    np.testing.assert_allclose(phi, theirs, rtol=0, atol=atol)
    np.testing.assert_allclose(path_dependent_expected_value(tm),
                               np.ravel(explainer.expected_value), rtol=0, atol=atol)


def test_sii_and_k_sii_equal_shapiq():
    shapiq = pytest.importorskip("shapiq")
    X, y = _data(200, d=5)
    model = RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0).fit(X, y)
    tm = _tree_model(model, X)
    for index, order in (("SII", 2), ("k-SII", 3)):
        ours, terms = path_dependent_interactions(
            tm, X[:4], np.arange(5), 5, get_index(index).weight, order)
        explainer = shapiq.TreeExplainer(model=model, index=index, max_order=order,
                                         min_order=0)
        for i in range(4):
            theirs = explainer.explain(X[i]).dict_values
            ref = np.array([theirs.get(tuple(np.int64(g) for g in t), 0.0)
                            for t in terms])
            # the empty term: shapiq's baseline (for efficient indices the
            # expected value; see path_dependent_interactions)
            np.testing.assert_allclose(ours[i, 1:, 0], ref[1:], rtol=0, atol=1e-9)
        if get_index(index).efficient:
            np.testing.assert_allclose(path_dependent_expected_value(tm),
                                       [explainer.baseline_value], atol=1e-12)


@pytest.mark.parametrize("index", list(INDICES))
def test_grouped_interactions_equal_the_components(index):
    X, y = _data(150)
    model = GradientBoostingRegressor(n_estimators=10, max_depth=4, random_state=0)
    model.fit(X, y)
    tm = _tree_model(model, X)
    labels = np.array([0, 1, 2, 3, 1, 0])
    K = 4
    spec = get_index(index)
    rows = X[:5]
    F = path_dependent_components(tm, rows, labels, K)
    for order in ([1] if spec.order else [1, 2, 3]):
        ours, terms = path_dependent_interactions(tm, rows, labels, K, spec.weight,
                                                  order)
        ref = np.moveaxis(index_values(F, index, order), 1, -1)
        start = 1 if spec.efficient else 0
        np.testing.assert_allclose(ours[:, start:], ref[:, start:], rtol=0, atol=1e-9)
        sparse, sterms = path_dependent_interactions(tm, rows, labels, K, spec.weight,
                                                     order, dense=False)
        pos = [terms.index(t) for t in sterms]
        np.testing.assert_allclose(sparse, ours[:, pos], rtol=0, atol=1e-12)
        if spec.efficient and index != "Moebius":
            # the non-empty terms add up to f(x) - E (Moebius: at full order)
            total = ours[:, 1:, 0].sum(axis=1)
            np.testing.assert_allclose(
                total, model.predict(rows) - path_dependent_expected_value(tm)[0],
                rtol=0, atol=1e-9)


def test_efficiency_prediction_and_masks():
    X, y = _data(300, nan=0.1)
    model = HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, y)
    tm = _tree_model(model, X)
    rows = X[:30]
    K = 3
    ev = path_dependent_expected_value(tm)
    phi = path_dependent_attributions(tm, rows, LABELS, K, _weights(K))["shapley"]
    np.testing.assert_allclose(phi.sum(-1), model.predict(rows)[:, None] - ev,
                               rtol=0, atol=1e-12)
    masks = np.array([0, 7, 1, 6, 5], dtype=np.int64)
    v = path_dependent_values(tm, rows, LABELS, masks)
    np.testing.assert_allclose(v[:, 1], tree_predict(tm, rows), rtol=0, atol=1e-12)
    np.testing.assert_allclose(v[:, 1, 0], model.predict(rows), rtol=0, atol=1e-12)
    assert np.array_equal(v[:, 0], np.broadcast_to(ev, (30, 1)))
    as_bool = ((masks[:, None] >> np.arange(K)) & 1).astype(bool)
    assert np.array_equal(path_dependent_values(tm, rows, LABELS, as_bool), v)
    F = path_dependent_components(tm, rows, LABELS, K)
    assert np.array_equal(F[:, :, 0], np.broadcast_to(ev, (30, 1)))
    np.testing.assert_allclose(F.sum(-1)[:, 0], model.predict(rows), atol=1e-12)


def test_many_groups_and_deep_paths():
    """Beyond 62 groups and with paths of more than 12 groups (hashed patterns)."""
    shap = pytest.importorskip("shap")
    rng = np.random.default_rng(1)
    d = 70
    X = rng.normal(size=(400, d)).astype(np.float32).astype(np.float64)
    y = X[:, :10].sum(1) + X[:, 0] * X[:, 1] + rng.normal(size=400)
    model = RandomForestRegressor(n_estimators=4, max_features=0.5, random_state=0)
    model.fit(X, y)
    tm = _tree_model(model, X)
    assert tm.max_depth > 12
    rows = X[:10]
    phi = path_dependent_attributions(tm, rows, np.arange(d), d, _weights(d))
    theirs = shap.TreeExplainer(model).shap_values(rows)
    np.testing.assert_allclose(phi["shapley"][:, 0], theirs, rtol=0, atol=1e-9)
    ev = path_dependent_expected_value(tm)
    np.testing.assert_allclose(phi["shapley"].sum(-1),
                               model.predict(rows)[:, None] - ev, atol=1e-9)
    masks = np.zeros((3, d), dtype=bool)
    masks[1] = True
    masks[2, ::2] = True
    v = path_dependent_values(tm, rows, np.arange(d), masks)
    np.testing.assert_allclose(v[:, 1, 0], model.predict(rows), atol=1e-12)
    with pytest.raises(ValueError, match="booleans"):
        path_dependent_values(tm, rows, np.arange(d), np.array([1, 2]))
    # few groups on deep paths: components through hashed patterns
    labels = np.arange(d) % 14
    F = path_dependent_components(tm, rows[:3], labels, 14)
    sv = path_dependent_attributions(tm, rows[:3], labels, 14, _weights(14))["shapley"]
    sizes = np.array([bin(m).count("1") for m in range(1 << 14)])
    for k in range(14):
        has = (np.arange(1 << 14) >> k) & 1 == 1
        np.testing.assert_allclose((F[:, 0, has] / sizes[has]).sum(-1), sv[:, 0, k],
                                   atol=1e-9)
    values, terms = path_dependent_interactions(
        tm, rows[:3], np.arange(d), d, get_index("k-SII").weight, 2)
    assert len(terms) == 1 + d + d * (d - 1) // 2
    np.testing.assert_allclose(values[:, 1:, 0].sum(1), model.predict(rows[:3]) - ev,
                               atol=1e-9)


def test_bit_identical_for_any_n_jobs():
    X, y = _data(300, nan=0.05)
    model = HistGradientBoostingRegressor(max_iter=40, max_depth=5, random_state=0)
    model.fit(X, y)
    tm = _tree_model(model, X)
    rows = X[:40]
    K = 3
    weights = _weights(K)
    weight = get_index("FSII").weight
    for n_jobs in (2, -1):
        a1 = path_dependent_attributions(tm, rows, LABELS, K, weights)
        a2 = path_dependent_attributions(tm, rows, LABELS, K, weights, n_jobs=n_jobs)
        for m in weights:
            assert np.array_equal(a1[m], a2[m])
        masks = np.arange(1 << K)
        assert np.array_equal(path_dependent_values(tm, rows, LABELS, masks),
                              path_dependent_values(tm, rows, LABELS, masks, n_jobs))
        assert np.array_equal(path_dependent_components(tm, rows, LABELS, K),
                              path_dependent_components(tm, rows, LABELS, K, n_jobs))
        i1 = path_dependent_interactions(tm, rows, LABELS, K, weight, 3)[0]
        i2 = path_dependent_interactions(tm, rows, LABELS, K, weight, 3,
                                         n_jobs=n_jobs)[0]
        assert np.array_equal(i1, i2)


_NOJIT_SCRIPT = """
import pickle, sys
import numpy as np
from skdecomp._methods._indices import get_index
from skdecomp._tree import (path_dependent_attributions, path_dependent_components,
                            path_dependent_interactions, path_dependent_values,
                            path_dependent_expected_value)
tm, X = pickle.load(open(sys.argv[1], "rb"))
labels = np.array([0, 1, 2, 0, 2, 1])
w = {"shapley": np.array([0.0, 1.0, 0.5, 1 / 3])}
parts = [
    path_dependent_expected_value(tm),
    path_dependent_attributions(tm, X, labels, 3, w)["shapley"],
    path_dependent_values(tm, X, labels, np.arange(8)),
    path_dependent_components(tm, X, labels, 3),
    path_dependent_interactions(tm, X, labels, 3, get_index("k-SII").weight, 3)[0],
    path_dependent_interactions(tm, X, np.arange(6), 6, get_index("SII").weight, 2,
                                dense=False)[0],
]
np.save(sys.argv[2], np.concatenate([p.ravel() for p in parts]))
"""


@pytest.mark.slow
def test_same_results_without_jit(tmp_path):
    X, y = _data(120, nan=0.1)
    model = HistGradientBoostingRegressor(max_iter=5, max_depth=3, random_state=0)
    model.fit(X, y)
    tm = _tree_model(model, X)
    src = tmp_path / "in.pkl"
    with open(src, "wb") as f:
        pickle.dump((tm, X[:4]), f)
    results = []
    for disable in ("0", "1"):
        out = tmp_path / f"out_{disable}.npy"
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        subprocess.run([sys.executable, "-c", _NOJIT_SCRIPT, str(src), str(out)],
                       env=env, check=True)
        results.append(np.load(out))
    np.testing.assert_array_equal(results[0], results[1])


def test_cover_pickles_and_is_required():
    X, y = _data(100)
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    tm = _tree_model(model, X)
    assert tm.cover.shape == (tm.node_int.shape[0],)
    np.testing.assert_array_equal(
        tm.cover[: model.estimators_[0].tree_.node_count],
        model.estimators_[0].tree_.weighted_n_node_samples)
    back = pickle.loads(pickle.dumps(tm))
    np.testing.assert_array_equal(back.cover, tm.cover)
    # a tree model pickled before the cover was recorded
    state = tm.__getstate__()
    del state["cover"]
    old = object.__new__(type(tm))
    old.__setstate__(state)
    assert np.isnan(old.cover).all()
    with pytest.raises(TreeUnsupportedError, match="training cover"):
        path_dependent_expected_value(old)
    with pytest.raises(TreeUnsupportedError, match="training cover"):
        path_dependent_attributions(old, X[:2], np.arange(6), 6, _weights(6))


def test_bad_arguments():
    X, y = _data(100)
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    tm = _tree_model(model, X)
    with pytest.raises(ValueError, match="order 1 to 3"):
        path_dependent_interactions(tm, X[:2], LABELS, 3, get_index("SII").weight, 4)
    with pytest.raises(ValueError, match="at most"):
        path_dependent_components(tm, X[:2], np.arange(6) % 6, 17)
    with pytest.raises(ValueError, match="shape"):
        path_dependent_attributions(tm, X[:2], LABELS, 3, {"s": np.ones(3)})
    with pytest.raises(ValueError, match="columns"):
        path_dependent_values(tm, X[:2], LABELS, np.ones((2, 2), dtype=bool))
