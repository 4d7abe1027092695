"""Images: pixel-group partitions, per-image AGREED and saliency over pixel groups."""

import numpy as np
import pytest
from scipy import ndimage

from skdecomp import (
    AdaptiveGrouper,
    Explainer,
    PatchGrouper,
    SuperpixelGrouper,
)
from skdecomp.datasets import load_digit_images, make_shape_images
from skdecomp.metrics import disagreement


@pytest.fixture(scope="module")
def digits():
    return load_digit_images(random_state=0)


def _patch_means(imgs, size):
    n, H, W = imgs.shape[:3]
    return imgs.reshape(n, H // size, size, W // size, size, -1).mean(axis=(2, 4, 5))


def _interacting(imgs):
    """A smooth model of 8x8 images with interactions between neighbouring patches."""
    m = _patch_means(np.asarray(imgs, dtype=float), 2)  # (n, 4, 4)
    out = np.sin(m).sum(axis=(1, 2))
    out += 2.0 * m[:, 0, 0] * m[:, 0, 1] * m[:, 1, 1] + np.tanh(m[:, 2, 2] * m[:, 3, 3])
    return out + m[:, 1, 2] * m[:, 2, 1]


def _connected(label_map, structure=None):
    return all(
        ndimage.label(label_map == k, structure=structure)[1] == 1
        for k in np.unique(label_map)
    )


# -- partitions ---------------------------------------------------------------------
def test_patch_grouper_layouts():
    g = PatchGrouper(2).fit(np.zeros((3, 4, 6)))
    assert g.label_map_.shape == (4, 6) and g.n_groups_ == 6
    assert g.groups_[0].tolist() == [0, 1, 6, 7] and g.n_features_in_ == 24
    assert list(g.group_names_[:2]) == ["g0", "g1"]
    # channels of a pixel stay together; flattened rows with image_shape
    rgb = PatchGrouper(2, image_shape=(4, 4, 3)).fit(np.zeros((2, 48)))
    assert rgb.groups_[0].tolist() == [0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17]
    assert rgb.transform(np.ones((2, 4, 4, 3))).shape == (2, 4)
    # remainder policies
    shrink = PatchGrouper(3, image_shape=(4, 6)).fit(np.zeros((1, 24))).label_map_
    assert np.bincount(shrink.ravel()).tolist() == [9, 9, 3, 3]
    merge = PatchGrouper(3, image_shape=(4, 6), remainder="merge").fit(np.zeros((1, 24)))
    assert np.bincount(merge.label_map_.ravel()).tolist() == [12, 12]
    assert PatchGrouper((1, 3), image_shape=(1, -1)).fit(np.zeros((2, 7))).n_groups_ == 3


def test_image_errors():
    with pytest.raises(ValueError, match="has 64 values per image, but X has 65"):
        PatchGrouper(image_shape=(8, 8)).fit(np.zeros((2, 65)))
    with pytest.raises(ValueError, match="flattened images need image_shape"):
        PatchGrouper().fit(np.zeros((2, 64)))
    with pytest.raises(ValueError, match="do not tile a 8x8 image"):
        PatchGrouper(3, remainder="error").fit(np.zeros((1, 8, 8)))
    with pytest.raises(ValueError, match=r"images of shape \(8, 8\), but image_shape"):
        PatchGrouper(image_shape=(4, 16)).fit(np.zeros((1, 8, 8)))
    f = _interacting
    with pytest.raises(ValueError, match=r"baseline has shape \(4, 4\).*shape \(8, 8\)"):
        AdaptiveGrouper(f, baseline=np.zeros((4, 4))).fit(np.ones((1, 8, 8)))
    with pytest.raises(ValueError, match="reference set"):
        AdaptiveGrouper(f, baseline="mean").fit(np.ones((1, 8, 8)))
    with pytest.raises(ValueError, match="needs the image shape"):
        Explainer(lambda X: X.sum(1), groups=[[j] for j in range(64)],
                  baseline="blur").fit(np.ones((1, 64)))
    with pytest.raises(ValueError, match="fit got a single image"):
        Explainer(lambda X: X.sum(1), groups=PatchGrouper(4, image_shape=(8, 8)),
                  baseline="mean").fit(np.ones((1, 64)))
    with pytest.raises(ValueError, match="outside the merge history"):
        AdaptiveGrouper(f, initial_groups=PatchGrouper(4), n_groups=2).fit(
            np.ones((1, 8, 8))
        ).cut_label_map(1)


def test_superpixel_grouper_needs_scikit_image(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_skimage(name, *args, **kwargs):
        if name.startswith("skimage"):
            raise ImportError("no skimage")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_skimage)
    with pytest.raises(ImportError, match=r"skdecomp\[superpixels\]"):
        SuperpixelGrouper().fit(np.zeros((1, 8, 8)))


def test_superpixels_are_connected():
    pytest.importorskip("skimage")
    images = make_shape_images(3, fit_model=False, random_state=0).images
    for method in ("quickshift", "slic"):
        g = SuperpixelGrouper(method, random_state=0).fit(images)
        assert g.label_maps_.shape == (3, 32, 32) and g.n_groups_ > 1
        assert all(_connected(lm) for lm in g.label_maps_)
        assert np.array_equal(g.label_map_, g.label_maps_[0])


# -- per-image AGREED ------------------------------------------------------------------
def test_rectangle_edges_are_recovered():
    """Products within each edge of a rectangle, nothing across: AGREED finds the edges."""
    size = 2
    grid = np.arange(64).reshape(8, 8)  # patch ids of a 16x16 image
    edges = [grid[1, 1:7], grid[6, 1:7], grid[2:6, 1], grid[2:6, 6]]
    rng = np.random.default_rng(0)
    w = rng.normal(size=64)

    def model(imgs):
        m = _patch_means(imgs, size).reshape(len(imgs), -1)
        out = m @ w
        for e in edges:
            out = out + np.prod(m[:, e], axis=1)
        return out

    x = rng.uniform(0.5, 1.5, size=(2, 16, 16))
    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(size), rel_tol=0).fit(x)
    patch_of_pixel = np.kron(grid, np.ones((size, size), dtype=int))
    edge_patches = set(np.concatenate(edges).tolist())
    for lm in g.label_maps_:
        found = {tuple(sorted(set(patch_of_pixel[lm == k].tolist()))) for k in np.unique(lm)}
        expected = {tuple(sorted(e.tolist())) for e in edges}
        expected |= {(p,) for p in range(64) if p not in edge_patches}
        assert found == expected
        assert _connected(lm)
    assert np.all(g.losses_ <= 1e-12 * g.initial_losses_)


def test_loss_is_the_arch_occlusion_gap_at_every_step():
    """With Q = (delta_x + delta_b) / 2, L = 1/4 sum_k (arch_k - occ_k)**2 at every step."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, size=(8, 8))
    b = np.full((8, 8), 0.25)
    g = AdaptiveGrouper(
        _interacting, initial_groups=PatchGrouper(2), baseline=b, n_groups=1
    ).fit(x[None])
    flat_model = lambda rows: _interacting(np.asarray(rows).reshape(-1, 8, 8))
    losses = [g.initial_loss_] + [h["loss_after"] for h in g.history_]
    assert len(losses) == 16
    for step, loss in enumerate(losses):
        lm = g.cut_label_map(16 - step)
        groups = [np.flatnonzero(lm.ravel() == k).tolist() for k in range(lm.max() + 1)]
        e = Explainer(flat_model, groups=groups, background=b.ravel()).fit(x.reshape(1, -1))
        phi = e.explain(x.reshape(1, -1), methods=["arch", "occlusion"])
        assert loss == pytest.approx(0.25 * np.sum((phi.arch.values - phi.occlusion.values) ** 2), rel=1e-9)
        assert _connected(lm)
    # the 2K-coalition path equals the full decomposition's arch and occlusion
    groups = [np.flatnonzero(g.initial_label_maps_[0].ravel() == k) for k in range(16)]
    e = Explainer(flat_model, groups=groups, background=b.ravel()).fit(x.reshape(1, -1))
    full = e.explain(x.reshape(1, -1), methods=["arch", "occlusion", "shapley"])
    fast = e.explain(x.reshape(1, -1), methods=["arch", "occlusion"])
    np.testing.assert_allclose(fast.arch, full.arch, atol=1e-12)
    np.testing.assert_allclose(fast.occlusion, full.occlusion, atol=1e-12)


def test_pairs_evaluated_once_and_batched():
    """The paper's rule: all edges in one batch, then the new group's edges, in lockstep."""
    x = np.random.default_rng(2).uniform(size=(3, 8, 8))
    batches = []

    def model(imgs):
        batches.append(len(imgs))
        return _interacting(imgs)

    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(2), n_groups=4,
                        strategy="paper").fit(x)
    probe, batches = batches[0], batches[1:]  # one row to learn the output shape
    # 16 patches and 24 edges per image, 2 rows each, plus x and b
    assert probe == 1 and batches[0] == 3 * (2 + 2 * 16 + 2 * 24)
    # then one batch per round over the three images (lockstep), none after the last merge
    assert len(batches) == 1 + 12 - 1
    assert g.model_calls_ == sum(batches) and g.model_batches_ == len(batches)
    assert g.label_maps_.shape == (3, 8, 8)
    assert all(lm.max() + 1 == 4 for lm in g.label_maps_)
    assert np.array_equal(g.label_map_, g.label_maps_[0])
    assert g.n_groups_ == 4 and len(g.groups_) == 4
    assert g.transform(x).shape == (3, 4)


def test_model_output_on_hybrid_images_is_checked():
    x = np.random.default_rng(4).uniform(size=(2, 8, 8))

    def model(imgs):
        out = _interacting(imgs)
        # NaN wherever the top-left pixel comes from the (zero) baseline
        return np.where(imgs[:, 0, 0] == 0, np.nan, out)

    with pytest.raises(ValueError, match=r"NaN or infinity on the hybrid of image 0"):
        AdaptiveGrouper(model, initial_groups=PatchGrouper(2), n_groups=4).fit(x)


def test_callable_on_color_images_and_baselines():
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(2, 6, 6, 3))
    shapes = set()

    def model(imgs):
        shapes.add(imgs.shape[1:])
        m = imgs.mean(axis=3)
        return m[:, :3, :3].mean((1, 2)) * m[:, 3:, 3:].mean((1, 2)) + m.sum((1, 2))

    for baseline in ("zeros", "blur", np.full((6, 6, 3), 0.5)):
        g = AdaptiveGrouper(
            model, initial_groups=PatchGrouper(3), adjacency="8", baseline=baseline,
            rel_tol=0,
        ).fit(x)
        assert shapes == {(6, 6, 3)}
        assert g.baseline_images_.shape == (2, 6, 6, 3)
    ref = rng.uniform(size=(5, 6, 6, 3))
    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(3), baseline="mean").fit(
        x, reference=ref
    )
    np.testing.assert_allclose(g.baseline_images_[1], ref.mean(axis=0))
    # the same callable inside an Explainer, on flattened rows
    e = Explainer(model, groups=PatchGrouper(3, image_shape=(6, 6, 3)), baseline="zeros",
                  method="shapley").fit(x[:1].reshape(1, -1))
    phi = e.transform(x[:1].reshape(1, -1))
    assert phi.shape == (1, 4)
    assert phi.sum() == pytest.approx(model(x[:1])[0] - model(np.zeros((1, 6, 6, 3)))[0])


# -- explainers over pixel groups ----------------------------------------------------------
def test_every_explainer_over_pixel_groups(digits):
    x = digits.data[1300:1301]
    target = digits.model.predict(x)[0]
    methods = ["shapley", "banzhaf", "occlusion", "arch", "kernel_shap",
               "permutation_shap", "lime", "rise", "integrated_gradients"]
    e = Explainer(digits.model, groups=PatchGrouper(4, image_shape=(8, 8)),
                  baseline="zeros", target=target, n_samples=64,
                  random_state=0).fit(x)
    phi = e.explain(x, methods=methods)
    gap = e.game_.predict(x)[0, 0] - e.expected_value_
    for m in methods:
        assert phi[m].shape == (1, 4)
    for m in ("shapley", "kernel_shap", "permutation_shap", "integrated_gradients"):
        assert phi[m].values.sum() == pytest.approx(gap, abs=1e-8)
    np.testing.assert_allclose(phi.kernel_shap, phi.shapley, atol=1e-10)
    # many groups: sampled methods and arch/occlusion (2K coalitions)
    e = Explainer(digits.model, groups=PatchGrouper(1, image_shape=(8, 8)),
                  baseline="zeros", target=target, n_samples=512, random_state=0,
                  method="integrated_gradients", method_params={"n_steps": 4}).fit(x)
    many = e.explain(x, methods=["arch", "occlusion", "kernel_shap", "lime", "rise",
                                 "integrated_gradients"])
    assert all(v.shape == (1, 64) for v in many.values())


def test_explainer_with_agreed_on_one_image(digits):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp.plot import SaliencyDisplay

    x = digits.data[1301:1302]
    e = Explainer(
        digits.model,
        target=digits.model.predict(x)[0],
        groups=AdaptiveGrouper(initial_groups=PatchGrouper(2), image_shape=(8, 8), n_groups=5),
        baseline="mean", method="shapley",
    ).fit(digits.data[:200])
    grouper = e.grouper_
    np.testing.assert_allclose(grouper.baseline_images_[0].ravel(), digits.data[:200].mean(0))
    assert e.n_groups_ == 5
    phi = e.explain(x, methods=["arch", "occlusion", "shapley"])
    disp = SaliencyDisplay.from_result(x.reshape(8, 8), grouper.label_map_, phi)
    assert len(disp.axes_) == 4
    plt.close("all")


def test_agreed_disagrees_less_than_squares(digits):
    """AGREED against squares of the same mean size (16 pixels), on a seeded subset."""
    rng = np.random.default_rng(0)
    idx = rng.choice(digits.test_index, size=8, replace=False)
    methods = ["arch", "occlusion", "shapley", "banzhaf", "integrated_gradients"]
    X = digits.data[idx]
    targets = digits.model.predict(X)
    scores = {"AGREED": [], "SQUARE": []}
    square = PatchGrouper(4, image_shape=(8, 8))
    for x, t in zip(X, targets):
        agreed = AdaptiveGrouper(
            digits.model, initial_groups=PatchGrouper(2), image_shape=(8, 8), n_groups=4,
            target=t,
        )
        for name, groups in (("AGREED", agreed), ("SQUARE", square)):
            e = Explainer(digits.model, groups=groups, baseline="zeros", target=t,
                          method="integrated_gradients",
                          method_params={"n_steps": 8}).fit(x[None])
            phi = e.explain(x[None], methods=methods)
            gap = (e.game_.predict(x[None])[0, 0] - e.expected_value_) ** 2
            scores[name].append(disagreement(dict(phi)).score / max(gap, 1e-12))
    assert np.mean(scores["AGREED"]) < np.mean(scores["SQUARE"])


# -- datasets ------------------------------------------------------------------------------
def test_image_datasets(digits):
    assert digits.images.shape == (1797, 8, 8) and digits.image_shape == (8, 8)
    acc = digits.model.score(digits.data[digits.test_index], digits.target[digits.test_index])
    assert acc > 0.85
    shapes = make_shape_images(200, random_state=0)
    assert shapes.images.shape == (200, 32, 32) and shapes.masks.shape == (200, 32, 32)
    assert shapes.images.min() >= 0 and shapes.images.max() <= 1
    horizontal = shapes.masks.any(axis=1).sum(axis=1) > shapes.masks.any(axis=2).sum(axis=1)
    assert np.array_equal(horizontal, shapes.target == 0)
    assert shapes.model.predict(shapes.data).shape == (200,)


def test_superpixels_read_float_photos_on_their_scale_and_slic_defaults_split_a_photo():
    pytest.importorskip("skimage")
    from skdecomp import SuperpixelGrouper
    from skdecomp.datasets import load_sample_photos

    cat = load_sample_photos(names=["cat"]).images
    for seg in ("slic", "quickshift"):
        as_uint8 = SuperpixelGrouper(seg, random_state=0).fit(cat).label_map_
        as_float = SuperpixelGrouper(seg, random_state=0).fit(cat.astype(float)).label_map_
        np.testing.assert_array_equal(as_float, as_uint8)  # 0..255 floats read as pixels
    # the documented defaults give several superpixels on a photo, not one
    assert SuperpixelGrouper("slic").fit(cat).n_groups_ >= 8
    with pytest.raises(ValueError, match="must be a positive int"):
        SuperpixelGrouper("slic", segmentation_params={"n_segments": 0}).fit(cat)
