"""ImageModel: torch modules, ONNX sessions and callables on images, as they are."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

from skdecomp import Explainer, ImageModel, PatchGrouper, metrics  # noqa: E402
from skdecomp._image import image_dtype  # noqa: E402

from ._cnn import nhwc_module, onnx_session, photos, small_cnn  # noqa: E402

MEAN, STD = 127.0, 128.0


def hand_written(module, images, layout="NCHW", target=2, softmax=True, scale=1.0):
    """The adapter a user would write: preprocess, layout, float32, no_grad, softmax."""
    x = (np.asarray(images, dtype=np.float32) * scale - MEAN) / STD
    if x.ndim == 3:
        x = x[..., None]
    if layout == "NCHW":
        x = x.transpose(0, 3, 1, 2)
    with torch.no_grad():
        out = module(torch.from_numpy(np.ascontiguousarray(x))).numpy().astype(np.float64)
    if softmax:
        out = np.exp(out - out.max(axis=1, keepdims=True))
        out /= out.sum(axis=1, keepdims=True)
    return out[:, target]


@pytest.fixture(scope="module")
def cnn():
    return small_cnn()


@pytest.fixture(scope="module")
def sessions(cnn, tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx")
    return {
        "NCHW": onnx_session(cnn, (3, 32, 32), folder / "nchw.onnx"),
        "NHWC": onnx_session(nhwc_module(cnn), (32, 32, 3), folder / "nhwc.onnx"),
    }


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("runtime", ["torch", "onnx"])
@pytest.mark.parametrize("kind", ["uint8", "float"])
def test_values_equal_a_hand_written_wrapper(cnn, sessions, layout, runtime, kind):
    images = photos(3, dtype=np.uint8 if kind == "uint8" else np.float64)
    scale = 1.0 if kind == "uint8" else 255.0
    module = cnn if layout == "NCHW" else nhwc_module(cnn)
    model = module if runtime == "torch" else sessions[layout]
    wrapped = ImageModel(
        model, preprocess=lambda x: (x * scale - MEAN) / STD, target=2,
        layout="NHWC" if (runtime == "torch" and layout == "NHWC") else "auto",
    )
    if runtime == "onnx":
        assert wrapped.model_layout() == layout  # read from the session
    expected = hand_written(cnn, images, "NCHW", scale=scale)
    np.testing.assert_allclose(wrapped.predict(images)[:, 0], expected, rtol=1e-6, atol=1e-7)

    # the explainer's values through the adapter equal those through the hand-written
    # callable on the same images
    def by_hand(batch):
        return hand_written(cnn, batch, "NCHW", scale=scale)

    kw = dict(groups=PatchGrouper(16), baseline="blur", method="shapley")
    phi = Explainer(wrapped, **kw).fit(images[:1]).transform(images[:1])
    ref = Explainer(by_hand, **kw).fit(images[:1]).transform(images[:1])
    np.testing.assert_allclose(phi, ref, rtol=1e-6, atol=1e-7)


def test_mean_std_preprocess_and_logits(cnn):
    images = photos(2)
    model = ImageModel(cnn, preprocess=(MEAN, STD), output="logit", target=[0, 4])
    expected = np.stack([hand_written(cnn, images, target=t, softmax=False)
                         for t in (0, 4)], axis=1)
    np.testing.assert_allclose(model.predict(images), expected, rtol=1e-6, atol=1e-7)
    per_channel = ImageModel(cnn, preprocess=((MEAN,) * 3, (STD,) * 3), output="logit",
                             target=[0, 4])
    np.testing.assert_allclose(per_channel.predict(images), expected, rtol=1e-6)


def test_module_given_directly_and_class_names(cnn):
    images = photos(1)
    names = [f"class {k}" for k in range(5)]
    ex = Explainer(ImageModel(cnn, class_names=names), groups=PatchGrouper(16),
                   baseline="zeros", target=3).fit(images)
    assert ex.output_names_ == ["class 3"]
    assert ex.image_shape_ == (32, 32, 3)
    # a module passed as it is: wrapped with the defaults (softmax probability)
    direct = Explainer(cnn, groups=PatchGrouper(16), baseline="zeros", target=3).fit(images)
    np.testing.assert_allclose(direct.transform(images), ex.transform(images), rtol=1e-12)
    assert isinstance(direct.estimator_, ImageModel)
    # images given flattened with the fitted shape are the same images
    np.testing.assert_allclose(direct.transform(images.reshape(1, -1)),
                               direct.transform(images), rtol=1e-12)


def test_float32_end_to_end_and_batches_in_bytes(cnn):
    images = photos(1)
    model = ImageModel(cnn, preprocess=(MEAN, STD), target=1, batch_memory=4 * 32 * 32 * 3 * 5)
    assert model.batch_rows(32 * 32 * 3) == 5
    seen = []

    class Spy(torch.nn.Module):
        def forward(self, x):
            seen.append((x.shape[0], x.dtype))
            return cnn(x)

    spy = ImageModel(Spy().eval(), preprocess=(MEAN, STD), target=1,
                     batch_memory="61440B")
    ex = Explainer(spy, groups=PatchGrouper(8), baseline="zeros", method="kernel_shap",
                   n_samples=128, random_state=0).fit(images)
    assert image_dtype(ex.estimator_) == np.float32
    assert ex.game_.background.dtype == np.float32
    seen.clear()
    ex.transform(images)
    assert max(n for n, _ in seen) == 5 and all(d == torch.float32 for _, d in seen)
    # f(x), then the coalitions in full batches of 5, not one image per call
    assert seen[0][0] == 1 and all(n == 5 for n, _ in seen[1:-1])
    seen.clear()
    Explainer(spy, groups=PatchGrouper(16), baseline="zeros", method="shapley").fit(
        images).transform(images)
    assert [n for n, _ in seen][-3:] == [5, 5, 4]  # the 14 inner coalitions


def test_threads_of_the_runtime_not_workers(cnn):
    images = photos(1)
    before = torch.get_num_threads()
    seen = []

    class Spy(torch.nn.Module):
        def forward(self, x):
            seen.append(torch.get_num_threads())
            return cnn(x)

    ex = Explainer(Spy().eval(), groups=PatchGrouper(16), baseline="zeros", target=0,
                   n_jobs=2).fit(images)
    assert ex.game_.n_jobs is None  # no joblib workers next to torch's threads
    ex.transform(images)
    assert set(seen) == {2}
    assert torch.get_num_threads() == before  # restored after every call
    one = ImageModel(Spy().eval(), target=0, n_threads=1)
    seen.clear()
    Explainer(one, groups=PatchGrouper(16), baseline="zeros", n_jobs=2).fit(images)
    assert set(seen) == {1}  # the model's own setting wins


def test_grey_images_and_metrics(cnn):
    grey_net = small_cnn(channels=1)
    images = photos(2, channels=1)
    assert images.shape == (2, 32, 32)
    ex = Explainer(grey_net, groups=PatchGrouper(16), baseline="zeros", target=0).fit(images[:1])
    phi = ex.transform(images)
    assert phi.shape == (2, 4)
    score = metrics.infidelity(ex, images, random_state=0)
    assert np.isfinite(score["score"])


def test_agreed_takes_the_module_and_uint8(cnn, sessions):
    from skdecomp import AdaptiveGrouper

    images = photos(1)
    a = AdaptiveGrouper(cnn, initial_groups=PatchGrouper(8), n_groups=6, target=2).fit(images)
    b = AdaptiveGrouper(ImageModel(sessions["NCHW"], target=2),
                        initial_groups=PatchGrouper(8), n_groups=6).fit(images)
    assert a.n_groups_ == b.n_groups_ == 6
    np.testing.assert_array_equal(a.label_map_, b.label_map_)


# -- bad input ----------------------------------------------------------------
def test_wrong_channels_and_size(cnn, sessions):
    grey = photos(1, channels=1)
    with pytest.raises(ValueError, match="1 channel.*takes 3.*np.repeat"):
        Explainer(cnn, groups=PatchGrouper(8), baseline="zeros", target=0).fit(grey)
    big = photos(1, size=40)
    with pytest.raises(ValueError, match="40x40 pixels but the model takes 32x32"):
        Explainer(sessions["NCHW"], groups=PatchGrouper(8), baseline="zeros",
                  target=0).fit(big)
    ex = Explainer(cnn, groups=PatchGrouper(8), baseline="zeros", target=0).fit(photos(1))
    with pytest.raises(ValueError, match="shape \\(40, 40, 3\\).*resize"):
        ex.transform(big)
    rgba = np.concatenate([photos(1), np.full((1, 32, 32, 1), 255, np.uint8)], axis=-1)
    with pytest.raises(ValueError, match="4 channel.*images\\[..., :3\\]"):
        Explainer(cnn, groups=PatchGrouper(8), baseline="zeros", target=0).fit(rgba)
    with pytest.raises(ValueError, match="channels last"):
        Explainer(cnn, groups=PatchGrouper(8), baseline="zeros", target=0).fit(
            np.zeros((1, 3, 32, 32), np.uint8).transpose(0, 2, 3, 1)[:, :, :, :].repeat(4, -1)
            .reshape(1, 32, 32, 12)[..., :12])


def test_target_errors(cnn):
    images = photos(1)
    with pytest.raises(ValueError, match="5 outputs; pick the explained class with target"):
        Explainer(cnn, groups=PatchGrouper(8), baseline="zeros").fit(images)
    with pytest.raises(ValueError, match="target=7 is out of range.*\\[0, 4\\]"):
        ImageModel(cnn, target=7).predict(images)
    with pytest.raises(ValueError, match="target=7"):
        Explainer(cnn, groups=PatchGrouper(8), baseline="zeros", target=7).fit(images)
    with pytest.raises(ValueError, match="not a class name"):
        ImageModel(cnn, target="dog", class_names=list("abcde")).predict(images)


def test_bad_outputs():
    images = photos(1, size=8)

    def tuple_net(x):
        return (np.zeros((len(x), 3)), None)

    with pytest.raises(ValueError, match="returned a tuple.*output= a callable"):
        ImageModel(tuple_net, target=0).predict(images)

    def scalar_net(x):
        return np.float32(1.0)

    with pytest.raises(ValueError, match="shape \\(\\) for 1 images"):
        ImageModel(scalar_net, output="logit").predict(images)

    def nan_net(x):
        return np.full((len(x), 2), np.nan)

    with pytest.raises(ValueError, match="NaN or infinity"):
        Explainer(ImageModel(nan_net, output="logit", target=0), groups=PatchGrouper(4),
                  baseline="zeros").fit(images)
    with pytest.raises(ValueError, match="one output; use output='logit'"):
        ImageModel(lambda x: x.mean(axis=(1, 2, 3)), target=None).predict(images)


def test_bad_parameters_and_model_state(cnn):
    with pytest.raises(TypeError, match="torch.nn.Module, an onnxruntime.InferenceSession"):
        ImageModel(42)
    with pytest.raises(ValueError, match="layout"):
        ImageModel(cnn, layout="CHW")
    with pytest.raises(TypeError, match="preprocess"):
        ImageModel(cnn, preprocess=(1, 2, 3))
    with pytest.raises(ValueError, match="std of 0"):
        ImageModel(cnn, preprocess=(0.0, 0.0))
    training = small_cnn().train()
    with pytest.raises(ValueError, match="training mode.*model.eval"):
        ImageModel(training, target=0).predict(photos(1))
    assert training.training  # left as it was
    # a submodule put back in training mode under an eval() module, too
    part = small_cnn().eval()
    trained = [m for m in part.modules() if m is not part][0].train()
    with pytest.raises(ValueError, match="training mode.*submodules"):
        ImageModel(part, target=0).predict(photos(1))
    assert trained.training and not part.training


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_cuda_module_without_gpu(cnn, monkeypatch):
    model = ImageModel(cnn, target=0)
    fake = torch.device("cuda")
    monkeypatch.setattr(model, "_torch_device", lambda: (_ for _ in ()).throw(ValueError(
        f"The module's weights are on {fake}, but no GPU is available")))
    with pytest.raises(ValueError, match="no GPU"):
        model.predict(photos(1))


def test_nan_pixels_and_input_untouched(cnn):
    images = photos(1).astype(np.float64)
    images[0, 3, 4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite pixel values in image\\(s\\) \\[0\\]"):
        Explainer(cnn, groups=PatchGrouper(8), baseline="zeros", target=0).fit(images)
    clean = photos(1)
    copy = clean.copy()
    ex = Explainer(cnn, groups=PatchGrouper(16), baseline="blur", target=0).fit(clean)
    ex.explain(clean, methods=["shapley", "kernel_shap"])
    np.testing.assert_array_equal(clean, copy)


@pytest.mark.slow
def test_pretrained_cnn_on_a_real_photo(tmp_path):
    from scipy.ndimage import gaussian_filter

    from skdecomp.datasets import load_pretrained_cnn, load_sample_photos

    photo = load_sample_photos(names=["espresso"]).images  # (1, 224, 224, 3) uint8
    cnn = load_pretrained_cnn("onnx", cache_dir=tmp_path)
    ex = Explainer(cnn, groups=PatchGrouper(56), baseline="blur", target=967,
                   method="occlusion").fit(photo)
    assert ex.output_names_ == ["espresso"]
    phi = ex.explain(photo, methods=["occlusion", "arch"])

    # by hand, on the raw ONNX session: blurred squares, (x - 127) / 128, NCHW, softmax
    session = cnn.model
    x = photo[0].astype(np.float64)
    blurred = gaussian_filter(x, sigma=(28, 28, 0), mode="nearest")

    def prob(images):
        z = ((np.asarray(images, dtype=np.float32) - 127) / 128).transpose(0, 3, 1, 2)
        logits = session.run(None, {session.get_inputs()[0].name: z})[0].astype(np.float64)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (p / p.sum(axis=1, keepdims=True))[:, 967]

    deleted, inserted = [], []
    for r in range(4):
        for c in range(4):
            square = np.zeros((224, 224, 1), dtype=bool)
            square[56 * r : 56 * (r + 1), 56 * c : 56 * (c + 1)] = True
            deleted.append(np.where(square, blurred, x))
            inserted.append(np.where(square, x, blurred))
    f_x, f_b = prob(x[None])[0], prob(blurred[None])[0]
    assert f_x > 0.5  # the network sees the espresso
    np.testing.assert_allclose(phi["occlusion"].values[0], f_x - prob(deleted), atol=1e-5)
    np.testing.assert_allclose(phi["arch"].values[0], prob(inserted) - f_b, atol=1e-5)


def test_clone_shares_the_network(cnn, sessions):
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    from skdecomp import AdaptiveGrouper

    for net in (cnn, sessions["NCHW"]):
        ex = Explainer(net, groups=PatchGrouper(16), baseline="zeros", target=1)
        copy = clone(ex)
        assert copy.estimator is net and copy is not ex
        assert clone(AdaptiveGrouper(net, target=1)).estimator is net
    images = photos(1)
    search = GridSearchCV(
        Explainer(sessions["NCHW"], groups=PatchGrouper(16), baseline="zeros", target=1),
        {"method": ["occlusion", "arch"]}, cv=[(np.array([0]), np.array([0]))],
        scoring=lambda est, X, y=None: float(np.sum(est.transform(X))),
    ).fit(images)
    assert search.best_estimator_.estimator is sessions["NCHW"]


def test_hostile_image_inputs(cnn):
    from skdecomp import AdaptiveGrouper
    from skdecomp.plot import SaliencyDisplay

    images = photos(1)
    with pytest.raises(ValueError, match="baseline has shape \\(10, 10, 3\\).*\\(32, 32, 3\\)"):
        Explainer(cnn, groups=PatchGrouper(16), baseline=np.zeros((10, 10, 3)),
                  target=0).fit(images)
    with pytest.raises(ValueError, match="label map of shape \\(31, 32\\).*\\(32, 32\\)"):
        AdaptiveGrouper(cnn, initial_groups=np.zeros((31, 32), int), target=0).fit(images)
    inf = images.astype(np.float32)
    inf[0, 0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite pixel values"):
        AdaptiveGrouper(cnn, initial_groups=PatchGrouper(16), target=0).fit(inf)
    ex = Explainer(cnn, groups=PatchGrouper(16), baseline="zeros", target=0).fit(images)
    phi = ex.transform(images)
    with pytest.raises(ValueError, match="label_map"):
        SaliencyDisplay.from_result(images[0], np.zeros((31, 32), int), {"shapley": phi})


def test_float_images_in_0_1_for_a_0_255_preprocessing_warn_once():
    def net(images):  # NHWC float32 -> two logits
        return np.stack([images.mean(axis=(1, 2, 3)), -images.mean(axis=(1, 2, 3))], axis=1)

    rng = np.random.default_rng(0)
    photo = rng.integers(0, 256, size=(2, 8, 8, 3)).astype(np.uint8)
    model = ImageModel(net, preprocess=(127.0, 128.0), output="logit")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(photo)  # uint8
        model.predict(photo.astype(np.float64))  # floats 0..255
        model.predict(np.zeros((1, 8, 8, 3)))  # a black baseline
        ImageModel(net, preprocess=(0.5, 0.25), output="logit").predict(photo / 255.0)
    with pytest.warns(UserWarning, match="multiply the images by 255"):
        wrong = model.predict(photo / 255.0)
    assert np.allclose(wrong[:, 0], (photo / 255.0 - 127.0).mean(axis=(1, 2, 3)) / 128.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(photo / 255.0)  # once per model


def test_a_network_given_raw_pixels_without_preprocess_warns_once(cnn):
    module = cnn
    photo = photos(2, seed=1)  # uint8 pixels
    model = ImageModel(module)  # no preprocess said
    with pytest.warns(UserWarning, match=r"given pixels up to .* no preprocess was said"):
        raw = model.predict(photo)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(model.predict(photo), raw)  # once per model
        # said: the network scales its input itself, or pixels already in 0..1
        ImageModel(module, preprocess="none").predict(photo)
        ImageModel(module).predict(photo / 255.0)
        ImageModel(module, preprocess=(127.0, 128.0)).predict(photo)
    np.testing.assert_array_equal(ImageModel(module, preprocess="none").predict(photo), raw)


def test_pixels_0_255_for_a_0_1_preprocessing_warn():
    def net(images):  # NHWC float32 -> two logits
        return np.stack([images.mean(axis=(1, 2, 3)), -images.mean(axis=(1, 2, 3))], axis=1)

    photo = photos(1, seed=2)
    imagenet = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    with pytest.warns(UserWarning, match="is made for pixels from 0 to 1: divide"):
        ImageModel(net, preprocess=imagenet, output="logit").predict(photo)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ImageModel(net, preprocess=imagenet, output="logit").predict(photo / 255.0)


def test_a_clone_tunes_its_own_adapter_around_the_same_network(cnn):
    from sklearn.base import clone

    model = ImageModel(cnn, preprocess=(127.0, 128.0), target=1)
    e = Explainer(model, groups=PatchGrouper(16), baseline="zeros")
    c = clone(e).set_params(estimator__target=2)
    assert model.target == 1 and e.estimator.target == 1  # the user's model is untouched
    assert c.estimator.target == 2 and c.estimator.model is cnn  # the network is shared
    assert clone(model) is not model and clone(model).model is cnn


def test_a_refused_set_params_leaves_the_model_as_it_was(cnn):
    model = ImageModel(cnn, preprocess=(127.0, 128.0))
    with pytest.raises(ValueError):
        model.set_params(layout="CHWN")
    assert model.layout == "auto"
    with pytest.raises(ValueError):
        model.set_params(target=3, n_threads=0)
    assert model.target is None and model.n_threads is None
    model.predict(photos(1, seed=0))  # still usable
