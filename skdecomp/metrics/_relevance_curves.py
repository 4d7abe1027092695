"""Pixel-flipping curves of image attributions and the symmetric relevance gain.

Blücher, Vielhaben and Strodthoff (TMLR 2024) score a saliency map with one
imputer and one pixel ordering: the pixels, by decreasing attribution, are
removed from the image (deletion, most relevant first) and inserted into the
imputer's image (insertion, most relevant first). A faithful map makes the
model fall fast under deletion and rise fast under insertion, so the
symmetric relevance gain ``SRG = AUC(insertion) - AUC(deletion)`` is high.
Unlike the other metrics of :mod:`skdecomp.metrics`, higher is better.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from .._compat import HasMethods, Interval, StrOptions, validate_params
from .._explanation import Explanation
from .._game import run_blocks
from .._image import baseline_rows, label_map_from_groups

__all__ = ["relevance_curves", "symmetric_relevance_gain"]

_CONSTRAINTS = {
    "explainer": [HasMethods(["transform", "decompose"])],
    "X": ["array-like"],
    "attributions": ["array-like", None],
    "imputer": [StrOptions({"blur", "zeros", "mean"}),
                Interval(Real, None, None, closed="neither"), "array-like", None],
    "n_steps": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left"), None],
}


# -- inputs -----------------------------------------------------------------------
def _image_game(explainer, name):
    """The explainer's game, checked to explain one output of images."""
    check_is_fitted(explainer)
    game = explainer.game_
    if getattr(game, "image_shape", None) is None:
        raise ValueError(
            f"{name} flips pixels of images, but this explainer was fitted on rows "
            "of a table (it has no image shape); fit the Explainer on images of "
            "shape (n, height, width[, channels]), or use the group metrics "
            "(infidelity, insertion_error, ...) for tables."
        )
    if game.n_outputs != 1:
        raise ValueError(
            f"{name} follows one model output, but the explainer explains "
            f"{game.n_outputs} outputs {list(game.output_names)}; fit it with "
            "target=<the explained output>, e.g. target=0."
        )
    return game


def _pixel_attributions(explainer, X, attributions, n, image_shape):
    """Attributions as (n, H, W) float64 maps over the pixels."""
    H, W = image_shape[:2]
    label_map = None
    if attributions is None:
        attributions = explainer.transform(X)
    elif isinstance(attributions, Explanation):
        label_map = attributions.label_map
        attributions = attributions.values
    try:
        a = np.asarray(attributions, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "attributions must be an array of numbers: (n_images, H, W) per pixel "
            f"or (n_images, n_groups) per group of the explainer ({exc})."
        ) from exc
    K = explainer.n_groups_
    expected = (
        f"expected ({n}, {H}, {W}), one value per pixel, or ({n}, {K}), one per "
        "group of the explainer (spread evenly over the group's pixels)"
    )
    if a.ndim == 2 and a.shape == (n, K):
        if label_map is None:
            label_map = label_map_from_groups(explainer.groups_, image_shape)
        elif label_map.shape != (H, W):
            raise ValueError(
                f"attributions explain images of shape {label_map.shape}, but the "
                f"images are {(H, W)}; pass the explanation of the images X."
            )
        counts = np.bincount(label_map.ravel(), minlength=K)
        a = (a / counts[None, :])[:, label_map]
    elif a.ndim == 3 and a.shape == (n, H, W):
        a = a.copy()
    elif a.ndim == 4 and a.shape[:3] == (n, H, W):
        raise ValueError(
            f"attributions have shape {a.shape}: one value per channel, or several "
            f"outputs; {expected}. Sum the channels (attributions.sum(axis=-1)) or "
            "select the explained output."
        )
    else:
        raise ValueError(f"attributions have shape {a.shape}; {expected}.")
    if not np.all(np.isfinite(a)):
        bad = np.flatnonzero(~np.isfinite(a.reshape(n, -1)).all(axis=1))
        raise ValueError(
            f"attributions contain NaN or infinity (images {bad[:10].tolist()}); "
            "the pixels are ordered by their attributions, which must be finite."
        )
    return a


def _imputer_rows(explainer, game, rows, imputer, image_shape):
    """The values that replace removed pixels: (1 or n_images, n_block, d).

    ``n_block`` is the number of background rows (averaged over, as the game
    averages) for ``imputer=None``, else 1.
    """
    n, d = rows.shape
    dtype = rows.dtype
    if imputer is None:
        if explainer.imputer_ != "marginal":
            raise ValueError(
                f"imputer=None replaces pixels by the explainer's background images, "
                f"which its {explainer.imputer_!r} imputation does not use; pass "
                "imputer='zeros', 'blur', 'mean', a number or an image."
            )
        bg = np.asarray(game.background, dtype=dtype)
        return bg[None, :, :]
    if isinstance(imputer, str):
        reference = None
        if imputer == "mean":
            bg = np.asarray(game.background, dtype=np.float64)
            if bg.shape[0] >= 2:
                reference = bg
            elif getattr(explainer, "baseline", None) == "mean":
                return bg[None, :1, :].astype(dtype)  # the mean image itself
            else:
                raise ValueError(
                    "imputer='mean' is the mean image of a reference set, as for the "
                    "explainer's baseline='mean': its background images. This "
                    "explainer has one baseline image and no reference set; pass "
                    "the mean image itself, imputer=reference.mean(axis=0)."
                )
        out = baseline_rows(imputer, rows, image_shape, reference=reference)
        return np.asarray(out[:1] if imputer != "blur" else out, dtype=dtype)[:, None, :]
    if isinstance(imputer, Real):
        value = float(imputer)
        if not np.isfinite(value):
            raise ValueError(f"imputer={imputer!r}: give a finite number.")
        return np.full((1, 1, d), value, dtype=dtype)
    arr = np.asarray(imputer)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(
            f"imputer holds values of dtype {arr.dtype}; give 'zeros', 'blur', "
            "'mean', a number, or an image of numbers."
        )
    arr = arr.astype(np.float64)
    shape = tuple(image_shape)
    if len(shape) == 3 and arr.shape == shape[:2]:
        arr = np.repeat(arr[:, :, None], shape[2], axis=2)  # the same in all channels
    if arr.shape not in (shape, (d,)):
        grey = "" if len(shape) == 2 else f", or {shape[:2]} for the same value in all channels"
        raise ValueError(
            f"imputer has shape {arr.shape}, but the images have shape {shape}; give "
            f"one image of that shape{grey}."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("imputer contains NaN or infinity; give a finite image.")
    return np.asarray(baseline_rows(arr, rows[:1], shape), dtype=dtype)[:, None, :]


# -- the hybrid images ------------------------------------------------------------------
class _CurveHybrids:
    """The hybrid images of the deletion and insertion curves; picklable.

    Block ``p`` is image ``i = p // (2 T)`` at ``j = p % (2 T)``: deletion
    step ``j`` for ``j < T``, insertion step ``j - T`` otherwise. At step t
    the ``k[t]`` pixels of lowest rank (highest attribution) are taken from
    the imputer (deletion) or from the image (insertion); one row per row of
    the imputer.
    """

    def __init__(self, rows, imputer, rank, k, n_channels):
        self.rows, self.imputer, self.rank = rows, imputer, rank
        self.k, self.n_channels = k, n_channels
        self.n_steps = len(k) - 1

    def where(self, pairs):
        T = self.n_steps
        image, j = pairs // (2 * T), pairs % (2 * T)
        deletion = j < T
        return image, deletion, np.where(deletion, j, j - T)

    def __call__(self, pairs):
        image, deletion, t = self.where(np.asarray(pairs))
        first = self.rank[image] < self.k[t][:, None]  # (m, P): moved so far
        from_x = np.where(deletion[:, None], ~first, first)
        from_x = np.repeat(from_x, self.n_channels, axis=1)[:, None, :]
        # one imputer image for all (broadcast), or one per explained image
        imp = self.imputer[image] if self.imputer.shape[0] > 1 else self.imputer
        out = np.where(from_x, self.rows[image][:, None, :], imp)
        return out.reshape(-1, self.rows.shape[1])


def _trapezoid(y, n_steps):
    """Area under curves sampled at t / n_steps, t = 0..n_steps, by the trapezoid rule."""
    return (y[:, :-1] + y[:, 1:]).sum(axis=1) / (2.0 * n_steps)


def _curves(explainer, X, attributions, imputer, n_steps, batch_size, name):
    game = _image_game(explainer, name)
    image_shape = tuple(game.image_shape)
    rows = game.check_X(X)
    n, d = rows.shape
    H, W = image_shape[:2]
    P = H * W
    C = d // P
    phi = _pixel_attributions(explainer, X, attributions, n, image_shape)
    imp = _imputer_rows(explainer, game, rows, imputer, image_shape)
    # pixels by decreasing attribution; ties in pixel order (row-major)
    order = np.argsort(-phi.reshape(n, P), axis=1, kind="stable")
    rank = np.empty((n, P), dtype=np.int64)
    np.put_along_axis(rank, order, np.arange(P, dtype=np.int64)[None, :], axis=1)
    k = np.round(np.arange(n_steps + 1) * P / n_steps).astype(np.int64)
    make = _CurveHybrids(rows, imp, rank, k, C)

    def describe(pair, row):
        (i,), (deleting,), (t,) = make.where(np.array([pair]))
        curve = "deletion" if deleting else "insertion"
        return (f"the {curve} image of image {i} at step {t} of {n_steps} "
                f"({k[t]} of {P} pixels moved), imputer row {row}")

    size = game.batch_size if batch_size is None else int(batch_size)
    out = run_blocks(game.response, make, n * 2 * n_steps, imp.shape[1],
                     batch_size=size, n_jobs=game.n_jobs, describe=describe)
    out = out[:, 0].reshape(n, 2, n_steps)
    # the last step of one curve is the first of the other
    deletion = np.concatenate([out[:, 0], out[:, 1, :1]], axis=1)
    insertion = np.concatenate([out[:, 1], out[:, 0, :1]], axis=1)
    deletion_auc = _trapezoid(deletion, n_steps)
    insertion_auc = _trapezoid(insertion, n_steps)
    return Bunch(
        fractions=np.arange(n_steps + 1) / n_steps,
        deletion=deletion,
        insertion=insertion,
        deletion_auc=deletion_auc,
        insertion_auc=insertion_auc,
        srg=insertion_auc - deletion_auc,
    )


_DOC = """
    Parameters
    ----------
    explainer : Explainer
        An :class:`~skdecomp.Explainer` fitted on images, explaining one
        model output (``target=``); its model is called through its game,
        on the explained output's own scale (no softmax added).
    X : array-like of shape (n_images, H, W) or (n_images, H, W, C)
        The explained images, uint8 or float, as the explainer takes them.
    attributions : Explanation or array-like, default=None
        An :class:`~skdecomp.Explanation` of the images X, an array
        (n_images, H, W) of one value per pixel, or (n_images, n_groups) of
        one value per group of the explainer, spread evenly over its pixels
        (as :meth:`~skdecomp.Explanation.to_image`). None explains X with
        ``explainer.transform(X)``.
    imputer : {{"zeros", "blur", "mean"}}, float, array-like or None, default=None
        What a removed pixel becomes, in all its channels. None: the
        explainer's own baseline image (its background images, averaged
        over as its game averages them); "zeros": 0; "blur": each image
        blurred by a Gaussian of standard deviation ``max(H, W) / 8``
        pixels; "mean": the mean of the explainer's background images (or
        its ``baseline="mean"`` image); a number: that constant; an array
        of the shape of one image (or (H, W), the same in every channel):
        that image. In the images' own value scale.
    n_steps : int, default=32
        Points of each curve after the first: at step t = 0..n_steps,
        ``round(t * n_pixels / n_steps)`` pixels are moved (halves rounded
        to even).
    batch_size : int or None, default=None
        Largest number of images per model call; None uses the explainer's
        (``batch_size``, or its image model's batch). The hybrid images are
        built one batch at a time.

    Returns
    -------
    result : Bunch
        ``fractions`` (n_steps + 1,): t / n_steps, the fraction of the
        pixels moved; ``deletion`` and ``insertion`` (n_images, n_steps +
        1): the model output along each curve, ``deletion[:, 0] = f(x)``
        and ``insertion[:, 0]`` the output at the imputer's image;
        ``deletion_auc``, ``insertion_auc`` and ``srg = insertion_auc -
        deletion_auc`` (n_images,), by the trapezoid rule over the
        fractions.{extra}

    Notes
    -----
    The pixels are ordered by decreasing attribution (a stable sort: ties
    in row-major pixel order), once per image, and both curves follow that
    order: the deletion image at step t is x with the first pixels replaced
    by the imputer's, the insertion image the imputer's with the first
    pixels of x. The last point of each curve is the first of the other.
    The insertion image at a fraction s is the deletion image at 1 - s of
    the least relevant pixels first, so ``insertion_auc`` is the paper's
    LIF area and ``deletion_auc`` its MIF area (ties and halves aside).

    References
    ----------
    F. Blücher, J. Vielhaben and N. Strodthoff. "Decoupling pixel flipping
    and occlusion strategy for consistent XAI benchmarks". TMLR 2024.

    S. Bach, A. Binder, G. Montavon, F. Klauschen, K.-R. Müller and W.
    Samek. "On pixel-wise explanations for non-linear classifier decisions
    by layer-wise relevance propagation". PLOS ONE 2015.
"""


def relevance_curves(explainer, X, attributions=None, *, imputer=None, n_steps=32,
                     batch_size=None):
    return _curves(explainer, X, attributions, imputer, n_steps, batch_size,
                   "relevance_curves")


def symmetric_relevance_gain(explainer, X, attributions=None, *, imputer=None,
                             n_steps=32, batch_size=None):
    result = _curves(explainer, X, attributions, imputer, n_steps, batch_size,
                     "symmetric_relevance_gain")
    result.update(score=float(result.srg.mean()), scores=result.srg.copy())
    return result


relevance_curves.__doc__ = """Pixel-flipping deletion and insertion curves of image attributions.

    Most relevant pixels first, one imputer for both curves (Blücher et al.,
    2024). A faithful map makes the deletion curve fall fast and the
    insertion curve rise fast; ``srg``, the symmetric relevance gain, is
    higher for better maps (unlike the unfaithfulness scores of this
    module, lower better).
""" + _DOC.format(extra="")

symmetric_relevance_gain.__doc__ = """Symmetric relevance gain of saliency maps; higher is better.

    ``SRG = AUC(insertion) - AUC(deletion)`` of the pixel-flipping curves
    of :func:`~skdecomp.metrics.relevance_curves`, most relevant pixels
    first, with one imputer for both (Blücher et al., 2024). The curves
    are in the units of the model's output; a map that orders the pixels
    well scores high, a random map near 0 in expectation. Unlike the other metrics of this
    module, which are unfaithfulness scores (lower is better, 0 perfect),
    higher SRG is better.
""" + _DOC.format(extra="""
        ``score``: the mean SRG over the images, and ``scores``: the SRG of
        each image.""")

relevance_curves = validate_params(_CONSTRAINTS, prefer_skip_nested_validation=True)(
    relevance_curves)
symmetric_relevance_gain = validate_params(
    _CONSTRAINTS, prefer_skip_nested_validation=True)(symmetric_relevance_gain)
