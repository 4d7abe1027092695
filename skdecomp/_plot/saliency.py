"""Saliency maps over groups of pixels."""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np

from .._hierarchy import Hierarchy
from .._image import ImageModel, blur_images, groups_from_label_map, is_image_runtime
from ._base import (
    check_drawable,
    check_matplotlib_support,
    explain_rows,
    method_color,
    panel_axes,
)

__all__ = ["SaliencyDisplay", "merge_tree_hierarchy", "patch_label_map"]


def patch_label_map(shape, patch_size):
    """Label map of a regular grid of square patches.

    Parameters
    ----------
    shape : tuple of int
        (height, width) of the image.
    patch_size : int or tuple of int
        Height and width of a patch; border patches may be smaller.

    Returns
    -------
    label_map : ndarray of shape (height, width)
        Patch index of every pixel, row by row.
    """
    h, w = int(shape[0]), int(shape[1])
    ph, pw = (patch_size, patch_size) if np.isscalar(patch_size) else patch_size
    rows = np.arange(h) // int(ph)
    cols = np.arange(w) // int(pw)
    n_cols = int(np.ceil(w / int(pw)))
    return rows[:, None] * n_cols + cols[None, :]


def _boundary_segments(label_map):
    """Pixel-edge segments between neighbouring pixels of different groups."""
    lm = np.asarray(label_map)
    segs = []
    for i, j in zip(*np.nonzero(lm[:, 1:] != lm[:, :-1])):
        segs.append([(j + 0.5, i - 0.5), (j + 0.5, i + 0.5)])
    for i, j in zip(*np.nonzero(lm[1:, :] != lm[:-1, :])):
        segs.append([(j - 0.5, i + 0.5), (j + 0.5, i + 0.5)])
    return segs


def merge_tree_hierarchy(grouper, image=0):
    """The merge tree of a fitted image grouper as a :class:`Hierarchy`.

    Parameters
    ----------
    grouper : AdaptiveGrouper
        Fitted on images; its ``merges_`` and ``initial_label_maps_`` are read.
    image : int, default=0
        Index of the image among those the grouper was fitted on.

    Returns
    -------
    hierarchy : Hierarchy
        Players are the initial groups (the labels of
        ``initial_label_maps_[image]``), internal nodes the merges in order;
        the groups left at the end are joined at the root.
    label_map : ndarray of shape (H, W)
        The initial label map of the image.
    """
    if not hasattr(grouper, "merges_") or not hasattr(grouper, "initial_label_maps_"):
        raise ValueError(
            f"{type(grouper).__name__} keeps no merge tree of images; fit an "
            "AdaptiveGrouper on the image (e.g. AdaptiveGrouper(model, "
            "initial_groups=PatchGrouper(4)).fit(image[None])), or pass a Hierarchy."
        )
    label_map = np.asarray(grouper.initial_label_maps_[image])
    K = int(label_map.max()) + 1
    top = list(range(K))  # the node holding every initial group
    children = []
    for a, b in np.asarray(grouper.merges_[image]).reshape(-1, 2):
        pair = sorted({top[int(a)], top[int(b)]})
        if len(pair) < 2:
            continue
        children.append(pair)
        new = K + len(children) - 1
        top = [new if t in pair else t for t in top]
    rest = sorted(set(top))
    if len(rest) > 1:
        children.append(rest)
    return Hierarchy(K, children, player_names=[f"g{k}" for k in range(K)]), label_map


def _default_levels(hierarchy, most=6):
    """The cuts of a hierarchy, finest first, without the root (at most ``most``)."""
    sizes = [s for s in hierarchy.cut_sizes()[::-1] if s > 1 or hierarchy.n_players == 1]
    if len(sizes) > most:
        sizes = [sizes[i] for i in np.unique(np.linspace(0, len(sizes) - 1, most).round()
                                             .astype(int))]
    return sizes


def _check_label_map(label_map, image_shape):
    lm = np.asarray(label_map)
    if lm.shape != tuple(image_shape[:2]):
        raise ValueError(
            f"label_map has shape {lm.shape}; it must match the image, "
            f"{image_shape[:2]}."
        )
    if not np.issubdtype(lm.dtype, np.integer):
        raise ValueError(
            f"label_map must hold integer group ids, got values of dtype {lm.dtype}; "
            "pass label_map.astype(int), or a grouper such as PatchGrouper(8)."
        )
    uniq = np.unique(lm)
    if uniq[0] < 0 or not np.array_equal(uniq, np.arange(uniq.size)):
        shown = ", ".join(str(v) for v in uniq[:6]) + (", ..." if uniq.size > 6 else "")
        raise ValueError(
            f"label_map holds the ids {shown}; it must use every group id 0..K-1 "
            f"(here 0..{uniq.size - 1}). Renumber it: np.unique(label_map, "
            "return_inverse=True)[1].reshape(label_map.shape)."
        )
    return lm


def _check_levels(levels):
    """None, "auto" or a list of numbers of groups, from what ``levels`` accepts."""
    if levels is None or (isinstance(levels, str) and levels == "auto"):
        return levels
    items = [levels] if np.ndim(levels) == 0 else list(np.ravel(np.asarray(levels,
                                                                          dtype=object)))
    out = []
    for n in items:
        whole = isinstance(n, Integral) or (isinstance(n, Real) and float(n).is_integer())
        if isinstance(n, (bool, np.bool_)) or not whole or n < 1:
            raise ValueError(
                f"levels holds {n!r}; a level is a number of groups, a whole number of "
                "at least 1: give levels=3, a list such as levels=[8, 4, 2], or "
                "'auto'."
            )
        out.append(int(n))
    if not out:
        raise ValueError("levels is empty; give at least one level.")
    return out


def _as_image(image):
    """One image as an array of numbers, its dtype kept."""
    img = np.asarray(image)
    if img.ndim not in (2, 3):
        extra = (" For one image of a batch, pass images[0]." if img.ndim == 4
                 else "")
        raise ValueError(
            f"image has shape {img.shape}; give one image of shape (height, width) "
            f"or (height, width, channels).{extra}"
        )
    if not (np.issubdtype(img.dtype, np.number) or img.dtype == bool):
        raise TypeError(f"image must hold numbers, got values of dtype {img.dtype}; "
                        "give its pixels as numbers (uint8 0..255, or floats).")
    return img


def _display_image(image):
    """(image as drawn, its imshow options, grey image under the maps, its colour map).

    A colour image is drawn as it is: uint8 unchanged, floats in 0..1
    unchanged, other values in 0..255 divided by 255 (for the display only),
    anything else stretched to 0..1; the maps are laid on its luminance. A
    2-D uint8 image is a grey photo, drawn in grey on 0..255; other 2-D
    images (and the mean of channels that are not RGB or RGBA) are drawn in
    grey, dark for high values, as are digits.
    """
    img = np.asarray(image)
    if img.ndim == 3 and img.shape[2] not in (3, 4):
        img = img[..., 0] if img.shape[2] == 1 else img.mean(axis=2)
    if img.ndim == 2:
        if img.dtype == np.uint8:
            return img, {"cmap": "gray", "vmin": 0, "vmax": 255}, img / 255.0, "gray"
        return img, {"cmap": "gray_r"}, img, "gray_r"
    if img.dtype == np.uint8:
        return img, {}, img[..., :3] @ np.array([0.299, 0.587, 0.114]) / 255.0, "gray"
    unit = img.astype(np.float64)
    lo, hi = float(unit.min()), float(unit.max())
    if lo >= 0 and hi <= 1:
        shown = img if np.issubdtype(img.dtype, np.floating) else unit
    elif lo >= 0 and hi <= 255:
        shown = unit = unit / 255.0
    else:
        shown = unit = (unit - lo) / max(hi - lo, 1e-12)
    return shown, {}, unit[..., :3] @ np.array([0.299, 0.587, 0.114]), "gray"


def _symmetric_limit(arrays):
    """The largest absolute value of the maps: one colour scale, centred on 0."""
    vmax = max((float(np.abs(v).max()) for v in arrays), default=1.0)
    return vmax if vmax > 0 else 1.0


# maps whose largest values differ by more than this factor get scales of their own
# at scale="auto": on a shared scale the smaller would be washed out
_SCALE_RATIO = 3.0
# outlines are drawn for at most this many groups, thinner beyond _THIN_OUTLINES
_MAX_OUTLINED = 500
_THIN_OUTLINES = 60


def _limits(maps, scale):
    """Per method, the half-width of its colour scale; and whether it is shared."""
    if scale not in ("auto", "shared", "method"):
        raise ValueError(f"scale={scale!r}; choose 'auto', 'shared' or 'method'.")
    own = {m: _symmetric_limit([np.concatenate([np.ravel(v) for v in vs])])
           for m, vs in maps.items()}
    shared = scale == "shared" or (
        scale == "auto" and max(own.values()) <= _SCALE_RATIO * min(own.values()))
    if shared:
        top = max(own.values())
        return {m: top for m in own}, True
    return own, False


def _outline_width(n_groups):
    """Line width of the group outlines, or 0 when there are too many groups to draw."""
    if n_groups > _MAX_OUTLINED:
        return 0.0
    return 1.0 if n_groups <= _THIN_OUTLINES else 0.5


def _overlay(panel, gray, gray_cmap, values, cmap, vmax):
    """The grey image, and on it a semi-transparent map on [-vmax, vmax].

    On a colour photo the map is the more opaque the larger the value, so
    that the photo shows through where the attributions are small.
    """
    if gray_cmap == "gray":  # a photo: its luminance, as it is
        panel.imshow(gray, cmap="gray", vmin=0.0, vmax=1.0, interpolation="nearest")
        alpha = 0.15 + 0.7 * np.clip(np.abs(values) / vmax, 0.0, 1.0)
    else:
        panel.imshow(gray, cmap=gray_cmap, interpolation="nearest", alpha=0.35)
        alpha = 0.8
    return panel.imshow(values, cmap=cmap, vmin=-vmax, vmax=vmax, alpha=alpha,
                        interpolation="nearest")


def _colorbar(mappable, axes, label, **kwargs):
    """The colour bar of the maps, opaque whatever the maps' transparency."""
    import matplotlib.pyplot as plt
    from matplotlib.cm import ScalarMappable

    scale = ScalarMappable(norm=mappable.norm, cmap=mappable.get_cmap())
    cbar = plt.colorbar(scale, ax=list(axes), **{"shrink": 0.8, **kwargs})
    cbar.set_label(label)
    return cbar


def _colorbars(images, axes_of, shared, label):
    """One colour bar for all maps, or one under each method's panels."""
    if not images:
        return None, {}
    if shared:
        axes = [a for m in images for a in axes_of[m]]
        bar = _colorbar(next(iter(images.values())), axes, label)
        return bar, {m: bar for m in images}
    bars = {m: _colorbar(im, axes_of[m], label, orientation="horizontal", shrink=0.9,
                         pad=0.04, aspect=25) for m, im in images.items()}
    for bar in bars.values():
        bar.ax.tick_params(labelsize="x-small")
        bar.ax.xaxis.label.set_size("x-small")
    return None, bars


def _fitted_on(label_map, image):
    """A fitted grouper or a map as it is; an unfitted grouper fitted on the image."""
    if (hasattr(label_map, "fit") and hasattr(label_map, "get_params")
            and not hasattr(label_map, "label_map_")):
        from sklearn.base import clone

        return clone(label_map).fit(image[None])
    return label_map


def _one_image(grouper, tree):
    """Refuse a grouper whose maps (or merge trees) differ between its images.

    A grouper fitted on several images keeps a label map and, AGREED, a
    merge tree per image; the display is given one image and cannot tell
    which of them it is, unless they all agree (a grid of patches).
    """
    maps = getattr(grouper, "initial_label_maps_" if tree else "label_maps_", None)
    if maps is None or len(maps) < 2:
        return
    same = all(np.array_equal(maps[0], m) for m in maps[1:])
    if tree:
        merges = [np.asarray(m) for m in grouper.merges_]
        same = same and all(np.array_equal(merges[0], m) for m in merges[1:])
    if same:
        return
    name = type(grouper).__name__
    per_image = ("its own merge tree" if tree
                 else f"its own label map (label_maps_ of shape {np.shape(maps)})")
    other = ("" if tree else
             ", or give this image's map: label_map=grouper.label_maps_[i] for the "
             "i-th image it was fitted on")
    raise ValueError(
        f"label_map: the {name} was fitted on {len(maps)} images and keeps {per_image} "
        "for each; SaliencyDisplay draws one image and cannot tell which of them "
        f"it is. Pass the {name} unfitted (the display fits it on the image), or "
        f"fit it on this image alone ({name}(...).fit(image[None])){other}."
    )


def _label_map_of(label_map):
    """A label map, or that of a fitted grouper (of its one image)."""
    if hasattr(label_map, "label_map_"):
        _one_image(label_map, tree=False)
        return label_map.label_map_
    return label_map


def _merge_tree_of(label_map, levels):
    """(hierarchy, label map) of a grouper's merge tree, for ``levels``."""
    if hasattr(label_map, "merges_") and hasattr(label_map, "initial_label_maps_"):
        _one_image(label_map, tree=True)
        return merge_tree_hierarchy(label_map)
    what = ("label_map=None (a grid of patches)" if label_map is None
            else f"the {type(label_map).__name__} given as label_map")
    raise ValueError(
        f"levels={levels!r} draws the levels of a tree over the groups, and {what} "
        "keeps no merge tree. Pass label_map=AdaptiveGrouper(model, initial_groups="
        "PatchGrouper(8)) (unfitted, the display fits it on the image), or "
        "hierarchy= as nested lists of the label map's group ids (e.g. [[0, 1], "
        "[2, 3]]), or leave levels=None for one map of the groups."
    )


def _as_hierarchy(hierarchy, n_groups):
    """A Hierarchy over the groups 0..K-1 of the label map, from what was passed."""
    if hierarchy is None or isinstance(hierarchy, Hierarchy):
        return hierarchy
    from .._hierarchy import resolve_hierarchy

    names = [f"g{k}" for k in range(n_groups)]
    try:
        return resolve_hierarchy(hierarchy, [np.array([k]) for k in range(n_groups)],
                                 names, feature_names=names)
    except (TypeError, ValueError) as exc:
        raise type(exc)(
            f"{exc} (SaliencyDisplay reads hierarchy= over the {n_groups} groups of "
            f"the label map: their ids 0..{n_groups - 1} or names g0..g{n_groups - 1} "
            "play the part of columns.)"
        ) from None


class SaliencyDisplay:
    """An image with its group boundaries and one attribution map per method.

    Pixels are grouped by a label map (e.g. square patches, or the groups
    found by AGREED). Each method's group attributions are painted on the
    pixels of the group (divided by the group's size with
    ``per_pixel=True``), on a diverging colour scale centred on 0: one
    shared by all methods, or one per method when their sizes differ (see
    :meth:`plot`'s ``scale``).

    With a hierarchy over the groups (the merge tree of
    :class:`~skdecomp.AdaptiveGrouper` on an image), one panel per level
    and method instead: each level's groups (a cut of the tree) painted
    with the totals of their groups' attributions, on one colour scale.

    Read more in the :ref:`User Guide <plotting>`.

    A colour image is drawn as it is: uint8 unchanged, floats in 0..1
    unchanged, other values in 0..255 divided by 255 for the display (any
    other range is stretched to 0..1); the maps are laid, semi-transparent,
    on its luminance, the more opaque the larger the value. A 2-D uint8
    image is drawn in grey on 0..255; other 2-D images (digits) in grey,
    dark for high values.

    Parameters
    ----------
    image : ndarray of shape (height, width) or (height, width, channels)
        The explained image, uint8 or float.
    label_map : ndarray of int of shape (height, width)
        Group id (0..K-1) of every pixel.
    attributions : dict of str to ndarray of shape (n_groups,)
        Group attributions of each method.
    title : str or None, default=None
        Title of the image panel.
    hierarchy : Hierarchy, list, dict, ndarray or None, default=None
        A tree over the groups of ``label_map`` (or nested lists of their
        ids, or a linkage matrix over them); with it, one panel per level.
    levels : int, list of int, "auto" or None, default=None
        Numbers of groups of the levels drawn (cuts of ``hierarchy``; an
        int is one level); "auto" or None: every level but the root, finest
        first (at most six, evenly spaced, when there are more).

    Attributes
    ----------
    ax_ : ndarray of matplotlib Axes
        The image panel, then one panel per method (in two rows when there
        are more than five panels); with a hierarchy, one panel per method
        and level (a row per method, finest level first).
    axes_ : ndarray of Axes
        Same as ``ax_``.
    figure_ : matplotlib Figure
        Figure holding the axes.
    images_ : dict of str to AxesImage
        The explained image (key ``"image"``) and each method's map.
    boundaries_ : list of LineCollection
        Group boundaries drawn on every panel.
    colorbar_ : matplotlib Colorbar or None
        The colour bar shared by the maps; None when each method has its
        own scale (``scale`` of :meth:`plot`).
    colorbars_ : dict of str to Colorbar
        Each method's colour bar (the shared one for every method on a
        shared scale).
    levels_ : list of int or None
        The levels drawn (numbers of groups), with a hierarchy.
    level_label_maps_ : dict of int to ndarray or None
        Label map of every level drawn: its groups in order of their first
        pixel (row by row).
    level_values_ : dict of str to list of ndarray or None
        Per method, the totals of every level's groups, in ``levels_`` order.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skdecomp.plot import SaliencyDisplay
    >>> image = np.arange(16.0).reshape(4, 4)
    >>> labels = np.kron(np.arange(4).reshape(2, 2), np.ones((2, 2), dtype=int))
    >>> disp = SaliencyDisplay.from_result(image, labels,
    ...                                    {"shapley": np.array([1.0, 0, 0, -1])})
    >>> len(disp.axes_)
    2
    """

    def __init__(self, image, label_map, attributions, *, title=None, hierarchy=None,
                 levels=None):
        self.image = image
        self.label_map = label_map
        self.attributions = attributions
        self.title = title
        self.hierarchy = hierarchy
        self.levels = levels

    @classmethod
    def from_estimator(
        cls,
        estimator,
        image,
        *,
        label_map=None,
        patch_size=None,
        methods=("shapley",),
        baseline=0.0,
        target="predicted",
        response_method="auto",
        n_samples=None,
        method_params=None,
        random_state=None,
        title=None,
        per_pixel=False,
        levels=None,
        hierarchy=None,
        ax=None,
        scale="auto",
    ):
        """Explain one image over pixel groups and plot the saliency maps.

        The explainer uses the image as the explained row and one baseline
        image as the background (an anchored decomposition, see
        :ref:`functional_decomposition`), so the exact methods are exact
        over the K groups (K at most ``MAX_EXACT_GROUPS``); the sampled
        ones (``"kernel_shap"``, ``"lime"``, ...) take any K.

        An image model (an :class:`~skdecomp.ImageModel`, a torch module or
        an ONNX Runtime session) gets the image as it is, uint8 or float in
        its own value scale (see :ref:`image_models`); any other model
        (a scikit-learn estimator or a callable) gets flattened images: a
        row of ``height * width * channels`` values.

        Parameters
        ----------
        estimator : ImageModel, torch module, ONNX session, estimator or callable
            The model: an image model, or a fitted model on flattened images.
        image : ndarray of shape (height, width) or (height, width, channels)
            The explained image, uint8 or float.
        label_map : ndarray of int of shape (height, width), grouper or None, \
                default=None
            Group of every pixel; or a grouper (:class:`~skdecomp.PatchGrouper`,
            :class:`~skdecomp.SuperpixelGrouper`, a fitted
            :class:`~skdecomp.AdaptiveGrouper`), whose ``label_map_`` is
            used (an unfitted one is fitted on the image); None uses a grid
            of ``patch_size`` patches.
        patch_size : int or None, default=None
            Patch size when ``label_map`` is None.
        methods : str or list of str, default=("shapley",)
            Methods of :meth:`Explainer.explain <skdecomp.Explainer.explain>`.
        baseline : float, ndarray, "zeros" or "blur", default=0.0
            The reference image, in the image's value scale: a constant
            (e.g. ``image.mean()`` for a flat image of the image's mean
            value), an image of the same shape, ``"zeros"`` (black) or
            ``"blur"`` (the image blurred, as in
            :class:`~skdecomp.Explainer`).
        target : class label, class index, "predicted" or None, \
                default="predicted"
            Output explained; "predicted" takes the class the model predicts
            for the image (scikit-learn classifiers and image models; an
            :class:`~skdecomp.ImageModel` with its own ``target`` keeps it),
            None the model's default.
        response_method : str, default="auto"
            As in :class:`~skdecomp.Explainer`.
        n_samples : int or None, default=None
            Budget of the sampled methods, as in :class:`~skdecomp.Explainer`.
        method_params : dict or None, default=None
            Options of the sampled methods (e.g. ``{"n_steps": 16}`` for
            ``"integrated_gradients"``), as in :class:`~skdecomp.Explainer`.
        random_state : int, RandomState or None, default=None
            Seeds the sampled methods.
        title : str or None, default=None
            Title of the image panel; None names the explained class.
        per_pixel : bool, default=False
            Divide each group's attribution by its number of pixels.
        levels : int, list of int, "auto" or None, default=None
            Draw one panel per level of the hierarchy, with this many groups
            each (see the class); None draws one map of the groups.
        hierarchy : Hierarchy, list, dict, ndarray or None, default=None
            Tree over the groups of ``label_map`` for ``levels``: nested
            lists or dicts of its group ids (``[[0, 1], [2, 3]]``) or a
            linkage matrix over them also do; None takes the merge tree of
            the grouper passed as ``label_map`` (a grouper fitted on several
            images is refused: the display cannot tell which it draws).
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split into panels), one Axes per panel (1 + number of
            methods, or number of methods times levels), or None for a new
            figure.
        scale : {"auto", "shared", "method"}, default="auto"
            Colour scales, as in :meth:`plot`.

        Returns
        -------
        display : SaliencyDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        from .._explainer import Explainer

        levels = _check_levels(levels)
        image = _as_image(image)
        on_images = isinstance(estimator, ImageModel) or is_image_runtime(estimator)
        label_map = _fitted_on(label_map, image)
        if levels is not None and hierarchy is None:
            # the levels of a grouper's merge tree, over its initial groups
            hierarchy, label_map = _merge_tree_of(label_map, levels)
        label_map = _label_map_of(label_map)
        if label_map is None:
            if patch_size is None:
                raise ValueError(
                    "Give a label_map, or a patch_size for a grid of patches."
                )
            label_map = patch_label_map(image.shape[:2], patch_size)
        label_map = _check_label_map(label_map, image.shape)
        hierarchy = _as_hierarchy(hierarchy, int(label_map.max()) + 1)
        groups = {
            f"g{k}": cols.tolist()
            for k, cols in enumerate(groups_from_label_map(label_map, image.shape))
        }
        if isinstance(baseline, str) and baseline not in ("zeros", "blur"):
            raise ValueError(
                f"baseline={baseline!r} is unknown; give 'zeros', 'blur', a number "
                "(e.g. baseline=image.mean() for a flat image of the image's mean "
                "value) or an image."
            )
        params = {"response_method": response_method, "hierarchy": hierarchy,
                  "n_samples": n_samples, "method_params": method_params,
                  "random_state": random_state}
        if on_images:
            # the image as it is; the explainer builds the baseline image
            X = image[None]
            base = baseline if isinstance(baseline, str) else np.broadcast_to(
                np.asarray(baseline, dtype=np.float64), image.shape)
            if isinstance(target, str) and target == "predicted":
                model = estimator if isinstance(estimator, ImageModel) else ImageModel(
                    estimator)
                target = (None if model.target is not None
                          else int(np.argmax(model.predict(X)[0])))
            explainer = Explainer(estimator, groups=groups, baseline=base,
                                  target=target, **params).fit(X)
        else:
            X = np.asarray(image, dtype=np.float64).reshape(1, -1)
            if isinstance(baseline, str):
                base = (np.zeros_like(X) if baseline == "zeros"
                        else blur_images(X, image.shape))
            else:
                base = np.broadcast_to(np.asarray(baseline, dtype=np.float64),
                                       image.shape).reshape(1, -1)
            if isinstance(target, str) and target == "predicted":
                target = estimator.predict(X)[0] if hasattr(estimator, "classes_") else None
            explainer = Explainer(estimator, groups=groups, background=base,
                                  target=target, **params).fit(X)
        # the one explained image, of the one explained output
        phis = explain_rows(explainer, X, methods, output=0)
        attributions = {m: phi[0] for m, phi in phis.items()}
        if title is None and (on_images or target is not None):
            title = f"explained class: {explainer.output_names_[0]}"
        disp = cls(image, label_map, attributions, title=title, hierarchy=hierarchy,
                   levels=levels)
        return disp.plot(per_pixel=per_pixel, ax=ax, scale=scale)

    @classmethod
    def from_result(
        cls,
        image,
        label_map,
        attributions,
        *,
        methods=None,
        title=None,
        per_pixel=False,
        levels=None,
        hierarchy=None,
        ax=None,
        scale="auto",
    ):
        """Plot group attributions already computed.

        Parameters
        ----------
        image : ndarray of shape (height, width) or (height, width, channels)
            The explained image, uint8 or float.
        label_map : ndarray of int of shape (height, width), grouper or None
            Group id (0..K-1) of every pixel; or a grouper fitted on the
            image, whose ``label_map_`` is used; or, with ``levels``, a
            fitted :class:`~skdecomp.AdaptiveGrouper` on the image, whose
            initial groups are the groups and whose merge tree gives the
            levels; or None for maps per pixel.
        attributions : dict, Bunch or ndarray
            Method name -> group attributions of shape (n_groups,) or
            (1, n_groups) (e.g. the Bunch of
            :meth:`Explainer.explain <skdecomp.Explainer.explain>` for one
            image), or one array; with ``label_map=None``, maps of shape
            (height, width) or (1, height, width), such as
            :meth:`Explanation.to_image() <skdecomp.Explanation.to_image>`.
        methods : list of str or None, default=None
            Methods to show, or the name of a plain array.
        title : str or None, default=None
            Title of the image panel; None names the explained class when
            the attributions are :class:`~skdecomp.Explanation` objects of
            one output.
        per_pixel : bool, default=False
            Divide each group's attribution by its number of pixels.
        levels : int, list of int, "auto" or None, default=None
            Draw one panel per level of the hierarchy, with this many groups
            each (see the class); None draws one map of the groups.
        hierarchy : Hierarchy, list, dict, ndarray or None, default=None
            Tree over the groups of ``label_map`` for ``levels``: nested
            lists or dicts of its group ids (``[[0, 1], [2, 3]]``) or a
            linkage matrix over them also do; None takes the merge tree of
            the grouper passed as ``label_map`` (a grouper fitted on several
            images is refused: the display cannot tell which it draws).
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split into panels), one Axes per panel (1 + number of
            methods, or number of methods times levels), or None for a new
            figure.
        scale : {"auto", "shared", "method"}, default="auto"
            Colour scales, as in :meth:`plot`.

        Returns
        -------
        display : SaliencyDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        levels = _check_levels(levels)
        image = _as_image(image)
        if label_map is None and levels is None:  # maps per pixel
            label_map = np.arange(image.shape[0] * image.shape[1]).reshape(image.shape[:2])
        label_map = _fitted_on(label_map, image)
        if levels is not None and hierarchy is None:
            hierarchy, label_map = _merge_tree_of(label_map, levels)
        label_map = _check_label_map(_label_map_of(label_map), image.shape)
        hierarchy = _as_hierarchy(hierarchy, int(label_map.max()) + 1)
        if isinstance(methods, str):
            methods = [methods]
        if not isinstance(attributions, Mapping):
            name = methods[0] if methods else "attribution"
            attributions = {name: attributions}
        elif methods is not None:
            attributions = {m: attributions[m] for m in methods}
        # explanations know the output they explain: name it
        outputs = {tuple(getattr(phi, "output_names", None) or ())
                   for phi in attributions.values()}
        if title is None and len(outputs) == 1 and len(next(iter(outputs))) == 1:
            title = f"explained class: {next(iter(outputs))[0]}"
        n_groups = int(label_map.max()) + 1
        out = {}
        for m, phi in attributions.items():
            phi = np.asarray(phi, dtype=np.float64).reshape(-1)
            if phi.size != n_groups:
                raise ValueError(
                    f"attributions {m!r} have {phi.size} values for the {n_groups} "
                    f"groups of label_map; give one value per group (ids 0.."
                    f"{n_groups - 1}), e.g. those of an explainer whose groups= are "
                    "the label map's groups."
                )
            out[str(m)] = phi
        disp = cls(image, label_map, out, title=title, hierarchy=hierarchy,
                   levels=levels)
        return disp.plot(per_pixel=per_pixel, ax=ax, scale=scale)

    def plot(self, *, per_pixel=False, cmap="RdBu_r", boundary_color="yellow", ax=None,
             scale="auto"):
        """Draw the image and one saliency map per method.

        Parameters
        ----------
        per_pixel : bool, default=False
            Divide each group's attribution by its number of pixels.
        cmap : str or Colormap, default="RdBu_r"
            Diverging colormap, centred on 0.
        boundary_color : str, default="yellow"
            Colour of the group outlines; they are drawn up to 500 groups
            (thinner beyond 60), not for finer maps such as one per pixel.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split into panels), one Axes per panel (1 + number of
            methods), or None for a new figure.
        scale : {"auto", "shared", "method"}, default="auto"
            Colour scales: one for all methods ("shared", comparable across
            panels), one per method ("method", each map's own contrast), or
            "auto": one per method when the methods' largest values differ
            by more than a factor of 3 (a map that is large everywhere, such
            as RISE's, would wash out the others), else one for all.

        Returns
        -------
        display : SaliencyDisplay
            The object, with ``ax_``, ``axes_``, ``figure_``, ``images_``,
            ``boundaries_``, ``colorbar_``, ``colorbars_`` and (with a
            hierarchy) ``levels_``, ``level_label_maps_`` and
            ``level_values_`` set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        from matplotlib.collections import LineCollection

        caller = f"{type(self).__name__}.plot"
        pixels = np.asarray(self.image)
        if pixels.dtype.kind in "fc" and not np.isfinite(pixels).all():
            bad = ~np.isfinite(pixels)
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{caller}: {int(bad.sum())} NaN or infinite value(s) in the image "
                f"pixels (first at {first}), which cannot be drawn; replace them "
                "first, e.g. image = np.nan_to_num(image, nan=0.0, posinf=1.0, "
                "neginf=0.0) in the image's value scale."
            )
        check_drawable(self.image, "the image pixels", caller)
        image = _as_image(self.image)
        label_map = np.asarray(self.label_map)
        if not len(self.attributions):
            raise ValueError(f"{caller}: no attributions to draw; give the "
                             "attributions of at least one method.")
        for m, phi in self.attributions.items():
            check_drawable(phi, f"the attributions of {m!r}", caller)
        self.levels_ = self.level_label_maps_ = self.level_values_ = None
        if self.hierarchy is not None:
            return self._plot_levels(image, label_map, per_pixel, cmap, boundary_color,
                                     ax, scale)
        sizes = np.bincount(label_map.ravel())
        maps = {}
        for m, phi in self.attributions.items():
            phi = np.asarray(phi, dtype=np.float64)
            if per_pixel:
                phi = phi / sizes
            maps[m] = phi[label_map]
        vmax, shared = _limits({m: [v] for m, v in maps.items()}, scale)
        n_panels = 1 + len(maps)
        # one row, or two rows when there are more than five panels
        ncols = n_panels if n_panels <= 5 else -(-n_panels // 2)
        nrows = -(-n_panels // ncols)
        fig, axes = panel_axes(ax, n_panels, ncols=ncols,
                               figsize=(2.6 * ncols + 0.8, (2.9 if shared else 3.6) * nrows
                                        + 0.1))
        width = _outline_width(int(label_map.max()) + 1)
        segs = _boundary_segments(label_map) if width else []
        shown, options, gray, gray_cmap = _display_image(image)
        self.images_ = {"image": axes[0].imshow(shown, interpolation="nearest", **options)}
        self.boundaries_ = []
        for panel in axes:
            if width:
                lc = LineCollection(segs, colors=boundary_color, linewidths=width,
                                    alpha=1.0 if panel is axes[0] else 0.5)
                panel.add_collection(lc)
                self.boundaries_.append(lc)
            panel.set_xticks([])
            panel.set_yticks([])
        axes[0].set_title(self.title or "image and groups", fontsize="small")
        for panel, (m, values) in zip(axes[1:], maps.items()):
            self.images_[m] = _overlay(panel, gray, gray_cmap, values, cmap, vmax[m])
            panel.set_title(m, fontsize="small", color=method_color(m))
        self.colorbar_, self.colorbars_ = _colorbars(
            {m: self.images_[m] for m in maps},
            {m: [p] for p, m in zip(axes[1:], maps)}, shared,
            "attribution per pixel" if per_pixel else "group attribution")
        self.axes_ = axes
        self.ax_ = axes
        self.figure_ = fig
        return self

    def _plot_levels(self, image, label_map, per_pixel, cmap, boundary_color, ax, scale):
        """One panel per method and level: the totals of every level's groups."""
        from matplotlib.collections import LineCollection

        K = int(label_map.max()) + 1
        h = _as_hierarchy(self.hierarchy, K)
        if getattr(h, "n_players", None) != K:
            raise ValueError(
                f"the hierarchy has {getattr(h, 'n_players', None)} players, the label "
                f"map {K} groups; give a hierarchy over the groups of the label map "
                f"(nested lists of its ids 0..{K - 1}, e.g. [[0, 1], [2, 3]] for 4 "
                "groups)."
            )
        levels = _check_levels(self.levels)
        if levels is None or isinstance(levels, str):
            levels = _default_levels(h)
        if not levels:
            raise ValueError("levels is empty; give at least one level.")
        maps, values = {}, {m: [] for m in self.attributions}
        for n in levels:
            try:
                nodes = h.cut(n)
            except ValueError as exc:
                raise ValueError(str(exc).replace("n_groups=", "levels holds ")) from None
            owner = np.empty(K, dtype=np.int64)
            for i, a in enumerate(nodes):
                owner[h.leaves[a]] = i
            # ids in order of the first pixel of every group
            lm = owner[label_map]
            _, first = np.unique(lm.ravel(), return_index=True)
            rank = np.empty(len(nodes), dtype=np.int64)
            rank[np.argsort(first)] = np.arange(len(nodes))
            maps[n] = rank[lm]
            sizes = np.bincount(maps[n].ravel(), minlength=len(nodes))
            for m, phi in self.attributions.items():
                phi = np.asarray(phi, dtype=np.float64).reshape(-1)
                total = np.zeros(len(nodes))
                np.add.at(total, rank[owner], phi)
                values[m].append(total / sizes if per_pixel else total)
        vmax, shared = _limits(values, scale)
        n_methods, n_levels = len(values), len(levels)
        fig, axes = panel_axes(ax, n_methods * n_levels, ncols=n_levels,
                               figsize=(2.3 * n_levels + 1.0,
                                        (2.5 if shared else 3.0) * n_methods + 0.3))
        _, _, gray, gray_cmap = _display_image(image)
        self.images_, self.boundaries_ = {}, []
        im = None
        for i, (m, vs) in enumerate(values.items()):
            for j, n in enumerate(levels):
                panel = axes[i * n_levels + j]
                im = _overlay(panel, gray, gray_cmap, vs[j][maps[n]], cmap, vmax[m])
                self.images_[f"{m}, {n} groups"] = im
                width = _outline_width(n)
                if width:
                    lc = LineCollection(_boundary_segments(maps[n]),
                                        colors=boundary_color, linewidths=width)
                    panel.add_collection(lc)
                    self.boundaries_.append(lc)
                panel.set_xticks([])
                panel.set_yticks([])
                panel.set_title(f"{m}: {n} groups", fontsize="small",
                                color=method_color(m))
        if self.title:
            fig.suptitle(self.title, fontsize="small")
        self.colorbar_, self.colorbars_ = _colorbars(
            {m: self.images_[f"{m}, {levels[-1]} groups"] for m in values},
            {m: list(axes[i * n_levels:(i + 1) * n_levels]) for i, m in enumerate(values)},
            shared, "attribution per pixel" if per_pixel
            else "total attribution of the group")
        self.levels_, self.level_label_maps_, self.level_values_ = levels, maps, values
        self.axes_ = self.ax_ = axes
        self.figure_ = fig
        return self
