"""Owen and Winter values through model calls: exact from the hierarchy's coalitions, or sampled."""

import numpy as np
import pytest

from skdecomp import Explainer
from skdecomp._hierarchy import Hierarchy
from skdecomp._methods._owen import (
    _sampled,
    owen_attributions,
    owen_coalition_count,
    owen_coalitions,
    owen_orders,
)
from skdecomp._methods._registry import min_samples
from tests._naive import consistent_orders


def smooth(K, seed=0):
    """A smooth random function of K columns with pairs and higher interactions."""
    rng = np.random.default_rng(seed)
    A = np.triu(rng.normal(size=(K, K)), 1) / np.sqrt(K)
    w = rng.normal(size=K)
    B = rng.normal(size=(K, 3)) / np.sqrt(K)

    def f(X):
        X = np.asarray(X, dtype=float)
        return (X @ w + np.einsum("ni,ij,nj->n", X, A, X) + np.sin(X @ B).sum(axis=1)
                + np.tanh(X[:, 0] * X[:, K // 2] * X[:, K - 1]))

    return f


def random_nested(players, rng, top=True):
    """Random nested lists over ``players``: 2 to 4 children per node, some leaves deep."""
    players = list(players)
    if len(players) == 1:
        return players[0]
    n = int(rng.integers(2, min(4, len(players)) + 1))
    cuts = np.sort(rng.choice(np.arange(1, len(players)), size=n - 1, replace=False))
    return [random_nested(part, rng, False) for part in np.split(players, cuts)]


def balanced(players):
    if len(players) == 1:
        return int(players[0])
    half = len(players) // 2
    return [balanced(players[:half]), balanced(players[half:])]


HIERARCHIES = {
    "binary balanced": balanced(list(range(12))),
    "unbalanced, non-binary": [[0, [1, 2]], [3], [[4, 5], 6, 7, [8, [9, 10, 11]]]],
    "caterpillar": [0, [1, [2, [3, [4, [5, [6, [7, [8, [9, [10, 11]]]]]]]]]]],
    "two levels": [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9, 10, 11]],
    "random 1": random_nested(range(12), np.random.default_rng(1)),
    "random 2": random_nested(range(10), np.random.default_rng(2)),
}


@pytest.fixture(scope="module")
def data12():
    X = np.random.default_rng(0).normal(size=(40, 12))
    return X, X[:5]


def _columns(H):
    if isinstance(H, list):
        return [c for h in H for c in _columns(h)]
    return [H]


@pytest.mark.parametrize("name", list(HIERARCHIES))
def test_exact_from_the_hierarchy_coalitions_equals_the_components(data12, name):
    H = HIERARCHIES[name]
    K = len(_columns(H))
    X, bg = data12
    X = X[:, :K]
    bg = bg[:, :K]
    f = smooth(K)
    calls = []

    def counted(Z):
        calls.append(len(Z))
        return f(Z)

    explainer = Explainer(counted, background=bg, method="owen", hierarchy=H).fit(X)
    rows = X[10:13]
    calls.clear()
    phi = explainer.transform(rows)  # from the coalitions of the hierarchy
    count = owen_coalition_count(explainer.hierarchy_)
    # the model sees every needed coalition once per row and background row
    assert sum(calls) == rows.shape[0] * (1 + bg.shape[0] * count)
    assert count <= 2**K - 2  # a caterpillar needs every coalition
    coalitions, _ = owen_coalitions(explainer.hierarchy_)
    assert coalitions.shape[0] == count + 2
    # the components route (2**K coalitions), shared with the Shapley value
    by_components = explainer.explain(rows, methods=["shapley", "owen"])["owen"]
    np.testing.assert_allclose(phi, np.asarray(by_components.values), rtol=0, atol=1e-10)
    np.testing.assert_allclose(phi.sum(axis=1) + explainer.expected_value_, f(rows),
                               rtol=0, atol=1e-10)


def test_the_coalition_count_of_a_balanced_binary_hierarchy_is_about_m_squared():
    for M in (8, 16, 64, 256):
        children = []

        def build(H):
            if not isinstance(H, list):
                return H
            ids = [build(c) for c in H]
            children.append(ids)
            return M + len(children) - 1

        build(balanced(list(range(M))))
        # over depths l: 2**l nodes, 2**l contexts each, 2 new coalitions each
        assert owen_coalition_count(Hierarchy(M, children)) == 2 * (M**2 - 1) // 3


def test_orders_are_consistent_and_reversed_in_pairs():
    H = HIERARCHIES["unbalanced, non-binary"]
    explainer = Explainer(smooth(12), background=np.zeros((1, 12)), method="owen",
                          hierarchy=H).fit(np.zeros((2, 12)))
    orders = owen_orders(explainer.hierarchy_, 300, np.random.RandomState(0))
    allowed = {tuple(o) for o in consistent_orders(H)}
    assert all(tuple(o) in allowed for o in orders)
    np.testing.assert_array_equal(orders[1::2], orders[0::2, ::-1])
    # every consistent order is drawn about equally often
    seen = {tuple(o) for o in orders}
    assert len(seen) > 0.5 * min(len(allowed), orders.shape[0])


def test_sampled_estimate_converges_to_the_exact_value(data12):
    X, bg = data12
    f = smooth(12)
    H = [list(range(10)), [10, 11]]
    explainer = Explainer(f, background=bg, method="owen", hierarchy=H).fit(X)
    rows = X[10:14]
    exact = explainer.transform(rows)
    game, h = explainer.game_, explainer.hierarchy_
    prediction = game.predict(rows)
    errors = []
    for budget in (44, 440, 4400):
        phi = _sampled(game, rows, prediction, h, budget, seed=3)[:, :, 0]
        errors.append(np.sqrt(np.mean((phi - exact) ** 2)))
        # efficient for every budget
        np.testing.assert_allclose(phi.sum(axis=1) + explainer.expected_value_,
                                   f(rows), rtol=0, atol=1e-10)
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < 0.25 * errors[0]


def test_sampled_intervals_cover(data12):
    X, bg = data12
    f = smooth(12, seed=4)
    H = HIERARCHIES["unbalanced, non-binary"]
    exact = Explainer(f, background=bg, method="owen", hierarchy=H).fit(X).transform(
        X[10:20])
    n_samples = min_samples("owen", 12)
    covered = []
    for seed in range(20):
        res = Explainer(f, background=bg, method="owen", hierarchy=H,
                        n_samples=n_samples, random_state=seed).fit(X).explain(
            X[10:20], methods=["owen"])["owen"]
        se = res.standard_errors
        assert se is not None and se.shape == exact.shape
        covered.append(np.mean(np.abs(np.asarray(res.values) - exact) <= 1.96 * se))
    assert np.mean(covered) >= 0.90


def test_the_budget_chooses_between_exact_and_sampled(data12):
    X, bg = data12
    f = smooth(12)
    H = HIERARCHIES["unbalanced, non-binary"]
    count = owen_coalition_count(
        Explainer(f, background=bg, method="owen", hierarchy=H).fit(X).hierarchy_)
    exact = Explainer(f, background=bg, method="owen", hierarchy=H,
                      n_samples=count).fit(X).explain(X[:3], methods=["owen"])["owen"]
    assert exact.standard_errors is None
    sampled = Explainer(f, background=bg, method="owen", hierarchy=H,
                        n_samples=count - 1, random_state=0).fit(X).explain(
        X[:3], methods=["owen"])["owen"]
    assert sampled.standard_errors is not None
    # the same seed gives the same draws
    again = Explainer(f, background=bg, method="owen", hierarchy=H,
                      n_samples=count - 1, random_state=0).fit(X).transform(X[:3])
    np.testing.assert_array_equal(again, np.asarray(sampled.values))
    with pytest.raises(ValueError, match="n_samples=10 is too small"):
        Explainer(f, background=bg, method="owen", hierarchy=H, n_samples=10,
                  method_params={"estimator": "permutation"}).fit(X).transform(X[:3])
    # "auto" (the default) takes the partition recursion below the sampled value's
    # smallest budget, when the budget covers the root's split
    auto = Explainer(f, background=bg, method="owen", hierarchy=H, n_samples=10
                     ).fit(X).explain(X[:3], methods=["owen"])["owen"]
    recursion = Explainer(f, background=bg, method="owen", hierarchy=H, n_samples=10,
                          method_params={"estimator": "partition"}).fit(X).transform(X[:3])
    assert auto.standard_errors is None
    np.testing.assert_array_equal(np.asarray(auto.values), recursion)


def test_64_groups_exact_and_sampled():
    K = 64
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, K))
    bg = X[:4]
    f = smooth(K, seed=5)
    H = balanced(list(range(K)))
    explainer = Explainer(f, background=bg, method="owen", hierarchy=H).fit(X)
    assert owen_coalition_count(explainer.hierarchy_) == 2730
    exact = explainer.transform(X[10:12])  # exact: 2730 coalitions per row
    np.testing.assert_allclose(exact.sum(axis=1) + explainer.expected_value_,
                               f(X[10:12]), rtol=0, atol=1e-9)
    res = Explainer(f, background=bg, method="owen", hierarchy=H, n_samples=504,
                    random_state=0).fit(X).explain(X[10:12], methods=["owen"])["owen"]
    values = np.asarray(res.values)
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value_,
                               f(X[10:12]), rtol=0, atol=1e-9)
    assert np.mean(np.abs(values - exact) <= 1.96 * res.standard_errors) >= 0.85
    # a flat hierarchy of 64 groups is the Shapley value, sampled by default
    flat = Explainer(f, background=bg[:2], method="owen", hierarchy=[list(range(K))],
                     n_samples=504).fit(X)
    res = flat.explain(X[10:11], methods=["owen"])["owen"]
    assert res.standard_errors is not None
    np.testing.assert_allclose(np.asarray(res.values).sum() + flat.expected_value_,
                               f(X[10:11])[0], rtol=0, atol=1e-9)


# -- against shap ------------------------------------------------------------------
def test_equals_shap_partition_explainer_on_a_binary_clustering():
    shap = pytest.importorskip("shap")
    from scipy.cluster.hierarchy import linkage

    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 10))
    bg = X[:7]
    f = smooth(10, seed=6)
    Z = linkage(X.T, "average")
    explainer = Explainer(f, background=bg, method="owen", hierarchy=Z).fit(X)
    ours = explainer.transform(X[10:14])
    # the Partition masker averages the model over the background rows: the
    # marginal game; max_evals beyond the coalitions the tree needs is exact
    masker = shap.maskers.Partition(bg, clustering=Z)
    theirs = shap.PartitionExplainer(f, masker)(X[10:14], max_evals=100_000)
    np.testing.assert_allclose(ours, theirs.values, rtol=0, atol=1e-8)
    np.testing.assert_allclose(theirs.base_values, explainer.expected_value_,
                               rtol=0, atol=1e-8)


def test_equals_shap_coalition_explainer_on_a_non_binary_partition():
    shap = pytest.importorskip("shap")
    if not hasattr(shap, "CoalitionExplainer"):
        pytest.skip("this shap has no CoalitionExplainer")
    rng = np.random.default_rng(7)
    K = 8
    X = rng.normal(size=(40, K))
    bg = X[:6]
    f = smooth(K, seed=7)

    # two outputs: shap 0.51's CoalitionExplainer fails on a model of one output
    # (it calls float() on an array of shape (1,))
    def g(X):
        X = np.asarray(X, dtype=float)
        return np.column_stack([f(X), np.sin(X[:, 1] * X[:, 6]) + X[:, 2] * X[:, 4]])

    names = [f"x{j}" for j in range(K)]
    tree = {"a": {"a1": ["x0", "x1", "x2"], "a2": ["x3"]}, "b": ["x4", "x5"],
            "c": {"c1": ["x6"], "c2": ["x7"]}}
    H = {"a": {"a1": [0, 1, 2], "a2": [3]}, "b": [4, 5], "c": {"c1": [6], "c2": [7]}}
    masker = shap.maskers.Partition(bg)
    masker.feature_names = names
    theirs = shap.CoalitionExplainer(g, masker, partition_tree=tree,
                                     feature_names=names)(X[10:14])
    explainer = Explainer(g, background=bg, method="owen", hierarchy=H).fit(X)
    ours = explainer.transform(X[10:14])
    np.testing.assert_allclose(ours, theirs.values, rtol=0, atol=1e-8)


# -- the smallest budget and standard errors that are 0 only when exact ------------
def test_smallest_budget_is_four_pairs_of_orders_per_game():
    assert [min_samples("owen", K) for K in (2, 6, 8, 12)] == [2, 40, 56, 88]
    X = np.random.default_rng(8).normal(size=(10, 6))
    H = [0, [1, [2, [3, [4, 5]]]]]  # 62 coalitions exact: 39 is sampled
    with pytest.raises(ValueError, match=r"at least n_samples=40, .*four consistent "
                                         r"orders and their reverses per game"):
        Explainer(smooth(6), background=X[:1], method="owen", hierarchy=H,
                  n_samples=39, method_params={"estimator": "permutation"}
                  ).fit(X).transform(X[:2])


@pytest.mark.parametrize("n_background", [1, 4])
def test_agreeing_orders_get_a_bound_not_a_standard_error_of_0(n_background):
    # a majority game: most drawn orders agree on most players' contributions
    K = 6
    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, K)) + 0.8
    bg = -np.abs(rng.normal(size=(n_background, K)))

    def f(Z):
        return (np.sum(np.asarray(Z) > 0, axis=1) >= 4).astype(float)

    H = [0, [1, [2, [3, [4, 5]]]]]
    rows = X[:8]
    exact = Explainer(f, background=bg, method="owen", hierarchy=H).fit(X).transform(rows)
    inexact_at_0, held = 0, []
    for seed in range(6):
        res = Explainer(f, background=bg, method="owen", hierarchy=H,
                        n_samples=min_samples("owen", K), random_state=seed).fit(X).explain(
            rows, methods=["owen"])["owen"]
        miss = np.abs(np.asarray(res.values) - exact)
        se = res.standard_errors
        inexact_at_0 += np.sum((miss > 1e-9) & (se <= 1e-12))
        held.append(np.mean(miss <= 1.96 * se + 1e-9))
    assert inexact_at_0 == 0
    assert np.mean(held) >= 0.9


def test_node_totals_of_a_sampled_value_carry_bounds_not_standard_errors():
    X = np.random.default_rng(8).normal(size=(10, 6))
    H = [0, [1, [2, [3, [4, 5]]]]]  # 62 coalitions exact: 40 is sampled
    res = Explainer(smooth(6), background=X[:1], method="owen", hierarchy=H, n_samples=40,
                    method_params={"estimator": "permutation"}, random_state=0
                    ).fit(X).explain(X[:2], methods=["owen"])["owen"]
    assert "max_standard_error=" in repr(res)
    top = res.at_level(2)
    # the sum of the players' standard errors of each block, and said to be a bound
    se = np.asarray(res.standard_errors)
    np.testing.assert_allclose(np.asarray(top.standard_errors),
                               np.c_[se[:, 0], se[:, 1:].sum(axis=1)])
    assert "max_standard_bound=" in repr(top) and "max_standard_error" not in repr(top)
    assert "max_standard_bound=" in repr(top[:1])  # kept by a selection
    assert "max_standard_error=" in repr(res.at_level(6))  # the players themselves
