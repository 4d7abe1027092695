"""hierarchy= is read as groups= reads it: groupers, clusterings, arrays, labels."""

import numpy as np
import pandas as pd
import pytest
from scipy.cluster.hierarchy import linkage
from sklearn.base import clone
from sklearn.cluster import AgglomerativeClustering, FeatureAgglomeration
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPRegressor

from skdecomp import AdaptiveGrouper, Explainer, PairwiseGrouper


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2] * X[:, 3]) + X[:, 4] - X[:, 5]
    return X, y


def _owen(model, X, **kw):
    ex = Explainer(model, method="owen", background=20, random_state=0, **kw).fit(X)
    return ex, ex.explain(X[:4], methods=["owen"])["owen"]


def _top_columns(ex):
    """The columns of every block under the root of the fitted hierarchy."""
    h = ex.hierarchy_
    blocks = h.children[h.root - h.n_players]
    return sorted(sorted(int(c) for k in h.leaves[b] for c in ex.groups_[k]) for b in blocks)


def test_an_unfitted_grouper_gets_the_explainers_model(data):
    X, y = data
    model = MLPRegressor(hidden_layer_sizes=(16,), max_iter=400, random_state=0).fit(X, y)
    # the user guide's line: the grouper with the model, and without
    with_model, a = _owen(model, X, hierarchy=AdaptiveGrouper(model, random_state=0))
    without, b = _owen(model, X, hierarchy=AdaptiveGrouper(random_state=0))
    np.testing.assert_allclose(a.values, b.values, atol=1e-12)
    assert _top_columns(with_model) == _top_columns(without)
    # as groups= resolves it: the same fitted grouper's partition
    grouper = Explainer(model, groups=AdaptiveGrouper(random_state=0), background=20,
                        random_state=0).fit(X).grouper_
    cut = grouper.cut(len(with_model.hierarchy_.children[-1]))
    assert _top_columns(with_model) == sorted(cut)


def test_fitted_clusterings_survive_clone_and_grid_search(data):
    X, y = data
    model = LinearRegression().fit(X, y)
    for clustering in (FeatureAgglomeration(n_clusters=2).fit(X),
                       AgglomerativeClustering(n_clusters=2).fit(X.T)):
        ex, a = _owen(model, X, hierarchy=clustering)
        copy = clone(Explainer(FrozenEstimator(model), method="owen", background=20,
                               random_state=0, hierarchy=clustering))
        b = copy.fit(X).explain(X[:4], methods=["owen"])["owen"]
        np.testing.assert_allclose(a.values, b.values, atol=1e-12)
        search = GridSearchCV(
            Explainer(FrozenEstimator(model), method="owen", background=10,
                      hierarchy=clustering),
            {"background": [5, 10]}, cv=2).fit(X)
        assert search.best_estimator_.hierarchy_.n_players == 6


def test_a_list_of_arrays_as_groups_takes(data):
    X, y = data
    model = LinearRegression().fit(X, y)
    groups = [[0, 1], [2, 3], [4], [5]]
    ex = Explainer(model, groups=groups, background=10).fit(X)
    as_arrays, a = _owen(model, X, groups=groups, hierarchy=list(ex.groups_))
    as_lists, b = _owen(model, X, groups=groups, hierarchy=groups)
    np.testing.assert_allclose(a.values, b.values, atol=1e-12)


def test_integer_column_labels_are_labels_as_in_groups(data):
    X, y = data
    frame = pd.DataFrame(X, columns=[10, 11, 12, 13, 14, 15])
    model = LinearRegression().fit(frame, y)
    ex, _ = _owen(model, frame, hierarchy=[[10, 11], [[12, 13], [14, 15]]])
    assert _top_columns(ex) == [[0, 1], [2, 3, 4, 5]]
    with pytest.raises(ValueError, match="unknown column 99"):
        _owen(model, frame, hierarchy=[[10, 11], [12, 13, 14, 99]])


def test_owen_with_a_single_group_method_past_the_exact_limit():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 18))
    model = LinearRegression().fit(X, X @ rng.normal(size=18))
    hierarchy = [list(range(0, 9)), list(range(9, 18))]
    ex = Explainer(model, method="owen", hierarchy=hierarchy, background=5,
                   n_samples=200, random_state=0).fit(X)
    both = ex.explain(X[:3], methods=["owen", "occlusion"])
    alone = ex.explain(X[:3], methods=["occlusion"])
    owen = ex.explain(X[:3], methods=["owen"])
    np.testing.assert_allclose(both["occlusion"].values, alone["occlusion"].values)
    np.testing.assert_allclose(both["owen"].values, owen["owen"].values)


@pytest.mark.parametrize("n_columns", [5, 8])
def test_a_grouper_fitted_on_other_columns_is_refused(data, n_columns):
    X, y = data
    model = LinearRegression().fit(X, y)
    other = np.random.default_rng(2).normal(size=(50, n_columns))
    fitted = PairwiseGrouper(LinearRegression().fit(other, other[:, 0])).fit(other)
    with pytest.raises(ValueError, match=f"fitted on {n_columns} columns, but the data has 6"):
        _owen(model, X, hierarchy=fitted)


@pytest.mark.parametrize("seed", range(6))
def test_hierarchy_and_groups_read_the_same_columns(data, seed):
    """Random hierarchies of every kind: the blocks under the root are the columns
    that groups= reads from the same specification."""
    X, y = data
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(6)])
    model = LinearRegression().fit(frame, y)
    perm = rng.permutation(6)
    cut = int(rng.integers(1, 5))
    blocks = [sorted(perm[:cut].tolist()), sorted(perm[cut:].tolist())]
    names = [[f"c{j}" for j in b] for b in blocks]
    kind = seed % 3
    if kind == 0:  # nested lists of names, one level deeper inside
        spec = [names[0], [names[1][:1], names[1][1:]] if len(names[1]) > 1 else names[1]]
    elif kind == 1:  # a linkage over the columns: every block merged, then the root
        rows, ids, next_id = [], {}, 6
        for b in blocks:
            node = b[0]
            for j in b[1:]:
                rows.append([node, j, len(rows) + 1.0, 0])
                node = next_id
                next_id += 1
            ids[tuple(b)] = node
        rows.append([ids[tuple(blocks[0])], ids[tuple(blocks[1])], len(rows) + 1.0, 6])
        spec = np.asarray(rows, dtype=float)
    else:  # positions, as groups= takes them
        spec = [blocks[0], blocks[1]]
    ex, _ = _owen(model, frame, hierarchy=spec)
    expected = Explainer(model, groups=blocks, background=5).fit(frame).groups_
    assert _top_columns(ex) == sorted(sorted(int(c) for c in g) for g in expected)
    assert linkage is not None


def test_block_names_never_repeat_a_column_name(data):
    X, y = data
    frame = pd.DataFrame(X[:, :4], columns=["a", "b", "c", "d"])
    model = LinearRegression().fit(frame, y)
    with pytest.raises(ValueError, match="block name 'c' is already the name of a group"):
        _owen(model, frame, hierarchy={"c": ["a", "b"], "rest": ["c", "d"]})
    # a group named like the joined names of others: the block gets brackets
    ex, owen = _owen(model, frame, groups={"a:b": ["a"], "b": ["b"], "a": ["c"], "d": ["d"]},
                     hierarchy=[[["a"], ["b"]], ["c", "d"]])
    for n in ex.hierarchy_.cut_sizes():
        columns = owen.at_level(n).to_frame().columns
        assert columns.is_unique, list(columns)
