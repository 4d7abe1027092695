"""SaliencyDisplay on photos as they are: image models, pixels drawn unchanged, levels."""

import warnings

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
torch = pytest.importorskip("torch")

from skdecomp import AdaptiveGrouper, Explainer, ImageModel, PatchGrouper
from skdecomp._hierarchy import Hierarchy
from skdecomp.plot import SaliencyDisplay, method_color

from ._cnn import onnx_session, photos, small_cnn

CLASSES = ["apple", "bee", "cat", "daisy", "egg"]
METHODS = ["occlusion", "arch", "kernel_shap"]


@pytest.fixture(autouse=True)
def one_thread_and_no_figures():
    import matplotlib.pyplot as plt

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    plt.close("all")
    yield
    plt.close("all")
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def net():
    return small_cnn()


@pytest.fixture(scope="module")
def model(net):
    return ImageModel(net, preprocess=(127.0, 128.0), class_names=CLASSES)


@pytest.fixture(scope="module")
def photo():
    return photos(1, size=32)[0]


def _explain(model, photo, **params):
    """The display, drawn without a single warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return SaliencyDisplay.from_estimator(
            model, photo, label_map=PatchGrouper(8), methods=METHODS, n_samples=128,
            random_state=0, **params)


def test_uint8_photo_is_drawn_as_it_is(model, photo):
    disp = _explain(model, photo)
    shown = disp.images_["image"].get_array()
    assert shown.dtype == np.uint8 and np.array_equal(shown, photo)
    predicted = int(model.predict(photo[None])[0].argmax())
    assert disp.axes_[0].get_title() == f"explained class: {CLASSES[predicted]}"
    assert [ax.get_title() for ax in disp.axes_[1:]] == METHODS
    assert [ax.title.get_color() for ax in disp.axes_[1:]] == [method_color(m) for m in METHODS]
    # 16 squares of 8x8 pixels, boundaries on every panel
    assert len(disp.boundaries_) == 1 + len(METHODS)
    assert len(disp.boundaries_[0].get_segments()) == 2 * 3 * 32


@pytest.mark.parametrize("scale", [1.0, 255.0])
def test_float_photo_is_drawn_in_its_own_scale(net, photo, scale):
    # the preprocessing of the photo's scale (0..1 photos would warn otherwise)
    model = ImageModel(net, preprocess=(127.0 / 255.0 * scale, 128.0 / 255.0 * scale),
                       class_names=CLASSES)
    image = photo / 255.0 * scale
    disp = _explain(model, image)
    shown = disp.images_["image"].get_array()
    # 0..1 unchanged; 0..255 divided by 255, for the display only
    np.testing.assert_array_equal(shown, photo / 255.0)
    assert disp.image is image
    predicted = int(model.predict(image[None])[0].argmax())
    assert CLASSES[predicted] in disp.axes_[0].get_title()


def test_the_maps_are_the_explainers(model, photo):
    disp = _explain(model, photo, baseline="blur", target=3)
    explainer = Explainer(model, groups=PatchGrouper(8), baseline="blur", target=3,
                          n_samples=128, random_state=0).fit(photo[None])
    expected = explainer.explain(photo[None], methods=METHODS)
    label_map = PatchGrouper(8).fit(photo[None]).label_map_
    for m in METHODS:
        np.testing.assert_allclose(disp.attributions[m], expected[m].values[0])
        np.testing.assert_allclose(disp.images_[m].get_array(),
                                   expected[m].values[0][label_map])
    assert disp.axes_[0].get_title() == "explained class: daisy"
    # one symmetric colour scale for every map; the colour bar is opaque
    limits = {disp.images_[m].get_clim() for m in METHODS}
    assert len(limits) == 1
    low, high = limits.pop()
    assert low == -high and high == pytest.approx(
        max(np.abs(disp.attributions[m]).max() for m in METHODS))
    assert disp.colorbar_.mappable.get_alpha() in (None, 1)
    # on a colour photo, the larger the value, the more opaque the map
    m = "occlusion"
    alpha = np.asarray(disp.images_[m].get_alpha())
    values = np.abs(disp.images_[m].get_array())
    assert alpha.shape == values.shape
    assert alpha[values == values.max()].min() > alpha[values == values.min()].max()


def test_torch_module_and_onnx_session_as_they_are(net, photo, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    del ort
    session = onnx_session(net, (3, 32, 32), tmp_path / "cnn.onnx")
    maps = {}
    for name, runtime in [("torch", net), ("onnx", session)]:
        # a network given raw pixels with no preprocess said runs, with a warning
        with pytest.warns(UserWarning, match="no preprocess was said"):
            disp = SaliencyDisplay.from_estimator(
                runtime, photo, label_map=PatchGrouper(8), methods=METHODS, n_samples=128,
                random_state=0, target=1)
        # no class names: the class index
        assert disp.axes_[0].get_title() == "explained class: 1"
        assert np.array_equal(disp.images_["image"].get_array(), photo)
        maps[name] = disp.attributions
    for m in METHODS:
        np.testing.assert_allclose(maps["torch"][m], maps["onnx"][m], atol=1e-5)


def test_an_image_model_keeps_its_own_target(net, photo):
    model = ImageModel(net, preprocess=(127.0, 128.0), class_names=CLASSES, target="egg")
    disp = _explain(model, photo)
    assert disp.axes_[0].get_title() == "explained class: egg"


def test_baselines(model, photo):
    black = _explain(model, photo, baseline="zeros", target=0).attributions
    zero = _explain(model, photo, baseline=0, target=0).attributions
    for m in METHODS:
        np.testing.assert_allclose(black[m], zero[m])
    with pytest.raises(ValueError, match="baseline='mean' is unknown"):
        _explain(model, photo, baseline="mean")


def test_from_result_names_the_class_of_explanations(model, photo):
    explainer = Explainer(model, groups=PatchGrouper(8), baseline="blur", target=2,
                          n_samples=128, random_state=0).fit(photo[None])
    result = explainer.explain(photo[None], methods=METHODS)
    label_map = explainer.grouper_.label_map_
    disp = SaliencyDisplay.from_result(photo, label_map, result)
    assert disp.axes_[0].get_title() == "explained class: cat"
    assert np.array_equal(disp.images_["image"].get_array(), photo)
    # a fitted grouper stands for its label map; a given title wins
    disp = SaliencyDisplay.from_result(photo, explainer.grouper_, result, title="t")
    assert disp.axes_[0].get_title() == "t"
    # plain arrays name nothing
    disp = SaliencyDisplay.from_result(photo, label_map,
                                       {m: result[m].values for m in METHODS})
    assert disp.axes_[0].get_title() == "image and groups"


def test_many_methods_in_two_rows(photo):
    label_map = PatchGrouper(8).fit(photo[None]).label_map_
    methods = ["occlusion", "arch", "kernel_shap", "permutation_shap", "lime", "rise",
               "integrated_gradients"]
    attributions = {m: np.arange(16.0) - i for i, m in enumerate(methods)}
    disp = SaliencyDisplay.from_result(photo, label_map, attributions)
    assert len(disp.axes_) == 8
    rows = {ax.get_subplotspec().rowspan.start for ax in disp.axes_}
    assert len(rows) == 2


def test_grey_and_odd_photos():
    grey = photos(1, size=16, channels=1)[0]
    label_map = PatchGrouper(8).fit(grey[None]).label_map_
    disp = SaliencyDisplay.from_result(grey, label_map, np.arange(4.0))
    assert np.array_equal(disp.images_["image"].get_array(), grey)
    # a grey photo in grey, black at 0 and white at 255
    assert disp.images_["image"].get_cmap().name == "gray"
    assert disp.images_["image"].get_clim() == (0, 255)
    # one channel: drawn as a grey image
    disp = SaliencyDisplay.from_result(grey[..., None], label_map, np.arange(4.0))
    assert np.array_equal(disp.images_["image"].get_array(), grey)
    # values outside 0..255: stretched to 0..1, without a clipping warning
    odd = np.random.default_rng(0).normal(size=(16, 16, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        disp = SaliencyDisplay.from_result(odd, label_map, np.arange(4.0))
    shown = disp.images_["image"].get_array()
    assert shown.min() == 0.0 and shown.max() == 1.0
    with pytest.raises(ValueError, match="pass images\\[0\\]"):
        SaliencyDisplay.from_result(odd[None], label_map, np.arange(4.0))


# -- levels ---------------------------------------------------------------------------
def _tree():
    image = np.ones((4, 4))
    label_map = np.kron(np.arange(4).reshape(2, 2), np.ones((2, 2), dtype=int))
    return image, label_map, Hierarchy(4, [[0, 1], [2, 3], [4, 5]])


def test_an_int_is_one_level():
    image, label_map, h = _tree()
    phi = {"shapley": np.array([1.0, 2, 3, 4])}
    disp = SaliencyDisplay.from_result(image, label_map, phi, hierarchy=h, levels=2)
    assert disp.levels_ == [2]
    assert [v.tolist() for v in disp.level_values_["shapley"]] == [[3, 7]]
    # whole numbers of any type
    disp = SaliencyDisplay.from_result(image, label_map, phi, hierarchy=h,
                                       levels=np.array([4.0, 2.0]))
    assert disp.levels_ == [4, 2]


@pytest.mark.parametrize("levels", [[2.5], 2.5, [4, 0], True, [2, "x"], "all", []])
def test_bad_levels_say_what_a_level_is(levels):
    image, label_map, h = _tree()
    match = "levels is empty" if levels == [] else "a level is a number of groups"
    with pytest.raises(ValueError, match=match):
        SaliencyDisplay.from_result(image, label_map, np.ones(4), hierarchy=h,
                                    levels=levels)


def test_bad_levels_fail_before_the_model_is_called(photo):
    def model(images):
        raise AssertionError("the model was called")

    with pytest.raises(ValueError, match="levels holds 2.5"):
        SaliencyDisplay.from_estimator(model, photo, patch_size=8, levels=[2.5])


def test_levels_of_agreed_on_a_photo(model, photo):
    from skdecomp._plot.saliency import merge_tree_hierarchy

    grouper = AdaptiveGrouper(model, initial_groups=PatchGrouper(8), n_groups=2,
                              target=2, baseline="blur").fit(photo[None])
    # the coarsest level below the root, whatever the merges were
    level = min(n for n in merge_tree_hierarchy(grouper)[0].cut_sizes() if n > 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        disp = SaliencyDisplay.from_estimator(
            model, photo, label_map=grouper, levels=level, methods=["occlusion", "arch"],
            baseline="blur", target=2)
    assert disp.levels_ == [level]
    lm = disp.level_label_maps_[level]
    assert np.array_equal(lm, grouper.cut_label_map(level))
    assert disp.figure_.get_suptitle() == "explained class: cat"
    # every group's total is the sum of its squares' values
    fine = grouper.initial_label_maps_[0]
    explainer = Explainer(model, groups=PatchGrouper(8), baseline="blur", target=2).fit(
        photo[None])
    squares = explainer.explain(photo[None], methods=["occlusion"])["occlusion"].values[0]
    owner = np.zeros(16, dtype=int)
    owner[fine.ravel()] = lm.ravel()
    np.testing.assert_allclose(disp.level_values_["occlusion"][0],
                               np.bincount(owner, weights=squares, minlength=level))


def test_own_colour_scales_when_the_maps_sizes_differ():
    import matplotlib

    matplotlib.use("Agg")
    from skdecomp.plot import SaliencyDisplay

    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, size=(32, 32, 3), dtype=np.uint8)
    labels = np.kron(np.arange(16).reshape(4, 4), np.ones((8, 8), dtype=int))
    small = rng.normal(size=16) * 0.01
    large = 0.2 + rng.normal(size=16) * 0.01  # like RISE: large everywhere
    disp = SaliencyDisplay.from_result(image, labels, {"occlusion": small, "rise": large})
    # auto: a factor of 20 between the maps, so each has its own scale and colour bar
    assert disp.colorbar_ is None and set(disp.colorbars_) == {"occlusion", "rise"}
    for m, phi in (("occlusion", small), ("rise", large)):
        assert disp.images_[m].get_clim()[1] == pytest.approx(np.abs(phi).max())
    shared = SaliencyDisplay.from_result(image, labels, {"occlusion": small, "rise": large},
                                         scale="shared")
    assert shared.colorbars_["occlusion"] is shared.colorbars_["rise"] is shared.colorbar_
    assert {shared.images_[m].get_clim() for m in ("occlusion", "rise")} == {
        (-np.abs(large).max(), np.abs(large).max())}
    # maps of the same size stay on one scale
    alike = SaliencyDisplay.from_result(image, labels, {"a": small, "b": 2 * small})
    assert alike.colorbar_ is not None
    with pytest.raises(ValueError, match="choose 'auto', 'shared' or 'method'"):
        SaliencyDisplay.from_result(image, labels, {"a": small}, scale="own")
    matplotlib.pyplot.close("all")


def test_maps_per_pixel_draw_without_outlines():
    import matplotlib

    matplotlib.use("Agg")
    from skdecomp.plot import SaliencyDisplay

    rng = np.random.default_rng(1)
    image = rng.integers(0, 255, size=(24, 24, 3), dtype=np.uint8)
    pixels = rng.normal(size=(1, 24, 24))  # as Explanation.to_image() gives it
    disp = SaliencyDisplay.from_result(image, None, {"owen": pixels})
    np.testing.assert_array_equal(disp.images_["owen"].get_array(), pixels[0])
    assert disp.boundaries_ == []  # 576 groups of one pixel: no outlines
    labels = np.kron(np.arange(144).reshape(12, 12), np.ones((2, 2), dtype=int))
    disp = SaliencyDisplay.from_result(image, labels, {"owen": rng.normal(size=144)})
    assert disp.boundaries_ and all(b.get_linewidth()[0] == 0.5 for b in disp.boundaries_)
    matplotlib.pyplot.close("all")
