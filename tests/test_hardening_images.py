"""Hardening of the image surfaces: hostile models, parameters and caches.

ONNX sessions with a fixed batch size or a flattened input; a torch module
on the meta device; pickling and copying an ImageModel or Explainer over an
ONNX session; Integrated Gradients through a numpy-only preprocess; clear
messages for a (mean, std) of the wrong length, a bad batch_memory, a float
or empty target; the pretrained CNN's cache holding a foreign file or a
folder; a baseline given as a batch of one or for images one pixel high; a
callable returning a nested list.
"""

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from skdecomp import Explainer, ImageModel, PatchGrouper  # noqa: E402

from ._cnn import photos, small_cnn  # noqa: E402


# -- tiny ONNX models, built with the onnx helper -------------------------------------
def linear_onnx(input_shape, weights, *, input_name="x", output_name="y"):
    """Bytes of an ONNX model: its input flattened (C order) times ``weights``.

    ``input_shape`` may hold names (free sizes) or ints (fixed sizes).
    """
    W = numpy_helper.from_array(np.asarray(weights, dtype=np.float32), "W")
    nodes = []
    source = input_name
    if len(input_shape) > 2:
        nodes.append(helper.make_node("Flatten", [input_name], ["flat"], axis=1))
        source = "flat"
    nodes.append(helper.make_node("MatMul", [source, "W"], [output_name]))
    graph = helper.make_graph(
        nodes, "linear",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, list(input_shape))],
        [helper.make_tensor_value_info(output_name, TensorProto.FLOAT,
                                       [input_shape[0], weights.shape[1]])],
        initializer=[W],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def session_of(model, threads=1):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


H, W, C, K = 4, 5, 3, 4


@pytest.fixture(scope="module")
def weights():
    return np.random.default_rng(0).normal(size=(H * W * C, K)).astype(np.float32)


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(1).integers(0, 256, size=(5, H, W, C)).astype(np.uint8)


def by_hand(images, weights, order="NCHW"):
    x = np.asarray(images, dtype=np.float32)
    if order == "NCHW":
        x = x.transpose(0, 3, 1, 2)
    return x.reshape(len(x), -1).astype(np.float64) @ weights.astype(np.float64)


# -- 1. ONNX sessions with a fixed batch size or a flattened input ---------------------
@pytest.mark.parametrize("batch", [1, 2])
def test_onnx_fixed_batch_size_sends_batches_of_that_size(weights, images, batch):
    session = session_of(linear_onnx([batch, C, H, W], weights))
    model = ImageModel(session, output="logit", preprocess="none")
    assert model.batch_rows(H * W * C) % batch == 0
    # 5 images: the last batch is padded and its padding dropped
    np.testing.assert_allclose(model.predict(images), by_hand(images, weights), rtol=1e-5)
    small = ImageModel(session, output="logit", preprocess="none", batch_memory=4)
    np.testing.assert_allclose(small.predict(images), by_hand(images, weights), rtol=1e-5)
    # through the explainer, on bound rows
    ex = Explainer(ImageModel(session, output="logit", preprocess="none", target=1),
                   groups=PatchGrouper(2), baseline="zeros").fit(images[:1])
    phi = ex.transform(images[:1])
    np.testing.assert_allclose(phi.sum(), by_hand(images[:1], weights)[0, 1], rtol=1e-4)


@pytest.mark.parametrize("layout", ["auto", "NHWC", "NCHW"])
def test_onnx_flattened_input_gets_the_images_reshaped(weights, images, layout):
    for batch in ("n", 1):
        session = session_of(linear_onnx([batch, H * W * C], weights))
        model = ImageModel(session, output="logit", preprocess="none", layout=layout)
        # "auto": the images flattened as skdecomp flattens them (row, column, channel)
        order = "NCHW" if layout == "NCHW" else "NHWC"
        np.testing.assert_allclose(model.predict(images), by_hand(images, weights, order),
                                   rtol=1e-5)
        flat = model.bind((H, W, C))
        np.testing.assert_allclose(flat.predict(images.reshape(5, -1)),
                                   by_hand(images, weights, order), rtol=1e-5)


def test_onnx_flattened_input_of_another_size_is_refused(weights, images):
    session = session_of(linear_onnx(["n", H * W * C], weights))
    model = ImageModel(session, output="logit", preprocess="none", target=0)
    other = np.zeros((1, 6, 6, 3), np.uint8)
    with pytest.raises(ValueError, match=r"\(6, 6, 3\).*108 values.*\['n', 60\]"):
        model.predict(other)
    with pytest.raises(ValueError, match=r"\(6, 6, 3\).*\['n', 60\].*resize"):
        Explainer(model, groups=PatchGrouper(3), baseline="zeros").fit(other)


# -- 2. a torch module on the meta device ------------------------------------------------
class _Head(torch.nn.Module):
    def __init__(self, device):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 1)
        self.head = torch.nn.Linear(3, 2, device=device)

    def forward(self, x):
        return self.head(self.conv(x).mean(dim=(2, 3)))


def test_module_on_the_meta_device_is_refused():
    with pytest.raises(ValueError, match="meta device.*head.weight.*load its weights"):
        ImageModel(_Head("meta").eval(), target=0)
    with pytest.raises(ValueError, match="meta device"):
        Explainer(_Head("meta").eval(), groups=PatchGrouper(2), baseline="zeros",
                  target=0).fit(photos(1, size=4))


# -- 3. pickling and copying over an ONNX session -------------------------------------------
def test_onnx_image_model_pickles_and_deep_copies(weights, images, tmp_path):
    path = tmp_path / "linear.onnx"
    path.write_bytes(linear_onnx(["n", C, H, W], weights))
    for source in (str(path), path.read_bytes()):
        model = ImageModel(session_of(source, threads=2), output="logit",
                           preprocess=(127.0, 128.0), target=[0, 2])
        want = model.predict(images)
        for twin in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
            assert twin.model is not model.model and twin.runtime == "onnx"
            assert twin.model.get_session_options().intra_op_num_threads == 2
            assert twin.model.get_providers() == model.model.get_providers()
            np.testing.assert_array_equal(twin.predict(images), want)
        # a shallow copy (bind) keeps the same session
        assert copy.copy(model).model is model.model
        assert model.bind((H, W, C)).model is model.model


def test_explainer_over_onnx_pickles_and_deep_copies(weights, images):
    session = session_of(linear_onnx(["n", C, H, W], weights))
    ex = Explainer(session, groups=PatchGrouper(2), baseline="zeros", target=1,
                   method="shapley").fit(images[:1])
    phi = ex.transform(images[:2])
    for twin in (pickle.loads(pickle.dumps(ex)), copy.deepcopy(ex)):
        # one session, shared by the parameter and the fitted adapter
        assert twin.estimator is twin.estimator_.model
        assert twin.estimator is not session
        np.testing.assert_array_equal(twin.transform(images[:2]), phi)


def test_a_session_that_cannot_be_recreated_is_refused_clearly(weights, tmp_path):
    path = tmp_path / "gone.onnx"
    path.write_bytes(linear_onnx(["n", C, H, W], weights))
    model = ImageModel(session_of(str(path)), output="logit")
    path.unlink()
    with pytest.raises(TypeError, match="gone.onnx.*cannot be read.*bytes"):
        pickle.dumps(model)


@pytest.mark.slow
def test_onnx_image_model_goes_to_joblib_workers(weights, images):
    from joblib import Parallel, delayed

    model = ImageModel(session_of(linear_onnx(["n", C, H, W], weights)), output="logit")
    outs = Parallel(n_jobs=2, backend="loky")(
        delayed(model.predict)(images[i : i + 1]) for i in range(2)
    )
    np.testing.assert_allclose(np.concatenate(outs), model.predict(images[:2]))


# -- 4. Integrated Gradients through a numpy-only preprocess -------------------------------
def test_gradients_through_a_numpy_preprocess_are_refused_clearly():
    cnn = small_cnn()
    images = photos(1, size=8)

    def numpy_only(x):
        return np.asarray(x) / 255.0

    model = ImageModel(cnn, preprocess=numpy_only, target=0)
    with pytest.raises(TypeError, match="preprocess.*torch.*scheme': 'path'"):
        Explainer(model, groups=PatchGrouper(4), baseline="zeros",
                  method="integrated_gradients").fit(images).transform(images)
    # the derivative-free scheme runs
    Explainer(model, groups=PatchGrouper(4), baseline="zeros",
              method="integrated_gradients",
              method_params={"scheme": "path"}).fit(images).transform(images)

    def detached(x):
        return torch.as_tensor(np.asarray(x.detach()) / 255.0)

    with pytest.raises(TypeError, match="preprocess.*torch"):
        ImageModel(cnn, preprocess=detached, target=0).gradients(images)


# -- 5. messages: (mean, std) length, batch_memory, float and empty targets -----------------
def test_mean_std_of_another_length_than_the_channels():
    cnn = small_cnn()
    images = photos(1, size=8)
    model = ImageModel(cnn, preprocess=((1.0, 2.0), (1.0, 2.0)), target=0)
    with pytest.raises(ValueError, match="2 values.*3 channels.*one number or 3"):
        model.predict(images)
    with pytest.raises(ValueError, match="2 values.*3 channels"):
        model.gradients(images)
    with pytest.raises(ValueError, match="2 values.*3 channels"):
        Explainer(model, groups=PatchGrouper(4), baseline="zeros").fit(images)
    with pytest.raises(ValueError, match="3 means but 2 stds"):
        ImageModel(cnn, preprocess=((1.0, 2.0, 3.0), (1.0, 2.0)))


def test_batch_memory_is_named_in_its_message():
    with pytest.raises(ValueError, match="batch_memory='lots' is not a size") as info:
        ImageModel(small_cnn(), batch_memory="lots")
    assert "max_memory" not in str(info.value)


def test_float_and_empty_targets_are_refused():
    cnn = small_cnn()
    with pytest.raises(TypeError, match=r"target must be an int class index.*2\.0 \(a float\)"):
        ImageModel(cnn, target=2.0)
    with pytest.raises(TypeError, match=r"2\.0 \(a float\)"):
        ImageModel(cnn, target=[0, 2.0])
    with pytest.raises(TypeError, match=r"2\.0 \(a float\)"):
        Explainer(cnn, groups=PatchGrouper(4), baseline="zeros", target=2.0).fit(
            photos(1, size=8))
    with pytest.raises(ValueError, match="target=\\[\\] keeps no output"):
        ImageModel(cnn, target=[])
    with pytest.raises(ValueError, match="keeps no output"):
        ImageModel(cnn, target=np.array([], dtype=int))
    model = ImageModel(cnn, target=0)
    with pytest.raises(ValueError, match="keeps no output"):
        model.set_params(target=())
    assert model.target == 0


# -- 6. the pretrained CNN's cache ---------------------------------------------------------
def _lite0_like(seed):
    """A tiny stand-in with EfficientNet-Lite0's input and output: 1000 classes."""
    rng = np.random.default_rng(seed)
    W = numpy_helper.from_array(rng.normal(size=(3, 1000)).astype(np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["images"], ["pooled"]),
         helper.make_node("Flatten", ["pooled"], ["flat"], axis=1),
         helper.make_node("MatMul", ["flat", "W"], ["logits"])],
        "lite0-like",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])],
        initializer=[W],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.fixture
def fake_cache(tmp_path, monkeypatch):
    """The cache path in tmp_path, and an exporter that writes a stand-in and counts."""
    from skdecomp import _imagenet

    path = tmp_path / "efficientnet-lite0-test.onnx"
    monkeypatch.setattr(_imagenet, "_onnx_path", lambda cache_dir: path)
    exports = []

    def export(target):
        exports.append(target)
        _imagenet._write_verified(target, _lite0_like(0))

    monkeypatch.setattr(_imagenet, "_export_lite0_onnx", export)
    return path, exports


def _weights_of(session):
    x = np.eye(3, dtype=np.float32)[:, :, None, None] * np.ones((1, 1, 224, 224), np.float32)
    return session.run(None, {"images": x})[0]


def test_pretrained_cache_holding_a_foreign_model_is_exported_again(fake_cache):
    from skdecomp._imagenet import _lite0_onnx_session

    path, exports = fake_cache
    right = _weights_of(session_of(_lite0_like(0)))
    # a foreign 1000-class model with the same input and output, no digest
    path.write_bytes(_lite0_like(1))
    np.testing.assert_allclose(_weights_of(_lite0_onnx_session()), right)
    assert exports == [path]
    # the file written is used as it is the next time
    np.testing.assert_allclose(_weights_of(_lite0_onnx_session()), right)
    assert len(exports) == 1
    # replaced under its digest: exported again
    path.write_bytes(_lite0_like(2))
    np.testing.assert_allclose(_weights_of(_lite0_onnx_session()), right)
    assert len(exports) == 2


def test_pretrained_cache_path_taken_by_a_folder_is_refused(fake_cache):
    from skdecomp._imagenet import _lite0_onnx_session

    path, exports = fake_cache
    path.mkdir()
    with pytest.raises(ValueError, match=f"{path.name}.*is a folder.*delete"):
        _lite0_onnx_session()
    assert exports == []


# -- 7. a baseline as a batch of one, and for images one pixel high ------------------------
def _mean_net(x):
    x = np.asarray(x, dtype=np.float64)
    m = x.reshape(len(x), -1).mean(axis=1)
    return np.stack([m, -m], axis=1)


@pytest.mark.parametrize("shape", [(4, 6, 3), (1, 6, 3), (1, 6), (4, 1, 3)])
def test_baseline_as_a_batch_of_one_and_images_one_pixel_high(shape):
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 1, size=(1, *shape))
    base = np.full(shape, 0.25)
    model = ImageModel(_mean_net, output="logit", target=0, preprocess="none")
    want = None
    for given in (base, base[None], base.ravel(), base.ravel()[None]):
        before = np.array(given, copy=True)
        ex = Explainer(model, groups=PatchGrouper(1), baseline=given).fit(images)
        phi = ex.transform(images)
        np.testing.assert_array_equal(given, before)
        want = phi if want is None else want
        np.testing.assert_allclose(phi, want)
    np.testing.assert_allclose(phi.sum(), images.mean() - 0.25, atol=1e-6)


# -- 8. a callable that returns a nested list ------------------------------------------------
def test_callable_returning_a_nested_list():
    images = photos(3, size=4)
    model = ImageModel(lambda X: [[0.1, 0.9]] * len(X), output="logit", target=1)
    np.testing.assert_allclose(model.predict(images), np.full((3, 1), 0.9))
    Explainer(model, groups=PatchGrouper(2), baseline="zeros").fit(images[:1])
    # a list of the wrong length is still refused, with the shape
    short = ImageModel(lambda X: [[0.1, 0.9]], output="logit", target=1)
    with pytest.raises(ValueError, match=r"shape \(1, 2\) for 3 images"):
        short.predict(images)
    # a torch module's tuple of outputs is still refused
    with pytest.raises(ValueError, match="returned a tuple"):
        ImageModel(lambda X: (np.zeros((len(X), 2)), None), target=0).predict(images)
