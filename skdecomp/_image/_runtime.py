"""The runtimes of image models as estimators hold them.

What kind a model is (torch module, ONNX Runtime session or callable);
``clone`` sharing the network; running an ONNX session on images, whose
input may fix the batch size (the batches are padded to it) or take the
images flattened (they are reshaped to it); and pickling or deep-copying a
session, which ONNX Runtime cannot do: :class:`SessionRecipe` keeps what
re-creates it. torch and onnxruntime are never imported here to detect a
model, and onnxruntime only to re-create a session.
"""

# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import weakref

import numpy as np

__all__ = [
    "SessionRecipe", "SharedRuntimeCloneMixin", "check_flat_size", "is_image_runtime",
    "onnx_fixed_batch", "onnx_rank", "recipe_of", "run_onnx", "runtime_of",
]


def _is_torch_module(model):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def _is_onnx_session(model):
    ort = sys.modules.get("onnxruntime")
    return ort is not None and isinstance(model, ort.InferenceSession)


def runtime_of(model):
    """``"torch"``, ``"onnx"`` or ``"callable"``: the kind of an image model.

    Parameters
    ----------
    model : object
        A ``torch.nn.Module``, an ``onnxruntime.InferenceSession`` or a
        callable.

    Returns
    -------
    runtime : str or None
        None for anything else.
    """
    if _is_torch_module(model):
        return "torch"
    if _is_onnx_session(model):
        return "onnx"
    if callable(model):
        return "callable"
    return None


def is_image_runtime(model):
    """Whether ``model`` is a torch module or an ONNX Runtime session."""
    return _is_torch_module(model) or _is_onnx_session(model)


_ONNX_DTYPES = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(double)": np.float64,
}


#: The session options a copy of a session keeps (those ONNX Runtime lets us read).
_SESSION_OPTIONS = (
    "intra_op_num_threads", "inter_op_num_threads", "execution_mode", "execution_order",
    "graph_optimization_level", "enable_cpu_mem_arena", "enable_mem_pattern",
    "enable_mem_reuse", "use_deterministic_compute", "log_severity_level",
    "log_verbosity_level", "logid",
)


class SessionRecipe:
    """What re-creates an ONNX Runtime session, which cannot be pickled.

    The model it was built from (its bytes, read from its file when it was
    built from a path), its providers with their options and the session
    options that can be read. An unpickled recipe builds its session once,
    so that the objects that shared a session share its copy.
    """

    def __init__(self, session):
        self.path = getattr(session, "_model_path", None)
        self.model_bytes = getattr(session, "_model_bytes", None)
        options = session.get_session_options()
        self.options = {
            name: getattr(options, name) for name in _SESSION_OPTIONS if hasattr(options, name)
        }
        provider_options = session.get_provider_options()
        self.providers = [
            (name, dict(provider_options.get(name, {}))) for name in session.get_providers()
        ]

    def __getstate__(self):
        state = {name: getattr(self, name) for name in ("path", "model_bytes", "options",
                                                         "providers")}
        if state["model_bytes"] is None:
            fix = (
                "build the session from the model's bytes instead "
                "(onnxruntime.InferenceSession(open(path, 'rb').read(), ...)), or keep "
                "the file in place"
            )
            if self.path is None:
                raise TypeError(
                    "This ONNX Runtime session cannot be pickled or copied: skdecomp "
                    "re-creates a session from the model file or bytes it was built "
                    f"from, and neither can be read from this one; {fix}."
                )
            try:
                with open(self.path, "rb") as file:
                    state["model_bytes"] = file.read()
            except OSError as exc:
                raise TypeError(
                    f"This ONNX Runtime session cannot be pickled or copied: the file "
                    f"it was built from, {self.path}, cannot be read ({exc}); {fix}."
                ) from None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._session = None

    def session(self):
        """The session: built once from the model's bytes (or its file)."""
        if getattr(self, "_session", None) is not None:
            return self._session
        import onnxruntime as ort

        options = ort.SessionOptions()
        for name, value in self.options.items():
            try:
                setattr(options, name, value)
            except (TypeError, AttributeError):
                pass  # an option this version of onnxruntime sets otherwise
        try:
            session = ort.InferenceSession(self.model_bytes, options,
                                           providers=self.providers)
        except Exception:
            # a model with its weights in external files loads from its path only
            if self.path is None or not os.path.isfile(self.path):
                raise
            session = ort.InferenceSession(self.path, options, providers=self.providers)
        self._session = session
        return session


#: The recipe of every session pickled or copied, so that the objects sharing a
#: session pickle one recipe (and share one session once unpickled).
_RECIPES = weakref.WeakKeyDictionary()


def recipe_of(session):
    """The one recipe of ``session`` (see :class:`SessionRecipe`)."""
    recipe = _RECIPES.get(session)
    if recipe is None:
        recipe = _RECIPES[session] = SessionRecipe(session)
    return recipe


def onnx_rank(session):
    """Rank of the session's input: 4 (images) or 2 (flattened images), else refused."""
    inp = session.get_inputs()[0]
    rank = len(inp.shape)
    if rank not in (2, 4):
        raise ValueError(
            f"The ONNX model's input {inp.name!r} has shape {list(inp.shape)}; "
            "ImageModel feeds images as (n, C, H, W) or (n, H, W, C), or "
            "flattened as (n, H * W * C). Give ImageModel a callable that "
            "reshapes the images and runs the session."
        )
    return rank


def onnx_fixed_batch(session):
    """The batch size the session's input fixes, or None when it is free."""
    first = session.get_inputs()[0].shape[0]
    return first if isinstance(first, int) and first > 0 else None


def check_flat_size(session, shape):
    """Refuse images of ``shape`` whose size differs from a flattened input's."""
    if onnx_rank(session) != 2:
        return
    inp = session.get_inputs()[0]
    size = inp.shape[1]
    values = int(np.prod(shape))
    if isinstance(size, int) and size > 0 and size != values:
        raise ValueError(
            f"The images have shape {tuple(shape)} ({values} values) but the ONNX "
            f"model's input {inp.name!r} has shape {list(inp.shape)}, flattened "
            f"images of {size} values; resize or crop the images to that many "
            "values (e.g. H x W x C of the images the model was trained on)."
        )


def run_onnx(session, x):
    """The session's first output on prepared images ``x`` (n, ...) in its layout.

    Flattened for a 2-D input; sent in whole batches of a fixed batch size,
    the last one padded with copies of its last image whose outputs are
    dropped.
    """
    inp = session.get_inputs()[0]
    x = x.astype(_ONNX_DTYPES.get(inp.type, np.float32), copy=False)
    n = x.shape[0]
    if onnx_rank(session) == 2:
        check_flat_size(session, x.shape[1:])
        x = x.reshape(n, -1)

    def run(part):
        return np.asarray(session.run(None, {inp.name: part})[0])

    fixed = onnx_fixed_batch(session)
    if fixed is None or fixed == n:
        return run(x)
    outs = []
    for start in range(0, n, fixed):
        part = x[start : start + fixed]
        m = part.shape[0]
        if m < fixed:
            part = np.concatenate([part, np.repeat(part[-1:], fixed - m, axis=0)])
        outs.append(run(part)[:m])
    return np.concatenate(outs, axis=0)


class SharedRuntimeCloneMixin:
    """``clone`` shares a torch module or an ONNX session instead of copying it.

    scikit-learn's ``clone`` deep-copies parameters that are not estimators:
    an ONNX session cannot be copied, and a copy of a network's weights is
    waste. Estimators whose ``estimator`` may be one share it. ``pickle`` and
    ``copy.deepcopy`` re-create an ONNX session held as an attribute (see
    :class:`SessionRecipe`); ``copy.copy`` shares it.
    """

    def __sklearn_clone__(self):
        from sklearn.base import _clone_parametrized, clone

        if not is_image_runtime(getattr(self, "estimator", None)):
            return _clone_parametrized(self)
        params = {
            name: value if name == "estimator" else clone(value, safe=False)
            for name, value in self.get_params(deep=False).items()
        }
        return type(self)(**params)

    # pickle and copy.deepcopy: an ONNX session among the attributes becomes
    # what re-creates it (an ImageModel does the same for its own)
    def __copy__(self):
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __getstate__(self):
        state = super().__getstate__()
        if not isinstance(state, dict):
            return state
        return {name: recipe_of(value) if _is_onnx_session(value) else value
                for name, value in state.items()}

    def __setstate__(self, state):
        state = {name: value.session() if isinstance(value, SessionRecipe) else value
                 for name, value in state.items()}
        super().__setstate__(state)
