"""RECURSIVE (RecursiveGrouper) and IGREEDY (IShapGrouper), the literature baselines.

Every number is checked against something computed apart from the grouper:
the known partition of a synthetic function, brute-force loops over sample
rows, closed forms, and a model wrapper that counts the rows it is sent.
"""

import numpy as np
import pandas as pd
import pytest

from skdecomp import Explainer, IShapGrouper, PairwiseGrouper, RecursiveGrouper
from skdecomp.datasets import make_agreed_example, make_block_function

GROUPERS = [RecursiveGrouper, IShapGrouper]


def same_partition(a, b):
    return sorted(map(sorted, a)) == sorted(map(sorted, b))


def hybrid(x, z, cols):
    """Columns ``cols`` from the row x, the others from the row z."""
    h = z.copy()
    h[list(cols)] = x[list(cols)]
    return h


def brute_second_difference(f, S, A, B):
    """mean_{n,m} (f(x_A, x_B, z_rest) - f(x_A, z_B, .) - f(z_A, x_B, .) + f(z))**2."""
    N = S.shape[0]
    total = 0.0
    for n in range(N):
        for m in range(N):
            x, z = S[n], S[m]
            rows = np.array(
                [hybrid(x, z, list(A) + list(B)), hybrid(x, z, A), hybrid(x, z, B), z]
            )
            v = f(rows)
            total += (v[0] - v[1] - v[2] + v[3]) ** 2
    return total / N**2


def brute_values(f, S, cols):
    """v_n(S) = mean_m f(x^n_S, x^m_rest) - mean_m f(x^m), by loops."""
    N = S.shape[0]
    base = f(S).mean()
    return np.array([np.mean([f(hybrid(S[n], S[m], cols)[None])[0] for m in range(N)])
                     for n in range(N)]) - base


def counting(f):
    seen = []

    def model(X):
        seen.append(len(X))
        return f(X)

    return model, seen


def product_model(X):
    X = np.asarray(X, dtype=float)
    return X[:, 0] * X[:, 1] + X[:, 2]


def additive_model(X):
    X = np.asarray(X, dtype=float)
    return X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 2] ** 2 - X[:, 3]


# -- recovery of known blocks ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_recursive_recovers_every_block_function(seed):
    d = 6 + seed % 3
    data = make_block_function(200, n_features=d, random_state=seed)
    grouper = RecursiveGrouper(data.function, max_samples=30, random_state=seed).fit(data.data)
    assert same_partition(grouper.groups_, data.groups), (data.function, grouper.groups_)
    assert grouper.stop_reason_ == "tol"


@pytest.mark.parametrize("seed", range(3))
def test_recursive_recovers_correlated_block_functions(seed):
    data = make_block_function(200, n_features=7, correlation=0.7, random_state=seed)
    # an exact function: a threshold near round-off finds a weak three-way
    # product (1.5 x0 x1 x3 of seed 0 is below the default, meant for fitted models)
    grouper = RecursiveGrouper(data.function, max_samples=30, tol=1e-3,
                               random_state=seed).fit(data.data)
    assert same_partition(grouper.groups_, data.groups)


@pytest.mark.parametrize("cls", GROUPERS)
def test_recover_agreed_example(cls):
    data = make_agreed_example(200, random_state=0)
    grouper = cls(data.function, max_samples=30, random_state=0).fit(data.data)
    assert grouper.groups_ == data.groups
    assert list(grouper.group_names_) == ["x0:x1", "x2:x3", "x4", "x5"]


@pytest.mark.parametrize("seed", range(4))
def test_ishap_recovers_pairwise_block_functions(seed):
    data = make_block_function(200, n_features=6, max_block_size=2, random_state=seed)
    grouper = IShapGrouper(data.function, max_samples=30, random_state=seed).fit(data.data)
    assert same_partition(grouper.groups_, data.groups), (data.function, grouper.groups_)
    # every pair of a true block is significant
    for g in data.groups:
        if len(g) == 2:
            assert grouper.interaction_graph_[g[0], g[1]]


# -- closed forms ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", GROUPERS)
def test_additive_model_is_never_merged(cls):
    X = np.random.default_rng(0).uniform(-1, 1, size=(60, 4))
    grouper = cls(additive_model, max_samples=25, random_state=0).fit(X)
    assert grouper.groups_ == [[0], [1], [2], [3]]
    if cls is RecursiveGrouper:
        # every test is exactly 0 up to rounding
        assert all(h["score"] < 1e-20 and not h["interacts"] for h in grouper.history_)
    else:
        assert grouper.history_ == []
        assert grouper.initial_objective_ < 1e-25 and grouper.size_penalty_ < 1e-27


@pytest.mark.parametrize("cls", GROUPERS)
def test_product_is_merged(cls):
    X = np.random.default_rng(1).uniform(-1, 1, size=(60, 3))
    grouper = cls(product_model, max_samples=30, random_state=0).fit(X)
    assert grouper.groups_ == [[0, 1], [2]]


def test_recursive_tests_follow_the_rdg_recursion():
    # f = x0*x1 + x2: A = {0} against {1, 2}, then its halves {1} and {2};
    # then {0, 1} against {2}; {2} is left alone.
    X = np.random.default_rng(1).uniform(-1, 1, size=(60, 3))
    grouper = RecursiveGrouper(product_model, max_samples=20, random_state=0).fit(X)
    tests = [(h["first"], h["second"], h["interacts"]) for h in grouper.history_]
    assert tests == [
        ([0], [1, 2], True), ([0], [1], True), ([0], [2], False), ([0, 1], [2], False),
    ]
    assert grouper.n_tests_ == 4


def test_recursive_score_equals_brute_force_second_difference():
    data = make_agreed_example(200, random_state=3)
    f = data.function
    grouper = RecursiveGrouper(f, max_samples=12, random_state=0).fit(data.data)
    S = np.asarray(grouper.background_)
    var = f(S).var()
    for h in grouper.history_:
        expected = brute_second_difference(f, S, h["first"], h["second"]) / var
        np.testing.assert_allclose(h["score"], expected, rtol=1e-10, atol=1e-14)
        assert h["interacts"] == (expected > grouper.tol)
    # the product x0 * x1 of the closed form: I = mean (x0-z0)^2 (x1-z1)^2
    first = grouper.history_[2]
    assert first["first"] == [0] and first["second"] == [1]
    d0 = S[:, None, 0] - S[None, :, 0]
    d1 = S[:, None, 1] - S[None, :, 1]
    np.testing.assert_allclose(first["score"], np.mean(d0**2 * d1**2) / var, rtol=1e-10)


def test_recursive_tol_is_relative_to_output_variance():
    # the interaction of f = x0*x1 + c*x2 is 4 Var(x0 x1) (about) whatever c;
    # a huge additive term pushes it below tol * Var(f)
    X = np.random.default_rng(2).uniform(-1, 1, size=(80, 3))

    def f(X, c):
        X = np.asarray(X, dtype=float)
        return X[:, 0] * X[:, 1] + c * X[:, 2]

    small = RecursiveGrouper(lambda X: f(X, 1.0), max_samples=30, random_state=0).fit(X)
    huge = RecursiveGrouper(lambda X: f(X, 1e3), max_samples=30, random_state=0).fit(X)
    assert small.groups_ == [[0, 1], [2]]
    assert huge.groups_ == [[0], [1], [2]]
    assert RecursiveGrouper(lambda X: f(X, 1e3), max_samples=30, tol=1e-9,
                            random_state=0).fit(X).groups_ == [[0, 1], [2]]


def test_ishap_objective_equals_brute_force():
    data = make_agreed_example(200, random_state=4)
    f = data.function
    grouper = IShapGrouper(f, max_samples=10, random_state=0).fit(data.data)
    S = np.asarray(grouper.background_)
    target = f(S) - f(S).mean()

    def error(groups):
        return np.mean((target - sum(brute_values(f, S, g) for g in groups)) ** 2)

    singles = error([[j] for j in range(6)])
    np.testing.assert_allclose(grouper.initial_objective_, singles, rtol=1e-10)
    np.testing.assert_allclose(grouper.size_penalty_, 0.01 * singles, rtol=1e-10)
    pairs = sum(len(g) * (len(g) - 1) / 2 for g in grouper.groups_)
    np.testing.assert_allclose(
        grouper.objective_, error(grouper.groups_) + 0.01 * singles * pairs,
        rtol=1e-8, atol=1e-12,
    )
    objectives = [grouper.initial_objective_] + [h["objective_after"] for h in grouper.history_]
    assert np.all(np.diff(objectives) < 0)  # every merge lowers the objective
    for h in grouper.history_:  # merges follow significant pairs
        a, b = h["groups"]
        assert grouper.interaction_graph_[np.ix_(a, b)].any()


def test_ishap_p_values_are_a_symmetric_bonferroni_family():
    data = make_agreed_example(200, random_state=0)
    grouper = IShapGrouper(data.function, max_samples=20, random_state=0).fit(data.data)
    p = grouper.p_values_
    np.testing.assert_array_equal(p, p.T)
    assert np.all((p >= 0) & (p <= 1)) and np.all(np.diag(p) == 1)
    np.testing.assert_array_equal(grouper.interaction_graph_, p < 0.05)
    # the two products are very significant; x4 (linear) with x5 (square) never
    assert p[0, 1] < 1e-6 and p[2, 3] < 1e-6
    # same seed, same test
    again = IShapGrouper(data.function, max_samples=20, random_state=0).fit(data.data)
    np.testing.assert_array_equal(again.p_values_, p)


def test_ishap_size_penalty_blocks_a_weak_merge():
    # a weak product next to a strong one: a large penalty keeps its columns apart
    X = np.random.default_rng(3).uniform(-1, 1, size=(80, 4))

    def f(X):
        X = np.asarray(X, dtype=float)
        return 3 * X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3]

    free = IShapGrouper(f, max_samples=30, random_state=0).fit(X)
    strict = IShapGrouper(f, max_samples=30, size_penalty=0.2, random_state=0).fit(X)
    assert free.groups_ == [[0, 1], [2, 3]]
    assert strict.groups_ == [[0, 1], [2], [3]]
    assert strict.stop_reason_ == "objective" and strict.interaction_graph_[2, 3]
    # the weak merge lowers the fit error by less than the penalty of a pair
    weak = free.history_[1]
    assert weak["groups"] == ([2], [3])
    gain = free.history_[0]["error_after"] - weak["error_after"]
    assert 0 < gain < strict.size_penalty_
    assert free.size_penalty_ < gain


# -- n_groups and max_group_size ---------------------------------------------------------


@pytest.mark.parametrize("cls", GROUPERS)
def test_n_groups_is_respected(cls):
    data = make_agreed_example(200, random_state=0)
    for k in (1, 2, 3):
        grouper = cls(data.function, max_samples=20, n_groups=k, random_state=0).fit(data.data)
        assert grouper.n_groups_ == k
        assert grouper.stop_reason_ == "n_groups"
    # merging cannot split the true blocks: RECURSIVE keeps its 4 groups
    five = cls(data.function, max_samples=20, n_groups=5, random_state=0).fit(data.data)
    if cls is RecursiveGrouper:
        assert five.groups_ == data.groups and five.stop_reason_ == "tol"
    else:
        assert five.n_groups_ == 5


def test_recursive_bound_keeps_first_interacting_columns():
    # x0 interacts with x1, x2 and x3; a bound of 2 keeps x1 with x0
    X = np.random.default_rng(4).uniform(-1, 1, size=(60, 4))

    def f(X):
        X = np.asarray(X, dtype=float)
        return X[:, 0] * (X[:, 1] + X[:, 2] + X[:, 3])

    grouper = RecursiveGrouper(f, max_samples=20, max_group_size=2, random_state=0).fit(X)
    assert grouper.groups_ == [[0, 1], [2], [3]]
    assert grouper.stop_reason_ == "max_group_size"
    free = RecursiveGrouper(f, max_samples=20, random_state=0).fit(X)
    assert free.groups_ == [[0, 1, 2, 3]]


# -- model calls -------------------------------------------------------------------------


@pytest.mark.parametrize("cls", GROUPERS)
def test_model_calls_are_the_rows_sent(cls):
    data = make_agreed_example(200, random_state=2)
    model, seen = counting(data.function)
    N = 15
    grouper = cls(model, max_samples=N, random_state=0).fit(data.data)
    # every row the model saw during fit, apart from the one-row response probe
    assert sum(seen) - 1 == grouper.model_calls_
    assert grouper.history_[-1]["model_calls"] == grouper.model_calls_
    if cls is IShapGrouper:
        # the sample and the test; then N**2 per value of a group (6 singletons,
        # at least the 2 merged pairs)
        rest = grouper.model_calls_ - N - 1000 * N
        assert rest % N**2 == 0 and rest >= (6 + 2) * N**2
    else:
        assert (grouper.model_calls_ - N) % N**2 == 0


# -- input forms ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", GROUPERS)
def test_dataframe_gives_the_same_groups_and_names(cls):
    data = make_agreed_example(200, random_state=0)
    names = ["a", "b", "c", "d", "e", "f"]
    frame = pd.DataFrame(data.data, columns=names)

    def f(X):
        return data.function(np.asarray(X, dtype=float))

    on_array = cls(f, max_samples=20, random_state=0).fit(data.data)
    on_frame = cls(f, max_samples=20, random_state=0).fit(frame)
    assert on_frame.groups_ == on_array.groups_
    assert list(on_frame.group_names_) == ["a:b", "c:d", "e", "f"]
    if cls is IShapGrouper:
        np.testing.assert_array_equal(on_frame.p_values_, on_array.p_values_)
    Xt = on_frame.transform(frame.iloc[:5])
    assert Xt.shape == (5, 4)


@pytest.mark.parametrize("cls", GROUPERS)
def test_categorical_column(cls):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({
        "x": rng.uniform(-1, 1, 80),
        "kind": pd.Categorical(rng.choice(["u", "v"], 80)),
        "z": rng.uniform(-1, 1, 80),
    })

    def f(X):
        return X["x"].to_numpy() * np.where(X["kind"] == "u", 2.0, -1.0) + X["z"].to_numpy()

    grouper = cls(f, max_samples=25, random_state=0).fit(frame)
    assert grouper.groups_ == [[0, 1], [2]]


def test_tree_path_reads_values_from_the_trees():
    from sklearn.ensemble import HistGradientBoostingRegressor

    data = make_agreed_example(300, random_state=0)
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0)
    model.fit(data.data, data.target)
    N, K = 15, 200
    tree = IShapGrouper(model, max_samples=N, test_samples=K, random_state=0).fit(data.data)
    agnostic = IShapGrouper(model, max_samples=N, test_samples=K, algorithm="model_agnostic",
                            random_state=0).fit(data.data)
    assert tree.algorithm_ == "tree"
    # only the sample and the test call the model; the values v come from the trees
    assert tree.model_calls_ == N + K * N < agnostic.model_calls_
    np.testing.assert_array_equal(tree.p_values_, agnostic.p_values_)
    np.testing.assert_allclose(tree.initial_objective_, agnostic.initial_objective_,
                               rtol=1e-8)
    assert tree.groups_ == agnostic.groups_


def test_pairwise_grouper_path_past_its_partition():
    # the clustering's merges to one group, with the AGREED loss of each
    # partition recomputed independently from the sample's statistics
    from skdecomp.inspection import agreed_loss

    def f(X):
        X = np.asarray(X)
        return X[:, 0] * X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + X[:, 4]

    X = np.random.RandomState(0).normal(size=(80, 5))
    g = PairwiseGrouper(f, n_groups=3, max_samples=80, random_state=0).fit(X)
    path = g.path_
    assert [p["n_groups"] for p in path] == [5, 4, 3, 2, 1]
    assert [p["chosen"] for p in path] == [False, False, True, False, False]
    assert g.cut(3) == g.groups_
    assert path[-1]["loss"] == pytest.approx(0.0, abs=1e-9)
    assert [p["largest_group"] for p in path][:3] == [1, 2, 2]
    for p in path:
        groups = g.cut(p["n_groups"])
        expl = Explainer(f, groups=groups, background=X).fit(X)
        assert p["loss"] == pytest.approx(agreed_loss(expl, X), rel=1e-9, abs=1e-12)
    assert path[2]["remaining_share"] == pytest.approx(path[2]["loss"] / path[0]["loss"])
    with pytest.raises(ValueError, match="outside the merge path"):
        g.cut(0)


def test_pairwise_grouper_path_with_a_size_bound_stops_when_nothing_fits():
    X = np.random.RandomState(1).normal(size=(40, 6))
    g = PairwiseGrouper(lambda Z: np.asarray(Z).prod(axis=1), max_group_size=2,
                        random_state=0).fit(X)
    assert g.path_[-1]["n_groups"] == 3
    assert max(p["largest_group"] for p in g.path_) == 2


def test_pairwise_grouper_tradeoff_display():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skdecomp.plot import GroupingDisplay

    X = np.random.RandomState(0).normal(size=(40, 4))
    g = PairwiseGrouper(lambda Z: np.asarray(Z)[:, 0] * np.asarray(Z)[:, 1],
                        n_groups=3, random_state=0).fit(X)
    disp = GroupingDisplay.from_result(g, kind="tradeoff")
    x, y = disp.lines_["path"].get_data()
    assert list(x) == [p["largest_group"] for p in g.path_]
    assert np.allclose(y, [100 * p["remaining_share"] for p in g.path_])
    assert disp.chosen_ is not None
