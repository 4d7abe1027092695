"""Interaction indices on the tree path, from per-leaf work, for any number of groups."""

from itertools import combinations

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from skdecomp import Explainer
from skdecomp._methods._indices import INDICES, get_index
from skdecomp._tree import extract_tree_model, tree_interactions

INDEX_NAMES = sorted(INDICES)


def _path_column_sets(model):
    """Sets of columns on each root-to-leaf path, read from sklearn's trees."""
    out = set()
    for est in np.ravel(model.estimators_):
        t = est.tree_
        stack = [(0, frozenset())]
        while stack:
            node, cols = stack.pop()
            if t.children_left[node] < 0:
                out.add(cols)
                continue
            cols = cols | {int(t.feature[node])}
            stack.append((t.children_left[node], cols))
            stack.append((t.children_right[node], cols))
    return out


@pytest.mark.parametrize("index", INDEX_NAMES)
def test_leaf_path_equals_components_multiclass(index):
    # a 3-class HGB (three outputs) on 5 groups: the per-leaf values equal
    # the index computed from all 2**K components through model calls
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (240, 6))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] + X[:, 3] * X[:, 4] > 0.3)
    model = HistGradientBoostingClassifier(max_iter=8, random_state=0).fit(X, y)
    groups = [[0], [1], [2, 5], [3], [4]]
    kw = dict(groups=groups, background=15, random_state=0, response_method="decision_function")
    tree = Explainer(model, algorithm="tree", **kw).fit(X)
    calls = Explainer(model, algorithm="model_agnostic", **kw).fit(X)
    for order in (1, 2, 3):
        a = tree.interactions(X[:4], index=index, max_order=order)
        b = calls.interactions(X[:4], index=index, max_order=order)
        assert a.terms == b.terms and a.values.shape == (4, len(a.terms), 3)
        np.testing.assert_allclose(a.values, b.values, atol=1e-10, err_msg=f"{order}")
        np.testing.assert_allclose(a.base_values, b.base_values, atol=1e-12)


def test_sparse_terms_equal_dense_terms():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 12))
    y = X[:, 0] * X[:, 1] + X[:, 2] + X[:, 3] * X[:, 4] * X[:, 5]
    model = RandomForestRegressor(n_estimators=6, max_depth=4, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    labels = np.arange(12)
    for index in ("k-SII", "SII", "FBII"):
        w = get_index(index).weight
        dense, dterms = tree_interactions(tm, X[:3], X[3:20], labels, 12, w, 3, dense=True)
        sparse, sterms = tree_interactions(tm, X[:3], X[3:20], labels, 12, w, 3, dense=False)
        pos = {t: j for j, t in enumerate(dterms)}
        np.testing.assert_array_equal(sparse, dense[:, [pos[t] for t in sterms]])
        # the terms left out share no path, and their values are exactly 0
        shared = _path_column_sets(model)
        left_out = [t for t in dterms if len(t) >= 2 and t not in set(sterms)]
        assert left_out and sterms[:13] == dterms[:13]
        for t in left_out:
            assert not any(set(t) <= s for s in shared)
            assert np.all(dense[:, pos[t]] == 0.0)


def _gb30():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 30))
    y = (X[:, 0] * X[:, 1] + np.sin(X[:, 2]) * X[:, 3] + X[:, 4] * X[:, 5] * X[:, 6]
         + X[:, 7:12].sum(axis=1) + 0.1 * rng.normal(size=400))
    model = GradientBoostingRegressor(n_estimators=60, max_depth=3, random_state=0)
    return X, model.fit(X, y)


def test_thirty_columns_k_sii_on_the_tree_path():
    # 2**30 coalitions: the per-leaf work never forms them
    shap = pytest.importorskip("shap")
    X, model = _gb30()
    bg = X[:40]
    explainer = Explainer(model, background=bg, algorithm="tree").fit(X)
    x = X[100:106]
    r = explainer.interactions(x, index="k-SII", max_order=2)
    assert len(r.terms) == 1 + 30 + 435
    # efficiency: the terms add up to the prediction
    np.testing.assert_allclose(r.values.sum(axis=1), model.predict(x), atol=1e-8)
    # pairs of columns that share no root-to-leaf path get exactly 0
    shared = _path_column_sets(model)
    pairs = r.terms[31:]
    never = [j for j, t in enumerate(pairs, 31) if not any(set(t) <= s for s in shared)]
    assert len(never) > 100
    assert np.all(r.values[:, never] == 0.0)
    M = r.matrix()
    assert M.shape == (6, 30, 30)
    # order 1: "SV" equals shap's interventional TreeExplainer
    sv = explainer.interactions(x, index="SV")
    ref = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional")
    np.testing.assert_allclose(sv.values[:, 1:], ref.shap_values(x, check_additivity=False),
                               atol=1e-8)
    np.testing.assert_allclose(sv.values[:, 0], float(np.ravel(ref.expected_value)[0]),
                               atol=1e-8)


@pytest.mark.slow
def test_three_hundred_columns_order_three_with_null_columns():
    # a model on 300 columns of which it uses few: the indices between the
    # used columns equal those of the model-agnostic game with every unused
    # column in one group (a null player changes no index of these weights)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 300))
    X[:, 12:] = np.round(X[:, 12:]) == 3  # nearly constant: rarely split on
    y = X[:, 0] * X[:, 1] * X[:, 2] + X[:, 3] * X[:, 4] + X[:, 5]
    model = HistGradientBoostingRegressor(max_iter=25, max_leaf_nodes=8,
                                          random_state=0).fit(X, y)
    bg = X[:8]
    wide = Explainer(model, background=bg, algorithm="tree").fit(X)
    x = X[200:202]
    results = {index: wide.interactions(x, index=index, max_order=3)
               for index in ("k-SII", "STII", "SII")}
    r = results["k-SII"]
    # the terms of more than one group: only those sharing a path
    assert len(r.terms) < 1 + 300 + 300 * 299 // 2
    used = sorted({g for t in r.terms[301:] for g in t})
    assert 6 <= len(used) <= 14, used
    rest = [c for c in range(300) if c not in used]
    small = Explainer(model, groups=[[c] for c in used] + [rest], background=bg,
                      algorithm="model_agnostic").fit(X)
    for index, r in results.items():
        ref = small.interactions(x, index=index, max_order=3)
        pos = {t: j for j, t in enumerate(r.terms)}
        for j, t in enumerate(ref.terms):
            if len(used) in t:  # a term with the null group
                np.testing.assert_allclose(ref.values[:, j], 0, atol=1e-10)
                continue
            ours = tuple(used[g] for g in t)
            got = r.values[:, pos[ours]] if ours in pos else 0.0
            np.testing.assert_allclose(got, ref.values[:, j], atol=1e-9,
                                       err_msg=f"{index} {ours}")


def test_order_above_three_on_the_tree_path():
    # up to 16 groups from the components; past that a clear error
    X = np.random.default_rng(4).normal(size=(100, 20))
    model = HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(X, X[:, 0])
    small = Explainer(model, groups=[[j] for j in range(4)] + [list(range(4, 20))],
                      background=5, random_state=0, algorithm="tree").fit(X)
    r = small.interactions(X[:2], index="Moebius", max_order=4)
    assert max(len(t) for t in r.terms) == 4
    wide = Explainer(model, background=5, random_state=0, algorithm="tree").fit(X)
    with pytest.raises(ValueError, match="groups"):
        wide.interactions(X[:2], index="Moebius", max_order=4)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_path_terms_are_the_subsets_of_every_path(order):
    # the support of the sparse terms against a walk of sklearn's own trees
    from skdecomp._tree._indices import term_key, tree_path_terms

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 9))
    y = X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] * X[:, 4] + X[:, 5]
    model = RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    for labels in (np.arange(9), np.array([0, 1, 1, 2, 3, 0, 2, 4, 3])):
        k = int(labels.max()) + 1
        got, most = tree_path_terms(tm.roots, tm.node_int, tm.column_groups(labels), k,
                                    order)
        paths = {frozenset(int(labels[c]) for c in cols)
                 for cols in _path_column_sets(model)}
        want = sorted({term_key(t, k) for p in paths
                       for s in range(2, order + 1) for t in combinations(sorted(p), s)})
        np.testing.assert_array_equal(got, want)
        assert most == max(len(p) for p in paths)
