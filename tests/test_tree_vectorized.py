"""The numpy tree path: equal to the Numba kernels, to shap, and efficient."""

import ast
from pathlib import Path

import numpy as np
import pytest
import shap
from sklearn import config_context
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from skdecomp._decomposition import size_weights
from skdecomp._tree import extract_tree_model, numba_only, tree_attributions, tree_predict
from skdecomp._tree._dispatch import anchored_sums_tree
from skdecomp._tree._dispatch import leaf_coefficients
from skdecomp._tree._vectorized import (
    MAX_PATH_GROUPS,
    _sum_by_key,
    anchored_sums_vectorized,
    attributions_vectorized,
    predict_vectorized,
    vectorized_work,
)

METHODS = ["shapley", "banzhaf", "occlusion", "arch"]
N_COLUMNS = 8


def _data(n=160, seed=0):
    """Numerical columns with NaN, and integer category codes in column 1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_COLUMNS))
    X[:, 1] = rng.integers(0, 7, n)
    y = (X[:, 0] * X[:, 2] + np.where(np.isin(X[:, 1], [1, 4, 5]), X[:, 3], -X[:, 4])
         + np.sin(2 * X[:, 5]) + 0.5 * X[:, 6] * (X[:, 7] > 0))
    X[rng.random(X.shape) < 0.08] = np.nan
    return X, y


def _fit(name):
    X, y = _data()
    if name == "hgb":
        model = HistGradientBoostingRegressor(max_iter=15, categorical_features=[1],
                                              random_state=0)
    elif name == "rf":
        # several targets: several outputs per leaf
        X = np.nan_to_num(X)
        y = np.column_stack([y, X[:, 0] - X[:, 3] * X[:, 5]])
        model = RandomForestRegressor(n_estimators=6, min_samples_leaf=2,
                                      random_state=0)
    else:
        X = np.nan_to_num(X)
        model = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0)
    return model.fit(X, y), X


@pytest.fixture(scope="module", params=["hgb", "rf", "gb"])
def fitted(request):
    model, X = _fit(request.param)
    return extract_tree_model(model), X


def _labels(n_groups, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.arange(n_groups),
                             rng.integers(0, n_groups, N_COLUMNS - n_groups)])
    rng.shuffle(labels)
    return labels


def _tables(methods, n_groups, n_table=None):
    """coef_a, coef_b of ``methods``; only a + b <= n_table are filled when given."""
    n_table = n_groups if n_table is None else n_table
    coef_a = np.zeros((len(methods), n_groups + 1, n_groups + 1))
    coef_b = np.zeros_like(coef_a)
    for i, m in enumerate(methods):
        w = size_weights(m, n_groups)[:n_table + 1]
        a, b = leaf_coefficients(w, n_table)
        coef_a[i, :n_table + 1, :n_table + 1] = a
        coef_b[i, :n_table + 1, :n_table + 1] = b
    return coef_a, coef_b


def _vectorized(tree_model, X, Z, labels, n_groups, methods):
    coef_a, coef_b = _tables(methods, n_groups)
    return attributions_vectorized(
        tree_model.prepare(X), tree_model.prepare(Z), tree_model.column_groups(labels),
        *tree_model.arrays(), coef_a, coef_b, n_groups, tree_model.max_depth,
    )


def _rows(X):
    """Explained rows: distinct ones, and repeated ones that share their patterns."""
    return {"distinct": X[:7], "repeated": X[[0, 0, 0, 3, 3, 3, 9, 9]]}


def test_predict_equals_the_tree_model(fitted):
    tree_model, X = fitted
    rows = X[:40].copy()
    if tree_model.kind == "hgb":
        # unknown, negative and missing category codes
        rows[:3, 1] = [9.0, -1.0, np.nan]
    got = predict_vectorized(*tree_model.arrays(), tree_model.prepare(rows))
    want = tree_predict(tree_model, rows) - tree_model.offset
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_groups", [1, 3, 8])
@pytest.mark.parametrize("kind", ["distinct", "repeated"])
def test_attributions_equal_the_kernels(fitted, n_groups, kind):
    tree_model, X = fitted
    labels = _labels(n_groups, seed=n_groups)
    Xe, Z = _rows(X)[kind], X[100:130]
    got = _vectorized(tree_model, Xe, Z, labels, n_groups, METHODS)
    assert got.shape == (Xe.shape[0], len(METHODS), tree_model.n_outputs, n_groups)
    weights = {m: size_weights(m, n_groups) for m in METHODS}
    scale = 1.0 + np.abs(got).max()
    for kernel in ("hashed", "pairwise"):
        want = tree_attributions(tree_model, Xe, Z, labels, n_groups, weights,
                                 kernel=kernel)
        for i, m in enumerate(METHODS):
            np.testing.assert_allclose(got[:, i], want[m], rtol=1e-10,
                                       atol=1e-10 * scale, err_msg=f"{kernel} {m}")


@pytest.mark.parametrize("n_groups", [1, 3, 8])
def test_anchored_sums_equal_the_kernel(fitted, n_groups):
    tree_model, X = fitted
    labels = _labels(n_groups)
    full = (1 << n_groups) - 1
    masks = np.unique(np.array([0, 1, full, full & 5, full & 6, full ^ 1], dtype=np.int64))
    col_group = tree_model.column_groups(labels)
    A, B = X[:30], X[30:70]
    with numba_only():
        want = anchored_sums_tree(tree_model, A, B, labels, masks)
        want_same = anchored_sums_tree(tree_model, A, A, labels, masks)
    Am, Bm = tree_model.prepare(A), tree_model.prepare(B)
    got = anchored_sums_vectorized(Am, Bm, col_group, *tree_model.arrays(), masks)
    got_same = anchored_sums_vectorized(Am, Am, col_group, *tree_model.arrays(), masks,
                                        same=True)
    off = tree_model.offset[None, :, None]
    for g, w, n in ((got[0], want[0], 40), (got[1], want[1], 30),
                    (got_same[0], want_same[0], 30), (got_same[1], want_same[1], 30)):
        np.testing.assert_allclose(g + n * off, w, rtol=1e-12, atol=1e-10)
    # the dispatch serves these sizes in numpy, with the same numbers
    np.testing.assert_allclose(anchored_sums_tree(tree_model, A, B, labels, masks)[0],
                               want[0], rtol=1e-12, atol=1e-10)


def test_chunks_do_not_change_the_result(fitted):
    # a tiny working memory: one tree, one leaf and one explained row per chunk
    tree_model, X = fitted
    labels = _labels(3)
    Xe, Z = X[[0, 0, 1, 2, 5]], X[100:120]
    want = _vectorized(tree_model, Xe, Z, labels, 3, ["shapley", "banzhaf"])
    with config_context(working_memory=0.01):
        got = _vectorized(tree_model, Xe, Z, labels, 3, ["shapley", "banzhaf"])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_inputs_are_not_written():
    model, X = _fit("hgb")
    tree_model = extract_tree_model(model)
    arrays = [a.copy() for a in tree_model.arrays()]
    Xm, Zm = tree_model.prepare(X[:5]), tree_model.prepare(X[50:70])
    Xm0, Zm0 = Xm.copy(), Zm.copy()
    coef_a, coef_b = _tables(["shapley"], 3)
    col_group = tree_model.column_groups(_labels(3))
    attributions_vectorized(Xm, Zm, col_group, *tree_model.arrays(), coef_a, coef_b, 3)
    predict_vectorized(*tree_model.arrays(), Xm)
    for a, b in zip(arrays, tree_model.arrays()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(Xm, Xm0)
    np.testing.assert_array_equal(Zm, Zm0)


def test_no_background_or_rows():
    model, X = _fit("gb")
    tree_model = extract_tree_model(model)
    coef_a, coef_b = _tables(["shapley"], 3)
    col_group = tree_model.column_groups(_labels(3))
    Xm = tree_model.prepare(X[:5])
    for Xe, Z in [(Xm[:0], Xm), (Xm, Xm[:0])]:
        got = attributions_vectorized(Xe, Z, col_group, *tree_model.arrays(), coef_a,
                                      coef_b, 3)
        assert got.shape == (Xe.shape[0], 1, 1, 3) and not got.any()


def test_many_groups_efficiency_and_shap():
    # 120 singleton groups: beyond the int64 bitmasks over groups
    rng = np.random.default_rng(3)
    n_features = 120
    X = rng.normal(size=(300, n_features))
    y = (X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 50] * (X[:, 119] > 0)
         + X[:, 7:20].sum(axis=1))
    model = GradientBoostingRegressor(n_estimators=25, max_depth=4, random_state=0)
    model.fit(X, y)
    tree_model = extract_tree_model(model)
    Xe, Z = X[:6], X[200:240]
    labels = np.arange(n_features)
    # Shapley coefficients do not depend on n_groups: a table up to the depth
    coef_a, coef_b = _tables(["shapley"], n_features, n_table=tree_model.max_depth)
    phi = attributions_vectorized(
        tree_model.prepare(Xe), tree_model.prepare(Z), tree_model.column_groups(labels),
        *tree_model.arrays(), coef_a, coef_b, n_features,
    )[:, 0, 0]
    gap = model.predict(Xe) - model.predict(Z).mean()
    np.testing.assert_allclose(phi.sum(axis=1), gap, rtol=0, atol=1e-9)
    explainer = shap.TreeExplainer(model, Z, feature_perturbation="interventional")
    np.testing.assert_allclose(phi, explainer.shap_values(Xe), rtol=0, atol=1e-6)


def test_grouped_many_groups_efficiency():
    # 100 groups of 1-2 columns, several methods and outputs per call
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 150))
    y = X[:, 0] * X[:, 1] + X[:, 100] - X[:, 149] * X[:, 3] + rng.normal(size=400)
    # deep trees: paths of more than 14 groups, masks of 32 bits
    model = RandomForestRegressor(n_estimators=3, random_state=0)
    model.fit(X, np.column_stack([y, -2 * y]))
    tree_model = extract_tree_model(model)
    labels = rng.permutation(np.arange(150) % 100)
    Xe, Z = X[:4], X[100:130]
    coef_a, coef_b = _tables(["shapley", "banzhaf"], 100, n_table=tree_model.max_depth)
    phi = attributions_vectorized(
        tree_model.prepare(Xe), tree_model.prepare(Z), tree_model.column_groups(labels),
        *tree_model.arrays(), coef_a, coef_b, 100,
    )
    gap = model.predict(Xe) - model.predict(Z).mean(axis=0)
    np.testing.assert_allclose(phi[:, 0].sum(axis=-1), gap, rtol=0, atol=1e-9)
    np.testing.assert_allclose(phi[:, 0, 1], -2 * phi[:, 0, 0], rtol=1e-12, atol=1e-12)


def _chain(n_splits):
    """Flat arrays of one tree: a chain of splits on columns 0..n_splits-1."""
    n_nodes = 2 * n_splits + 1
    node_int = np.full((n_nodes, 6), -1, dtype=np.int64)
    node_int[:, 3] = 0
    for i in range(n_splits):
        node = 2 * i
        node_int[node, :3] = (i, node + 1, node + 2)
    values = np.arange(n_nodes, dtype=np.float64)[:, None]
    return (np.zeros(1, dtype=np.int64), node_int, np.zeros(n_nodes),
            values, np.zeros((0, 8), dtype=np.int64))


def test_chain_of_62_groups_and_too_many():
    rng = np.random.default_rng(5)
    X, Z = rng.normal(size=(3, 63)), rng.normal(size=(10, 63))
    col_group = np.arange(63)
    coef_a, coef_b = _tables(["shapley"], 63, n_table=MAX_PATH_GROUPS)
    with pytest.raises(ValueError, match="62 distinct groups"):
        attributions_vectorized(X, Z, col_group, *_chain(MAX_PATH_GROUPS + 1), coef_a,
                                coef_b, 63)
    # a single leaf, and a path of 62 groups (64-bit masks)
    for n_splits in (0, MAX_PATH_GROUPS):
        trees = _chain(n_splits)
        pred = predict_vectorized(*trees, np.vstack([X, Z]))[:, 0]
        phi = attributions_vectorized(X, Z, col_group, *trees, coef_a, coef_b, 63)
        np.testing.assert_allclose(phi[:, 0, 0].sum(axis=1), pred[:3] - pred[3:].mean(),
                                   rtol=0, atol=1e-9)
        if n_splits == 0:
            assert not phi.any()


def test_sums_by_key_dense_and_sorted():
    rng = np.random.default_rng(6)
    keys = rng.integers(0, 50, 200) * 10
    weights = rng.normal(size=(200, 3))
    want = np.zeros((500, 3))
    np.add.at(want, keys, weights)
    present = np.unique(keys)
    for n_keys in (500, 10**7):  # a dense bincount, then a sort
        got_keys, got = _sum_by_key(keys, weights, n_keys)
        np.testing.assert_array_equal(got_keys, present)
        np.testing.assert_allclose(got, want[present], rtol=1e-12, atol=1e-12)


def test_work_estimate():
    walk = 201 * (5 + 50)
    pairs = 100 * 5 * 50 / 100
    assert vectorized_work(201, 100, 5, 50, 10) == pytest.approx(walk + pairs * 10 * 2)
    got = vectorized_work(201, 100, 5, 50, 0, n_methods=2, n_outputs=2)
    assert got == pytest.approx(walk + pairs * 5)
    assert vectorized_work(201, 100, 10, 50, 4) > vectorized_work(201, 100, 5, 50, 4)


def test_numpy_only():
    root = Path(__file__).resolve().parents[1]
    source = root / "skdecomp" / "_tree" / "_vectorized.py"
    imported = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + node.module.split(".")[0])
    assert imported == {"numpy", ".._config"}


@pytest.mark.parametrize("name", ["hgb", "rf", "gb"])
def test_background_summary_in_numpy_equals_the_kernel(name):
    # the per-leaf background patterns and counts: numpy (small models, no
    # compilation) and the Numba kernel (large ones) give the same arrays,
    # with NaN, categorical splits and several outputs
    from skdecomp._tree._dispatch import _by_node
    from skdecomp._tree._kernels import _tree_background_leaves
    from skdecomp._tree._vectorized import background_leaves_vectorized

    model, X = _fit(name)
    tm = extract_tree_model(model)
    Zm = tm.prepare(X[:37])
    arrays = (tm.roots, tm.node_int, tm.threshold, tm.cat_bits)
    for labels, k in [(np.arange(N_COLUMNS), N_COLUMNS),
                      (np.array([0, 1, 0, 2, 1, 2, 0, 1]), 3)]:
        col_group = tm.column_groups(labels)
        got = background_leaves_vectorized(Zm, col_group, *arrays, k)
        ptr, leaf_ids, pats, counts = _tree_background_leaves(
            Zm, col_group, *arrays, k, tm.max_depth)
        ref = _by_node(ptr, leaf_ids, pats, counts, tm.node_int.shape[0])
        for a, b in zip(got, ref):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
        # every leaf holds the background once
        leaf = tm.node_int[:, 0] < 0
        node_of = np.repeat(np.arange(leaf.shape[0]), np.diff(got[0]))
        per_node = np.bincount(node_of, weights=got[2], minlength=leaf.shape[0])
        assert np.all(per_node[leaf] == Zm.shape[0])
        assert np.all(per_node[~leaf] == 0)
