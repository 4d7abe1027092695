"""Hardening, round 6: deep hierarchies, shap's plots, polars without pyarrow,
saliency maps of several images, samplers that write, label-map messages and
the report's check of large values."""

import re

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from skdecomp import Explainer


# -- 1. hierarchies deeper than Python's recursion limit -------------------------------
def _chain(n):
    """[[[0, 1], 2], ..., n - 1], built in a loop, and the same chain as a linkage."""
    spec = [0, 1]
    for j in range(2, n):
        spec = [spec, j]
    Z = np.array([[0, 1, 1, 2]] + [[n + t - 1, t + 1, t + 1, t + 2]
                                   for t in range(1, n - 1)], dtype=float)
    return spec, Z


@pytest.mark.parametrize("depth", [900, pytest.param(3000, marks=pytest.mark.slow)])
def test_a_hierarchy_deeper_than_the_recursion_limit_gives_the_shallow_values(depth):
    n = depth + 1
    rng = np.random.default_rng(0)
    X = np.zeros((40, n))
    X[:, :3] = rng.normal(size=(40, 3))
    # the model reads columns 0-2 only: the others are dummies, so the chain's
    # values equal those of a shallow tree with the same block over 0-2
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(
        X, X[:, 0] * X[:, 1] + X[:, 2])
    spec, Z = _chain(n)

    def owen(h):
        return Explainer(model, method="owen", hierarchy=h, background=X[:5]).fit(
            X[:5]).transform(X[10:13])

    deep = owen(spec)
    np.testing.assert_allclose(deep, owen(Z), atol=1e-12)
    np.testing.assert_allclose(deep, owen([[[0, 1], 2], *range(3, n)]), atol=1e-12)
    assert np.abs(deep[:, :3]).max() > 0 and not deep[:, 3:].any()
    explainer = Explainer(model, method="owen", hierarchy=spec,
                          background=X[:5]).fit(X[:5])
    assert explainer.hierarchy_.depth == depth
    e = explainer.explain(X[10:12], methods=["owen"])["owen"]
    top = e.at_level(3)
    np.testing.assert_allclose(top.values.sum(axis=1), e.values.sum(axis=1))
    assert e.to_shap().clustering is not None


def test_errors_of_a_deep_hierarchy_name_the_block():
    spec = [0, 1, []]
    for j in range(2, 1200):
        spec = [spec, j]
    X = np.zeros((5, 1200))
    path = "hierarchy" + "[0]" * 1198 + "[2]"
    match = rf"the block {re.escape(path)} is empty; give"
    with pytest.raises(ValueError, match=match):
        Explainer(lambda Z: Z[:, 0], method="owen", hierarchy=spec,
                  background=X[:2]).fit(X)


# -- 2. shap's beeswarm and bar of Owen values -----------------------------------------
def test_to_shap_of_owen_values_draws_with_beeswarm_and_bar():
    shap = pytest.importorskip("shap")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.cluster.hierarchy import cophenet, is_monotonic, is_valid_linkage

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(
        X, X[:, 0] * X[:, 1] + X[:, 2])
    res = Explainer(model, method="owen", hierarchy=[[0, 1], [2, [3, 4]], 5],
                    background=X[:5]).fit(X).explain(X[:6], methods=["owen"])["owen"]
    e = res.to_shap()
    C = np.asarray(e.clustering)
    assert C.shape == (6, 5, 4)
    assert all(is_valid_linkage(c) and is_monotonic(c) for c in C)
    # the same tree on every row, to the last place of the root's height
    np.testing.assert_allclose(C, np.broadcast_to(C[0], C.shape), rtol=1e-14, atol=0)
    for c in C:
        np.testing.assert_allclose(cophenet(c), cophenet(C[0]), rtol=1e-14)
    assert e.abs.mean(0).clustering is not None  # shap's bar keeps the tree
    for draw in (lambda: shap.plots.beeswarm(e, show=False),
                 lambda: shap.plots.beeswarm(e[2:5], show=False),
                 lambda: shap.plots.bar(e, show=False),
                 lambda: shap.plots.bar(e, show=False, clustering_cutoff=10.0),
                 lambda: shap.plots.bar(e[1], show=False),
                 lambda: shap.plots.waterfall(e[1], show=False)):
        draw()
        plt.close("all")


# -- 3. polars -------------------------------------------------------------------------
@pytest.mark.parametrize("lazy", [False, True])
def test_correlation_grouper_names_the_text_column_of_a_polars_frame(monkeypatch, lazy):
    pl = pytest.importorskip("polars")
    import pandas as pd

    from skdecomp import CorrelationGrouper

    rng = np.random.default_rng(0)
    data = {"a": rng.normal(size=20), "b": rng.normal(size=20), "t": ["x", "y"] * 10}
    with pytest.raises(ValueError) as pandas_error:
        CorrelationGrouper().fit(pd.DataFrame(data))
    X = pl.DataFrame(data)
    X = X.lazy() if lazy else X
    monkeypatch.setitem(__import__("sys").modules, "pyarrow", None)  # read without it
    with pytest.raises(ValueError, match=r"non-numeric columns \['t'\]; encode them as "
                                         r"numbers first, or drop them") as error:
        CorrelationGrouper().fit(X)
    assert str(error.value) == str(pandas_error.value)


# -- 4. SaliencyDisplay draws the image it is given ------------------------------------
def _two_images():
    rng = np.random.default_rng(0)
    images = rng.random((2, 8, 8))
    images[1] = images[1][::-1]

    def f(X):
        X = np.asarray(X).reshape(len(X), 8, 8)
        return (X[:, :4, :4].sum((1, 2)) * X[:, 4:, 4:].sum((1, 2))
                + X[:, :4, 4:].sum((1, 2)))

    return images, f


def test_saliency_refuses_a_grouper_fitted_on_several_images():
    pytest.importorskip("matplotlib").use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp import AdaptiveGrouper, PatchGrouper
    from skdecomp.plot import SaliencyDisplay

    images, f = _two_images()
    grouper = AdaptiveGrouper(f, initial_groups=PatchGrouper(2), n_groups=3)
    both = grouper.fit(images)
    assert not np.array_equal(both.label_maps_[0], both.label_maps_[1])
    for levels in ("auto", None):
        match = (r"fitted on 2 images .* cannot tell which of them it is\. Pass the "
                 r"AdaptiveGrouper unfitted")
        with pytest.raises(ValueError, match=match):
            SaliencyDisplay.from_estimator(f, images[1], label_map=both, levels=levels,
                                           target=None, methods=["occlusion"])
        with pytest.raises(ValueError, match="fitted on 2 images"):
            SaliencyDisplay.from_result(images[1], both, np.zeros(16 if levels else 3),
                                        levels=levels)
    # unfitted, it is fitted on the image drawn: the tree of that image
    from sklearn.base import clone

    alone = clone(grouper).fit(images[1][None])
    for given in (clone(grouper), alone):
        disp = SaliencyDisplay.from_estimator(f, images[1], label_map=given,
                                              levels="auto", target=None,
                                              methods=["occlusion"])
        ref = SaliencyDisplay.from_result(images[1], alone, disp.attributions,
                                          levels="auto")
        assert disp.levels_ == ref.levels_
        for n in disp.levels_:
            np.testing.assert_array_equal(disp.level_label_maps_[n],
                                          ref.level_label_maps_[n])
    # a patch grid fitted on both images is the same map on both: drawn
    patches = PatchGrouper(4).fit(images)
    SaliencyDisplay.from_estimator(f, images[1], label_map=patches, target=None,
                                   methods=["occlusion"])
    plt.close("all")


def test_saliency_messages_say_what_the_caller_can_do():
    pytest.importorskip("matplotlib").use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp.plot import SaliencyDisplay

    images, f = _two_images()
    image = images[0]
    lm = np.repeat(np.repeat(np.arange(4).reshape(2, 2), 4, 0), 4, 1)
    # levels without a tree: no "pass a Hierarchy" (a private class)
    match = (r"keeps no merge tree\. Pass label_map=AdaptiveGrouper.*hierarchy= as "
             r"nested lists")
    with pytest.raises(ValueError, match=match):
        SaliencyDisplay.from_estimator(f, image, patch_size=4, levels=2, target=None)
    # ... and nested lists of the label map's ids are read as that tree
    for draw in (lambda h: SaliencyDisplay.from_result(image, lm, np.arange(4.0),
                                                       levels=2, hierarchy=h),
                 lambda h: SaliencyDisplay.from_estimator(
                     f, image, label_map=lm, levels=2, hierarchy=h, target=None,
                     methods=["shapley"])):
        disp = draw([[0, 1], [2, 3]])
        assert disp.levels_ == [2]
        assert len(np.unique(disp.level_label_maps_[2])) == 2
    with pytest.raises(ValueError, match=r"groups of the label map: their ids 0\.\.3"):
        SaliencyDisplay.from_result(image, lm, np.arange(4.0), levels=2,
                                    hierarchy=[[0, 1], [2]])
    # NaN pixels: replace them (no "drop rows" or "fix the model's output")
    bad = image.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"image pixels \(first at \(0, 0\)\).*"
                                         r"np\.nan_to_num") as error:
        SaliencyDisplay.from_result(bad, lm, np.arange(4.0))
    assert "model's output" not in str(error.value)
    with pytest.raises(ValueError, match=r"astype\(int\)"):
        SaliencyDisplay.from_result(image, lm.astype(float), np.arange(4.0))
    with pytest.raises(ValueError, match=r"ids 0, 2, 4, 6.*Renumber it"):
        SaliencyDisplay.from_result(image, lm * 2, np.arange(4.0))
    with pytest.raises(ValueError, match=r"5 values for the 4 groups.*one value per"):
        SaliencyDisplay.from_result(image, lm, np.arange(5.0))
    plt.close("all")


# -- 5. a sampler that writes into its input -------------------------------------------
class _WritesOnDraw:
    """A user sampler that draws the column means, after writing over its input."""

    def fit(self, X):
        self.mean_ = np.asarray(X).mean(axis=0)
        return self

    def sample(self, X, known, n_draws, random_state=None):
        X[~known] = self.mean_[np.nonzero(~known)[1]]  # in place: refused
        return np.repeat(X[:, None, :], n_draws, axis=1)


class _WritesOnFit(_WritesOnDraw):
    def fit(self, X):
        X -= X.mean(axis=0)  # in place: refused
        return super().fit(X)


@pytest.mark.parametrize("path", ["explainer", "permutation_importance",
                                  "partial_dependence", "disagreement_sources"])
@pytest.mark.parametrize("sampler, method", [(_WritesOnDraw, "sample"),
                                             (_WritesOnFit, "fit")])
def test_a_sampler_writing_into_its_input_is_refused(path, sampler, method):
    from sklearn.linear_model import LinearRegression

    from skdecomp import inspection

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = X @ np.array([1.0, 2.0, -1.0])
    model = LinearRegression().fit(X, y)
    before = X.copy()
    calls = {
        "explainer": lambda: Explainer(model, imputer=sampler(), background=4,
                                       random_state=0).fit(X).transform(X[:2]),
        "permutation_importance": lambda: inspection.permutation_importance(
            model, X, y, imputer=sampler(), n_repeats=2, random_state=0),
        "partial_dependence": lambda: inspection.partial_dependence(
            model, X, 0, grid=[[0.5]], imputer=sampler(), random_state=0),
        "disagreement_sources": lambda: inspection.disagreement_sources(
            model, X, sampler=sampler(), max_samples=20, random_state=0),
    }
    with pytest.raises(ValueError, match=rf"{sampler.__name__}\.{method}: the sampler "
                                         r"wrote into its input .* read-only: .*"
                                         r"np\.array\(X\)"):
        calls[path]()
    np.testing.assert_array_equal(X, before)


# -- 6. label maps and image groupers say what is wrong and what to do -----------------
def test_label_map_from_groups_names_the_pixels_left_out_and_bad_positions():
    from skdecomp._image._shapes import label_map_from_groups

    with pytest.raises(ValueError, match=r"11 pixel\(s\) are in no group \(the first "
                                         r"at \(1, 1\)\).*add them"):
        label_map_from_groups([[0, 1, 2], [3, 4]], (4, 4))
    for bad in (40, -1):
        with pytest.raises(ValueError, match=rf"group 1 holds column position {bad}, "
                                             r"out of range.*positions 0\.\.15"):
            label_map_from_groups([list(range(10)), [10, 11, 12, 13, 14, 15, bad]],
                                  (4, 4))
    np.testing.assert_array_equal(label_map_from_groups([[0, 1], [2, 3]], (2, 2)),
                                  [[0, 0], [1, 1]])


def test_image_groupers_say_what_is_wrong_and_what_to_do():
    from skdecomp import AdaptiveGrouper, PatchGrouper

    rng = np.random.default_rng(0)
    images = rng.random((2, 4, 4))
    lm = np.repeat(np.repeat(np.arange(4).reshape(2, 2), 2, 0), 2, 1)

    def f(X):
        return np.asarray(X).reshape(len(X), -1).sum(axis=1)

    with pytest.raises(ValueError, match=r"X has shape \(16,\).*one image, pass "
                                         r"image\[None\]"):
        PatchGrouper(2).fit(images[0].ravel())
    with pytest.raises(ValueError, match=r"1 NaN or infinite pixel value\(s\) \(the "
                                         r"first in image 1\).*np\.nan_to_num"):
        bad = images.copy()
        bad[1, 2, 3] = np.nan
        PatchGrouper(2).fit(bad)
    match = (r"initial_groups is an array of shape \(2, 4, 4\).*one label map of "
             r"shape \(4, 4\)")
    with pytest.raises(ValueError, match=match):
        AdaptiveGrouper(f, initial_groups=np.stack([lm, lm]), n_groups=2).fit(images)
    with pytest.raises(ValueError, match=r"initial_groups is a label map of dtype "
                                         r"float64 whose ids are not whole.*astype"):
        AdaptiveGrouper(f, initial_groups=lm + 0.5, n_groups=2).fit(images)
    # whole numbers as floats are ids
    AdaptiveGrouper(f, initial_groups=lm.astype(float), n_groups=2).fit(images)
    with pytest.raises(ValueError, match=r"baseline contains NaN or infinity.*"
                                         r"np\.nan_to_num"):
        Explainer(f, groups=PatchGrouper(2),
                  baseline=np.full((4, 4), np.nan)).fit(images[:1])


def test_superpixel_params_name_the_segmentation_to_use():
    pytest.importorskip("skimage")
    from skdecomp import SuperpixelGrouper

    images = np.random.default_rng(0).random((1, 8, 8))
    with pytest.raises(ValueError, match=r"n_segments.*not an argument of "
                                         r"skimage\.segmentation\.quickshift.*"
                                         r"segmentation='slic'"):
        SuperpixelGrouper(segmentation_params={"n_segments": 4}).fit(images)
    with pytest.raises(ValueError, match=r"'foo'.*not an argument of skimage\."
                                         r"segmentation\.quickshift.*remove it"):
        SuperpixelGrouper(segmentation_params={"foo": 1}).fit(images)


# -- 7. the report takes large values with a model that does not standardise -----------
def _run_report(args, capsys):
    from skdecomp.__main__ import main

    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.slow
def test_report_takes_values_up_to_1e308_with_hgb_and_refuses_them_for_scaled_models(
        tmp_path, capsys):
    import json

    import pandas as pd

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    df["y"] = df["a"] + df["b"] * df["c"]
    df["a"] *= 1e308 / df["a"].abs().max()  # the largest is 1e308
    path = tmp_path / "large.csv"
    df.to_csv(path, index=False)
    base = ["report", path, "--target", "y", "--n-rows", "2", "--methods", "shapley",
            "--groups", "columns"]
    # hgb, the default
    code, err = _run_report(base + ["--out", tmp_path / "hgb"], capsys)
    assert code == 0, err
    results = json.loads((tmp_path / "hgb" / "results.json").read_text())
    assert results["columns"] == ["a", "b", "c"]
    for estimator, why in [("linear", "standardises its columns"),
                           ("rf", "32-bit floats")]:
        code, err = _run_report(base + ["--out", tmp_path / estimator, "--estimator",
                                        estimator], capsys)
        assert code != 0 and "column 'a'" in err and why in err
        assert "--drop a" in err and "--estimator hgb" in err
        assert not (tmp_path / estimator).exists()


def test_large_values_are_refused_only_for_models_that_cannot_take_them():
    import pandas as pd

    from skdecomp._report import DataError
    from skdecomp._report._models import check_value_sizes

    X = pd.DataFrame({"a": [1e308, -3.0, 2.0, 0.5], "b": [1.0, 2.0, 3.0, 4.0]})
    before = X.copy()
    check_value_sizes(X, "hgb")
    for estimator, why in [("linear", "standardises"), ("mlp", "standardises"),
                           ("rf", "32-bit floats")]:
        match = (rf"column 'a' holds values as large as 1e\+308: .*{why}.*--drop a"
                 r".*--estimator hgb")
        with pytest.raises(DataError, match=match):
            check_value_sizes(X, estimator)
    check_value_sizes(X.assign(a=X["a"] / 1e290), "rf")  # 1e18: within float32
    pd.testing.assert_frame_equal(X, before)


def test_grouping_display_draws_a_merge_tree_deeper_than_the_recursion_limit():
    import sys

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp.plot import GroupingDisplay

    n = sys.getrecursionlimit() + 200
    # a chain: group 0 absorbs one column at each merge
    history = [{"groups": (list(range(k + 1)), [k + 1]), "names": (f"c0..{k}", f"c{k + 1}"),
                "loss_before": float(n - k), "loss_after": float(n - k - 1),
                "n_groups": n - k} for k in range(n)]
    disp = GroupingDisplay.from_result(history, kind="dendrogram")
    assert len(disp.n_groups) == n + 1
    plt.close("all")
