"""Image groupers and per-image AGREED.

:class:`PatchGrouper` lays a grid of square patches over the images and
:class:`SuperpixelGrouper` segments each image into superpixels; both are
fixed partitions, to explain images with or to start AGREED from.

Per-image AGREED (see the user guide, :ref:`agreed`) explains one image x
against one baseline image b with the mixture Q = (delta_x + delta_b) / 2 as
sample (N = 2). Its loss is ``L = 1/4 sum_k (Arch_k - Occ_k)**2`` with
``Arch_k = f(x_{G_k}, b_rest) - f(b)`` and ``Occ_k = f(x) - f(b_{G_k}, x_rest)``.
:func:`agreed_images` runs the greedy merge loop of
:func:`~skdecomp._grouping._merge.greedy_merges` on every image with the
region adjacency graph as connectivity, so groups stay connected: all groups
and all edges are evaluated in one batch, then only the new group's edges
after each merge, and several images are merged in lockstep, so that each
round sends the new edges of every image to the model in one batch.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

from .._compat import Interval, StrOptions, _fit_context, transactional_fit
from .._game._anchored import ImageStatistics
from .._image import (
    ImageModel,
    as_image_rows,
    check_image_shape,
    connected_label_map,
    groups_from_label_map,
    image_model,
    image_ndim,
    label_map_from_groups,
    patch_label_map,
    region_adjacency,
    relabel,
)
from .._model import is_fitted, resolve_response
from .._partition import resolve_groups
from ._base import _BaseGrouper
from ._image_merge import lazy_merges
from ._merge import greedy_merges

__all__ = ["PatchGrouper", "SuperpixelGrouper", "agreed_images", "image_response",
           "initial_label_maps"]

# Default arguments of the scikit-image segmentation functions.
_SUPERPIXEL_DEFAULTS = {
    "quickshift": {"kernel_size": 2, "max_dist": 4, "ratio": 0.5},
    # compactness: 10 on Lab colours (3 channels), 0.1 on intensities in 0..1
    "slic": {"n_segments": 16},
    "felzenszwalb": {"scale": 1, "min_size": 4},
}


# -- per-image AGREED ---------------------------------------------------------------
def image_response(estimator, response_method, target, images, image_shape, n_threads=None):
    """The fitted model on flattened images, and the outputs to explain.

    Parameters
    ----------
    estimator : estimator, callable or None
        The grouper's ``estimator``: a fitted model, or a callable on images.
    response_method : str
        The grouper's ``response_method``.
    target : object
        The grouper's ``target``.
    images : ndarray of shape (n_images, n_columns)
        The flattened images; the first one probes the model's output.
    image_shape : tuple of int
        (H, W) or (H, W, C).
    n_threads : int or None, default=None
        Threads of an image model's runtime (see :class:`~skdecomp.ImageModel`).

    Returns
    -------
    model : estimator
        The model as seen on flattened rows (see :func:`~skdecomp._image.image_model`).
    response : ResponseFunction
        The explained outputs.
    output_names : list of str
        Name of every output.
    """
    if estimator is None:
        raise ValueError(
            "AdaptiveGrouper measures interactions of a model; pass "
            "estimator=<fitted model or callable on images>, or use the grouper "
            "as Explainer(model, groups=...), which passes its model on."
        )
    model = image_model(estimator, image_shape, n_threads)
    if not is_fitted(model):
        raise ValueError(
            f"{type(model).__name__} is not fitted; on images AdaptiveGrouper "
            "explains a fitted model (fit it first, or wrap a callable)."
        )
    response, output_names = resolve_response(model, response_method, target, images[:1])
    if isinstance(model, ImageModel):
        output_names = model.explained_names(response.columns)
        if len(output_names) > 1:
            raise ValueError(
                f"The image model has {len(output_names)} outputs; pick the explained "
                "class with target=<class index> (on the grouper or the ImageModel)."
            )
    return model, response, output_names


def initial_label_maps(initial_groups, images, image_shape, adjacency):
    """The partition every image starts from, as connected label maps.

    Parameters
    ----------
    initial_groups : None, list of lists, dict, grouper or ndarray
        The ``initial_groups`` of :class:`~skdecomp.AdaptiveGrouper`: None
        (one group per pixel), column groups, an image grouper (fitted on
        the images here) or a label map of shape (H, W).
    images : ndarray of shape (n_images, n_columns)
        The flattened images.
    image_shape : tuple of int
        (H, W) or (H, W, C).
    adjacency : {"4", "8"}
        Groups that are not connected are split into their components.

    Returns
    -------
    label_maps : ndarray of shape (n_images, H, W)
        Group ids in order of each group's first pixel.
    """
    H, W = image_shape[:2]
    n = images.shape[0]
    initial = initial_groups
    if initial is None:
        maps = np.broadcast_to(np.arange(H * W).reshape(H, W), (n, H, W))
    elif hasattr(initial, "fit"):
        fitted = initial.__class__(**initial.get_params()).set_params(
            image_shape=image_shape
        ).fit(images)
        maps = getattr(fitted, "label_maps_", None)
        if maps is None:
            maps = np.broadcast_to(fitted.label_map_, (n, H, W))
    elif isinstance(initial, np.ndarray) and initial.ndim == 2:
        if initial.shape != (H, W):
            raise ValueError(
                f"initial_groups is a label map of shape {initial.shape}; it must "
                f"be ({H}, {W}), the image's height and width."
            )
        if initial.dtype.kind not in "iub" and not (
                initial.dtype.kind == "f" and np.all(np.isfinite(initial))
                and np.all(initial == np.round(initial))):
            raise ValueError(
                f"initial_groups is a label map of dtype {initial.dtype} whose ids are "
                "not whole numbers; give integer group ids, e.g. "
                "initial_groups=label_map.astype(int)."
            )
        maps = np.broadcast_to(relabel(initial), (n, H, W))
    elif (isinstance(initial, np.ndarray) and initial.ndim != 1
          and initial.dtype != object):
        raise ValueError(
            f"initial_groups is an array of shape {initial.shape}; give one label map "
            f"of shape ({H}, {W}), shared by the images, a grouper for maps of their "
            "own (e.g. SuperpixelGrouper()), or lists of columns."
        )
    else:
        positions, _ = resolve_groups(initial, images.shape[1])
        maps = np.broadcast_to(label_map_from_groups(positions, image_shape), (n, H, W))
    return np.stack([connected_label_map(m, adjacency) for m in maps])


def agreed_images(
    response, images, baselines, image_shape, label_maps, *, adjacency, n_groups,
    rel_tol, merge_score, max_memory, n_jobs, max_group_size=None, strategy="paper",
    price=None, max_evaluations=None,
):
    """Per-image AGREED, in lockstep over the images.

    Parameters
    ----------
    response : ResponseFunction
        The explained outputs, on flattened images.
    images, baselines : ndarray of shape (n_images, n_columns)
        The flattened images and the baseline of each.
    image_shape : tuple of int
        (H, W) or (H, W, C).
    label_maps : ndarray of int of shape (n_images, H, W)
        The initial partition of every image, ids in order of first pixel.
    adjacency : {"4", "8"}
        Groups whose pixels touch through a side, or also a corner, may merge.
    n_groups : int or None
        Stop at this many groups; None stops on ``rel_tol``.
    rel_tol : float
        Stop once the loss is at most this fraction of the initial loss.
    merge_score : {"loss", "interaction"}
        Score that picks the partner of the merged group.
    max_memory : int, str or None
        Bytes of hybrid images built at once (at most 64 MiB).
    n_jobs : int or None
        Joblib workers over batches.
    max_group_size : int or None, default=None
        Largest number of pixels of a merged group; None sets no bound.
    strategy : {"paper", "pairs"}, default="paper"
        "paper": the group of largest potential merges with its best
        neighbour, until ``n_groups`` or ``rel_tol`` (see
        :func:`~skdecomp._grouping._merge.greedy_merges`); "pairs": the pair
        of largest loss decrease per pair of initial groups, scored lazily,
        until a merge no longer pays ``price`` (see
        :func:`~skdecomp._grouping._image_merge.lazy_merges`).
    price : float or None, default=None
        "pairs": the price of a pair of initial groups joined, as a share of
        the output variance.
    max_evaluations : int or None, default=None
        "pairs": the most model evaluations per image.

    Returns
    -------
    trees : list of MergeTree
        The merges of every image; the leaves are the groups of its label map.
    statistics : ImageStatistics
        With f(x), f(b) and the counts of model calls and batches.
    """
    ev = ImageStatistics(
        response, images, baselines, image_shape, max_memory=max_memory, n_jobs=n_jobs
    )
    pixel_shape = tuple(label_maps.shape[1:])
    groups = [groups_from_label_map(lm, pixel_shape) for lm in label_maps]
    edges = [region_adjacency(lm, adjacency) for lm in label_maps]
    if strategy == "pairs":
        trees = lazy_merges(
            ev, groups, edges, price=price, n_groups=n_groups,
            max_group_size=max_group_size, max_evaluations=max_evaluations, path=True,
        )
        return trees, ev
    trees = greedy_merges(
        ev,
        groups,
        connectivity=edges,
        n_groups=n_groups,
        rel_tol=rel_tol,
        merge_score=merge_score,
        order="created",
        max_group_size=max_group_size,
    )
    return trees, ev


# -- groupers -----------------------------------------------------------------------
class _ImageGrouper(_BaseGrouper):
    """Input handling of the image groupers."""

    def _lax_input(self):
        return False

    def _check_X(self, X, reset, lax=None):
        if not 2 <= image_ndim(X) <= 4:
            raise ValueError(
                f"X has shape {np.shape(X)}; give images of shape (n, height, "
                "width[, channels]) (for one image, pass image[None]) or flattened "
                "rows with image_shape=(height, width[, channels]). Reshape your "
                "data with X[None] if it is a single image."
            )
        values = np.asarray(X) if not hasattr(X, "iloc") else None
        if values is not None and values.dtype.kind in "fc":
            bad = ~np.isfinite(values.reshape(values.shape[0], -1))
            if bad.any():
                raise ValueError(
                    f"X holds {int(bad.sum())} NaN or infinite pixel value(s) (the "
                    f"first in image {int(np.flatnonzero(bad.any(axis=1))[0])}); "
                    "replace them before grouping, e.g. np.nan_to_num(X), or drop "
                    "those images."
                )
        if image_ndim(X) in (3, 4):
            shape = self.image_shape if reset else self.image_shape_
            X, _ = as_image_rows(X, shape)
        return super()._check_X(X, reset, lax=False)

    def _fit_shape(self, X, values=True):
        """Flattened rows and the image shape, setting n_features_in_; ``values``
        False reads the shape only (no float64 copy of the images)."""
        was_images = image_ndim(X) in (3, 4)
        shape = tuple(np.shape(X)[1:]) if was_images else self.image_shape
        rows = self._check_X(X, reset=True)
        if not was_images:
            as_image_rows(rows, self.image_shape)  # clear errors for 2-D rows
        self.image_shape_ = check_image_shape(shape, rows.shape[1])
        return np.asarray(rows, dtype=np.float64) if values else None

    def _set_label_map(self, label_map):
        self.label_map_ = relabel(label_map)
        groups = groups_from_label_map(self.label_map_, self.image_shape_)
        self._set_partition(groups, [f"g{k}" for k in range(len(groups))], arrays=True)

    def transform(self, X):
        """Mean of the columns of every group (pooled pixels).

        Parameters
        ----------
        X : array-like of shape (n, H, W), (n, H, W, C) or (n, H * W * C)
            Images to pool.

        Returns
        -------
        Xt : ndarray of shape (n, n_groups_)
            Mean value of each group's pixels in every image.
        """
        return super().transform(X)


class PatchGrouper(_ImageGrouper):
    """The SQUARE partition: a fixed grid of square pixel patches.

    Images are given as arrays of shape (n, H, W) or (n, H, W, C), or as
    flattened rows (n, H * W * C, in C order: row, column, channel) with
    ``image_shape``. All channels of a pixel are in the same group. Use it as
    ``Explainer(model, groups=PatchGrouper(...))`` or as the starting
    partition of ``AdaptiveGrouper(initial_groups=PatchGrouper(...))``
    (see :ref:`agreed`).

    Parameters
    ----------
    patch_size : int or tuple of int, default=4
        Height and width of a patch, in pixels.
    image_shape : tuple of int or None, default=None
        (H, W) or (H, W, C) of the flattened rows; one entry may be -1
        (inferred from the number of columns, e.g. ``(1, -1)`` for 1-D
        signals). Not needed for 3-D or 4-D input.
    remainder : {"shrink", "merge", "error"}, default="shrink"
        When the patches do not tile the image: "shrink" makes the last row
        and column of patches smaller, "merge" adds the leftover pixels to
        the last full row and column of patches, "error" raises a
        ValueError.

    Attributes
    ----------
    label_map_ : ndarray of shape (H, W)
        Group id of every pixel; ids follow the order of each group's first
        pixel (row by row).
    image_shape_ : tuple
        (H, W) or (H, W, C).
    groups_ : list of ndarray of int64
        Column positions of each group in the flattened rows, sorted.
    labels_ : ndarray of shape (n_features_in_,)
        Group of every column.
    n_groups_ : int
    group_names_ : ndarray of str
        ``"g0"``, ``"g1"``, ... (the ids of ``label_map_``).
    group_features_ : list of list of str
        Column names of each group (``"x0"``, ``"x1"``, ... for arrays).
    n_features_in_ : int
        Number of columns (H * W * C) seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    Examples
    --------
    >>> import numpy as np
    >>> from skdecomp import PatchGrouper
    >>> PatchGrouper(patch_size=2).fit(np.zeros((1, 4, 6))).label_map_
    array([[0, 0, 1, 1, 2, 2],
           [0, 0, 1, 1, 2, 2],
           [3, 3, 4, 4, 5, 5],
           [3, 3, 4, 4, 5, 5]])
    """

    _parameter_constraints = {
        "patch_size": [Interval(Integral, 1, None, closed="left"), tuple, list],
        "image_shape": [tuple, list, None],
        "remainder": [StrOptions({"shrink", "merge", "error"})],
    }

    def __init__(self, patch_size=4, image_shape=None, *, remainder="shrink"):
        self.patch_size = patch_size
        self.image_shape = image_shape
        self.remainder = remainder

    @_fit_context(prefer_skip_nested_validation=True)
    @transactional_fit
    def fit(self, X, y=None):
        """Lay the grid of patches over the images' shape.

        Parameters
        ----------
        X : array-like of shape (n, H, W), (n, H, W, C) or (n, H * W * C)
            Images; only their shape is used.
        y : None
            Ignored.

        Returns
        -------
        self : PatchGrouper
            The fitted grouper.
        """
        self._fit_shape(X, values=False)
        H, W = self.image_shape_[:2]
        self._set_label_map(patch_label_map(H, W, self.patch_size, self.remainder))
        return self


class SuperpixelGrouper(_ImageGrouper):
    """Superpixels of each image (QUICKSHIFT, SLIC or Felzenszwalb), via scikit-image.

    Baseline partitions to compare with AGREED. Needs scikit-image, the
    optional extra ``skdecomp[superpixels]``. Each image gets its own partition;
    segments that are not connected (4-adjacency) are split, so every group
    is a connected region.

    Parameters
    ----------
    segmentation : {"quickshift", "slic", "felzenszwalb"}, default="quickshift"
        The function of :mod:`skimage.segmentation`.
    image_shape : tuple of int or None, default=None
        (H, W) or (H, W, C) of flattened rows (see :class:`PatchGrouper`).
    segmentation_params : dict or None, default=None
        Keyword arguments of the scikit-image function, e.g.
        ``{"kernel_size": 3, "max_dist": 6}`` for quickshift or
        ``{"n_segments": 16}`` for slic. Defaults: quickshift
        ``kernel_size=2, max_dist=4, ratio=0.5``; slic ``n_segments=16`` and
        ``compactness=10`` on colour photos (scikit-image's usual value on
        Lab colours), 0.1 on grey or other images; felzenszwalb ``scale=1,
        min_size=4``. Colour conversion to Lab is used only for 3-channel
        images. Images are read on their own scale: uint8 and float photos
        with values above 1.5 are divided by 255, as scikit-image reads
        floats in 0..1.
    random_state : int, RandomState instance or None, default=None
        Seed of quickshift's random tie-breaking.

    Attributes
    ----------
    label_maps_ : ndarray of shape (n_images, H, W)
        Partition of every image passed to :meth:`fit`.
    label_map_ : ndarray of shape (H, W)
        The first image's partition; ``groups_``, ``labels_``,
        ``n_groups_`` and ``group_names_`` describe it.
    image_shape_ : tuple
    groups_, labels_, n_groups_, group_names_, group_features_
        As in :class:`PatchGrouper`.
    n_features_in_ : int
        Number of columns (H * W * C) seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.
    """

    _parameter_constraints = {
        "segmentation": [StrOptions({"quickshift", "slic", "felzenszwalb"})],
        "image_shape": [tuple, list, None],
        "segmentation_params": [dict, None],
        "random_state": ["random_state"],
    }

    def __init__(self, segmentation="quickshift", *, image_shape=None, segmentation_params=None,
                 random_state=None):
        self.segmentation = segmentation
        self.image_shape = image_shape
        self.segmentation_params = segmentation_params
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @transactional_fit
    def fit(self, X, y=None):
        """Segment every image.

        Parameters
        ----------
        X : array-like of shape (n, H, W), (n, H, W, C) or (n, H * W * C)
            Images to segment.
        y : None
            Ignored.

        Returns
        -------
        self : SuperpixelGrouper
            The fitted grouper.
        """
        try:
            from skimage import segmentation
        except ImportError:
            raise ImportError(
                "SuperpixelGrouper needs scikit-image, an optional dependency; "
                "install it with pip install 'skdecomp[superpixels]' (or pip install "
                "scikit-image)."
            ) from None
        from sklearn.utils import check_random_state

        rows = self._fit_shape(X)
        dtype = getattr(X, "dtype", np.asarray(X).dtype)
        top = float(rows.max()) if rows.size else 0.0
        if np.issubdtype(dtype, np.integer) and rows.size:
            # scikit-image reads float images in [0, 1]: scale integer photos
            rows = rows / (255.0 if top <= 255 else float(np.iinfo(dtype).max))
        elif 1.5 < top <= 255.0:
            # a float photo on the 0..255 scale, read as scikit-image reads floats
            rows = rows / 255.0
        shape = self.image_shape_
        params = dict(_SUPERPIXEL_DEFAULTS[self.segmentation])
        params.update(self.segmentation_params or {})
        n_segments = params.get("n_segments", 1)
        if self.segmentation == "slic" and (
                not isinstance(n_segments, Integral) or isinstance(n_segments, bool)
                or n_segments < 1):
            raise ValueError(
                f"segmentation_params['n_segments']={n_segments!r} must be a positive "
                "int: the number of superpixels slic aims at."
            )
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        maps = []
        for row in rows:
            img = row.reshape(shape)
            rgb = img.ndim == 3 and img.shape[2] == 3
            if img.ndim == 2:
                img = img[:, :, None]
            try:
                if self.segmentation == "quickshift":
                    kw = {"convert2lab": rgb, "rng": seed, **params}
                    lm = segmentation.quickshift(img, channel_axis=-1, **kw)
                elif self.segmentation == "slic":
                    kw = {"convert2lab": rgb, "start_label": 0,
                          "compactness": 10.0 if rgb else 0.1, **params}
                    lm = segmentation.slic(img, channel_axis=-1, **kw)
                else:
                    lm = segmentation.felzenszwalb(img, channel_axis=-1, **params)
            except TypeError as exc:
                name = self.segmentation
                unknown = [k for k in (self.segmentation_params or {})
                           if f"'{k}'" in str(exc)]
                which = repr(unknown[0]) if unknown else "one of them"
                hint = (" n_segments is slic's: use segmentation='slic'."
                        if "n_segments" in unknown else "")
                raise ValueError(
                    f"segmentation_params={self.segmentation_params!r}: {which} is "
                    f"not an argument of skimage.segmentation.{name} ({exc}); remove "
                    f"it, or give only {name}'s arguments.{hint}"
                ) from exc
            maps.append(connected_label_map(lm, "4"))
        self.label_maps_ = np.stack(maps)
        self._set_label_map(self.label_maps_[0])
        return self
