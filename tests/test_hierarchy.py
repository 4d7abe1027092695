"""Owen and Winter values over a hierarchy, against the definition."""

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import AgglomerativeClustering, FeatureAgglomeration
from sklearn.ensemble import GradientBoostingRegressor

from skdecomp import AdaptiveGrouper, Explainer
from tests._naive import game, hierarchical_value, path_dependent_game, powerset


def f(X):
    X = np.asarray(X, dtype=float)
    return (X[:, 0] * X[:, 1] + X[:, 1] * X[:, 3] + np.sin(X[:, 2] * X[:, 4])
            + X[:, 5] ** 2 * X[:, 0] + 0.5 * X[:, 6] * X[:, 7] * X[:, 2])


HIERARCHIES = {
    "two levels": [[0, 1, 2], [3, 4], [5, 6, 7]],
    "three levels, unbalanced": [[0, [1, 2]], [3], [[4, 5], 6, 7]],
    "non-binary deep": [[[0, 1, 2], [3, 4]], [5, [6, 7]]],
    "one block": [[0, 1, 2, 3, 4, 5, 6, 7]],
}


@pytest.fixture(scope="module")
def data():
    X = np.random.default_rng(0).normal(size=(60, 8))
    return X, X[:4]


@pytest.mark.parametrize("name", list(HIERARCHIES))
def test_owen_through_model_calls_equals_the_mean_over_consistent_orders(data, name):
    X, bg = data
    H = HIERARCHIES[name]
    explainer = Explainer(f, background=bg, method="owen", hierarchy=H).fit(X)
    phi = explainer.transform(X[10:12])
    groups = [[k] for k in range(8)]
    for r in range(2):
        v = game(f, X[10 + r], bg, groups)
        np.testing.assert_allclose(phi[r], hierarchical_value(v, 8, H), rtol=0,
                                   atol=1e-10)
    # efficiency
    np.testing.assert_allclose(phi.sum(axis=1) + explainer.expected_value_,
                               f(X[10:12]), atol=1e-10)


def test_flat_hierarchies_give_the_shapley_values(data):
    X, bg = data
    shapley = Explainer(f, background=bg).fit(X).transform(X[:3])
    for H in ([list(range(8))], list(range(8))):
        owen = Explainer(f, background=bg, method="owen", hierarchy=H).fit(X)
        np.testing.assert_allclose(owen.transform(X[:3]), shapley, atol=1e-12)


def test_block_totals_are_grouped_shapley_values_and_cuts_are_pruned_values(data):
    X, bg = data
    H = HIERARCHIES["three levels, unbalanced"]
    owen = Explainer(f, background=bg, method="owen", hierarchy=H).fit(X)
    res = owen.explain(X[:3], methods=["owen"])["owen"]
    h = res.hierarchy
    top = res.at_level(3)
    blocks = [[0, 1, 2], [3], [4, 5, 6, 7]]
    grouped = Explainer(f, background=bg, groups=blocks).fit(X).transform(X[:3])
    np.testing.assert_allclose(top.values, grouped, atol=1e-10)
    assert top.feature_names == ["x0:x1:x2", "x3", "x4:x5:x6:x7"]
    # every cut: the totals are the hierarchical values of the pruned tree,
    # whose players are the cut's nodes
    for n in h.cut_sizes()[1:-1]:
        cut = res.at_level(n)
        nodes = h.cut(n)
        groups = [list(h.leaves[a]) for a in nodes]
        pruned = cut.hierarchy
        nested = _nested(pruned)
        for r in range(3):
            v = game(f, X[r], bg, groups)
            np.testing.assert_allclose(cut.values[r], hierarchical_value(v, len(nodes),
                                                                         nested),
                                       atol=1e-10)
    np.testing.assert_allclose(res.at_level(h.n_players).values, res.values)


def _nested(h):
    """A Hierarchy as nested lists of players, for the oracle."""
    def node(a):
        if a < h.n_players:
            return int(a)
        return [node(c) for c in h.children[a - h.n_players]]
    top = node(h.root)
    return top if isinstance(top, list) else [top]


def test_path_dependent_owen_on_trees_equals_the_definition():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 6))
    y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3] * X[:, 4]) + X[:, 5]
    model = GradientBoostingRegressor(n_estimators=10, max_depth=3,
                                      random_state=0).fit(X, y)
    H = [[0, [1, 2]], [3, 4, 5]]
    owen = Explainer(model, imputer="path_dependent", method="owen",
                     hierarchy=H).fit(X)
    assert owen.algorithm_ == "tree"
    phi = owen.transform(X[:3])
    from tests._naive import sklearn_tree_arrays

    trees = [sklearn_tree_arrays(t[0], scale=model.learning_rate)
             for t in model.estimators_]
    offset = float(np.ravel(model.init_.predict(X[:1]))[0])
    for r in range(3):
        v = {S: float(np.ravel(val)[0]) for S, val in
             path_dependent_game(trees, offset, X[r], [[k] for k in range(6)]).items()}
        np.testing.assert_allclose(phi[r], hierarchical_value(v, 6, H), atol=1e-10)


def test_hierarchies_from_linkage_clusterings_and_groupers(data):
    X, bg = data
    from scipy.cluster.hierarchy import linkage

    Z = linkage(np.corrcoef(X.T), "average")
    by_linkage = Explainer(f, background=bg, method="owen", hierarchy=Z).fit(X)
    h = by_linkage.hierarchy_
    assert h.n_players == 8 and all(len(c) == 2 for c in h.children)
    np.testing.assert_array_equal(h.linkage()[:, :2], Z[:, :2])
    agg = FeatureAgglomeration(n_clusters=2, compute_full_tree=True).fit(X)
    by_agg = Explainer(f, background=bg, method="owen", hierarchy=agg).fit(X)
    assert by_agg.hierarchy_.n_nodes == 15
    clu = AgglomerativeClustering(n_clusters=2, compute_full_tree=True).fit(X.T)
    by_clu = Explainer(f, background=bg, method="owen", hierarchy=clu).fit(X)
    np.testing.assert_allclose(by_clu.transform(X[:2]), by_agg.transform(X[:2]))
    # a grouper with a merge path, fitted in fit: its merge tree
    grouped = Explainer(f, background=bg, method="owen",
                        hierarchy=AdaptiveGrouper(f, max_samples=20, random_state=0))
    grouped.fit(X)
    assert grouped.hierarchy_.n_players == 8
    phi = grouped.transform(X[:2])
    np.testing.assert_allclose(phi.sum(axis=1) + grouped.expected_value_, f(X[:2]),
                               atol=1e-10)


def test_named_columns_and_groups_as_players():
    X = pd.DataFrame(np.random.default_rng(2).normal(size=(40, 8)),
                     columns=list("abcdefgh"))
    H = {"A": ["a", ["b", "c"]], "B": ["d", "e"], "C": ["f", "g", "h"]}
    by_name = Explainer(f, background=X.iloc[:3], method="owen", hierarchy=H).fit(X)
    by_pos = Explainer(f, background=X.iloc[:3], method="owen",
                       hierarchy=[[0, [1, 2]], [3, 4], [5, 6, 7]]).fit(X)
    np.testing.assert_allclose(by_name.transform(X.iloc[:2]),
                               by_pos.transform(X.iloc[:2]), atol=1e-12)
    # groups as players: the hierarchy names their columns
    groups = {"ab": ["a", "b"], "c": ["c"], "de": ["d", "e"], "fgh": ["f", "g", "h"]}
    owen = Explainer(f, background=X.iloc[:3], groups=groups, method="owen",
                     hierarchy=[["a", "b", "c"], ["d", "e", "f", "g", "h"]]).fit(X)
    assert owen.hierarchy_.n_players == 4


@pytest.mark.parametrize("hierarchy, message", [
    ([[0, 1], [1, 2, 3, 4, 5, 6, 7]], "appears twice"),
    ([[0, 1], [2, 3, 4, 5, 6]], "in no block"),
    ([[0, 1], [], [2, 3, 4, 5, 6, 7]], "is empty"),
    (np.zeros((3, 4)), "shape \\(7, 4\\)"),
    ("abc", "hierarchy must be"),
])
def test_bad_hierarchies_are_refused(data, hierarchy, message):
    X, bg = data
    with pytest.raises((ValueError, TypeError), match=message):
        Explainer(f, background=bg, method="owen", hierarchy=hierarchy).fit(X)


def test_owen_without_a_hierarchy_and_a_grouper_without_a_path_are_refused(data):
    from skdecomp import FixedGrouper

    X, bg = data
    with pytest.raises(ValueError, match="needs a hierarchy|pass one"):
        Explainer(f, background=bg, method="owen").fit(X)
    with pytest.raises(ValueError, match="needs a hierarchy"):
        Explainer(f, background=bg).fit(X).explain(X[:2], methods=["owen"])
    with pytest.raises(ValueError, match="keeps no merge path"):
        Explainer(f, background=bg, method="owen",
                  hierarchy=FixedGrouper([[0, 1, 2, 3], [4, 5, 6, 7]])).fit(X)


def test_to_shap_carries_a_binary_hierarchy_as_clustering(data):
    pytest.importorskip("shap")
    X, bg = data
    from scipy.cluster.hierarchy import linkage

    Z = linkage(X.T, "ward")
    res = Explainer(f, background=bg, method="owen", hierarchy=Z).fit(X).explain(
        X[:3], methods=["owen"])["owen"]
    e = res.to_shap()
    # shap keeps one clustering per row: a valid linkage of the same tree as Z,
    # its merges in order of height (distances never decrease)
    from scipy.cluster.hierarchy import is_monotonic, is_valid_linkage

    C = np.asarray(e.clustering)
    assert C.shape == (3, 7, 4)
    assert all(is_valid_linkage(c) and is_monotonic(c) for c in C)
    # the same tree on every row; row r's root r units in the last place higher,
    # as shap's beeswarm fails on a clustering all rows share
    np.testing.assert_allclose(C, np.broadcast_to(C[0], C.shape), rtol=1e-14, atol=0)

    def clusters(L):
        members = {k: frozenset([k]) for k in range(8)}
        for t, (a, b, _, n) in enumerate(L):
            members[8 + t] = members[int(a)] | members[int(b)]
            assert len(members[8 + t]) == n
        return {members[a] for a in range(8, 15)}

    assert clusters(C[0]) == clusters(Z)
