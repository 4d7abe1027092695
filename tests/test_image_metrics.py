"""Pixel-flipping curves and SRG, metrics over many groups, and Explanation.to_image."""

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter
from sklearn.linear_model import Ridge

from skdecomp import Explainer, Explanation, PatchGrouper
from skdecomp.metrics import (
    faithfulness_correlation,
    infidelity,
    relevance_curves,
    sensitivity_n,
    shapley_weighted_faithfulness,
    symmetric_relevance_gain,
)

H = W = 8


def _smooth(imgs):
    """A nonlinear model of 8x8 images (grey or RGB), in float64."""
    imgs = np.asarray(imgs, dtype=np.float64)
    if imgs.ndim == 4:
        imgs = imgs @ np.array([0.5, 0.3, -0.2])
    w = np.linspace(-1.0, 1.0, H * W).reshape(H, W)
    z = (imgs * w).sum(axis=(1, 2))
    return np.tanh(z) + 0.1 * imgs[:, 2, 3] * imgs[:, 5, 6]


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(0).uniform(size=(3, H, W))


def _hand_curves(f, x, group_values, label_map, fill, n_groups):
    """Deletion and insertion curves of one image, a group per step, by hand."""
    order = np.argsort(-group_values, kind="stable")
    deletion, insertion = [], []
    removed = x.copy()
    inserted = fill.copy()
    deletion.append(f(removed[None])[0])
    insertion.append(f(inserted[None])[0])
    for k in order:
        pixels = label_map == k
        removed[pixels] = fill[pixels]
        inserted[pixels] = x[pixels]
        deletion.append(f(removed[None])[0])
        insertion.append(f(inserted[None])[0])
    deletion, insertion = np.array(deletion), np.array(insertion)
    dx = 1.0 / n_groups
    auc_del = sum((deletion[t] + deletion[t + 1]) / 2 * dx for t in range(n_groups))
    auc_ins = sum((insertion[t] + insertion[t + 1]) / 2 * dx for t in range(n_groups))
    return deletion, insertion, auc_del, auc_ins


def _patch_labels():
    return np.kron(np.arange(16).reshape(4, 4), np.ones((2, 2), dtype=int))


@pytest.mark.parametrize("imputer", [None, "blur", 0.3, "image"])
def test_curves_and_srg_equal_a_hand_computation(images, imputer):
    rng = np.random.default_rng(1)
    baseline = rng.uniform(size=(H, W))
    ex = Explainer(_smooth, groups=PatchGrouper(2), baseline=baseline,
                   method="occlusion").fit(images[:1])
    phi = rng.normal(size=(3, 16))  # distinct values: one group per step
    given = rng.uniform(size=(H, W))
    imp = given if imputer == "image" else imputer
    res = symmetric_relevance_gain(ex, images, phi, imputer=imp, n_steps=16)
    lm = _patch_labels()
    assert res.fractions.shape == (17,) and res.deletion.shape == (3, 17)
    np.testing.assert_allclose(res.fractions, np.arange(17) / 16)
    for i, x in enumerate(images):
        if imputer is None:
            fill = baseline
        elif imputer == "blur":
            fill = gaussian_filter(x, sigma=H / 8, mode="nearest")
        elif imputer == "image":
            fill = given
        else:
            fill = np.full((H, W), 0.3)
        d, ins, ad, ai = _hand_curves(_smooth, x, phi[i], lm, fill, 16)
        np.testing.assert_allclose(res.deletion[i], d, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.insertion[i], ins, rtol=0, atol=1e-12)
        assert res.deletion_auc[i] == pytest.approx(ad, abs=1e-12)
        assert res.insertion_auc[i] == pytest.approx(ai, abs=1e-12)
        assert res.scores[i] == pytest.approx(ai - ad, abs=1e-12)
    assert res.score == pytest.approx(res.srg.mean())
    np.testing.assert_array_equal(res.srg, res.scores)


def test_colour_images_background_rows_and_batches(images):
    """RGB: removed pixels take the imputer in all channels; imputer=None
    averages over the explainer's background images, as its game does."""
    rng = np.random.default_rng(2)
    rgb = rng.uniform(size=(2, H, W, 3))
    background = rng.uniform(size=(3, H, W, 3))
    calls = []

    def model(imgs):
        calls.append(len(imgs))
        return _smooth(imgs)

    ex = Explainer(model, groups=PatchGrouper(2), background=background.reshape(3, -1),
                   method="occlusion").fit(background)
    phi = rng.normal(size=(2, 16))
    calls.clear()
    res = relevance_curves(ex, rgb, phi, n_steps=16, batch_size=6)
    assert calls and max(calls) <= 6  # 2 hybrids of 3 background images per call
    lm = _patch_labels()
    for i, x in enumerate(rgb):
        d = np.mean([_hand_curves(_smooth, x, phi[i], lm, z, 16)[0] for z in background],
                    axis=0)
        ins = np.mean([_hand_curves(_smooth, x, phi[i], lm, z, 16)[1] for z in background],
                      axis=0)
        np.testing.assert_allclose(res.deletion[i], d, atol=1e-12)
        np.testing.assert_allclose(res.insertion[i], ins, atol=1e-12)
    # an (H, W) imputer is the same value in all channels
    fill = rng.uniform(size=(H, W))
    a = relevance_curves(ex, rgb, phi, imputer=fill, n_steps=16)
    b = relevance_curves(ex, rgb, phi, imputer=np.repeat(fill[..., None], 3, axis=2),
                         n_steps=16, batch_size=1)
    np.testing.assert_allclose(a.deletion, b.deletion, atol=1e-12)
    x, hand = rgb[0], _hand_curves(_smooth, rgb[0], phi[0], lm,
                                   np.repeat(fill[..., None], 3, axis=2), 16)
    np.testing.assert_allclose(a.insertion[0], hand[1], atol=1e-12)
    # "mean": the mean background image
    m = relevance_curves(ex, rgb, phi, imputer="mean", n_steps=16)
    hand = _hand_curves(_smooth, x, phi[0], lm, background.mean(axis=0), 16)
    np.testing.assert_allclose(m.deletion[0], hand[0], atol=1e-12)


def test_pixel_maps_explanations_and_uneven_steps(images):
    ex = Explainer(_smooth, groups=PatchGrouper(3), baseline="zeros",
                   method="occlusion").fit(images[:1])
    e = ex.explain(images, methods=["occlusion"])["occlusion"]
    from_expl = relevance_curves(ex, images, e, n_steps=7)
    from_map = relevance_curves(ex, images, e.to_image(), n_steps=7)
    from_groups = relevance_curves(ex, images, e.values, n_steps=7)
    default = relevance_curves(ex, images, n_steps=7)
    for other in (from_map, from_groups, default):
        np.testing.assert_array_equal(from_expl.deletion, other.deletion)
    # 64 pixels in 7 steps: round(t * 64 / 7) pixels at step t, by hand
    a = np.random.default_rng(3).normal(size=(3, H, W))
    res = relevance_curves(ex, images, a, n_steps=7)
    for i, x in enumerate(images):
        order = np.argsort(-a[i].ravel(), kind="stable")
        for t in range(8):
            k = int(np.round(t * 64 / 7))
            y = x.copy().ravel()
            y[order[:k]] = 0.0
            assert res.deletion[i, t] == pytest.approx(_smooth(y.reshape(1, H, W))[0],
                                                       abs=1e-12)
    # ties keep the row-major pixel order; one step is every pixel
    flat = relevance_curves(ex, images, np.zeros((3, H, W)), n_steps=1)
    np.testing.assert_allclose(flat.deletion[:, 0], _smooth(images))
    np.testing.assert_allclose(flat.deletion[:, 1], _smooth(np.zeros((1, H, W)))[0])


def test_quantus_pixel_flipping_agrees():
    """Quantus' PixelFlipping (deletion), and the same curve from the imputer's
    image towards x (insertion), with a replacement by the imputer image."""
    quantus = pytest.importorskip("quantus")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(3, H, W)).astype(np.float32)
    w = rng.normal(size=(H, W)).astype(np.float32)
    base = rng.uniform(size=(H, W)).astype(np.float32)

    class Net(torch.nn.Module):
        def forward(self, x):  # (n, 1, H, W)
            z = torch.tanh((x[:, 0] * torch.from_numpy(w)).sum(dim=(1, 2)))
            return torch.stack([z, -z], dim=1)

    def model(imgs):
        return np.tanh((np.asarray(imgs, dtype=np.float64) * w).sum(axis=(1, 2)))

    a = rng.normal(size=(3, H, W)).astype(np.float32)  # no ties
    ex = Explainer(model, groups=PatchGrouper(2), baseline=base).fit(X[:1])
    ours = relevance_curves(ex, X, a, n_steps=16)

    def replace_by(target):
        def perturb(arr, indices, **kwargs):
            out = arr.copy()
            rows = np.arange(arr.shape[0])[:, None]
            out[rows, indices] = target.reshape(arr.shape[0], -1)[rows, indices]
            return out
        return perturb

    def flip(start, target):
        metric = quantus.PixelFlipping(
            features_in_step=H * W // 16, normalise=False, abs=False,
            perturb_func=replace_by(target), disable_warnings=True)
        return np.array(metric(
            model=Net().eval(), x_batch=start[:, None], y_batch=np.zeros(3, dtype=int),
            a_batch=a[:, None], softmax=False, channel_first=True, device="cpu"))

    bases = np.broadcast_to(base, X.shape).copy()
    # quantus' curves start after the first step
    np.testing.assert_allclose(flip(X, bases), ours.deletion[:, 1:], atol=1e-6)
    np.testing.assert_allclose(flip(bases, X), ours.insertion[:, 1:], atol=1e-6)


def test_exact_maps_of_a_linear_model_beat_random_maps(images):
    rng = np.random.default_rng(5)
    w = rng.normal(size=(H, W))
    b = rng.uniform(size=(H, W))

    def linear(imgs):
        return (np.asarray(imgs) * w).sum(axis=(1, 2))

    ex = Explainer(linear, groups=PatchGrouper(2), baseline=b).fit(images[:1])
    exact = w * (images - b)
    best = symmetric_relevance_gain(ex, images, exact, n_steps=64)
    # removing the k largest terms of an additive model: the lowest curve there is
    for seed in range(3):
        random = rng.normal(size=exact.shape)
        other = symmetric_relevance_gain(ex, images, random, n_steps=64)
        assert np.all(best.deletion <= other.deletion + 1e-12)
        assert np.all(best.insertion >= other.insertion - 1e-12)
        assert np.all(best.scores > other.scores)
    worst = symmetric_relevance_gain(ex, images, -exact, n_steps=64)
    assert np.all(best.deletion_auc < worst.deletion_auc)
    assert np.all(worst.scores < 0)


# -- metrics over many groups ----------------------------------------------------------
def _hand_infidelity(f, X, phi, label_map, baseline, members):
    """mean over rows and coalitions of (phi(S) - (f(x) - f(x with S removed)))**2."""
    out = []
    for i, x in enumerate(X):
        fx = f(x[None])[0]
        errs = []
        for s in members:
            y = x.copy()
            removed = s[label_map]
            y[removed] = baseline[removed]
            errs.append((phi[i, s].sum() - (fx - f(y[None])[0])) ** 2)
        out.append(np.mean(errs))
    return np.array(out)


def test_infidelity_beyond_62_groups_equals_a_hand_computation():
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(2, 16, 16))
    base = rng.uniform(size=(16, 16))
    w = rng.normal(size=(16, 16))

    def model(imgs):
        z = (np.asarray(imgs) * w).sum(axis=(1, 2))
        return np.sin(z / 4) + z / 10

    ex = Explainer(model, groups=PatchGrouper(2), baseline=base,
                   method="occlusion").fit(X[:1])
    assert ex.n_groups_ == 64
    phi = ex.transform(X)
    res = infidelity(ex, X, attributions=phi, n_samples=40, random_state=0)
    # the metric's Bernoulli draws: each group removed with probability p
    members = np.random.RandomState(0).random_sample((40, 64)) < 0.5
    lm = np.kron(np.arange(64).reshape(8, 8), np.ones((2, 2), dtype=int))
    hand = _hand_infidelity(model, X, phi, lm, base, members)
    np.testing.assert_allclose(res.scores, hand, rtol=1e-10)
    assert res.score == pytest.approx(hand.mean(), rel=1e-10)


def test_metrics_take_about_200_groups():
    """PatchGrouper(8) on 112x112 RGB images: 196 groups, boolean coalitions."""
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(2, 112, 112, 3)).astype(np.float32)
    w = rng.normal(size=(112, 112, 3))

    def linear(imgs):
        return (np.asarray(imgs, dtype=np.float64) * w).sum(axis=(1, 2, 3)) / 100

    ex = Explainer(linear, groups=PatchGrouper(8), baseline="zeros", method="occlusion",
                   batch_size=64).fit(X[:1])
    assert ex.n_groups_ == 196
    # occlusion of an additive model at a single baseline is exact: infidelity 0
    res = infidelity(ex, X, n_samples=32, random_state=0)
    assert res.score == pytest.approx(0.0, abs=1e-12)
    assert faithfulness_correlation(ex, X, n_samples=16, random_state=0).score == (
        pytest.approx(0.0, abs=1e-9))
    assert shapley_weighted_faithfulness(ex, X, n_samples=16, random_state=0).score == (
        pytest.approx(0.0, abs=1e-12))
    assert sensitivity_n(ex, X, n=5, n_samples=16, random_state=0).score == (
        pytest.approx(0.0, abs=1e-9))


# -- Explanation.to_image ----------------------------------------------------------------
def test_to_image_spreads_each_group_over_its_pixels(images):
    ex = Explainer(_smooth, groups=PatchGrouper(3), baseline="zeros",
                   method="occlusion").fit(images[:1])
    e = ex.explain(images, methods=["occlusion"])["occlusion"]
    img = e.to_image()
    lm = e.label_map
    assert img.shape == (3, H, W) and lm.shape == (H, W)
    assert not lm.flags.writeable
    sizes = np.bincount(lm.ravel())
    assert len(set(sizes.tolist())) > 1  # uneven groups
    for k in range(ex.n_groups_):
        np.testing.assert_allclose(img[:, lm == k].sum(axis=1), e.values[:, k],
                                   rtol=0, atol=1e-12)
        assert np.ptp(img[:, lm == k], axis=1).max() <= 1e-15  # evenly
    assert e[1].to_image().shape == (H, W)
    np.testing.assert_array_equal(e[1:].to_image(), img[1:])
    with pytest.raises(ValueError, match="call to_image before selecting groups"):
        e[:, [0, 1]].to_image()
    # several outputs: a trailing output axis, as values carry it
    three = np.random.default_rng(8).normal(size=(2, 4, 2))
    lm4 = np.repeat(np.arange(4), 16).reshape(H, W)
    e3 = Explanation(three, label_map=lm4)
    assert e3.to_image().shape == (2, H, W, 2) and e3[..., 1].to_image().shape == (2, H, W)
    np.testing.assert_allclose(e3.to_image()[:, lm4 == 2].sum(axis=1), three[:, 2])


def test_to_image_refuses_tables_and_bad_label_maps():
    X = np.random.default_rng(9).normal(size=(20, 3))
    ex = Explainer(Ridge().fit(X, X[:, 0]), background=X[:5]).fit(X)
    e = ex.explain(X[:2], methods=["shapley"])["shapley"]
    assert e.label_map is None
    with pytest.raises(ValueError, match="explains rows of a\ntable|rows of a table"):
        e.to_image()
    with pytest.raises(ValueError, match="every group id 0..2"):
        Explanation(np.zeros((1, 3)), label_map=np.zeros((2, 2), dtype=int))
    with pytest.raises(ValueError, match="expected \\(H, W\\)"):
        Explanation(np.zeros((1, 3)), label_map=np.zeros(3, dtype=int))


# -- bad inputs ---------------------------------------------------------------------------
def test_bad_inputs_raise_clear_errors(images):
    ex = Explainer(_smooth, groups=PatchGrouper(2), baseline="zeros").fit(images[:1])
    phi = np.random.default_rng(10).normal(size=(3, H, W))
    X_before, phi_before = images.copy(), phi.copy()
    relevance_curves(ex, images, phi, imputer=0.5, n_steps=4)
    np.testing.assert_array_equal(images, X_before)  # nothing changed in place
    np.testing.assert_array_equal(phi, phi_before)
    with pytest.raises(ValueError, match="n_steps"):
        relevance_curves(ex, images, phi, n_steps=0)
    bad = phi.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinity \(images \[1\]\)"):
        relevance_curves(ex, images, bad)
    with pytest.raises(ValueError, match=r"expected \(3, 8, 8\).*or \(3, 16\)"):
        relevance_curves(ex, images, phi[:, :4])
    with pytest.raises(ValueError, match="one value per channel"):
        relevance_curves(ex, images, phi[..., None].repeat(3, axis=3))
    with pytest.raises(ValueError, match=r"imputer has shape \(4, 4\).*\(8, 8\)"):
        relevance_curves(ex, images, phi, imputer=np.zeros((4, 4)))
    with pytest.raises(ValueError, match="imputer"):
        relevance_curves(ex, images, phi, imputer="noise")
    with pytest.raises(ValueError, match="imputer='mean' is the mean image of a reference"):
        relevance_curves(ex, images, phi, imputer="mean")
    with pytest.raises(ValueError, match="'imputer' parameter.*Got inf"):
        relevance_curves(ex, images, phi, imputer=np.inf)
    with pytest.raises(ValueError, match="NaN or infinity"):
        relevance_curves(ex, images, phi, imputer=np.full((H, W), np.nan))
    with pytest.raises(TypeError, match="dtype"):
        relevance_curves(ex, images, phi, imputer=np.full((H, W), "a"))
    with pytest.raises(ValueError, match="shape"):
        relevance_curves(ex, images[:, :4], phi)
    table = np.random.default_rng(11).normal(size=(20, 3))
    tab = Explainer(Ridge().fit(table, table[:, 0]), background=table[:5]).fit(table)
    with pytest.raises(ValueError, match="fitted on rows of a table"):
        symmetric_relevance_gain(tab, table)

    def two(imgs):
        return np.stack([_smooth(imgs), -_smooth(imgs)], axis=1)

    several = Explainer(two, groups=PatchGrouper(2), baseline="zeros").fit(images[:1])
    with pytest.raises(ValueError, match="target="):
        relevance_curves(several, images, phi)
