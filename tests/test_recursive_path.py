"""RecursiveGrouper.path_: the merges of RDG and past its stopping point.

Every loss of the path is recomputed apart from the grouper, by
:func:`skdecomp.inspection.agreed_loss` on an Explainer of the same rows
(``max_samples`` is the number of rows, so the sample is all of X); the model
calls are counted by a model wrapper.
"""

import numpy as np
import pytest

from skdecomp import Explainer, RecursiveGrouper
from skdecomp.inspection import agreed_loss

N = 30  # rows of X, all of them the sample


def pairs_model(X):
    # at tol=0.5 RDG finds x0 x1 (I / Var about 2), not 0.3 x2 x3 (about 0.2)
    X = np.asarray(X)
    return X[:, 0] * X[:, 1] + 0.3 * X[:, 2] * X[:, 3] + X[:, 4]


def counting(f):
    seen = []

    def model(X):
        seen.append(len(X))
        return f(X)

    return model, seen


def data(d=5, seed=0):
    return np.random.RandomState(seed).normal(size=(N, d))


def check_losses(g, f, X):
    for p in g.path_:
        expl = Explainer(f, groups=g.cut(p["n_groups"]), background=X).fit(X)
        assert p["loss"] == pytest.approx(agreed_loss(expl, X), rel=1e-9, abs=1e-12)


def test_path_goes_past_the_groups_of_rdg():
    X = data()
    model, seen = counting(pairs_model)
    g = RecursiveGrouper(model, max_samples=N, tol=0.5, random_state=0).fit(X)
    assert g.groups_ == [[0, 1], [2], [3], [4]]
    path = g.path_
    assert [p["n_groups"] for p in path] == [5, 4, 3]
    assert [p["chosen"] for p in path] == [False, True, False]
    assert [p["merged"] for p in path] == [None, ("x0", "x1"), ("x2", "x3")]
    assert [p["largest_group"] for p in path] == [1, 2, 2]
    assert all(p["held_out_loss"] is None for p in path)
    assert set(path[0]) == {"n_groups", "merged", "loss", "held_out_loss", "largest_group",
                            "remaining_share", "chosen"}
    assert g.cut(4) == g.groups_
    assert g.cut(3) == [[0, 1], [2, 3], [4]]
    # no two groups interact past the merge of x2 and x3
    assert path[-1]["loss"] == pytest.approx(0.0, abs=1e-9)
    assert path[1]["remaining_share"] == pytest.approx(path[1]["loss"] / path[0]["loss"])
    check_losses(g, pairs_model, X)
    # 8 tests of RDG, 19 matrices: 3 for a group's first test, else 2; every
    # single column and x0:x1 had a matrix, so the path up to the stop costs
    # nothing more; past it, the 6 pairs of the 4 groups are tested
    assert g.n_tests_ == len(g.history_) == 8
    assert g.history_[-1]["model_calls"] == N + 19 * N**2
    assert g.model_calls_ == N + 25 * N**2 == sum(seen) - 1
    with pytest.raises(ValueError, match="outside the merge path"):
        g.cut(0)
    with pytest.raises(ValueError, match="outside the merge path"):
        g.cut(2)


def test_path_of_groups_found_at_once():
    # x0 x1 x2: columns 1 and 2 join group 0 in one round; the path adds them
    # one at a time, and the loss of every partition is that of its groups
    def f(X):
        X = np.asarray(X)
        return X[:, 0] * X[:, 1] * X[:, 2] + 0.3 * X[:, 2] + X[:, 3] * X[:, 4]

    X = data(6, seed=1)
    g = RecursiveGrouper(f, max_samples=N, tol=0.01, random_state=0).fit(X)
    assert g.groups_ == [[0, 1, 2], [3, 4], [5]]
    assert [p["n_groups"] for p in g.path_] == [6, 5, 4, 3]
    assert [p["merged"] for p in g.path_][1:] == [("x0", "x1"), ("x0:x1", "x2"),
                                                  ("x3", "x4")]
    assert g.path_[-1]["chosen"]
    check_losses(g, f, X)


def test_past_the_stop_at_most_as_many_model_calls_as_up_to_it():
    # weak pairs under a large tol: RDG leaves every column alone (5 tests,
    # 15 matrices); the first merge past the stop tests the 15 pairs, which
    # the budget allows; the next one would need 5 more matrices
    def f(X):
        X = np.asarray(X)
        return X.sum(axis=1) + 0.2 * (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, 4] * X[:, 5])

    X = data(6, seed=2)
    g = RecursiveGrouper(f, max_samples=N, tol=5.0, random_state=0).fit(X)
    assert g.groups_ == [[j] for j in range(6)]
    at_stop = g.history_[-1]["model_calls"]
    assert at_stop == N + 15 * N**2
    assert g.model_calls_ == N + 30 * N**2 <= 2 * at_stop
    assert [p["n_groups"] for p in g.path_] == [6, 5]
    assert g.path_[0]["chosen"]
    assert g.path_[-1]["loss"] > 1e-3
    check_losses(g, f, X)


def test_max_group_size_bounds_the_path():
    # x0 x1 x2 is cut by the bound; 0.3 x3 x4 is below tol, so it is merged
    # past the stop, and then no pair of groups fits in 2 columns
    def f(X):
        X = np.asarray(X)
        return X[:, 0] * X[:, 1] * X[:, 2] + 0.3 * X[:, 3] * X[:, 4]

    X = data()
    g = RecursiveGrouper(f, max_samples=N, tol=0.5, max_group_size=2, random_state=0).fit(X)
    assert g.stop_reason_ == "max_group_size"
    assert g.groups_ == [[0, 1], [2], [3], [4]]
    assert [p["n_groups"] for p in g.path_] == [5, 4, 3]
    assert [p["chosen"] for p in g.path_] == [False, True, False]
    assert g.cut(3) == [[0, 1], [2], [3, 4]]
    assert max(p["largest_group"] for p in g.path_) == 2
    assert g.path_[-1]["loss"] > 1e-3
    check_losses(g, f, X)


def test_one_column_per_group_costs_the_means_of_the_columns():
    # max_group_size=1: no test; the loss of the one partition needs the
    # means of every column, N**2 model calls each
    X = data()
    model, seen = counting(pairs_model)
    g = RecursiveGrouper(model, max_samples=N, max_group_size=1, random_state=0).fit(X)
    assert g.n_tests_ == 0
    assert [p["n_groups"] for p in g.path_] == [5]
    assert g.path_[0]["chosen"]
    assert g.model_calls_ == N + 5 * N**2 == sum(seen) - 1
    check_losses(g, pairs_model, X)


def test_n_groups_number_ends_the_path_at_the_groups():
    X = data()
    # RDG leaves 4 groups: no merge, and the path stops there too
    g4 = RecursiveGrouper(pairs_model, max_samples=N, tol=0.5, n_groups=4,
                          random_state=0).fit(X)
    assert [p["n_groups"] for p in g4.path_] == [5, 4]
    assert g4.path_[-1]["chosen"]
    # merged down to 2: the path follows the merges and ends at groups_
    g2 = RecursiveGrouper(pairs_model, max_samples=N, tol=0.5, n_groups=2,
                          random_state=0).fit(X)
    assert g2.stop_reason_ == "n_groups"
    assert [p["n_groups"] for p in g2.path_] == [5, 4, 3, 2]
    assert [p["chosen"] for p in g2.path_] == [False, False, False, True]
    assert g2.cut(2) == g2.groups_
    assert g2.cut(4) == g4.groups_
    check_losses(g2, pairs_model, X)


def test_means_of_the_matrices_are_those_of_the_statistics():
    from skdecomp._grouping._recursive import _SecondDifferences

    X = data()
    g = RecursiveGrouper(pairs_model, max_samples=N, random_state=0).fit(X)
    ev = g._sample(g.game_)
    sd = _SecondDifferences(ev, 5)
    assert sd.means([0, 3]) is None
    sd.matrices([[0], [1, 2], [3, 4]])
    # [1, 2, 4] from its complement [0, 3], without a matrix
    sd.fill([[0, 3]])
    sets = [[0], [1, 2], [3, 4], [1, 2, 4]]
    calls = ev.model_calls
    means = [sd.means(s) for s in sets]
    assert ev.model_calls == calls
    for s, (rows, cols) in zip(sets, means):
        r, c = ev.union_means(np.zeros(0, dtype=np.int64), [np.array(s)])
        np.testing.assert_allclose(rows, r[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(cols, c[0], rtol=0, atol=1e-12)


def test_tradeoff_display_draws_the_path():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skdecomp.plot import GroupingDisplay

    g = RecursiveGrouper(pairs_model, max_samples=N, tol=0.5, random_state=0).fit(data())
    disp = GroupingDisplay.from_result(g, kind="tradeoff")
    x, y = disp.lines_["path"].get_data()
    assert list(x) == [p["largest_group"] for p in g.path_]
    assert np.allclose(y, [100 * p["remaining_share"] for p in g.path_])
    assert disp.chosen_ is not None
