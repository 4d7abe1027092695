"""The image report's input: a folder of photos, an ONNX model file and its options.

Everything here is checked before any model work. A model file is read only
as ONNX (:class:`onnxruntime.InferenceSession`, which parses a protobuf and
runs no code of the file); pickles and other formats are refused by their
name and first bytes, never opened otherwise.
"""

# SPDX-License-Identifier: BSD-3-Clause

from pathlib import Path

import numpy as np

from .._image import ImageModel
from ._common import PICKLE_SUFFIXES, DataError

#: the photo files read from a folder (any case)
PHOTO_SUFFIXES = (".png", ".jpg", ".jpeg")
#: what ``--preprocess`` needs, for the messages that refuse it
PREPROCESS_HELP = (
    "say how the network expects its pixels with --preprocess: MEAN STD in the "
    "0..255 pixel scale, as (pixel - MEAN) / STD (e.g. --preprocess 127.5 127.5 for "
    "pixels scaled to -1..1, --preprocess 0 255 for pixels in 0..1), six numbers "
    "for per-channel means then standard deviations (ImageNet's: --preprocess "
    "123.675 116.28 103.53 58.395 57.12 57.375), or --preprocess none when the "
    "network scales its input itself"
)


class CountedImageModel(ImageModel):
    """An :class:`~skdecomp.ImageModel` that counts the images its network runs.

    The count is shared by the copies the explainers bind to an image shape
    (a shallow copy keeps the same counter), so ``evaluations[0]`` is every
    model evaluation made through this model.
    """

    def __init__(self, model, **params):
        super().__init__(model, **params)
        self.evaluations = [0]

    def forward(self, x):
        """Run the network and count its images (see :meth:`ImageModel.forward`)."""
        self.evaluations[0] += len(x)
        return super().forward(x)


def parse_preprocess(values):
    """``--preprocess`` as ImageModel's ``preprocess``: "none" or (mean, std).

    Parameters
    ----------
    values : list of str or None
        The words given: ``["none"]``, two numbers or six numbers (three
        means, then three standard deviations), in the 0..255 pixel scale.

    Returns
    -------
    preprocess : "none" or tuple
    """
    if not values:
        raise DataError(f"--preprocess is missing: {PREPROCESS_HELP}.")
    if len(values) == 1 and values[0].strip().lower() == "none":
        return "none"
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        raise DataError(
            f"--preprocess {' '.join(values)}: not numbers; {PREPROCESS_HELP}."
        ) from None
    if len(numbers) not in (2, 6) or not all(np.isfinite(numbers)):
        raise DataError(
            f"--preprocess takes 2 or 6 finite numbers, or 'none'; got "
            f"{' '.join(values)}. {PREPROCESS_HELP[0].upper()}{PREPROCESS_HELP[1:]}."
        )
    half = len(numbers) // 2
    mean, std = numbers[:half], numbers[half:]
    if any(s <= 0 for s in std):
        raise DataError(f"--preprocess: every STD must be positive, got {std}.")
    if max(abs(m) for m in mean) <= 1 and max(std) <= 1:
        raise DataError(
            f"--preprocess {' '.join(values)} looks made for pixels in 0..1, but the "
            "photos are read in 0..255: multiply MEAN and STD by 255 (e.g. 0.485 -> "
            "123.675, 0.229 -> 58.395; a network that takes pixels in 0..1 as they are: "
            "--preprocess 0 255; one that scales its input itself: --preprocess none)."
        )
    return (mean[0], std[0]) if half == 1 else (tuple(mean), tuple(std))


def load_class_names(path):
    """Class names from a text file, one per line (trailing blank lines dropped)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"--classes {path}: no such file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(
            f"--classes {path} could not be read as UTF-8 text ({exc}); give a text "
            "file with one class name per line."
        ) from exc
    names = [line.strip() for line in text.splitlines()]
    while names and not names[-1]:
        names.pop()
    if not names:
        raise DataError(f"--classes {path} is empty; give one class name per line.")
    return names


def _onnx_session(path, n_threads):
    try:
        import onnxruntime as ort
    except ImportError:
        raise DataError(
            "reading an ONNX model needs onnxruntime; install it with "
            "pip install \"skdecomp[images]\"."
        ) from None
    options = ort.SessionOptions()
    if n_threads is not None:
        options.intra_op_num_threads = 0 if n_threads < 0 else int(n_threads)
        options.inter_op_num_threads = 1
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own types
        message = " ".join(str(exc).split())[:200]
        raise DataError(
            f"--model {path.name} could not be read as an ONNX model ({message}); "
            "export the network to ONNX (e.g. torch.onnx.export) and pass that file."
        ) from None


def load_onnx_model(path, preprocess, *, output="probability", class_names=None,
                    size=None, n_threads=None):
    """The ONNX network in ``path``, wrapped in an ImageModel that counts evaluations.

    Parameters
    ----------
    path : str or path-like
        An ``.onnx`` file. Pickles (by name or first byte) and other files
        are refused before they are opened.
    preprocess : "none" or tuple
        From :func:`parse_preprocess`.
    output : {"probability", "logit"}, default="probability"
        The explained output.
    class_names : list of str or None, default=None
        One name per output of the network.
    size : tuple of int or None, default=None
        (height, width) of the photos, for a network whose input sizes are free.
    n_threads : int or None, default=None
        The session's threads (-1: every core); None leaves onnxruntime's default.

    Returns
    -------
    model : CountedImageModel
    shape : tuple of int
        (height, width, channels) the photos are read at.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"--model {path}: no such file; check the path.")
    if not path.is_file():
        raise DataError(f"--model {path} is not a file; give an ONNX file (.onnx).")
    try:
        with open(path, "rb") as f:
            head = f.read(2)
    except OSError as exc:
        raise DataError(
            f"--model {path} could not be read ({exc.strerror or exc}); check its "
            "permissions."
        ) from exc
    suffix = path.suffix.lower()
    if suffix in PICKLE_SUFFIXES or head[:1] == b"\x80":
        raise DataError(
            f"--model {path.name} is a pickle file. Loading a pickle can run any code "
            "it contains, so skdecomp refuses it: export the network to ONNX (e.g. "
            "torch.onnx.export) and pass the .onnx file."
        )
    if suffix != ".onnx":
        raise DataError(
            f"--model {path.name} is not an ONNX file (.onnx); skdecomp reads image "
            "models only as ONNX, which holds no code. Export the network to ONNX "
            "(e.g. torch.onnx.export) and pass that file."
        )
    session = _onnx_session(path, n_threads)
    inputs = session.get_inputs()
    if len(inputs) != 1 or len(inputs[0].shape) != 4:
        shapes = ", ".join(str(list(i.shape)) for i in inputs)
        raise DataError(
            f"--model {path.name} takes {len(inputs)} input(s) of shape(s) {shapes}; "
            "the image report needs a network with one input of images "
            "(batch, channels, height, width) or (batch, height, width, channels)."
        )
    model = CountedImageModel(session, preprocess=preprocess, output=output,
                              class_names=class_names)
    H, W, C = model.model_input_shape()
    if size is not None:
        h, w = size
        if (H is not None and H != h) or (W is not None and W != w):
            raise DataError(
                f"--size {h} {w}: the network takes {H}x{W} images; leave --size out "
                "or give the network's size."
            )
        H, W = h, w
    if H is None or W is None:
        raise DataError(
            f"--model {path.name} leaves the image size free (input shape "
            f"{list(inputs[0].shape)}); give the size it was trained at with --size, "
            "e.g. --size 224."
        )
    C = 3 if C is None else int(C)
    if C not in (1, 3):
        raise DataError(
            f"--model {path.name} takes images of {C} channels; photos are read as "
            "RGB (3 channels) or grey (1)."
        )
    model.set_params(image_shape=(int(H), int(W), C))
    return model, (int(H), int(W), C)


def photo_files(folder):
    """The photo files of ``folder``, sorted by name (hidden files left out)."""
    folder = Path(folder)
    if not folder.exists():
        raise DataError(f"{folder}: no such folder; give a folder of photos.")
    if not folder.is_dir():
        raise DataError(
            f"{folder} is not a folder; give a folder of .png, .jpg or .jpeg photos."
        )
    files = sorted(
        p for p in folder.iterdir()
        if p.suffix.lower() in PHOTO_SUFFIXES and not p.name.startswith(".")
        and p.is_file()
    )
    if not files:
        raise DataError(
            f"{folder} holds no photo: no .png, .jpg or .jpeg file (any case); put "
            "the photos to explain there."
        )
    return files


def _read_photo(path, shape):
    from PIL import Image, ImageOps

    H, W, C = shape
    with Image.open(path) as img:
        img = ImageOps.exif_transpose(img)  # phone photos keep their rotation in EXIF
        img = img.convert("RGB" if C == 3 else "L")
        # centre-crop to the network's aspect ratio, then resize: no stretching
        w, h = img.size
        if w * H > h * W:
            new = max(1, round(h * W / H))
            box = ((w - new) // 2, 0, (w - new) // 2 + new, h)
        else:
            new = max(1, round(w * H / W))
            box = (0, (h - new) // 2, w, (h - new) // 2 + new)
        img = img.resize((W, H), Image.Resampling.BICUBIC, box=box)
        array = np.asarray(img, dtype=np.uint8)
    return array if C == 3 else array[..., None]


def load_photos(files, shape):
    """The photos as uint8 arrays of ``shape``; every unreadable file is named.

    Parameters
    ----------
    files : list of Path
        From :func:`photo_files`.
    shape : tuple of int
        (height, width, channels) of the network's input.

    Returns
    -------
    images : ndarray of uint8, shape (n, height, width, channels)
    """
    try:
        from PIL import Image
    except ImportError:
        raise DataError("reading photos needs Pillow; pip install pillow.") from None
    images, bad = [], []
    for path in files:
        try:
            images.append(_read_photo(path, shape))
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            reason = " ".join(str(exc).split())[:120] or type(exc).__name__
            bad.append(f"{path.name} ({reason})")
    if bad:
        shown = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise DataError(
            f"{len(bad)} file(s) could not be read as images: {shown}. Remove or "
            "replace them."
        )
    return np.stack(images)


def check_classes(class_names, n_outputs):
    """The class names fit the network's outputs."""
    if class_names is not None and len(class_names) != n_outputs:
        raise DataError(
            f"--classes gives {len(class_names)} names, but the network has "
            f"{n_outputs} outputs; give one name per output, in order."
        )


def class_name(model, k):
    """The name of class ``k``, or ``class k``."""
    names = model.class_names
    return str(names[k]) if names is not None and k < len(names) else f"class {k}"
