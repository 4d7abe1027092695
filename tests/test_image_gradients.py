"""Integrated Gradients from a torch module's own gradients (autograd).

On a torch-backed ImageModel, ``method="integrated_gradients"`` takes the
module's gradients at Gauss-Legendre nodes on the straight paths from the
background rows to x: grouped, it must equal captum's
``IntegratedGradients(..., method="gausslegendre")`` summed over each group's
pixels and channels. The derivative-free schemes stay selectable, and a model
without gradients falls back to them.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
captum_attr = pytest.importorskip("captum.attr")

from skdecomp import Explainer, ImageModel, PatchGrouper
from skdecomp._game._game import CoalitionGame
from skdecomp._methods._sampled import sampled_attributions
from skdecomp._model import ResponseFunction

SHAPE = (32, 32, 3)
MEAN, STD = 127.0, 128.0


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class _CNN(torch.nn.Module):
    """Conv/ReLU/pooling/Linear, 10 classes; ``nhwc`` takes (n, H, W, C) input."""

    def __init__(self, body, nhwc=False):
        super().__init__()
        self.body = body
        self.nhwc = nhwc

    def forward(self, x):
        if self.nhwc:
            x = x.permute(0, 3, 1, 2)
        return self.body(x)


@pytest.fixture(scope="module")
def body():
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(4),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 10),
    ).eval()


@pytest.fixture(scope="module")
def photos():
    rng = np.random.default_rng(0)
    return {
        "uint8": rng.integers(0, 256, (2, *SHAPE), dtype=np.uint8),
        "float": rng.uniform(0.0, 255.0, (2, *SHAPE)),
        "other": rng.integers(0, 256, SHAPE, dtype=np.uint8),
    }


def _module(body, layout):
    return _CNN(body, nhwc=layout == "NHWC").eval()


def _forward(body, output):
    """The hand-written model: preprocessing, NCHW layout, softmax."""

    def f(x):
        out = body(((x - MEAN) / STD).permute(0, 3, 1, 2))
        return torch.softmax(out, dim=1) if output == "probability" else out

    return f


def _captum_grouped(body, output, images, baseline, target, n_steps, labels):
    x = torch.tensor(np.asarray(images, dtype=np.float32))
    b = torch.tensor(np.broadcast_to(np.asarray(baseline, dtype=np.float32), x.shape).copy())
    ig = captum_attr.IntegratedGradients(_forward(body, output))
    a = ig.attribute(x, baselines=b, target=target, n_steps=n_steps,
                     method="gausslegendre").detach().double().numpy()
    a = a.reshape(a.shape[0], -1)
    K = int(labels.max()) + 1
    return np.stack([np.bincount(labels, weights=row, minlength=K) for row in a])


def _f(body, output, images, target):
    with torch.no_grad():
        out = _forward(body, output)(torch.tensor(np.asarray(images, dtype=np.float32)))
    return out[:, target].double().numpy()


def _explainer(body, layout, output, baseline, target, photos, **params):
    model = ImageModel(_module(body, layout), layout=layout, preprocess=(MEAN, STD),
                       output=output)
    return Explainer(model, method="integrated_gradients", groups=PatchGrouper(8),
                     baseline=baseline, target=target, method_params=params)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("output", ["logit", "probability"])
@pytest.mark.parametrize("kind", ["uint8", "float"])
@pytest.mark.parametrize("base", ["zeros", "image"])
def test_grouped_ig_equals_captum(body, photos, layout, output, kind, base):
    images = photos[kind]
    baseline = "zeros" if base == "zeros" else photos["other"]
    target = 3
    ex = _explainer(body, layout, output, baseline, target, photos, n_steps=16)
    phi = ex.fit(images).transform(images)
    assert phi.shape == (2, 16)
    b = np.zeros(SHAPE) if base == "zeros" else photos["other"]
    ref = _captum_grouped(body, output, images, b, target, 16, ex.labels_)
    scale = np.abs(ref).max()
    assert scale > 0
    np.testing.assert_allclose(phi, ref, rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize("output", ["logit", "probability"])
def test_gradient_ig_complete_up_to_quadrature(body, photos, output):
    images = photos["uint8"]
    ex = _explainer(body, "NCHW", output, "zeros", 3, photos, n_steps=64).fit(images)
    phi = ex.transform(images)
    gap = _f(body, output, images, 3) - _f(body, output, np.zeros((1, *SHAPE)), 3)
    # a ReLU network: the quadrature error is small, but not rounding
    np.testing.assert_allclose(phi.sum(axis=1), gap, rtol=1e-2, atol=0)
    assert np.abs(phi.sum(axis=1) - gap).max() > 1e-8


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_path_scheme_on_a_torch_model_is_exactly_complete(body, photos, layout):
    images = photos["uint8"]
    ex = _explainer(body, layout, "logit", "zeros", 1, photos, n_steps=4,
                    scheme="path").fit(images)
    phi = ex.transform(images)
    rows = images.reshape(2, -1).astype(np.float32)
    gap = ex.game_.predict(rows)[:, 0] - ex.game_.expected_value[0]
    np.testing.assert_allclose(phi.sum(axis=1), gap, rtol=0, atol=1e-8)
    # and it is not the autograd result
    auto = _explainer(body, layout, "logit", "zeros", 1, photos, n_steps=4).fit(images)
    assert not np.allclose(auto.transform(images), phi, rtol=0, atol=1e-10)
    if layout == "NCHW":
        # central differences, two model calls per column and step: one image
        central = _explainer(body, layout, "logit", "zeros", 1, photos, n_steps=1,
                             scheme="central").fit(images[:1])
        assert np.isfinite(central.transform(images[:1])).all()


def _patch_labels():
    H, W, C = SHAPE
    patch = (np.arange(H)[:, None] // 8) * (W // 8) + np.arange(W)[None, :] // 8
    return np.repeat(patch[:, :, None], C, axis=2).ravel()


@pytest.mark.parametrize("batch_memory", [None, 4 * 3072 * 5])
def test_several_outputs_backgrounds_columns_and_sign(body, photos, batch_memory):
    """(n, K, n_out) for several outputs, means over background rows, ``columns``
    and ``sign`` of the response; blocks that split a path change nothing."""
    targets = [2, 5]
    model = ImageModel(body, preprocess=(MEAN, STD), output="logit", target=targets,
                       batch_memory=batch_memory).bind(SHAPE)
    rng = np.random.default_rng(1)
    background = rng.integers(0, 256, (2, *SHAPE)).astype(np.float32).reshape(2, -1)
    X = photos["uint8"].reshape(2, -1).astype(np.float32)
    labels = _patch_labels()
    game = CoalitionGame(ResponseFunction(model, "predict"), background, labels)
    errors = {}
    out = sampled_attributions(game, X, ["integrated_gradients"], np.random.RandomState(0),
                               method_params={"n_steps": 8}, errors=errors)
    phi = out["integrated_gradients"]
    assert phi.shape == (2, 16, 2)
    assert errors == {}  # a deterministic quadrature: no standard errors
    for o, t in enumerate(targets):
        ref = np.mean([
            _captum_grouped(body, "logit", photos["uint8"], z.reshape(SHAPE), t, 8, labels)
            for z in background
        ], axis=0)
        np.testing.assert_allclose(phi[:, :, o], ref, rtol=0, atol=1e-5 * np.abs(ref).max())
    # one column of predict, with the sign of the response
    one = CoalitionGame(ResponseFunction(model, "predict", columns=np.array([1]), sign=-1.0),
                        background, labels)
    single = sampled_attributions(one, X, ["integrated_gradients"], np.random.RandomState(0),
                                  method_params={"n_steps": 8})["integrated_gradients"]
    assert single.shape == (2, 16)
    np.testing.assert_allclose(single, -phi[:, :, 1], rtol=0, atol=1e-12)


def test_a_model_without_gradients(photos):
    def net(images):  # numpy only: no gradients
        m = images.mean(axis=(1, 2))
        return np.stack([m[:, 0] * m[:, 1] / 255.0, np.sin(m[:, 2] / 50.0)], axis=1)

    images = photos["uint8"]

    def explain(**params):
        model = ImageModel(net, output="logit", target=1)
        return Explainer(model, method="integrated_gradients", groups=PatchGrouper(8),
                         baseline="zeros", method_params={"n_steps": 4, **params}
                         ).fit(images).transform(images)

    with pytest.raises(ValueError, match=r"'gradient' takes the gradients of a torch.*scheme='auto' or 'path'"):
        explain(scheme="gradient")
    np.testing.assert_array_equal(explain(), explain(scheme="path"))


def test_unknown_scheme_names_the_choices():
    with pytest.raises(ValueError, match="choose 'path'.*'gradient'.*'auto'"):
        Explainer(lambda X: X.sum(axis=1), method="integrated_gradients",
                  method_params={"scheme": "left"}).fit(np.zeros((3, 2)))
