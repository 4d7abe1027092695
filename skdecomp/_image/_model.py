"""Image models as they are: a PyTorch module, an ONNX Runtime session or a callable.

:class:`ImageModel` owns everything that differs between image models: the
layout the network wants (NCHW or NHWC), the preprocessing, the explained
output, float32 input, inference mode on the model's own device, the number
of the runtime's threads and batches bounded in bytes. Everything above it
(the game, the methods, the groupers) sees a fitted model with ``predict``
on images or on flattened image rows.

torch and onnxruntime are imported only when such a model is given.
"""

# SPDX-License-Identifier: BSD-3-Clause

import copy
import sys
import warnings
from contextlib import contextmanager
from itertools import chain
from numbers import Integral, Real

import numpy as np

from .._config import parse_memory
from .._model import FunctionModel, as_model
from ._runtime import (
    SessionRecipe, SharedRuntimeCloneMixin, check_flat_size, is_image_runtime,
    onnx_fixed_batch, onnx_rank, recipe_of, run_onnx, runtime_of,
)

__all__ = [
    "ImageFunction", "ImageModel", "image_dtype", "image_model", "is_image_runtime",
    "runtime_of",
    "SharedRuntimeCloneMixin", "wrap_runtime",
]

#: Bytes of model input (float32) in one forward pass, by default: small
#: batches stay in the CPU's caches (on EfficientNet-Lite0 at 224x224, one
#: thread, 4 images took 29 ms each in torch and 7 ms in ONNX Runtime, 56
#: images 70 and 10 ms); a GPU wants large ones.
DEFAULT_BATCH_MEMORY = 4 * 2**20
DEFAULT_GPU_BATCH_MEMORY = 64 * 2**20

_LAYOUTS = ("auto", "NCHW", "NHWC")
_OUTPUTS = ("probability", "logit")


def _tensors_to_numpy(out, torch):
    """A module's output as float numpy arrays, in its tuple, list or dict."""
    if isinstance(out, torch.Tensor):
        return out.detach().float().cpu().numpy()
    if isinstance(out, (tuple, list)):
        return type(out)(_tensors_to_numpy(o, torch) for o in out)
    if isinstance(out, dict):
        return {k: _tensors_to_numpy(v, torch) for k, v in out.items()}
    return out


def _softmax(z):
    z = np.asarray(z, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class ImageModel:
    """An image classifier as it is, seen as a fitted model on images.

    Wraps a ``torch.nn.Module``, an ``onnxruntime.InferenceSession`` or any
    callable on a batch of images, so that every explainer, grouper and
    metric of skdecomp can call it on images of shape (n, H, W, C) or
    (n, H, W), uint8 or float, or on the same images flattened. It owns the
    layout the model wants, the preprocessing, the explained output, float32
    input, inference mode on the model's own device (a CUDA module stays on
    its GPU), the runtime's threads and batches bounded in bytes. The model
    is used as it is and never modified.

    Parameters
    ----------
    model : torch.nn.Module, onnxruntime.InferenceSession or callable
        The network. A module must be in evaluation mode (``model.eval()``)
        with its weights loaded (not on the meta device). A callable gets
        float32 arrays in ``layout`` and returns one row of outputs per
        image (an array, or a nested list of numbers). An ONNX session whose
        input fixes the batch size gets batches of exactly that size (the
        last one padded, the padding's outputs dropped); one whose input is
        flattened, (n, H * W * C), gets the images flattened. An ImageModel
        over a session can be pickled and deep-copied: the session is
        re-created from the model bytes (or file) it was built from, its
        providers and the session options ONNX Runtime lets us read.
    layout : {"auto", "NCHW", "NHWC"}, default="auto"
        The layout of the model's input. "auto": NCHW for a torch module;
        read from the input's shape for an ONNX session (channels where the
        size is 1, 3 or 4; a flattened input takes the images flattened
        in NHWC order, row, column, channel, as skdecomp flattens them);
        NHWC (the images as given) for a callable.
    preprocess : callable, (mean, std), "none" or None, default=None
        Applied to float32 images of shape (n, H, W, C), in the value scale
        of the images given, before the layout change. A pair ``(mean,
        std)`` of numbers or per-channel sequences gives ``(x - mean) /
        std``. A callable gets a numpy array; for the gradients of a torch
        module (``integrated_gradients``) it gets a torch tensor, so write it
        with operators both support. With a mean above 1 (pixels from 0 to
        255), float images in 0..1 get a warning, and with a mean of at most
        1 (pixels from 0 to 1), images with values above 1.5: they are
        almost surely scaled otherwise than the model expects. "none": the
        network scales its input itself. None (not said) runs the images as
        they are too, but a torch module or ONNX session given pixels above
        1.5 gets a warning once that names what ``preprocess`` needs.
    output : {"probability", "logit"} or callable, default="probability"
        The explained output: "probability" is the softmax of the model's
        output over the classes, "logit" the model's output as it is; a
        callable maps the model's output (a float array with one row per
        image) to the explained values.
    target : int, str, sequence or None, default=None
        The explained class: an int index into the outputs, or a name of
        ``class_names``; a non-empty sequence keeps several. None keeps every output;
        the explainers then need their own ``target`` when there are more
        than one.
    class_names : sequence of str or None, default=None
        Name of every class, for results and pictures.
    image_shape : tuple of int or None, default=None
        (H, W, C) the model needs; images of another shape are refused.
        Read from an ONNX session whose input has fixed sizes.
    batch_memory : int, str or None, default=None
        Bytes of float32 model input in one forward pass (e.g. ``"64MB"``);
        None is 4 MiB on the CPU (6 images of 224x224x3: small batches
        stay in the caches and run fastest there) and 64 MiB for a module
        on a GPU. The number of images per pass follows from the
        image size.
    n_threads : int or None, default=None
        Threads of the runtime during a call: torch's intra-op threads (set
        for the call, then restored). An ONNX session keeps the threads it
        was created with (``SessionOptions.intra_op_num_threads``). None
        leaves the runtime's setting. skdecomp starts no workers of its own
        on an image model: the explainers' ``n_jobs`` becomes these threads.

    Attributes
    ----------
    runtime : str
        ``"torch"``, ``"onnx"`` or ``"callable"``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdecomp import ImageModel
    >>> def net(images):  # a callable on (n, H, W, C) float32 images
    ...     return np.stack([images.mean(axis=(1, 2, 3)), -images.mean(axis=(1, 2, 3))], 1)
    >>> model = ImageModel(net, output="logit", target=0)
    >>> model.predict(np.ones((2, 4, 4, 3), dtype=np.uint8)).ravel()
    array([1., 1.])
    """

    def __init__(
        self,
        model,
        *,
        layout="auto",
        preprocess=None,
        output="probability",
        target=None,
        class_names=None,
        image_shape=None,
        batch_memory=None,
        n_threads=None,
    ):
        self.model = model
        self.layout = layout
        self.preprocess = preprocess
        self.output = output
        self.target = target
        self.class_names = class_names
        self.image_shape = image_shape
        self.batch_memory = batch_memory
        self.n_threads = n_threads
        self.runtime = runtime_of(model)
        self._rows_shape = None  # set by bind(): the shape of flattened rows
        self._check_params()

    # -- parameters ---------------------------------------------------------------
    def _check_params(self):
        if self.runtime is None or isinstance(self.model, ImageModel):
            raise TypeError(
                f"ImageModel takes a torch.nn.Module, an onnxruntime.InferenceSession "
                f"or a callable on a batch of images; got {type(self.model).__name__}."
            )
        if self.layout not in _LAYOUTS:
            raise ValueError(f"layout={self.layout!r} must be one of {list(_LAYOUTS)}.")
        if not (callable(self.output) or self.output in _OUTPUTS):
            raise ValueError(
                f"output={self.output!r} must be 'probability', 'logit' or a callable "
                "on the model's output."
            )
        if self.n_threads is not None and (
            not isinstance(self.n_threads, Integral) or isinstance(self.n_threads, bool)
            or self.n_threads < 1
        ):
            raise ValueError(
                f"n_threads={self.n_threads!r} must be a positive int or None."
            )
        if self.batch_memory is not None and self._batch_bytes() < 1:
            raise ValueError(f"batch_memory={self.batch_memory!r} must be positive.")
        self._target_items()
        if self._pair():
            mean, std = self._mean_std()
            if np.any(std == 0):
                raise ValueError("preprocess=(mean, std) has a std of 0.")
        if self.image_shape is not None:
            shape = tuple(self.image_shape)
            if len(shape) not in (2, 3) or not all(
                isinstance(s, Integral) and s > 0 for s in shape
            ):
                raise ValueError(
                    f"image_shape={self.image_shape!r} must be (H, W) or (H, W, C) "
                    "of positive ints."
                )
        if self.runtime == "torch":
            self._torch_device()
        if self.runtime == "onnx":
            self._onnx_rank()

    def _batch_bytes(self):
        """``batch_memory`` in bytes, refused by its own name."""
        try:
            return parse_memory(self.batch_memory)
        except ValueError:
            raise ValueError(
                f"batch_memory={self.batch_memory!r} is not a size; give bytes as an "
                "int or a string such as '64MB' or '1GB', or None."
            ) from None

    def _target_items(self):
        """``target`` as a list of ints and names (None for every output), checked."""
        target = self.target
        if target is None:
            return None
        if isinstance(target, np.ndarray) and target.ndim == 0:
            target = target.item()
        if isinstance(target, (list, tuple, np.ndarray)):
            items = list(target)
            if not items:
                raise ValueError(
                    f"target={target!r} keeps no output to explain; give a class "
                    "index, a list of them, or None for every output."
                )
        else:
            items = [target]
        for t in items:
            if isinstance(t, str) or (isinstance(t, Integral) and not isinstance(t, bool)):
                continue
            kind = "a float" if isinstance(t, Real) and not isinstance(t, bool) else (
                f"a {type(t).__name__}")
            hint = (f"; pass target={int(t)}" if isinstance(t, Real) and not isinstance(
                t, bool) and float(t).is_integer() else "")
            raise TypeError(
                f"target must be an int class index (or a name of class_names), got "
                f"{t!r} ({kind}){hint}."
            )
        return items

    def _pair(self):
        """Whether ``preprocess`` is a (mean, std) pair (not None, "none" or a callable)."""
        p = self.preprocess
        return not (p is None or callable(p) or (isinstance(p, str) and p == "none"))

    def _mean_std(self):
        try:
            mean, std = self.preprocess
            mean = np.asarray(mean, dtype=np.float32)
            std = np.asarray(std, dtype=np.float32)
        except (TypeError, ValueError):
            raise TypeError(
                f"preprocess={self.preprocess!r} must be a callable, or a pair (mean, "
                "std) of numbers or per-channel sequences, e.g. (127.0, 128.0) or "
                "((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))."
            ) from None
        if mean.ndim > 1 or std.ndim > 1:
            raise TypeError("preprocess=(mean, std): give numbers or per-channel sequences.")
        if mean.size != std.size and 1 not in (mean.size, std.size):
            raise ValueError(
                f"preprocess=(mean, std) has {mean.size} means but {std.size} stds; "
                "give one number or one value per channel for each."
            )
        return mean, std

    def _check_pair_channels(self, channels):
        """Refuse a (mean, std) with per-channel values for another number of channels."""
        if not self._pair():
            return
        mean, std = self._mean_std()
        sizes = {mean.size, std.size} - {1}
        if sizes and sizes != {int(channels)}:
            raise ValueError(
                f"preprocess=(mean, std) has {max(sizes)} values per channel but the "
                f"images have {channels} channels; give one number or {channels} "
                "per-channel values for each of mean and std."
            )

    def get_params(self, deep=True):
        """Parameters, as scikit-learn reads them."""
        return {
            name: getattr(self, name)
            for name in ("model", "layout", "preprocess", "output", "target",
                         "class_names", "image_shape", "batch_memory", "n_threads")
        }

    def set_params(self, **params):
        """Set parameters, as scikit-learn sets them.

        Parameters
        ----------
        **params : dict
            New values of parameters of the constructor.

        Returns
        -------
        self : ImageModel
            This model, checked again.
        """
        valid = self.get_params()
        for name in params:
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for ImageModel; valid parameters "
                    f"are {sorted(valid)}."
                )
        old = {name: valid[name] for name in params}
        for name, value in params.items():
            setattr(self, name, value)
        try:
            self.runtime = runtime_of(self.model)
            self._check_params()
        except Exception:
            # a refused value leaves the model as it was
            for name, value in old.items():
                setattr(self, name, value)
            self.runtime = runtime_of(self.model)
            raise
        return self

    def _check_eval(self):
        """Refuse a module any part of which is in training mode."""
        training = [name or type(self.model).__name__
                    for name, m in self.model.named_modules() if m.training]
        if training:
            raise ValueError(
                f"The module is in training mode ({len(training)} of its submodules, "
                f"e.g. {training[0]!r}), where dropout and batch norm change its "
                "output at every call and batch norm's running statistics are "
                "updated by every prediction; call model.eval() first (it puts every "
                "submodule in evaluation mode)."
            )

    def __sklearn_clone__(self):
        # an adapter of its own (tuning a clone's target or preprocessing leaves
        # this one alone) around the same network, never copied (an ONNX session
        # cannot be)
        return type(self)(**self.get_params(deep=False))

    def __sklearn_is_fitted__(self):
        return True

    def __copy__(self):
        # a shallow copy (bind) shares the network, an ONNX session included
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __getstate__(self):
        # an ONNX session cannot be pickled: keep what re-creates it
        state = self.__dict__.copy()
        if self.runtime == "onnx":
            state["model"] = recipe_of(state["model"])
        return state

    def __setstate__(self, state):
        if isinstance(state.get("model"), SessionRecipe):
            state = dict(state, model=state["model"].session())
        self.__dict__.update(state)

    def __repr__(self):
        return f"ImageModel({type(self.model).__name__}, runtime={self.runtime!r})"

    # -- what the model wants -------------------------------------------------------
    def _onnx_input(self):
        return self.model.get_inputs()[0]

    def _onnx_rank(self):
        """Rank of the session's input: 4 (images) or 2 (flattened images)."""
        return onnx_rank(self.model)

    def _onnx_batch(self):
        """The batch size an ONNX session fixes, or None when it is free."""
        return onnx_fixed_batch(self.model) if self.runtime == "onnx" else None

    def model_layout(self):
        """Return the layout of the model's input.

        Returns
        -------
        layout : {"NCHW", "NHWC"}
            ``layout``, or what "auto" reads from the model.
        """
        if self.layout != "auto":
            return self.layout
        if self.runtime == "torch":
            return "NCHW"
        if self.runtime == "onnx":
            shape = list(self._onnx_input().shape)
            if len(shape) == 2:
                return "NHWC"  # flattened as skdecomp flattens: row, column, channel
            if len(shape) == 4:
                first, last = shape[1], shape[3]
                if isinstance(last, int) and last in (1, 3, 4) and not (
                    isinstance(first, int) and first in (1, 3, 4)
                ):
                    return "NHWC"
            return "NCHW"
        return "NHWC"

    def model_input_shape(self):
        """Return the image shape the model needs.

        Returns
        -------
        shape : tuple
            (H, W, C), with None for the sizes the model leaves free.
        """
        if self.image_shape is not None:
            shape = tuple(int(s) for s in self.image_shape)
            return shape if len(shape) == 3 else shape + (None,)
        if self.runtime == "onnx":
            shape = list(self._onnx_input().shape)
            if len(shape) == 4:
                dims = [s if isinstance(s, int) and s > 0 else None for s in shape[1:]]
                if self.model_layout() == "NCHW":
                    return dims[1], dims[2], dims[0]
                return tuple(dims)
        if self.runtime == "torch":
            return None, None, self._torch_in_channels()
        return None, None, None

    def _torch_in_channels(self):
        torch = sys.modules["torch"]
        for module in self.model.modules():
            if isinstance(module, torch.nn.Conv2d):
                return int(module.in_channels)
            if isinstance(module, torch.nn.Linear):
                return None
        return None

    def _torch_device(self):
        torch = sys.modules["torch"]
        meta = next((name for name, t in chain(self.model.named_parameters(),
                                                self.model.named_buffers()) if t.is_meta),
                    None)
        if meta is not None:
            raise ValueError(
                f"The module's parameters are on the meta device (e.g. {meta!r}), "
                "where they hold no values; load its weights first, e.g. "
                "model.to_empty(device='cpu') then model.load_state_dict(state), or "
                "build the module on the CPU."
            )
        param = next(iter(self.model.parameters()), None)
        if param is None:
            return torch.device("cpu"), torch.float32
        device = param.device
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(
                f"The module's weights are on {device}, but no GPU is available; "
                "move it to the CPU with model.cpu() (or run where the GPU is)."
            )
        return device, param.dtype if param.is_floating_point() else torch.float32

    def check_images(self, image_shape):
        """Refuse images of a shape the model cannot take.

        Parameters
        ----------
        image_shape : tuple of int
            (H, W) or (H, W, C) of the images.
        """
        shape = tuple(int(s) for s in image_shape)
        channels = 1 if len(shape) == 2 else shape[2]
        self._check_pair_channels(channels)
        self._check_flat_size(shape)
        H, W, C = self.model_input_shape()
        if C is not None and channels != C:
            kind = {1: "grey", 3: "RGB", 4: "RGBA"}
            raise ValueError(
                f"The images have {channels} channel(s) ({kind.get(channels, '')} "
                f"images of shape {shape}) but the model takes {C} "
                f"({kind.get(C, '')}); convert them, e.g. "
                + ("np.repeat(images[..., None], 3, axis=-1) for grey images."
                   if channels == 1 else "images[..., :3] to drop an alpha channel.")
            )
        if (H is not None and H != shape[0]) or (W is not None and W != shape[1]):
            raise ValueError(
                f"The images are {shape[0]}x{shape[1]} pixels but the model takes "
                f"{H}x{W}; resize or crop them to that size first."
            )

    def _check_flat_size(self, shape):
        """Refuse images whose size differs from a flattened ONNX input's."""
        if self.runtime == "onnx":
            check_flat_size(self.model, shape)

    def bind(self, image_shape, n_threads=None):
        """Return this model on flattened rows of images of ``image_shape``.

        Parameters
        ----------
        image_shape : tuple of int
            (H, W) or (H, W, C) of the rows' images.
        n_threads : int or None, default=None
            Threads of the runtime, when ``n_threads`` was left at None.

        Returns
        -------
        model : ImageModel
            A shallow copy that also takes rows of ``H * W * C`` values.
        """
        self.check_images(image_shape)
        bound = copy.copy(self)
        bound._rows_shape = tuple(int(s) for s in image_shape)
        if bound.n_threads is None and n_threads is not None:
            bound.n_threads = int(n_threads)
        return bound

    def batch_rows(self, n_values):
        """Return the number of images in one forward pass.

        Parameters
        ----------
        n_values : int
            Values per image (H * W * C).

        Returns
        -------
        n_images : int
            ``batch_memory`` over the bytes of one float32 image, at least 1.
        """
        if self.batch_memory is not None:
            budget = self._batch_bytes()
        elif self.runtime == "torch" and self._torch_device()[0].type != "cpu":
            budget = DEFAULT_GPU_BATCH_MEMORY
        else:
            budget = DEFAULT_BATCH_MEMORY
        rows = max(1, budget // (4 * max(1, int(n_values))))
        fixed = self._onnx_batch()
        if fixed is not None:
            # a session with a fixed batch size: whole batches of it
            rows = max(fixed, rows // fixed * fixed)
        return rows

    def output_names(self, n_outputs):
        """Return the names of the explained outputs.

        Parameters
        ----------
        n_outputs : int
            Number of the model's outputs (classes).

        Returns
        -------
        names : list of str
            The class names of the outputs kept by ``target`` where
            ``class_names`` is given, else their indices.
        """
        index = self._target_index(n_outputs)
        names = self.class_names
        idx = range(n_outputs) if index is None else index
        if names is not None and len(names) > max(idx, default=-1):
            return [str(names[i]) for i in idx]
        return [str(i) for i in idx]

    def explained_names(self, columns=None):
        """Return the names of columns of :meth:`predict`, once it has been called.

        Parameters
        ----------
        columns : sequence of int or None, default=None
            Columns of :meth:`predict`; None takes all.

        Returns
        -------
        names : list of str
            Their class names (see :meth:`output_names`).
        """
        names = self.output_names(getattr(self, "n_classes_", 0))
        return names if columns is None else [names[int(c)] for c in columns]

    def _target_index(self, n_outputs):
        items = self._target_items()
        if items is None:
            return None
        out = []
        for t in items:
            if isinstance(t, str):
                names = [] if self.class_names is None else [str(c) for c in self.class_names]
                if t not in names:
                    raise ValueError(
                        f"target={t!r} is not a class name of the model; give a class "
                        "index or one of class_names."
                    )
                t = names.index(t)
            if not isinstance(t, Integral) or isinstance(t, bool) or not 0 <= t < n_outputs:
                raise ValueError(
                    f"target={t!r} is out of range: the model has {n_outputs} "
                    f"outputs; give a class index in [0, {n_outputs - 1}]"
                    + (" or a name of class_names." if self.class_names is not None else ".")
                )
            out.append(int(t))
        return out

    # -- calls ------------------------------------------------------------------------
    def _as_images(self, X):
        """float32 images (n, H, W, C) from images or bound rows."""
        X = np.asarray(X)
        if X.ndim == 2 and self._rows_shape is not None:
            X = X.reshape(X.shape[0], *self._rows_shape)
        if X.ndim not in (3, 4):
            raise ValueError(
                f"ImageModel takes images of shape (n, H, W[, C]); got an array of "
                f"shape {X.shape}."
            )
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise ValueError(f"The images hold values of dtype {X.dtype}; give numbers.")
        if X.ndim == 3:
            X = X[..., None]
        return X

    def _check_scale(self, images):
        """Warn once when the images' scale is not the one the preprocessing expects.

        Float images in 0..1 with a (mean, std) made for 0..255; images above
        1.5 with a (mean, std) made for 0..1; and a network (torch or ONNX)
        given pixels above 1.5 with no preprocessing said.
        """
        if (getattr(self, "_scale_warned", False) or callable(self.preprocess)
                or not images.size):
            return
        top = float(np.max(images))
        message = None
        if self.preprocess is None:
            if self.runtime in ("torch", "onnx") and top > 1.5:
                message = (
                    f"{type(self.model).__name__} is given pixels up to {top:.4g} as they "
                    "are: no preprocess was said. Networks trained on photos expect "
                    "them scaled: pass ImageModel(model, preprocess=(mean, std)) in the "
                    "images' scale, e.g. (127.0, 128.0) for EfficientNet-Lite or "
                    "((123.7, 116.3, 103.5), (58.4, 57.1, 57.4)) for torchvision's "
                    "ImageNet models on 0..255 pixels, or a callable; or "
                    "preprocess='none' when the network scales its input itself."
                )
        elif self._pair():
            mean, _ = self._mean_std()
            if images.dtype.kind == "f" and float(np.max(mean)) > 1.0 and 0.0 < top <= 1.0:
                message = (
                    f"The images are floats from 0 to {top:.3g}, but preprocess="
                    f"{self.preprocess!r} expects pixels from 0 to 255: multiply the "
                    "images by 255 (or pass them as uint8), or the model sees nearly "
                    "constant images and every explanation is meaningless."
                )
            elif float(np.max(np.abs(mean))) <= 1.0 and top > 1.5:
                message = (
                    f"The images have values up to {top:.4g}, but preprocess="
                    f"{self.preprocess!r} is made for pixels from 0 to 1: divide the "
                    "images by 255, or give the mean and std times 255, or the model "
                    "sees values hundreds of times too large."
                )
        if message is not None:
            self._scale_warned = True
            warnings.warn(message, UserWarning, stacklevel=3)

    def _prepare(self, batch):
        """float32 images in the model's layout, preprocessed (numpy)."""
        x = np.asarray(batch, dtype=np.float32)
        nchw = self.model_layout() == "NCHW"
        self._check_pair_channels(x.shape[-1])
        if self._pair():
            # (x - mean) / std written once, into the model's layout
            mean, std = self._mean_std()
            if nchw:
                x = x.transpose(0, 3, 1, 2)
                mean, std = mean.reshape(-1, 1, 1), std.reshape(-1, 1, 1)
            out = np.empty(x.shape, dtype=np.float32)
            np.subtract(x, mean, out=out)
            return np.divide(out, std, out=out)
        if callable(self.preprocess):
            x = np.asarray(self.preprocess(x), dtype=np.float32)
        if nchw:
            x = x.transpose(0, 3, 1, 2)
        return np.ascontiguousarray(x, dtype=np.float32)

    @contextmanager
    def _threads(self):
        if self.runtime != "torch" or self.n_threads is None:
            yield
            return
        torch = sys.modules["torch"]
        before = torch.get_num_threads()
        if before != self.n_threads:
            torch.set_num_threads(int(self.n_threads))
        try:
            yield
        finally:
            if before != self.n_threads:
                torch.set_num_threads(before)

    def forward(self, x):
        """Run the network on prepared input.

        Parameters
        ----------
        x : ndarray of float32
            Preprocessed images in the model's layout.

        Returns
        -------
        output : ndarray of shape (n, k)
            The network's output as it returns it.
        """
        if self.runtime == "torch":
            torch = sys.modules["torch"]
            device, dtype = self._torch_device()
            self._check_eval()
            with torch.inference_mode():
                out = self.model(torch.from_numpy(x).to(device=device, dtype=dtype))
            return _tensors_to_numpy(out, torch)
        if self.runtime == "onnx":
            return run_onnx(self.model, x)
        return self.model(x)

    def _check_tensor(self, out):
        if isinstance(out, (tuple, list, dict)):
            raise ValueError(
                f"The model returned a {type(out).__name__}, not one tensor of "
                "outputs; give output= a callable that picks the logits, or wrap the "
                "module so that it returns them."
            )
        return out

    def _explained(self, raw, n_images):
        if isinstance(raw, list) and self.runtime != "torch":
            # a callable's nested list of numbers: one row of outputs per image
            try:
                values = np.asarray(raw)
            except (TypeError, ValueError):
                values = None
            if values is not None and values.dtype.kind in "biuf" and values.ndim <= 2:
                raw = values
        if callable(self.output):
            # the callable picks the explained values, from a tuple or dict too
            raw = self.output(raw)
        raw = np.asarray(self._check_tensor(raw))
        if not np.issubdtype(raw.dtype, np.number) or np.issubdtype(raw.dtype, np.complexfloating):
            raise ValueError(
                f"The model returned values of dtype {raw.dtype}; explanations need "
                "real numbers."
            )
        if raw.ndim == 0 or raw.shape[0] != n_images or raw.ndim > 2:
            raise ValueError(
                f"The model returned an output of shape {raw.shape} for {n_images} "
                "images; it must return one row of outputs per image, shape "
                f"({n_images}, n_classes). Give output= a callable that maps the "
                "model's output to that."
            )
        raw = raw.reshape(n_images, -1).astype(np.float64, copy=False)
        if self.output == "probability":
            if raw.shape[1] < 2:
                raise ValueError(
                    "output='probability' is the softmax over the classes, but the "
                    "model returns one output; use output='logit' (its output as "
                    "it is) or a callable."
                )
            raw = _softmax(raw)
        self.n_classes_ = raw.shape[1]
        index = self._target_index(raw.shape[1])
        return raw if index is None else raw[:, index]

    def predict(self, X):
        """The explained output for a batch of images.

        Parameters
        ----------
        X : array-like of shape (n, H, W[, C]), or (n, H * W * C) when bound
            Images, uint8 or float, in their own value scale.

        Returns
        -------
        y : ndarray of shape (n, n_outputs)
            The explained output (see ``output`` and ``target``), float64.
        """
        images = self._as_images(X)
        self._check_scale(images)
        n = images.shape[0]
        step = self.batch_rows(int(np.prod(images.shape[1:])))
        outs = []
        with self._threads():
            for start in range(0, n, step):
                batch = images[start : start + step]
                outs.append(self._explained(self.forward(self._prepare(batch)), len(batch)))
        if not outs:
            return np.zeros((0, 0))
        return np.concatenate(outs, axis=0)

    # -- gradients ---------------------------------------------------------------------
    @property
    def has_gradients(self):
        """Whether the model gives gradients (a torch module, through autograd)."""
        return self.runtime == "torch"

    def gradients(self, X, outputs=None):
        """Compute the gradients of the explained outputs by the images' values.

        Parameters
        ----------
        X : array-like of shape (n, H, W[, C]), or (n, H * W * C) when bound
            Points at which to take the gradients, in the images' own value
            scale (the preprocessing is differentiated through).
        outputs : sequence of int or None, default=None
            Columns of :meth:`predict` to differentiate; None takes all.

        Returns
        -------
        gradients : ndarray of shape (n, n_outputs, *X.shape[1:])
            The derivative of every output by every input value, float64.
        """
        if not self.has_gradients:
            raise ValueError(
                f"Gradients need a torch module; this model runs on {self.runtime}."
            )
        torch = sys.modules["torch"]
        X = np.asarray(X)
        images = self._as_images(X)
        n = images.shape[0]
        device, dtype = self._torch_device()
        self._check_eval()
        step = self.batch_rows(int(np.prod(images.shape[1:])))
        result = []
        with self._threads(), torch.inference_mode(False), torch.enable_grad():
            for start in range(0, n, step):
                x = torch.tensor(
                    np.asarray(images[start : start + step], dtype=np.float32),
                    device=device, dtype=dtype, requires_grad=True,
                )
                z = x
                if callable(self.preprocess) or self._pair():
                    if callable(self.preprocess):
                        z = self._preprocess_tensor(z)
                    else:
                        self._check_pair_channels(x.shape[-1])
                        mean, std = self._mean_std()
                        z = (z - torch.as_tensor(mean, device=device, dtype=dtype)) / (
                            torch.as_tensor(std, device=device, dtype=dtype))
                if self.model_layout() == "NCHW":
                    z = z.permute(0, 3, 1, 2)
                raw = self.model(z)
                if callable(self.output):
                    raw = self.output(raw)
                raw = self._check_tensor(raw).reshape(raw.shape[0], -1)
                if self.output == "probability":
                    raw = torch.softmax(raw, dim=1)
                self.n_classes_ = int(raw.shape[1])
                index = self._target_index(raw.shape[1])
                if index is not None:
                    raw = raw[:, index]
                cols = range(raw.shape[1]) if outputs is None else list(outputs)
                grads = []
                for o in cols:
                    (g,) = torch.autograd.grad(raw[:, o].sum(), x, retain_graph=True)
                    grads.append(g.detach().double().cpu().numpy())
                result.append(np.stack(grads, axis=1))
        out = np.concatenate(result, axis=0)
        return out.reshape(n, out.shape[1], *X.shape[1:])

    def _preprocess_tensor(self, x):
        """The callable preprocess on a torch tensor, refused when autograd cannot follow it."""
        torch = sys.modules["torch"]
        name = getattr(self.preprocess, "__name__", type(self.preprocess).__name__)
        fix = (
            "Integrated Gradients from autograd need a preprocess written with "
            "operators torch tensors support (e.g. (x - mean) / std, or "
            "preprocess=(mean, std)); or use method_params={'scheme': 'path'} "
            "(model calls only, any preprocess)."
        )
        try:
            z = self.preprocess(x)
        except Exception as exc:
            raise TypeError(
                f"preprocess={name} fails on a torch tensor that requires gradients "
                f"({type(exc).__name__}: {exc}). {fix}"
            ) from exc
        if not (torch.is_tensor(z) and z.requires_grad):
            raise TypeError(
                f"preprocess={name} returns "
                + ("a tensor cut off from autograd" if torch.is_tensor(z)
                   else f"a {type(z).__name__}, not a torch tensor")
                + f", so the gradients cannot go through it. {fix}"
            )
        return z


class ImageFunction:
    """A callable on batches of images, called with flattened rows.

    ``ImageFunction(f, image_shape)(rows)`` is ``f(rows.reshape(-1, *image_shape))``.

    Parameters
    ----------
    function : callable
        ``function(images)`` on images of shape (n, *image_shape).
    image_shape : tuple of int
        (H, W) or (H, W, C).
    """

    def __init__(self, function, image_shape):
        self.function = function
        self.image_shape = tuple(image_shape)

    def __call__(self, rows):
        rows = np.asarray(rows)
        return self.function(rows.reshape(rows.shape[0], *self.image_shape))


def image_dtype(estimator):
    """float32 for an image model (its runtime computes in float32), else float64.

    Hybrid images are built in this dtype, so that a scikit-learn model on
    flattened images keeps its float64 precision.
    """
    inner = getattr(estimator, "estimator", estimator)  # a ResponseFunction's model
    if isinstance(inner, ImageModel) or is_image_runtime(inner):
        return np.float32
    return np.float64


def wrap_runtime(estimator):
    """A torch module or an ONNX session as an :class:`ImageModel` with its defaults.

    Anything else is returned as it is.
    """
    return ImageModel(estimator) if is_image_runtime(estimator) else estimator


def image_model(estimator, image_shape, n_threads=None):
    """The model as seen on flattened rows.

    Estimators (objects with ``predict``, ``predict_proba`` or
    ``decision_function``) receive flattened rows (n, H * W * C); a plain
    callable receives a batch of images of shape (n, *image_shape); a torch
    module, an ONNX session or an :class:`ImageModel` is bound to the shape
    (see :meth:`ImageModel.bind`).

    Parameters
    ----------
    estimator : estimator or callable
        The model.
    image_shape : tuple of int
        (H, W) or (H, W, C).
    n_threads : int or None, default=None
        Threads of an image model's runtime when it does not set them.

    Returns
    -------
    model : estimator
        The estimator itself, or a callable wrapped so that it gets images.
    """
    estimator = wrap_runtime(estimator)
    if isinstance(estimator, ImageModel):
        return estimator.bind(image_shape, n_threads)
    model = as_model(estimator)
    if isinstance(model, FunctionModel) and not isinstance(model.function, ImageFunction):
        return FunctionModel(ImageFunction(model.function, image_shape))
    return model
