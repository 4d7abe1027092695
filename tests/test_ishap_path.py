"""IShapGrouper.path_ and cut: the greedy merges of iShap past its stopping point.

The losses along the path are recomputed apart from the grouper (the AGREED
loss of an Explainer with the same groups on the same rows), and the model
calls are counted by a wrapper of the model.
"""

import numpy as np
import pytest

from skdecomp import Explainer, IShapGrouper
from skdecomp.inspection import agreed_loss

N, K = 30, 200  # sample rows (all of X) and test samples per row


def triple(X):
    X = np.asarray(X, dtype=float)
    return X[:, 0] * X[:, 1] * X[:, 2] + X[:, 3]


def product(X):
    X = np.asarray(X, dtype=float)
    return X[:, 0] * X[:, 1] * X[:, 2]


def counting(f):
    seen = []

    def model(X):
        seen.append(len(X))
        return f(X)

    return model, seen


def data(d, n=N, seed=0):
    return np.random.RandomState(seed).normal(size=(n, d))


def fit(f, X, **params):
    return IShapGrouper(f, max_samples=X.shape[0], test_samples=K, random_state=0,
                        **params).fit(X)


def test_path_goes_past_the_stop_with_the_loss_of_every_partition():
    # a price of half the singletons' error stops at once; the path goes on
    # merging the three columns of the product, to a loss of 0
    X = data(4)
    model, seen = counting(triple)
    g = fit(model, X, size_penalty=0.5)
    assert g.groups_ == [[0], [1], [2], [3]]
    assert g.stop_reason_ == "objective" and g.history_ == []
    assert g.objective_ == g.initial_objective_
    path = g.path_
    assert set(path[0]) == {"n_groups", "merged", "loss", "held_out_loss",
                            "largest_group", "remaining_share", "chosen"}
    assert [p["n_groups"] for p in path] == [4, 3, 2]
    assert [p["chosen"] for p in path] == [True, False, False]
    assert [p["largest_group"] for p in path] == [1, 2, 3]
    assert path[0]["merged"] is None and all(p["merged"] for p in path[1:])
    assert all(p["held_out_loss"] is None for p in path)
    assert g.cut(4) == g.groups_
    assert g.cut(2) == [[0, 1, 2], [3]]
    for p in path:
        expl = Explainer(triple, groups=g.cut(p["n_groups"]), background=X).fit(X)
        assert p["loss"] == pytest.approx(agreed_loss(expl, X), rel=1e-9, abs=1e-12)
    assert path[-1]["loss"] == pytest.approx(0.0, abs=1e-9)
    assert path[1]["remaining_share"] == pytest.approx(path[1]["loss"] / path[0]["loss"])
    # the rows the model saw: the sample, the test, N**2 for each value v
    # up to the stop (4 singletons, the 3 pairs of the triangle), and one
    # past it (the merged pair with the third column); the losses add none
    graph = g.interaction_graph_
    assert graph[0, 1] and graph[0, 2] and graph[1, 2] and not graph[3].any()
    assert sum(seen) - 1 == g.model_calls_ == N + K * N + (4 + 3 + 1) * N**2
    with pytest.raises(ValueError, match="outside the merge path"):
        g.cut(0)
    with pytest.raises(ValueError, match="outside the merge path"):
        g.cut(1)


def test_the_merge_a_positive_penalty_undoes_stays_on_the_path():
    X = data(3)
    model, seen = counting(product)
    g = fit(model, X)
    free = fit(product, X, size_penalty=0.0)
    # the search reaches one group; the price undoes the last merge
    assert g.stop_reason_ == free.stop_reason_ == "n_groups"
    assert g.n_groups_ == 2 and len(g.history_) == 1 and free.groups_ == [[0, 1, 2]]
    assert [h["groups"] for h in g.history_] == [h["groups"] for h in free.history_[:1]]
    assert [p["n_groups"] for p in g.path_] == [3, 2, 1]
    assert [p["chosen"] for p in g.path_] == [False, True, False]
    assert [p["chosen"] for p in free.path_] == [False, False, True]
    assert g.cut(2) == g.groups_ and g.cut(1) == free.groups_
    for p, q in zip(g.path_, free.path_):
        assert p["loss"] == q["loss"]
    # the path costs nothing over the search: both searches made the same
    # calls, and the undone merge's union was known before it
    assert sum(seen) - 1 == g.model_calls_ == free.model_calls_
    assert g.model_calls_ == g.history_[-1]["model_calls"]
    assert g.model_calls_ == N + K * N + (3 + 3) * N**2


def test_an_int_n_groups_ends_the_path_at_its_partition():
    X = data(4)
    model, seen = counting(triple)
    g = fit(model, X, n_groups=3)
    assert g.stop_reason_ == "n_groups" and g.n_groups_ == 3
    assert [p["n_groups"] for p in g.path_] == [4, 3]
    assert [p["chosen"] for p in g.path_] == [False, True]
    assert g.cut(3) == g.groups_ and g.cut(4) == [[0], [1], [2], [3]]
    assert sum(seen) - 1 == g.model_calls_ == g.history_[-1]["model_calls"]
    with pytest.raises(ValueError, match="outside the merge path"):
        g.cut(2)


def test_the_path_ends_when_no_candidate_fits_the_size_bound():
    X = data(4)
    g = fit(triple, X, size_penalty=0.5, max_group_size=2)
    assert g.groups_ == [[0], [1], [2], [3]] and g.stop_reason_ == "objective"
    assert [p["n_groups"] for p in g.path_] == [4, 3]
    assert g.path_[-1]["largest_group"] == 2
    assert g.path_[-1]["loss"] > 0


def test_ishap_tradeoff_display():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp.plot import GroupingDisplay

    g = fit(triple, data(4), size_penalty=0.5)
    disp = GroupingDisplay.from_result(g, kind="tradeoff")
    x, y = disp.lines_["path"].get_data()
    assert list(x) == [p["largest_group"] for p in g.path_]
    assert np.allclose(y, [100 * p["remaining_share"] for p in g.path_])
    assert disp.chosen_ is not None
    plt.close("all")
