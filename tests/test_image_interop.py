"""Image explanations in shap's and captum's layouts.

``to_shap()`` of an explanation of images is what ``shap.plots.image``
draws: values per pixel and channel, the group's value spread over them, and
the explained images as data. ``to_captum()`` has the input tensor's layout
(n, C, H, W) with every pixel and channel of a group carrying the group's
value, as captum's attributions with a ``feature_mask``: the occlusion map
equals captum's ``FeatureAblation`` for the same groups and baseline.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdecomp import Explainer, ImageModel, PatchGrouper  # noqa: E402

from ._cnn import photos, small_cnn  # noqa: E402


@pytest.fixture(scope="module")
def setup():
    net = small_cnn()
    images = photos(2, size=32, seed=7)
    model = ImageModel(net, preprocess="none", output="logit", target=1)
    explainer = Explainer(model, groups=PatchGrouper(8), baseline="zeros").fit(images)
    return net, images, explainer


def test_to_shap_of_images_is_drawn_by_shap_plots_image(setup):
    shap = pytest.importorskip("shap")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    _, images, explainer = setup
    res = explainer.explain(images, methods=["shapley"])["shapley"]
    e = res.to_shap()
    assert e.values.shape == images.shape and e.data.shape == images.shape
    np.testing.assert_array_equal(e.data, images)
    # each group's value spread over its pixels and channels: the sums are kept
    label_map = res.label_map
    for k in range(res.values.shape[1]):
        np.testing.assert_allclose(e.values[:, label_map == k].sum(axis=(1, 2)),
                                   res.values[:, k], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(e.base_values, res.base_values)
    shap.plots.image(e, show=False)
    one = res[0].to_shap()  # a selection of one row
    assert one.values.shape == images.shape[1:]
    shap.plots.image(one, show=False)
    matplotlib.pyplot.close("all")


def test_to_captum_equals_captums_feature_ablation(setup):
    captum = pytest.importorskip("captum.attr")
    net, images, explainer = setup
    res = explainer.explain(images, methods=["occlusion"])["occlusion"]
    ours = res.to_captum()
    assert ours.shape == (2, 3, 32, 32)
    x = torch.tensor(images, dtype=torch.float32).permute(0, 3, 1, 2)
    mask = torch.tensor(res.label_map)[None, None].expand(2, 3, 32, 32)
    with torch.no_grad():
        theirs = captum.FeatureAblation(lambda z: net(z)[:, 1]).attribute(
            x, baselines=0.0, feature_mask=mask)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-4, atol=1e-4)
    assert res[1].to_captum().shape == (3, 32, 32)


def test_tables_have_no_pixel_layouts():
    X = np.random.default_rng(0).normal(size=(10, 3))
    res = Explainer(lambda A: A.sum(axis=1), background=X[:2]).fit(X).explain(
        X[:2], methods=["shapley"])["shapley"]
    with pytest.raises(ValueError, match="to_image needs the pixel groups"):
        res.to_captum()
