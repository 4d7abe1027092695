"""Exact tree path: equality with the model-agnostic path and with shap."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from skdecomp import MAX_EXACT_GROUPS, Explainer
from skdecomp._decomposition import size_weights
from skdecomp._tree import (
    numba_only,
    anchored_sums_tree,
    extract_tree_model,
    tree_attributions,
    tree_components,
    tree_predict,
)
from skdecomp._game import Table, coalition_values
from skdecomp._model import resolve_response

ATOL = 1e-9
METHODS = ["shapley", "banzhaf", "occlusion", "arch"]


@pytest.fixture(autouse=True)
def _numba_kernels():
    # the numpy path of small problems is tested against these kernels in
    # test_tree_vectorized.py; here every size goes through the kernels
    with numba_only():
        yield


def _data(n=120, d=6, nan=0.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3] * (X[:, 4] > 0)
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    return X, y


def _weights(methods, n_groups):
    """Size weights w(|U|) of exact methods, as the tree path takes them."""
    return {m: size_weights(m, n_groups) for m in methods}


def _random_groups(d, k, seed):
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.arange(k), rng.integers(0, k, d - k)])
    rng.shuffle(labels)
    return [np.flatnonzero(labels == g).tolist() for g in range(k)]


def _pair(model, X, **kw):
    kw.setdefault("background", 15)
    kw.setdefault("random_state", 0)
    tree = Explainer(model, algorithm="tree", **kw).fit(X)
    agnostic = Explainer(model, algorithm="model_agnostic", **kw).fit(X)
    assert tree.algorithm_ == "tree"
    assert agnostic.algorithm_ == "model_agnostic"
    return tree, agnostic


def _assert_same(tree, agnostic, X):
    d_tree, d_ref = tree.decompose(X), agnostic.decompose(X)
    np.testing.assert_allclose(d_tree.components, d_ref.components, rtol=0, atol=ATOL)
    a_tree, a_ref = tree.explain(X, METHODS), agnostic.explain(X, METHODS)
    for m in METHODS:
        np.testing.assert_allclose(a_tree[m], a_ref[m], rtol=0, atol=ATOL)
    assert d_tree.completeness_error() < 1e-9


REGRESSORS = [
    (DecisionTreeRegressor(max_depth=6, random_state=0), 0.1),
    (RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0), 0.1),
    (ExtraTreesRegressor(n_estimators=8, max_depth=5, random_state=0), 0.1),
    (GradientBoostingRegressor(n_estimators=15, max_depth=3, random_state=0), 0.0),
    (HistGradientBoostingRegressor(max_iter=15, random_state=0), 0.15),
]


@pytest.mark.parametrize("model, nan", REGRESSORS, ids=lambda p: type(p).__name__)
@pytest.mark.parametrize("seed", [0, 1])
def test_regressors_match_model_agnostic(model, nan, seed):
    X, y = _data(nan=nan, seed=seed)
    model = clone(model).fit(X, np.nan_to_num(y))
    groups = _random_groups(X.shape[1], 3 + seed, seed)
    tree, agnostic = _pair(model, X, groups=groups)
    _assert_same(tree, agnostic, X[:8])


CLASSIFIERS = [
    (DecisionTreeClassifier(max_depth=5, random_state=0), "predict_proba"),
    (RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0), "predict_proba"),
    (ExtraTreesClassifier(n_estimators=8, max_depth=4, random_state=0), "predict_proba"),
    (GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0),
     "decision_function"),
    (HistGradientBoostingClassifier(max_iter=10, random_state=0), "decision_function"),
]


@pytest.mark.parametrize("model, response", CLASSIFIERS, ids=lambda p: str(p)[:30])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifiers_match_model_agnostic(model, response, n_classes):
    X, y = _data(nan=0.1 if not isinstance(model, GradientBoostingClassifier) else 0.0)
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    model = clone(model).fit(X, labels)
    tree, agnostic = _pair(model, X, groups=_random_groups(6, 3, n_classes),
                           response_method=response)
    _assert_same(tree, agnostic, X[:6])
    # a named class (negative class of a binary decision_function: sign -1)
    tree, agnostic = _pair(model, X, groups=_random_groups(6, 3, 5),
                           response_method=response, target=0)
    _assert_same(tree, agnostic, X[:6])


def test_depth_12_single_baseline_and_multioutput():
    X, y = _data(n=400, nan=0.05)
    model = DecisionTreeRegressor(max_depth=12, random_state=0).fit(X, y)
    assert model.get_depth() == 12
    tree, agnostic = _pair(model, X, groups=_random_groups(6, 4, 3), background=X[5])
    _assert_same(tree, agnostic, X[:10])

    Y = np.column_stack([y, np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 5])])
    forest = RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0)
    forest.fit(np.nan_to_num(X), Y)
    tree, agnostic = _pair(forest, np.nan_to_num(X), groups=_random_groups(6, 3, 4))
    _assert_same(tree, agnostic, np.nan_to_num(X[:5]))


def test_hist_gradient_boosting_categorical_frame():
    rng = np.random.default_rng(0)
    n = 200
    color = rng.choice(["red", "green", "blue", "cyan", "pink"], n).astype(object)
    color[rng.random(n) < 0.1] = None
    df = pd.DataFrame({
        "a": rng.normal(size=n),
        "color": pd.Categorical(color),
        "b": rng.normal(size=n),
        "size": pd.Categorical(rng.choice(["S", "M", "L"], n)),
    })
    df.loc[rng.random(n) < 0.1, "b"] = np.nan
    y = (df["a"] * (df["color"] == "red") + (df["size"] == "L") * df["b"].fillna(1)).to_numpy()
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(df, y)
    assert model.is_categorical_.tolist() == [False, True, False, True]
    tree, agnostic = _pair(model, df, groups={"g1": ["a", "size"], "g2": ["color"], "g3": ["b"]})
    X = df.iloc[:8].copy()
    # a category unseen in fit is treated as missing by the model
    X["color"] = X["color"].cat.add_categories(["violet"])
    X.iloc[0, 1] = "violet"
    _assert_same(tree, agnostic, X)


def test_hist_gradient_boosting_categorical_codes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    X[:, 1] = rng.integers(0, 7, 200)
    X[rng.random(200) < 0.1, 1] = np.nan
    y = np.where(np.isin(X[:, 1], [1, 3, 4]), X[:, 0], -X[:, 2])
    model = HistGradientBoostingClassifier(
        max_iter=10, categorical_features=[1], random_state=0
    ).fit(X, y > 0)
    tree, agnostic = _pair(model, X, groups=[[0], [1, 3], [2]],
                           response_method="decision_function")
    _assert_same(tree, agnostic, X[:8])


def test_pipeline_with_column_wise_steps():
    rng = np.random.default_rng(0)
    n = 150
    df = pd.DataFrame({
        "x0": rng.normal(size=n),
        "city": rng.choice(["a", "b", "c", "d"], n),
        "x1": rng.normal(size=n),
        "x2": rng.normal(size=n),
    })
    df.loc[rng.random(n) < 0.1, "x1"] = np.nan
    y = df["x0"] * (df["city"] == "b") + df["x1"].fillna(0) * df["x2"]
    pre = ColumnTransformer([
        ("onehot", OneHotEncoder(handle_unknown="ignore"), ["city"]),
        ("impute", make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()),
         ["x1", "x2"]),
    ], remainder="passthrough")
    model = make_pipeline(pre, RandomForestRegressor(n_estimators=6, max_depth=5,
                                                     random_state=0)).fit(df, y)
    tree, agnostic = _pair(model, df, groups={"a": ["x0", "x1"], "b": ["city"], "c": ["x2"]})
    _assert_same(tree, agnostic, df.iloc[:8])


def test_fallback_and_errors():
    X, y = _data()
    mixing = make_pipeline(PolynomialFeatures(2), DecisionTreeRegressor(max_depth=3)).fit(X, y)
    exp = Explainer(mixing, background=10).fit(X)
    assert exp.algorithm_.startswith("model_agnostic (")
    assert "PolynomialFeatures" in exp.algorithm_
    with pytest.raises(ValueError, match="algorithm='tree' cannot be used.*PolynomialFeatures"):
        Explainer(mixing, algorithm="tree", background=10).fit(X)

    gbc = GradientBoostingClassifier(n_estimators=5).fit(X, y > 0)
    exp = Explainer(gbc, background=10).fit(X)  # auto: the additive scale
    assert (exp.response_method_, exp.algorithm_) == ("decision_function", "tree")
    exp = Explainer(gbc, response_method="predict_proba", background=10).fit(X)
    assert exp.algorithm_.startswith("model_agnostic (")
    assert "decision_function" in exp.algorithm_
    with pytest.raises(ValueError, match="response_method='decision_function'"):
        Explainer(gbc, algorithm="tree", response_method="predict_proba", background=10).fit(X)
    # a forest: auto takes its probability, a mean over trees, on the tree path;
    # the log-odds of predict_proba go through model calls
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y > 0)
    exp = Explainer(forest, background=10).fit(X)
    assert (exp.response_method_, exp.algorithm_) == ("predict_proba", "tree")
    exp = Explainer(forest, response_method="log_odds", background=10).fit(X)
    assert exp.response_method_ == "log_odds"
    assert exp.algorithm_.startswith("model_agnostic (the log-odds of predict_proba")
    with pytest.raises(ValueError, match="response_method='predict_proba'"):
        Explainer(forest, algorithm="tree", response_method="log_odds", background=10).fit(X)

    poisson = HistGradientBoostingRegressor(loss="poisson", max_iter=5).fit(X, np.exp(y / 4))
    assert "LogLink" in Explainer(poisson, background=10).fit(X).algorithm_

    from sklearn.linear_model import LinearRegression

    exp = Explainer(LinearRegression().fit(X, y), background=10).fit(X)
    assert "not a supported tree model" in exp.algorithm_
    assert Explainer(mixing, algorithm="model_agnostic", background=10).fit(X).algorithm_ == (
        "model_agnostic"
    )
    with pytest.raises(ValueError, match="algorithm"):
        Explainer(mixing, algorithm="fast").fit(X)


def test_anchored_values_and_masks_match():
    X, y = _data(nan=0.1)
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    response, _ = resolve_response(model, "predict", None, X[:1])
    tm = extract_tree_model(model, response)
    np.testing.assert_allclose(tree_predict(tm, X), response(X), rtol=0, atol=1e-12)
    labels = np.array([0, 1, 1, 2, 3, 3])
    masks = np.array([0, 1, 2, 5, 6, 15])
    ref = coalition_values(response, Table(X[:7]), Table(X[7:19]), labels, masks,
                           batch_size=4096, average=False)
    rows, cols = anchored_sums_tree(tm, X[:7], X[7:19], labels, masks)
    assert rows.shape == (6, 1, 7) and cols.shape == (6, 1, 12)
    np.testing.assert_allclose(rows, ref.sum(axis=2).transpose(1, 2, 0), rtol=0, atol=ATOL)
    np.testing.assert_allclose(cols, ref.sum(axis=0).transpose(0, 2, 1), rtol=0, atol=ATOL)
    # a list of subsets in any order gives the matching columns of the full table
    full = tree_components(tm, X[:4], X[7:19], labels, 4)
    some = tree_components(tm, X[:4], X[7:19], labels, 4, masks=[6, 0, 3, 9])
    np.testing.assert_allclose(some, full[:, :, [6, 0, 3, 9]], rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["forest", "hgb_classifier"])
def test_anchored_sums_equal_sums_of_model_calls(kind):
    """Row and column sums of the N x N hybrids, from the trees and from the model."""
    X, y = _data(nan=0.1 if kind != "forest" else 0.0)
    if kind == "forest":
        model = ExtraTreesRegressor(n_estimators=6, max_depth=8, random_state=0).fit(X, y)
        method = "predict"
    else:
        model = HistGradientBoostingClassifier(max_iter=6, random_state=0)
        model.fit(X, np.digitize(y, [-0.5, 0.5]))
        method = "decision_function"
    response, _ = resolve_response(model, method, None, X[:1])
    tm = extract_tree_model(model, response)
    labels = np.array([0, 1, 1, 2, 3, 3])
    masks = np.array([0, 1, 2, 5, 6, 15, 9])
    ref = coalition_values(response, Table(X[:9]), Table(X[9:20]), labels, masks,
                           batch_size=4096, average=False)
    for n_jobs in (None, 2):
        rows, cols = anchored_sums_tree(tm, X[:9], X[9:20], labels, masks, n_jobs=n_jobs)
        assert rows.shape == (7, ref.shape[3], 9) and cols.shape == (7, ref.shape[3], 11)
        np.testing.assert_allclose(rows, ref.sum(axis=2).transpose(1, 2, 0), rtol=0, atol=ATOL)
        np.testing.assert_allclose(cols, ref.sum(axis=0).transpose(0, 2, 1), rtol=0, atol=ATOL)
        # the same rows as both sides are walked once: same sums as with a copy
        sample = X[:12]
        once = anchored_sums_tree(tm, sample, sample, labels, masks, n_jobs=n_jobs)
        twice = anchored_sums_tree(tm, sample, sample.copy(), labels, masks, n_jobs=n_jobs)
        for a, b in zip(once, twice):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_serial_parallel_pickle_clone():
    X, y = _data(nan=0.1)
    model = RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0).fit(X, y)
    model = FrozenEstimator(model)
    exp = Explainer(model, groups=_random_groups(6, 3, 0), background=12, random_state=0)
    exp.fit(X)
    serial = exp.transform(X[:9])
    par = clone(exp).set_params(n_jobs=2).fit(X).transform(X[:9])
    np.testing.assert_allclose(par, serial, rtol=0, atol=1e-12)
    again = pickle.loads(pickle.dumps(exp))
    assert again.algorithm_ == "tree"
    np.testing.assert_array_equal(again.transform(X[:9]), serial)



# -- the same bits for any n_jobs ---------------------------------------------------
def _n_jobs_model(kind):
    """Data and a small model whose trees the leaf-wise kernels sum in chunks."""
    X, y = _data(n=160, d=7, nan=0.1 if kind == "hgb" else 0.0, seed=3)
    if kind == "forest":
        model = RandomForestRegressor(n_estimators=16, max_depth=6, random_state=0)
        return X, model.fit(X, y), "predict"
    if kind == "gb_classifier":
        model = GradientBoostingClassifier(n_estimators=6, max_depth=3, random_state=0)
        return X, model.fit(X, np.digitize(y, [-0.5, 0.5])), "decision_function"
    model = HistGradientBoostingRegressor(max_iter=12, max_leaf_nodes=15,
                                          random_state=0)
    return X, model.fit(X, y), "predict"


@pytest.mark.parametrize("kind", ["forest", "gb_classifier", "hgb"])
@pytest.mark.parametrize("k", [3, 7])
def test_every_tree_entry_point_gives_the_same_bits_for_any_n_jobs(kind, k):
    from skdecomp._tree._dispatch import _n_chunks

    X, model, method = _n_jobs_model(kind)
    response, _ = resolve_response(model, method, None, X[:1])
    tm = extract_tree_model(model, response)
    assert _n_chunks(tm) > 1  # several chunks of trees, summed apart
    if kind == "forest" and k == 3:
        assert _n_chunks(tm, 3**k) > 1  # the ternary tables too
    labels = np.arange(7) % k
    Xe, Z, sample = X[:6], X[6:16], X[16:24]
    w = _weights(["shapley", "banzhaf"], k)
    masks = np.random.default_rng(k).choice(1 << k, size=min(12, 1 << k), replace=False)

    def run(n_jobs):
        out = {"predict": tree_predict(tm, X[:30], n_jobs=n_jobs)}
        for kernel in ("pairwise", "ternary"):
            out[f"components {kernel}"] = tree_components(
                tm, Xe, Z, labels, k, n_jobs=n_jobs, kernel=kernel)
        for kernel in ("pairwise", "patterns", "ternary", "hashed"):
            phi = tree_attributions(tm, Xe, Z, labels, k, w, n_jobs=n_jobs,
                                    kernel=kernel)
            out.update({f"{m} {kernel}": phi[m] for m in w})
        sums = anchored_sums_tree(tm, Xe, Z, labels, masks, n_jobs=n_jobs)
        out["anchored rows"], out["anchored columns"] = sums
        sums = anchored_sums_tree(tm, sample, sample, labels, masks, n_jobs=n_jobs)
        out["anchored rows, one sample"], out["anchored columns, one sample"] = sums
        return out

    ref = run(1)
    for n_jobs in (2, -1):
        got = run(n_jobs)
        for key, value in ref.items():
            assert np.array_equal(got[key], value), (key, n_jobs)


@pytest.mark.parametrize("kind", ["forest", "gb_classifier", "hgb"])
def test_explainer_gives_the_same_bits_for_any_n_jobs(kind):
    X, model, method = _n_jobs_model(kind)
    X = X[:40]
    for groups in (None, _random_groups(7, 3, 0)):
        kw = dict(groups=groups, background=12, random_state=0, response_method=method)
        serial = Explainer(model, n_jobs=1, **kw).fit(X)
        assert serial.algorithm_ == "tree"
        parallel = Explainer(model, n_jobs=2, **kw).fit(X)
        assert np.array_equal(parallel.transform(X), serial.transform(X))

_NOJIT_SCRIPT = """
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from skdecomp import Explainer
from skdecomp._tree import numba_only
numba_only().__enter__()  # the kernels (or their Python bodies) at every size
rng = np.random.default_rng(0)
X = rng.normal(size=(80, 4)); X[rng.random(X.shape) < 0.1] = np.nan
y = np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) + np.nan_to_num(X[:, 2])
model = HistGradientBoostingRegressor(max_iter=4, max_depth=3, random_state=0).fit(X, y)
exp = Explainer(model, groups=[[0, 3], [1], [2]], background=6, random_state=0,
                algorithm="tree").fit(X)
F = exp.decompose(X[:4]).components
phi = exp.transform(X[:4])
two = exp.explain(X[:4], ["shapley", "banzhaf"])
phi = np.concatenate([phi.ravel(), two["shapley"].values.ravel(),
                      two["banzhaf"].values.ravel()])
from skdecomp._tree import anchored_sums_tree, extract_tree_model
tm = extract_tree_model(model)
rows, cols = anchored_sums_tree(tm, X[:5], X[5:12], np.array([1, 2, 3, 0]), np.array([2, 4, 3, 6]))
S = X[:6]
r2, c2 = anchored_sums_tree(tm, S, S, np.array([1, 2, 3, 0]), np.array([2, 4, 3, 6]))
from skdecomp._tree import tree_attributions
w = {"shapley": np.array([0.0, 1.0, 0.5, 1 / 3])}
hashed = tree_attributions(tm, X[:4], X[4:10], np.array([0, 1, 2, 0]), 3, w,
                           kernel="hashed")["shapley"]
from skdecomp._tree import tree_interactions
from skdecomp._methods._indices import get_index
inter = [tree_interactions(tm, X[:4], X[4:10], np.array([0, 1, 2, 0]), 3,
                           get_index("k-SII").weight, 3, dense=dense)[0].ravel()
         for dense in (True, False)]
print(repr(np.concatenate([F.ravel(), phi.ravel(), rows.ravel(), cols.ravel(), r2.ravel(),
                           c2.ravel(), hashed.ravel(), *inter]).tolist()))
"""


def _run(env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, "-c", _NOJIT_SCRIPT], env=env,
                         capture_output=True, text=True, check=True)
    return np.array(eval(out.stdout.strip()))


def test_same_results_without_jit():
    jit = _run({})
    nojit = _run({"NUMBA_DISABLE_JIT": "1"})
    np.testing.assert_allclose(nojit, jit, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["forest", "hgb"])
def test_singleton_shapley_equals_shap_interventional(kind):
    shap = pytest.importorskip("shap")
    X, y = _data(n=150)
    if kind == "forest":
        model = RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0)
    else:
        model = HistGradientBoostingRegressor(max_iter=20, random_state=0)
    model.fit(X, y)
    bg = X[:25]
    exp = Explainer(model, background=bg, algorithm="tree").fit(X)
    ours = exp.transform(X[30:40])
    ref = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional")
    theirs = ref.shap_values(X[30:40], check_additivity=False)
    prediction = model.predict(X[30:40])
    # ours is additive to rounding; shap's own additivity gap here is about
    # 1e-8 to 6e-8, which bounds how closely the two can agree
    assert np.abs(ours.sum(1) + exp.expected_value_ - prediction).max() < 1e-12
    gap = np.abs(theirs.sum(1) + ref.expected_value - prediction).max()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=max(1e-8, 2 * gap))


def test_exact_shapley_beyond_enumeration_limit_on_tree_path():
    # 24 columns: more groups than 2**K enumeration allows, exact on the tree path
    shap = pytest.importorskip("shap")
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 24))
    y = X[:, 0] * X[:, 1] + X[:, 2] - X[:, 20] * X[:, 23]
    model = RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0).fit(X, y)
    bg = X[:20]
    exp = Explainer(model, background=bg).fit(X)
    assert exp.algorithm_ == "tree" and exp.n_groups_ > MAX_EXACT_GROUPS
    ours = exp.transform(X[30:36])
    ref = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional")
    theirs = ref.shap_values(X[30:36], check_additivity=False)
    gap = np.abs(theirs.sum(1) + ref.expected_value - model.predict(X[30:36])).max()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=max(1e-8, 2 * gap))
    assert set(exp.explain(X[:2])) == {"shapley", "banzhaf", "occlusion", "arch"}
    # off the tree path, and for the 2**K components, the limit stays
    with pytest.raises(ValueError, match="at most 16 groups"):
        Explainer(model, method="shapley", background=bg,
                  algorithm="model_agnostic").fit(X)
    with pytest.raises(ValueError, match="at most 16 groups"):
        exp.decompose(X[:2])
    # the default method off the tree path is a sampled Shapley estimate
    sampled = Explainer(model, background=bg, algorithm="model_agnostic").fit(X)
    assert sampled.method_ == "permutation_shap"


@pytest.mark.slow
def test_larger_forest_many_groups():
    X, y = _data(n=300, d=10, nan=0.05)
    model = ExtraTreesRegressor(n_estimators=20, max_depth=10, random_state=0).fit(X, y)
    tree, agnostic = _pair(model, X, groups=_random_groups(10, 7, 2), background=20)
    _assert_same(tree, agnostic, X[:10])


def test_leaf_wise_kernels_match_pairwise_walk():
    X, y = _data(n=200, d=8, nan=0.1)
    model = HistGradientBoostingClassifier(max_iter=8, random_state=0)
    model.fit(X, np.digitize(y, [-0.5, 0.5]))
    response, _ = resolve_response(model, "decision_function", None, X[:1])
    tm = extract_tree_model(model, response)
    for labels, k in [(np.array([0, 0, 1, 2, 2, 3, 3, 1]), 4), (np.arange(8), 8)]:
        ref = tree_components(tm, X[:20], X[20:50], labels, k, pairwise=True)
        for n_jobs in (None, 2):
            got = tree_components(tm, X[:20], X[20:50], labels, k, n_jobs=n_jobs)
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
        w = _weights(METHODS, k)
        ref = tree_attributions(tm, X[:20], X[20:50], labels, k, w, pairwise=True)
        got = tree_attributions(tm, X[:20], X[20:50], labels, k, w, n_jobs=2)
        for m in METHODS:
            np.testing.assert_allclose(got[m], ref[m], rtol=0, atol=1e-12)


@pytest.mark.parametrize("methods", [["shapley"], ["banzhaf", "arch"], METHODS])
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_leaf_wise_attributions_match_pairwise_walk(methods, n_outputs):
    # both leaf-wise attribution kernels (per distinct row pattern, and the
    # 3**K table), with one or several methods and outputs, serial and parallel
    X, y = _data(n=200, d=8, nan=0.1)
    if n_outputs == 1:
        model = ExtraTreesRegressor(n_estimators=6, max_depth=7, random_state=0).fit(X, y)
        tm = extract_tree_model(model)
    else:
        model = HistGradientBoostingClassifier(max_iter=6, random_state=0)
        model.fit(X, np.digitize(y, [-0.5, 0.5]))
        response, _ = resolve_response(model, "decision_function", None, X[:1])
        tm = extract_tree_model(model, response)
    for labels, k in [(np.array([0, 0, 1, 2, 2, 1, 0, 1]), 3),
                      (np.array([0, 0, 1, 2, 2, 3, 3, 1]), 4), (np.arange(8), 8)]:
        w = _weights(methods, k)
        ref = tree_attributions(tm, X[:25], X[25:60], labels, k, w, pairwise=True)
        for n_jobs in (None, 2):
            got = tree_attributions(tm, X[:25], X[25:60], labels, k, w, n_jobs=n_jobs)
            for m in methods:
                assert got[m].shape == (25, n_outputs, k)
                np.testing.assert_allclose(got[m], ref[m], rtol=0, atol=1e-12)


def test_background_summary_is_reused_only_for_the_same_background():
    X, y = _data(n=150, nan=0.1)
    model = RandomForestRegressor(n_estimators=6, max_depth=6, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    g1, g2 = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 2, 2, 0])

    def phi(tm, bg, labels):
        return tree_attributions(tm, X[:10], bg, labels, 3, _weights(["shapley"], 3))["shapley"]

    first = phi(tm, X[20:40], g1)
    summary = tm.__dict__["_background_leaves"][3]
    np.testing.assert_array_equal(phi(tm, X[20:40].copy(), g1), first)
    assert tm.__dict__["_background_leaves"][3] is summary  # reused
    for bg, labels in [(X[40:60], g1), (X[40:60], g2), (X[20:40], g1)]:
        fresh = extract_tree_model(model)  # nothing kept
        np.testing.assert_array_equal(phi(tm, bg, labels), phi(fresh, bg, labels))
    state = pickle.loads(pickle.dumps(tm)).__dict__
    assert "_background_leaves" not in state


@pytest.mark.parametrize("n_groups", [12, 14])
def test_many_singleton_groups_match_pairwise_walk(n_groups):
    # 12 groups: per distinct row pattern; 14: the hashed leaf-wise kernel
    X, y = _data(n=150, d=n_groups, nan=0.05)
    model = ExtraTreesRegressor(n_estimators=4, max_depth=8, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    labels = np.arange(n_groups)
    methods = ["shapley", "banzhaf"]
    w = _weights(methods, n_groups)
    ref = tree_attributions(tm, X[:12], X[12:40], labels, n_groups, w, pairwise=True)
    for n_jobs in (None, 2):
        got = tree_attributions(tm, X[:12], X[12:40], labels, n_groups, w, n_jobs=n_jobs)
        for m in methods:
            np.testing.assert_allclose(got[m], ref[m], rtol=0, atol=1e-12)


@pytest.mark.parametrize("grouper_cls", ["AdaptiveGrouper", "PairwiseGrouper"])
def test_groupers_take_the_tree_path(grouper_cls):
    import skdecomp
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skdecomp.datasets import make_agreed_example

    data = make_agreed_example(n_samples=400, random_state=0)
    model = HistGradientBoostingRegressor(max_iter=60, random_state=0).fit(
        data.data, data.target
    )
    cls = getattr(skdecomp, grouper_cls)
    kw = dict(max_samples=30, random_state=0)
    tree = cls(model, algorithm="tree", **kw).fit(data.data)
    agnostic = cls(model, algorithm="model_agnostic", **kw).fit(data.data)
    assert tree.algorithm_ == "tree"
    assert agnostic.algorithm_ == "model_agnostic"
    assert tree.groups_ == agnostic.groups_
    # AdaptiveGrouper's default n_groups="auto" also calls the model on 30 held-out rows
    n_calls = 60 if grouper_cls == "AdaptiveGrouper" else 30
    assert tree.model_calls_ == n_calls < agnostic.model_calls_
    if grouper_cls == "AdaptiveGrouper":
        assert tree.loss_ == pytest.approx(agnostic.loss_, rel=1e-9, abs=1e-12)
        for a, b in zip(tree.history_, agnostic.history_):
            assert a["groups"] == b["groups"]
            assert a["loss_after"] == pytest.approx(b["loss_after"], rel=1e-9, abs=1e-12)


def test_dispatch_table_keeps_the_former_rules():
    # the one dispatch function against the rules it replaced
    from skdecomp._tree._dispatch import _choose_kernel

    for k in range(1, 20):
        for all_masks in (True, False):
            for pairwise in (True, False):
                old = "ternary" if all_masks and k <= 10 and not pairwise else "pairwise"
                assert _choose_kernel("components", k, all_masks=all_masks,
                                      pairwise=pairwise) == old
        for n_methods in range(1, 7):
            if k <= 12 and (n_methods * k <= 12 or k >= 8):
                old = "patterns"
            elif k <= 10:
                old = "ternary"
            else:
                old = "hashed"
            assert _choose_kernel("attributions", k, n_methods=n_methods) == old
            assert _choose_kernel("attributions", k, n_methods, pairwise=True) == "pairwise"


def test_every_kernel_gives_the_same_numbers():
    X, y = _data(n=120, d=6, nan=0.1)
    model = RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    labels, k = np.array([0, 1, 1, 2, 3, 4]), 5
    ref = tree_components(tm, X[:10], X[10:40], labels, k, kernel="pairwise")
    got = tree_components(tm, X[:10], X[10:40], labels, k, kernel="ternary")
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    w = _weights(METHODS, k)
    ref = tree_attributions(tm, X[:10], X[10:40], labels, k, w, kernel="pairwise")
    for kernel in ("patterns", "ternary", "hashed"):
        got = tree_attributions(tm, X[:10], X[10:40], labels, k, w, kernel=kernel)
        for m in METHODS:
            np.testing.assert_allclose(got[m], ref[m], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="Unknown"):
        tree_attributions(tm, X[:10], X[10:40], labels, k, w, kernel="bogus")
    with pytest.raises(ValueError, match="masks=None"):
        tree_components(tm, X[:10], X[10:40], labels, k, masks=[1], kernel="ternary")


def test_attributions_take_size_weights():
    X, y = _data(n=80)
    model = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    labels = np.array([0, 0, 1, 1, 2, 2])
    with pytest.raises(TypeError, match="weights must map"):
        tree_attributions(tm, X[:5], X[5:20], labels, 3, ["shapley"])
    with pytest.raises(ValueError, match=r"expected \(4,\)"):
        tree_attributions(tm, X[:5], X[5:20], labels, 3, {"shapley": np.ones(3)})
    # any size weights: w(s) = s**2 against the components
    w = np.arange(4.0) ** 2
    phi = tree_attributions(tm, X[:5], X[5:20], labels, 3, {"squares": w})["squares"]
    F = tree_components(tm, X[:5], X[5:20], labels, 3)
    masks = np.arange(8)
    size = np.array([int(m).bit_count() for m in masks])
    for g in range(3):
        has = (masks >> g) & 1 == 1
        np.testing.assert_allclose(phi[:, :, g], (F[:, :, has] * w[size[has]]).sum(-1),
                                   rtol=0, atol=1e-12)


def test_anchored_sums_take_a_table():
    X, y = _data(n=80)
    model = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    labels, masks = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 5, 7])
    T = Table(X[:9])  # the coalition game passes one Table as X and Z
    got = anchored_sums_tree(tm, T, T, labels, masks, n_jobs=2)
    ref = anchored_sums_tree(tm, X[:9], X[:9], labels, masks)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_tree_path_imports_only_lower_layers():
    # _tree sits above _numba, _config, _compat, _boosters, _partition, _model
    # and _table
    import ast
    from pathlib import Path

    import skdecomp._tree as pkg

    allowed = {"_numba", "_config", "_compat", "_boosters", "_partition", "_model",
               "_table"}
    for path in Path(pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                top = (node.module or "").split(".")[0]
                names = [top] if top else [a.name for a in node.names]
                assert set(names) <= allowed, (path.name, names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] == "skdecomp":
                    assert len(parts) > 1 and parts[1] in allowed, (path.name, node.module)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    if parts[0] == "skdecomp":
                        assert parts[1:2] == ["_tree"] or parts[1] in allowed, (path.name, a.name)
