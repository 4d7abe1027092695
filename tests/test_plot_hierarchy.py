"""Hierarchies in the plots: bars beside a tree, cuts, and image levels."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper
from skdecomp._hierarchy import Hierarchy
from skdecomp.plot import AttributionDisplay, SaliencyDisplay


def f(X):
    X = np.asarray(X, dtype=float)
    return X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3] * X[:, 4]) + 0.5 * X[:, 5]


@pytest.fixture(scope="module")
def owen():
    X = np.random.default_rng(0).normal(size=(40, 6))
    explainer = Explainer(f, background=X[:4], method="owen",
                          hierarchy={"a": [5, [1, 2]], "b": [3, 4, 0]}).fit(X)
    return explainer.explain(X[:5], methods=["owen", "shapley"])


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _bar_heights(disp, method):
    """Bar widths by tick label, read back from the axes."""
    bars = disp.artists_[method]
    labels = {round(t.get_position()[1]): t.get_text() for t in disp.ax_.get_yticklabels()}
    return {labels[round(p.get_y() + p.get_height() / 2)]: p.get_width() for p in bars}


def _bar_positions(disp):
    return {t.get_text(): t.get_position()[1] for t in disp.ax_.get_yticklabels()}


def _check_tree(disp, hierarchy, names):
    """Every node's vertical line spans its children, which sit at their bars."""
    pos = _bar_positions(disp)
    K = hierarchy.n_players
    y = {k: pos[names[k]] for k in range(K)}
    segs = [np.asarray(s) for s in disp.tree_.get_segments()]
    i = 0
    for a, ch in enumerate(hierarchy.children, start=K):
        vertical, arms = segs[i], segs[i + 1: i + 1 + len(ch)]
        i += 1 + len(ch)
        ys = sorted(y[c] for c in ch)
        assert vertical[0, 0] == vertical[1, 0]
        assert sorted(vertical[:, 1]) == pytest.approx([ys[0], ys[-1]])
        assert sorted(arm[0, 1] for arm in arms) == pytest.approx(ys)
        assert all(arm[1, 0] == vertical[0, 0] for arm in arms)
        y[a] = (ys[0] + ys[-1]) / 2
    assert i == len(segs)


def test_bars_follow_the_leaves_and_the_tree_joins_their_bars(owen):
    res = owen["owen"]
    h = res.hierarchy
    disp = AttributionDisplay.from_explanation(res[0], kind="bar")
    labels = [t.get_text().split(" = ")[0] for t in disp.ax_.get_yticklabels()]
    # the first leaf on top (players sorted within their block)
    assert labels == ["x5", "x1", "x2", "x0", "x3", "x4"]
    assert disp.hierarchy_ is h and disp.tree_ax_ is not None
    names = {k: f"x{k} = " for k in range(6)}
    full = {t.get_text().split(" = ")[0] + " = ": t.get_text()
            for t in disp.ax_.get_yticklabels()}
    _check_tree(disp, h, {k: full[names[k]] for k in range(6)})
    heights = _bar_heights(disp, "owen")
    for k in range(6):
        assert heights[full[names[k]]] == pytest.approx(res.values[0, k])


def test_the_cut_gives_the_totals_of_at_level(owen):
    res = owen["owen"]
    for n in res.hierarchy.cut_sizes()[1:-1]:
        cut = res.at_level(n)
        disp = AttributionDisplay.from_explanation(res[1], kind="bar", hierarchy_level=n)
        heights = _bar_heights(disp, "owen")
        # one row: the labels hold the values of one-player nodes
        by_name = {k.split(" = ")[0]: v for k, v in heights.items()}
        assert by_name == pytest.approx(dict(zip(cut.feature_names, cut.values[1])))
        labels = {t.split(" = ")[0]: t for t in heights}
        _check_tree(disp, disp.hierarchy_,
                    {k: labels[name] for k, name in enumerate(cut.feature_names)})
        # over several rows, the mean absolute total
        disp = AttributionDisplay.from_explanation(res, kind="bar", hierarchy_level=n)
        assert _bar_heights(disp, "owen") == pytest.approx(
            dict(zip(cut.feature_names, np.abs(cut.values).mean(axis=0))))


def test_another_method_takes_the_hierarchy_passed(owen):
    shap = owen["shapley"]
    assert shap.hierarchy is None
    with pytest.raises(ValueError, match="hierarchy_level=2 needs a hierarchy"):
        AttributionDisplay.from_explanation(shap, kind="bar", hierarchy_level=2)
    disp = AttributionDisplay.from_explanation(
        shap, kind="bar", hierarchy=[["x0", "x1", "x2"], ["x3", "x4", "x5"]],
        hierarchy_level=2)
    totals = shap.values[:, :3].sum(axis=1), shap.values[:, 3:].sum(axis=1)
    assert _bar_heights(disp, "shapley") == pytest.approx(
        {"x0:x1:x2": np.abs(totals[0]).mean(), "x3:x4:x5": np.abs(totals[1]).mean()})
    # both methods, in the order of the owen explanation's leaves
    disp = AttributionDisplay.from_explanation(owen, kind="bar")
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == [
        "x5", "x1", "x2", "x0", "x3", "x4"]
    assert set(disp.artists_) == {"owen", "shapley"}
    with pytest.raises(ValueError, match="hierarchy_level=3 is not a level"):
        AttributionDisplay.from_explanation(owen, kind="bar", hierarchy_level=3)


def test_a_non_binary_hierarchy_from_arrays_draws():
    h = Hierarchy(7, [[0, 1, 2], [3, 4], [7, 8, 5, 6]],
                  player_names=list("abcdefg"))
    phi = np.arange(1.0, 8.0)[None] * np.array([1, -1, 1, -1, 1, -1, 1])
    disp = AttributionDisplay.from_result({"shapley": phi}, group_names=list("abcdefg"),
                                          kind="bar", hierarchy=h)
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == list("abcdefg")
    _check_tree(disp, h, dict(enumerate("abcdefg")))
    assert len(disp.tree_.get_segments()) == 3 + 3 + 2 + 4
    # more groups than max_groups: the finest cut within it
    disp = AttributionDisplay.from_result({"shapley": phi}, group_names=list("abcdefg"),
                                          kind="bar", hierarchy=h, max_groups=5)
    assert _bar_heights(disp, "shapley") == pytest.approx(
        {"a:b:c": 2.0, "d": -4.0, "e": 5.0, "f": -6.0, "g": 7.0})
    # without a hierarchy the bars are sorted and no tree is drawn
    disp = AttributionDisplay.from_result({"shapley": phi}, group_names=list("abcdefg"),
                                          kind="bar")
    assert disp.tree_ is None and disp.hierarchy_ is None


def test_image_levels_paint_the_totals_of_every_level():
    def model(rows):
        im = np.asarray(rows, dtype=float).reshape(-1, 4, 4)
        return im[:, :2, :2].sum(axis=(1, 2)) * im[:, :2, 2:].sum(axis=(1, 2)) + im[:, 2:].sum(
            axis=(1, 2))

    image = np.random.default_rng(0).uniform(0.5, 1.5, size=(4, 4))
    grouper = AdaptiveGrouper(model, initial_groups=PatchGrouper(2), n_groups=1).fit(
        image[None])
    disp = SaliencyDisplay.from_estimator(model, image, label_map=grouper,
                                          levels="auto", methods=["owen", "shapley"])
    assert disp.levels_ == [4, 3, 2]
    assert len(disp.axes_) == 6
    for m in ("owen", "shapley"):
        finest = disp.level_values_[m][0]
        for n, totals in zip(disp.levels_, disp.level_values_[m]):
            lm = disp.level_label_maps_[n]
            assert np.array_equal(lm, grouper.cut_label_map(n))
            painted = disp.images_[f"{m}, {n} groups"].get_array()
            np.testing.assert_allclose(painted, totals[lm])
            # every group's total is the sum of its patches' values
            fine = disp.level_label_maps_[4]
            for k in range(n):
                assert totals[k] == pytest.approx(
                    sum(finest[j] for j in np.unique(fine[lm == k])))
    # the Owen totals of a level are the grouped values of its groups
    lm = disp.level_label_maps_[2]
    groups = [np.flatnonzero(lm.ravel() == k).tolist() for k in range(2)]
    grouped = Explainer(model, groups=groups, background=np.zeros((1, 16))).fit(
        image.reshape(1, -1)).transform(image.reshape(1, -1))[0]
    np.testing.assert_allclose(disp.level_values_["owen"][2], grouped, atol=1e-10)


def test_image_levels_need_a_merge_tree():
    image = np.ones((4, 4))
    lm = np.kron(np.arange(4).reshape(2, 2), np.ones((2, 2), dtype=int))
    with pytest.raises(ValueError, match="keeps no merge tree"):
        SaliencyDisplay.from_result(image, PatchGrouper(2), np.ones(4), levels="auto")
    h = Hierarchy(4, [[0, 1], [2, 3], [4, 5]])
    disp = SaliencyDisplay.from_result(image, lm, {"shapley": np.array([1.0, 2, 3, 4])},
                                       hierarchy=h, levels=[4, 2])
    assert [v.tolist() for v in disp.level_values_["shapley"]] == [[1, 2, 3, 4], [3, 7]]
    with pytest.raises(ValueError, match="levels holds 5"):
        SaliencyDisplay.from_result(image, lm, np.ones(4), hierarchy=h, levels=[5])
