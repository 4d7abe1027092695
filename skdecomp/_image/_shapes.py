"""Images as rows: shapes, pixel-group label maps, region adjacency and baselines.

An image of shape (H, W) or (H, W, C) is a row of ``H * W * C`` columns in
C order (row, column, channel): pixel ``p = r * W + c`` owns the columns
``p * C .. p * C + C - 1``. Groups of pixels are label maps (H, W) of group
ids; the channels of a pixel are always in the same group.

These helpers sit below the coalition game: the explainer uses them to read
images and their baselines, the image groupers to build and cut label maps.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np


__all__ = [
    "BASELINES",
    "as_image_rows",
    "baseline_rows",
    "blur_images",
    "check_baseline_values",
    "check_image_shape",
    "connected_label_map",
    "explainer_image_setup",
    "groups_from_label_map",
    "image_ndim",
    "label_map_from_groups",
    "n_channels",
    "patch_label_map",
    "pixel_columns",
    "region_adjacency",
    "relabel",
]

BASELINES = ("zeros", "mean", "blur")


# -- shapes and rows -----------------------------------------------------------
def check_image_shape(image_shape, n_columns=None):
    """Check an image shape (H, W) or (H, W, C); one entry may be -1.

    Parameters
    ----------
    image_shape : tuple of int
        The shape to check.
    n_columns : int or None, default=None
        Number of columns of the flattened rows; -1 is inferred from it and
        the product of the sizes is checked against it.

    Returns
    -------
    shape : tuple of int
        The shape, with -1 filled in when ``n_columns`` is given.
    """
    try:
        shape = tuple(int(s) for s in image_shape)
    except (TypeError, ValueError):
        raise TypeError(
            f"image_shape={image_shape!r} must be a tuple (height, width) or "
            "(height, width, channels) of ints."
        ) from None
    if len(shape) not in (2, 3) or any(s == 0 or s < -1 for s in shape) or shape.count(-1) > 1:
        raise ValueError(
            f"image_shape={image_shape!r} must be (height, width) or (height, "
            "width, channels) with positive sizes (one of them may be -1, "
            "inferred from the number of columns)."
        )
    if n_columns is None:
        return shape
    known = int(np.prod([s for s in shape if s != -1]))
    if -1 in shape:
        if n_columns % known:
            raise ValueError(
                f"image_shape={image_shape!r} cannot be completed for {n_columns} "
                f"columns ({n_columns} is not a multiple of {known})."
            )
        shape = tuple(n_columns // known if s == -1 else s for s in shape)
    elif known != n_columns:
        raise ValueError(
            f"image_shape={image_shape!r} has {known} values per image, but X has "
            f"{n_columns} columns; give the shape of the flattened images (rows "
            "are images flattened in C order: row, column, channel)."
        )
    return shape


def image_ndim(X):
    """Number of dimensions of array-like X, without numpy array functions.

    Parameters
    ----------
    X : array-like
        Any array-like, including a DataFrame.

    Returns
    -------
    ndim : int
        Its number of dimensions.
    """
    ndim = getattr(X, "ndim", None)
    return int(ndim) if isinstance(ndim, Integral) else np.asarray(X).ndim


def as_image_rows(X, image_shape, what="X"):
    """Return images or flattened rows as a 2-D array, with the image shape.

    Parameters
    ----------
    X : array-like of shape (n, H, W), (n, H, W, C) or (n, H * W * C)
        Images, or images flattened in C order.
    image_shape : tuple or None
        Needed for flattened rows; checked against 3-D and 4-D input.
    what : str, default="X"
        Name of X in error messages.

    Returns
    -------
    rows : ndarray of shape (n, H * W * C)
        The flattened images.
    image_shape : tuple
        (H, W) or (H, W, C).
    """
    ndim = image_ndim(X)
    if ndim in (3, 4):
        X = np.asarray(X)
        if image_shape is not None:
            expected = check_image_shape(image_shape, int(np.prod(X.shape[1:])))
            if tuple(X.shape[1:]) != expected:
                raise ValueError(
                    f"{what} holds images of shape {X.shape[1:]}, but "
                    f"image_shape={tuple(image_shape)!r}; give images of that "
                    "shape or fix image_shape."
                )
        return X.reshape(X.shape[0], -1), tuple(int(s) for s in X.shape[1:])
    if ndim != 2:
        raise ValueError(
            f"{what} must hold images of shape (n_images, height, width[, "
            f"channels]) or flattened rows (n_images, n_pixels) with image_shape, "
            f"got an array with {ndim} dimension(s)."
        )
    if image_shape is None:
        raise ValueError(
            f"{what} is 2-D: flattened images need image_shape=(height, width) or "
            "(height, width, channels); or pass the images as an array of shape "
            "(n_images, height, width[, channels])."
        )
    n_columns = X.shape[1] if hasattr(X, "shape") else np.asarray(X).shape[1]
    return X, check_image_shape(image_shape, n_columns)


def n_channels(image_shape):
    """Number of channels of an image shape (1 for (H, W)).

    Parameters
    ----------
    image_shape : tuple of int
        (H, W) or (H, W, C).

    Returns
    -------
    n_channels : int
        C, or 1.
    """
    return 1 if len(image_shape) == 2 else int(image_shape[2])


def pixel_columns(pixel_labels, image_shape):
    """Group of every column from the group of every pixel.

    Parameters
    ----------
    pixel_labels : array-like of int of shape (H, W) or (H * W,)
        Group of every pixel.
    image_shape : tuple of int
        (H, W) or (H, W, C).

    Returns
    -------
    labels : ndarray of shape (H * W * C,)
        Group of every column of the flattened rows.
    """
    return np.repeat(np.asarray(pixel_labels).reshape(-1), n_channels(image_shape))


def relabel(label_map):
    """Renumber a label map 0..K-1 in order of each group's first pixel (row by row).

    Parameters
    ----------
    label_map : array-like of int
        Group ids of the pixels.

    Returns
    -------
    label_map : ndarray of int64
        Same shape, with ids 0..K-1.
    """
    flat = np.asarray(label_map).reshape(-1)
    _, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.reshape(-1)].reshape(np.shape(label_map)).astype(np.int64)


def patch_label_map(height, width, patch_size, remainder="shrink"):
    """Label map of a grid of square (or rectangular) patches.

    Parameters
    ----------
    height, width : int
        Size of the image in pixels.
    patch_size : int or tuple of int
        Height and width of a patch.
    remainder : {"shrink", "merge", "error"}, default="shrink"
        When the patches do not tile the image: "shrink" makes the last
        row and column of patches smaller, "merge" adds the leftover pixels
        to the last full patches (which get larger), "error" raises.

    Returns
    -------
    label_map : ndarray of shape (height, width)
        Patch ids in row-major order of the patches.
    """
    sizes = (patch_size, patch_size) if isinstance(patch_size, Integral) else patch_size
    if (
        isinstance(sizes, (str, bytes))
        or not hasattr(sizes, "__len__")
        or len(sizes) != 2
        or not all(isinstance(v, Integral) and not isinstance(v, bool) for v in sizes)
        or min(sizes) < 1
    ):
        raise ValueError(
            f"patch_size={patch_size!r} must be an int or a pair (height, width) "
            "of ints >= 1."
        )
    ph, pw = int(sizes[0]), int(sizes[1])
    rest_h, rest_w = height % ph, width % pw
    if (rest_h or rest_w) and remainder == "error":
        raise ValueError(
            f"Patches of {ph}x{pw} pixels do not tile a {height}x{width} image "
            f"({rest_h} row(s) and {rest_w} column(s) are left over); pick a "
            "patch size that divides the image, or remainder='shrink' (smaller "
            "edge patches) or 'merge' (leftover pixels join the last patches)."
        )

    def index(n, p):
        idx = np.arange(n) // p
        if remainder == "merge" and n >= p:
            idx = np.minimum(idx, n // p - 1)
        return idx

    rows, cols = index(height, ph), index(width, pw)
    return rows[:, None] * (int(cols.max()) + 1) + cols[None, :]


def region_adjacency(label_map, adjacency="4"):
    """Find the edges (i, j), i < j, between groups with touching pixels.

    Parameters
    ----------
    label_map : ndarray of int of shape (H, W)
        Group id of every pixel.
    adjacency : {"4", "8"}, default="4"
        Pixels touch through a side ("4"), or also through a corner ("8").

    Returns
    -------
    edges : ndarray of shape (n_edges, 2)
        The pairs of group ids, sorted.
    """
    lm = np.asarray(label_map)
    pairs = [(lm[:, 1:], lm[:, :-1]), (lm[1:, :], lm[:-1, :])]
    if str(adjacency) == "8":
        pairs += [(lm[1:, 1:], lm[:-1, :-1]), (lm[1:, :-1], lm[:-1, 1:])]
    a = np.concatenate([p[0].ravel() for p in pairs])
    b = np.concatenate([p[1].ravel() for p in pairs])
    keep = a != b
    e = np.stack([np.minimum(a, b)[keep], np.maximum(a, b)[keep]], axis=1)
    if e.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    return np.unique(e, axis=0).astype(np.int64)


def connected_label_map(label_map, adjacency="4"):
    """Split every group into its connected components and relabel.

    Parameters
    ----------
    label_map : array-like of int of shape (H, W)
        Group id of every pixel.
    adjacency : {"4", "8"}, default="4"
        Connectivity of the components, as in :func:`region_adjacency`.

    Returns
    -------
    label_map : ndarray of int64 of shape (H, W)
        One id per connected component, in order of first pixel.
    """
    from scipy import ndimage

    lm = np.asarray(label_map)
    structure = np.ones((3, 3)) if str(adjacency) == "8" else None
    out = np.zeros(lm.shape, dtype=np.int64)
    next_id = 0
    for k in np.unique(lm):
        comp, n = ndimage.label(lm == k, structure=structure)
        out[comp > 0] = comp[comp > 0] - 1 + next_id
        next_id += n
    return relabel(out)


def groups_from_label_map(label_map, image_shape):
    """Column positions of every group, in label order.

    Parameters
    ----------
    label_map : array-like of int of shape (H, W)
        Group ids 0..K-1 of the pixels.
    image_shape : tuple of int
        (H, W) or (H, W, C).

    Returns
    -------
    groups : list of ndarray of int
        Sorted column positions of each group of the flattened rows.
    """
    cols = pixel_columns(label_map, image_shape)
    order = np.argsort(cols, kind="stable")
    bounds = np.searchsorted(cols[order], np.arange(int(cols.max()) + 2))
    return [np.sort(order[bounds[k] : bounds[k + 1]]) for k in range(len(bounds) - 1)]


def label_map_from_groups(groups, image_shape):
    """Pixel label map (H, W) from column groups; channels must stay together.

    Parameters
    ----------
    groups : list of array-like of int
        Column positions of each group of the flattened rows.
    image_shape : tuple of int
        (H, W) or (H, W, C).

    Returns
    -------
    label_map : ndarray of int64 of shape (H, W)
        Group of every pixel (its position in ``groups``).
    """
    H, W = image_shape[:2]
    C = n_channels(image_shape)
    n = H * W * C
    labels = np.full(n, -1, dtype=np.int64)
    for k, g in enumerate(groups):
        g = np.asarray(g, dtype=np.int64).reshape(-1)
        out = g[(g < 0) | (g >= n)]
        if out.size:
            raise ValueError(
                f"group {k} holds column position {int(out[0])}, out of range for "
                f"images of shape {tuple(image_shape)}; give positions 0..{n - 1} "
                "of the flattened rows."
            )
        labels[g] = k
    per_pixel = labels.reshape(H * W, C)
    missing = (per_pixel < 0).all(axis=1)
    if missing.any():
        p = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"{int(missing.sum())} pixel(s) are in no group (the first at "
            f"({p // W}, {p % W})); every pixel must be in one group: add them "
            "to the groups, e.g. as a group of their own."
        )
    if (per_pixel != per_pixel[:, :1]).any():
        p = int(np.flatnonzero((per_pixel != per_pixel[:, :1]).any(axis=1))[0])
        raise ValueError(
            f"The channels of pixel ({p // W}, {p % W}) are in different groups; "
            "keep all channels of a pixel in one group."
        )
    return per_pixel[:, 0].reshape(H, W)


# -- baselines and models ------------------------------------------------------
def blur_images(images, image_shape):
    """Blur each image by a Gaussian of standard deviation ``max(H, W) / 8`` pixels.

    Parameters
    ----------
    images : ndarray of shape (n, H * W * C)
        Flattened images.
    image_shape : tuple of int
        (H, W) or (H, W, C); channels are not mixed.

    Returns
    -------
    blurred : ndarray of shape (n, H * W * C)
        The blurred images, flattened.
    """
    from scipy.ndimage import gaussian_filter

    sigma = max(image_shape[0], image_shape[1]) / 8.0
    imgs = images.reshape(-1, *image_shape).astype(np.float64)
    spatial = (0, sigma, sigma) + ((0,) if len(image_shape) == 3 else ())
    return gaussian_filter(imgs, sigma=spatial, mode="nearest").reshape(images.shape[0], -1)


def baseline_rows(baseline, images, image_shape, *, reference=None):
    """The baseline image of every explained image, as rows (n, H * W * C).

    Parameters
    ----------
    baseline : {"zeros", "mean", "blur"} or array-like
        "zeros": a black image; "mean": the mean image of ``reference``;
        "blur": each image blurred by a Gaussian of standard deviation
        ``max(H, W) / 8`` pixels; an array of the image's shape (or its
        flattened row, or a batch of one of them): that image.
    images : ndarray of shape (n, H * W * C)
        The explained images, flattened.
    image_shape : tuple
        (H, W) or (H, W, C).
    reference : array-like of images or rows, or None, default=None
        Reference images for "mean".

    Returns
    -------
    baselines : ndarray of shape (n, H * W * C)
        One baseline row per image (possibly a read-only broadcast view).
    """
    n, d = images.shape
    if isinstance(baseline, str):
        if baseline == "zeros":
            return np.zeros((n, d))
        if baseline == "blur":
            return blur_images(images, image_shape)
        if baseline == "mean":
            if reference is None:
                raise ValueError(
                    "baseline='mean' is the mean image of a reference set, never of "
                    "the explained images; pass it as fit(X, reference=images), or "
                    "give the mean image itself as baseline=reference.mean(axis=0)."
                )
            ref, _ = as_image_rows(reference, image_shape, "reference")
            if ref.shape[1] != d:
                raise ValueError(
                    f"reference has {ref.shape[1]} values per image but the images "
                    f"have {d}; give reference images of shape {image_shape}."
                )
            return np.broadcast_to(np.asarray(ref, dtype=np.float64).mean(axis=0), (n, d))
        raise ValueError(
            f"baseline={baseline!r} is unknown; use 'zeros', 'mean', 'blur' or an "
            "image array."
        )
    arr = np.asarray(baseline, dtype=np.float64)
    shapes = (tuple(image_shape), (d,))
    if arr.shape not in shapes and arr.ndim >= 2 and arr.shape[0] == 1 and (
        arr.shape[1:] in shapes
    ):
        arr = arr[0]  # one image, or its flattened row, given as a batch of one
    if arr.shape not in shapes:
        raise ValueError(
            f"baseline has shape {arr.shape}, but the images have shape "
            f"{tuple(image_shape)}; give one image of that shape (or its "
            f"flattened row of {d} values), or a batch of one of them."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            "baseline contains NaN or infinity; give finite pixel values, e.g. "
            "np.nan_to_num(baseline), or baseline='zeros' or 'blur'."
        )
    return np.broadcast_to(arr.reshape(-1), (n, d))


def check_baseline_values(baseline):
    """Refuse a baseline image that does not hold numbers."""
    if baseline is None or isinstance(baseline, str):
        return
    try:
        np.asarray(baseline, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "baseline must be an image of numbers (or 'zeros', 'mean', "
            f"'blur'), got values of dtype {np.asarray(baseline).dtype}; give the "
            "baseline image as a numeric array of the images' shape."
        ) from exc


# -- the Explainer on images -----------------------------------------------------
def explainer_image_setup(baseline, groups, X, image_shape=None):
    """Image shape and baseline row of an Explainer.

    Parameters
    ----------
    baseline : {"zeros", "mean", "blur"}, array-like or None
        The explainer's ``baseline``.
    groups : object
        The explainer's ``groups``; its ``image_shape`` is read when it has
        one and the images did not give it.
    X : array-like of shape (n_samples, n_features)
        The rows passed to the explainer's fit (images flattened).
    image_shape : tuple or None, default=None
        The shape of the images passed to fit, when they were images.

    Returns
    -------
    image_shape : tuple or None
        Of the images, or from the ``image_shape`` of ``groups``.
    baseline_row : ndarray of shape (n_features,) or None
        None when ``baseline`` is None (the ``background`` rows are used);
        in the dtype of the images' rows.
    """
    shape = image_shape
    if shape is None and hasattr(groups, "get_params"):
        given = groups.get_params(deep=False).get("image_shape", None)
        if given is not None:
            shape = check_image_shape(given, X.shape[1])
    if baseline is None:
        return shape, None
    try:
        rows = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "baseline= is for images, whose pixels are numbers; X has "
            "non-numeric columns. Use background= for tabular data."
        ) from None
    d = rows.shape[1]
    dtype = np.float64 if image_shape is None else np.asarray(X).dtype
    if isinstance(baseline, str) and baseline == "mean":
        if rows.shape[0] < 2:
            raise ValueError(
                "baseline='mean' is the mean image of the rows passed to fit, a "
                "reference set, and fit got a single image (whose mean would be "
                "the image itself); fit on reference images, or give the mean "
                "image as an array: baseline=reference.mean(axis=0)."
            )
        return shape, rows.mean(axis=0).astype(dtype)
    if isinstance(baseline, str) and baseline == "blur":
        if shape is None:
            raise ValueError(
                "baseline='blur' needs the image shape; pass the images as an "
                "array of shape (n, height, width[, channels]), or give the "
                "blurred image as an array."
            )
        if rows.shape[0] != 1:
            raise ValueError(
                f"baseline='blur' blurs the explained image, but fit got "
                f"{rows.shape[0]} images; fit the explainer on the one image it "
                "explains (fit(x[None])), or give the blurred image as an array."
            )
        return shape, blur_images(rows, shape)[0].astype(dtype)
    # baseline_rows takes one image, its flattened row, or a batch of one of them
    return shape, np.array(baseline_rows(baseline, rows[:1], shape or (d,))[0], dtype=dtype)
