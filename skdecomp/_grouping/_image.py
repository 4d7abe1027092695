"""Images: pixel-group partitions, region adjacency and per-image AGREED.

An image of shape (H, W) or (H, W, C) is a row of ``H * W * C`` columns in
C order (row, column, channel): pixel ``p = r * W + c`` owns the columns
``p * C .. p * C + C - 1``. Groups of pixels are label maps (H, W) of group
ids; the channels of a pixel are always in the same group.

Per-image AGREED (see the user guide, :ref:`agreed`) explains one image x against one
baseline image b with the mixture Q = (delta_x + delta_b) / 2 as sample
(N = 2). Its loss is ``L = 1/4 sum_k (Arch_k - Occ_k)**2`` with
``Arch_k = f(x_{G_k}, b_rest) - f(b)`` and ``Occ_k = f(x) - f(b_{G_k}, x_rest)``;
candidate merges are limited to adjacent groups, so groups stay connected.
All groups and all edges of the region adjacency graph are evaluated in one
batch, and after a merge only the new group's edges are.
Several images are merged in lockstep, so each round sends the new edges of
every image to the model in one batch.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import validate_data

from .._compat import Interval, StrOptions, _fit_context
from .._config import parse_memory as _parse_memory
from .._game import CoalitionGame
from ._groupers import _BaseGrouper
from .._model import FunctionModel, as_model, is_fitted, resolve_response

__all__ = [
    "PatchGrouper",
    "SuperpixelGrouper",
    "as_image_rows",
    "baseline_rows",
    "image_model",
    "patch_label_map",
    "region_adjacency",
]

# Losses below this fraction of the output variance on {x, b} count as zero.
_ATOL = 1e-9
# Largest number of cells (rows x columns) of hybrid images built at once.
_MAX_CELLS = 2**23

BASELINES = ("zeros", "mean", "blur")

# Default arguments of the scikit-image segmentation functions.
_SUPERPIXEL_DEFAULTS = {
    "quickshift": {"kernel_size": 2, "max_dist": 4, "ratio": 0.5},
    "slic": {"n_segments": 16, "compactness": 0.1},
    "felzenszwalb": {"scale": 1, "min_size": 4},
}


# -- shapes and rows -----------------------------------------------------------
def check_image_shape(image_shape, n_columns=None):
    """(H, W) or (H, W, C) as a tuple of ints; one entry may be -1.

    With ``n_columns``, -1 is inferred from it and the product is checked.
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
    """Number of dimensions of array-like X, without numpy array functions."""
    ndim = getattr(X, "ndim", None)
    return int(ndim) if isinstance(ndim, Integral) else np.asarray(X).ndim


def as_image_rows(X, image_shape, what="X"):
    """Images or flattened rows as a 2-D array, with the image shape.

    Parameters
    ----------
    X : array-like of shape (n, H, W), (n, H, W, C) or (n, H * W * C)
    image_shape : tuple or None
        Needed for flattened rows; checked against 3-D and 4-D input.

    Returns
    -------
    rows : ndarray of shape (n, H * W * C)
    image_shape : tuple (H, W) or (H, W, C)
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


def _channels(image_shape):
    return 1 if len(image_shape) == 2 else int(image_shape[2])


def pixel_columns(pixel_labels, image_shape):
    """Group of every column from the group of every pixel."""
    return np.repeat(np.asarray(pixel_labels).reshape(-1), _channels(image_shape))


def relabel(label_map):
    """Ids 0..K-1 in order of each group's first pixel (row by row)."""
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
    if isinstance(patch_size, Integral):
        ph = pw = int(patch_size)
    else:
        ph, pw = (int(s) for s in patch_size)
    if ph < 1 or pw < 1:
        raise ValueError(f"patch_size={patch_size!r} must be positive.")
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
    """Edges (i, j), i < j, between groups with touching pixels.

    Parameters
    ----------
    label_map : ndarray of int of shape (H, W)
    adjacency : {"4", "8"}
        Pixels touch through a side ("4"), or also through a corner ("8").

    Returns
    -------
    edges : ndarray of shape (n_edges, 2), sorted
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
    """Split every group into its connected components and relabel."""
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
    """Column positions of every group, in label order."""
    cols = pixel_columns(label_map, image_shape)
    order = np.argsort(cols, kind="stable")
    bounds = np.searchsorted(cols[order], np.arange(int(cols.max()) + 2))
    return [np.sort(order[bounds[k] : bounds[k + 1]]) for k in range(len(bounds) - 1)]


def label_map_from_groups(groups, image_shape):
    """Pixel label map (H, W) from column groups; channels must stay together."""
    H, W = image_shape[:2]
    C = _channels(image_shape)
    labels = np.full(H * W * C, -1, dtype=np.int64)
    for k, g in enumerate(groups):
        labels[np.asarray(g, dtype=np.int64)] = k
    per_pixel = labels.reshape(H * W, C)
    if (per_pixel != per_pixel[:, :1]).any():
        p = int(np.flatnonzero((per_pixel != per_pixel[:, :1]).any(axis=1))[0])
        raise ValueError(
            f"The channels of pixel ({p // W}, {p % W}) are in different groups; "
            "keep all channels of a pixel in one group."
        )
    return per_pixel[:, 0].reshape(H, W)


# -- baselines and models ------------------------------------------------------
def _blur(images, image_shape):
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
        flattened row): that image.
    images : ndarray of shape (n, H * W * C)
    image_shape : tuple
    reference : array-like of images or rows, or None
        Reference images for "mean".
    """
    n, d = images.shape
    if isinstance(baseline, str):
        if baseline == "zeros":
            return np.zeros((n, d))
        if baseline == "blur":
            return _blur(images, image_shape)
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
    if arr.shape not in (tuple(image_shape), (d,)):
        raise ValueError(
            f"baseline has shape {arr.shape}, but the images have shape "
            f"{tuple(image_shape)}; give one image of that shape (or its "
            f"flattened row of {d} values)."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("baseline contains NaN or infinity.")
    return np.broadcast_to(arr.reshape(-1), (n, d))


class ImageFunction:
    """A callable on batches of images, called with flattened rows.

    ``ImageFunction(f, image_shape)(rows)`` is ``f(rows.reshape(-1, *image_shape))``.
    """

    def __init__(self, function, image_shape):
        self.function = function
        self.image_shape = tuple(image_shape)

    def __call__(self, rows):
        rows = np.asarray(rows)
        return self.function(rows.reshape(rows.shape[0], *self.image_shape))


def image_model(estimator, image_shape):
    """The model as seen on flattened rows.

    Estimators (objects with ``predict``, ``predict_proba`` or
    ``decision_function``) receive flattened rows (n, H * W * C); a plain
    callable receives a batch of images of shape (n, *image_shape).
    """
    model = as_model(estimator)
    if isinstance(model, FunctionModel) and not isinstance(model.function, ImageFunction):
        return FunctionModel(ImageFunction(model.function, image_shape))
    return model


# -- hybrid images ---------------------------------------------------------------
class _HybridEvaluator:
    """Model outputs on hybrids of images and baselines, in large batches.

    For a pixel mask m of image s, ``ins = f(x_m, b_rest)`` and
    ``del = f(b_m, x_rest)``.
    """

    def __init__(self, response, images, baselines, image_shape, *, max_memory, n_jobs):
        self.response = response
        self.images = np.asarray(images, dtype=np.float64)
        self.baselines = np.ascontiguousarray(baselines, dtype=np.float64)
        self.channels = _channels(image_shape)
        d = self.images.shape[1]
        cells = min(_MAX_CELLS, max(1, int(max_memory) // 8))
        self.rows_per_call = max(2, cells // d)
        self.n_jobs = n_jobs
        self.model_calls = 0
        self.model_batches = 0

    def __call__(self, image_idx, pixel_masks):
        """(ins, del), each (n_requests, n_outputs)."""
        image_idx = np.asarray(image_idx, dtype=np.int64)
        pixel_masks = np.asarray(pixel_masks, dtype=bool)
        n = image_idx.shape[0]
        per_chunk = max(1, self.rows_per_call // 2)
        starts = list(range(0, n, per_chunk))

        def task(start):
            sl = slice(start, min(start + per_chunk, n))
            cols = np.repeat(pixel_masks[sl], self.channels, axis=1)
            x, b = self.images[image_idx[sl]], self.baselines[image_idx[sl]]
            data = np.concatenate([np.where(cols, x, b), np.where(cols, b, x)])
            return np.asarray(self.response(data), dtype=np.float64)

        if len(starts) > 1 and self.n_jobs not in (None, 1):
            outs = Parallel(n_jobs=self.n_jobs)(delayed(task)(s) for s in starts)
        else:
            outs = [task(s) for s in starts]
        self.model_calls += 2 * n
        self.model_batches += len(starts)
        ins = np.concatenate([o[: len(o) // 2] for o in outs])
        dele = np.concatenate([o[len(o) // 2 :] for o in outs])
        return ins, dele


# -- per-image AGREED ---------------------------------------------------------------
class _ImageState:
    """Partition, cached Arch/Occ values and adjacency of one image."""

    def __init__(self, label_map, adjacency):
        self.initial = relabel(label_map)
        self.flat = self.initial.reshape(-1).copy()  # current group id per pixel
        K = int(self.flat.max()) + 1
        self.next_id = K
        self.members = {k: [k] for k in range(K)}  # initial ids per group
        self.nbrs = {k: set() for k in range(K)}
        for i, j in region_adjacency(self.initial, adjacency):
            self.nbrs[int(i)].add(int(j))
            self.nbrs[int(j)].add(int(i))
        self.arch, self.occ, self.psi, self.edges = {}, {}, {}, {}
        self.merges, self.history = [], []
        self.done = False

    def mask(self, *ids):
        return np.isin(self.flat, ids)


def _psi(arch, occ):
    return float(0.25 * np.sum((arch - occ) ** 2))


def agreed_images(
    response, images, baselines, image_shape, initial_label_maps, *, adjacency,
    n_groups, rel_tol, merge_score, max_memory, n_jobs,
):
    """Per-image AGREED in lockstep over the images.

    Returns
    -------
    states : list of _ImageState
        Final partitions, merges and histories.
    evaluator : _HybridEvaluator
        With the model call counts.
    """
    ev = _HybridEvaluator(
        response, images, baselines, image_shape, max_memory=max_memory, n_jobs=n_jobs
    )
    states = [_ImageState(lm, adjacency) for lm in initial_label_maps]
    P = states[0].flat.size

    # one batch: f(x) and f(b), every group, every edge of every image
    idx, masks, keys = [], [], []
    for s, st in enumerate(states):
        idx.append(s)
        masks.append(np.ones(P, dtype=bool))
        keys.append(("full",))
        for k in st.members:
            idx.append(s)
            masks.append(st.flat == k)
            keys.append(("group", k))
        for i in st.nbrs:
            for j in st.nbrs[i]:
                if i < j:
                    idx.append(s)
                    masks.append(st.mask(i, j))
                    keys.append(("edge", i, j))
    ins, dele = ev(idx, np.stack(masks))
    fx, fb = {}, {}
    for r, (s, key) in enumerate(zip(idx, keys)):
        if key[0] == "full":
            fx[s], fb[s] = ins[r], dele[r]
    for r, (s, key) in enumerate(zip(idx, keys)):
        st = states[s]
        arch, occ = ins[r] - fb[s], fx[s] - dele[r]
        if key[0] == "group":
            st.arch[key[1]], st.occ[key[1]] = arch, occ
            st.psi[key[1]] = _psi(arch, occ)
        elif key[0] == "edge":
            st.edges[key[1:]] = (arch, occ)
    for s, st in enumerate(states):
        st.loss = st.initial_loss = float(sum(st.psi.values()))
        var = float(np.sum(((fx[s] - fb[s]) / 2.0) ** 2))
        st.atol = _ATOL * max(var, np.finfo(float).tiny)
        st.f_x, st.f_b = fx[s], fb[s]

    def stop(st):
        K = len(st.members)
        if K <= 1:
            return True
        if n_groups is not None:
            return K <= n_groups
        return st.loss <= max(rel_tol * st.initial_loss, st.atol)

    for st in states:
        st.done = stop(st)
    while True:
        idx, masks, keys = [], [], []
        for s, st in enumerate(states):
            if st.done:
                continue
            i = max(sorted(st.members), key=lambda g: st.psi[g] if st.nbrs[g] else -np.inf)
            cands = sorted(st.nbrs[i])
            scores = []
            for j in cands:
                a_ij, o_ij = st.edges[(min(i, j), max(i, j))]
                if merge_score == "loss":
                    scores.append(st.psi[i] + st.psi[j] - _psi(a_ij, o_ij))
                else:
                    i_xb = a_ij - st.arch[i] - st.arch[j]
                    i_bx = o_ij - st.occ[i] - st.occ[j]
                    scores.append(float(0.25 * np.sum(i_xb**2 + i_bx**2)))
            best = int(np.argmax(scores))
            j = cands[best]
            g = st.next_id
            st.next_id += 1
            a_g, o_g = st.edges[(min(i, j), max(i, j))]
            first, second = sorted((i, j), key=lambda k: min(st.members[k]))
            entry = (list(st.members[first]), list(st.members[second]))
            st.members[g] = sorted(st.members.pop(i) + st.members.pop(j))
            st.flat[(st.flat == i) | (st.flat == j)] = g
            st.arch[g], st.occ[g] = a_g, o_g
            st.psi[g] = _psi(a_g, o_g)
            nb = (st.nbrs.pop(i) | st.nbrs.pop(j)) - {i, j}
            st.nbrs[g] = nb
            for h in nb:
                st.nbrs[h] -= {i, j}
                st.nbrs[h].add(g)
            st.edges = {e: v for e, v in st.edges.items() if i not in e and j not in e}
            for k in (i, j):
                del st.arch[k], st.occ[k], st.psi[k]
            new_loss = float(sum(st.psi.values()))
            st.merges.append((min(entry[0]), min(entry[1])))
            st.history.append(
                {
                    "members": entry,
                    "score": float(scores[best]),
                    "loss_before": st.loss,
                    "loss_after": new_loss,
                    "n_groups": len(st.members),
                    "model_calls": None,
                }
            )
            st.loss = new_loss
            st.done = stop(st)
            if not st.done:
                for h in sorted(nb):
                    idx.append(s)
                    masks.append(st.mask(g, h))
                    keys.append((g, h))
        if not idx:
            break
        ins, dele = ev(idx, np.stack(masks))
        for r, (s, (g, h)) in enumerate(zip(idx, keys)):
            st = states[s]
            st.edges[(min(g, h), max(g, h))] = (ins[r] - st.f_b, st.f_x - dele[r])
        for st in states:
            if st.history and st.history[-1]["model_calls"] is None:
                st.history[-1]["model_calls"] = ev.model_calls
    for st in states:
        for entry in st.history:
            if entry["model_calls"] is None:
                entry["model_calls"] = ev.model_calls
        st.label_map = relabel(st.flat.reshape(st.initial.shape))
    return states, ev


def cut_label_map(initial_label_map, merges, n_groups):
    """Label map after the first merges, leaving ``n_groups`` groups."""
    lm = relabel(initial_label_map)
    K0 = int(lm.max()) + 1
    parent = np.arange(K0)

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in merges[: K0 - n_groups]:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    roots = np.array([find(a) for a in range(K0)])
    return relabel(roots[lm])


def fit_image_agreed(grouper, X, y=None, reference=None):
    """Fit an :class:`AdaptiveGrouper` in image mode (``image_shape`` set)."""
    flat, image_shape = as_image_rows(X, grouper.image_shape)
    flat = validate_data(grouper, flat, dtype="numeric", ensure_min_features=1, reset=True)
    image_shape = check_image_shape(image_shape, flat.shape[1])
    grouper.image_shape_ = image_shape
    H, W = image_shape[:2]

    estimator = grouper.estimator
    if estimator is None:
        raise ValueError(
            "AdaptiveGrouper measures interactions of a model; pass "
            "estimator=<fitted model or callable on images>, or use the grouper "
            "as Explainer(model, groups=...), which passes its model on."
        )
    model = image_model(estimator, image_shape)
    if not is_fitted(model):
        raise ValueError(
            f"{type(model).__name__} is not fitted; on images AdaptiveGrouper "
            "explains a fitted model (fit it first, or wrap a callable)."
        )
    grouper.estimator_ = model
    response, grouper.output_names_ = resolve_response(
        model, grouper.response_method, grouper.target, flat[:1]
    )
    grouper.n_outputs_ = len(grouper.output_names_)

    base = "zeros" if grouper.baseline is None else grouper.baseline
    baselines = baseline_rows(base, flat, image_shape, reference=reference)

    initial = grouper.initial_groups
    if initial is None:
        maps = np.broadcast_to(np.arange(H * W).reshape(H, W), (flat.shape[0], H, W))
    elif hasattr(initial, "fit"):
        fitted = initial.__class__(**initial.get_params()).set_params(
            image_shape=image_shape
        ).fit(flat)
        maps = getattr(fitted, "label_maps_", None)
        if maps is None:
            maps = np.broadcast_to(fitted.label_map_, (flat.shape[0], H, W))
    elif isinstance(initial, np.ndarray) and initial.ndim == 2:
        if initial.shape != (H, W):
            raise ValueError(
                f"initial_groups is a label map of shape {initial.shape}; it must "
                f"be ({H}, {W}), the image's height and width."
            )
        maps = np.broadcast_to(relabel(initial), (flat.shape[0], H, W))
    else:
        from .._partition import resolve_groups

        positions, _ = resolve_groups(initial, flat.shape[1])
        maps = np.broadcast_to(
            label_map_from_groups(positions, image_shape), (flat.shape[0], H, W)
        )
    maps = np.stack([connected_label_map(m, grouper.adjacency) for m in maps])

    states, ev = agreed_images(
        response, flat, baselines, image_shape, maps,
        adjacency=grouper.adjacency, n_groups=grouper.n_groups, rel_tol=grouper.rel_tol,
        merge_score=grouper.merge_score, max_memory=_parse_memory(grouper.max_memory),
        n_jobs=grouper.n_jobs,
    )
    grouper.label_maps_ = np.stack([st.label_map for st in states])
    grouper.label_map_ = grouper.label_maps_[0]
    grouper.initial_label_maps_ = np.stack([st.initial for st in states])
    grouper.merges_ = [np.asarray(st.merges, dtype=np.int64).reshape(-1, 2) for st in states]
    grouper.losses_ = np.array([st.loss for st in states])
    grouper.initial_losses_ = np.array([st.initial_loss for st in states])
    grouper.baseline_images_ = np.asarray(baselines).reshape(-1, *image_shape).copy()
    grouper.model_calls_ = ev.model_calls
    grouper.model_batches_ = ev.model_batches

    st0 = states[0]
    init_groups = groups_from_label_map(st0.initial, image_shape)
    grouper.initial_groups_ = [[int(c) for c in g] for g in init_groups]
    grouper._initial_names = [f"g{k}" for k in range(len(init_groups))]

    def columns(ids):
        return sorted(int(c) for k in ids for c in init_groups[k])

    grouper.history_ = [
        {
            "groups": (columns(e["members"][0]), columns(e["members"][1])),
            "names": tuple(":".join(f"g{k}" for k in m) for m in e["members"]),
            **{k: e[k] for k in ("score", "loss_before", "loss_after", "n_groups", "model_calls")},
        }
        for e in st0.history
    ]
    grouper.loss_ = float(st0.loss)
    grouper.initial_loss_ = float(st0.initial_loss)
    groups = groups_from_label_map(grouper.label_map_, image_shape)
    grouper._set_partition(groups, [f"g{k}" for k in range(len(groups))])
    # transform: each group's Arch effect against the first image's baseline
    grouper.background_ = np.asarray(baselines[:1]).copy()
    f_b = st0.f_b
    grouper.game_ = CoalitionGame(
        response, grouper.background_, np.arange(flat.shape[1]),
        output_names=grouper.output_names_, n_jobs=grouper.n_jobs,
        background_prediction=np.asarray(f_b, dtype=np.float64).reshape(1, -1),
    )
    grouper.expected_value_ = float(f_b[0]) if grouper.n_outputs_ == 1 else np.asarray(f_b)
    return grouper


# -- groupers -----------------------------------------------------------------------
class _ImageGrouper(_BaseGrouper):
    """Input handling of the image groupers."""

    def _lax_input(self):
        return False

    def _check_X(self, X, reset, lax=None):
        if image_ndim(X) in (3, 4):
            shape = self.image_shape if reset else self.image_shape_
            X, _ = as_image_rows(X, shape)
        return super()._check_X(X, reset, lax=False)

    def _fit_shape(self, X):
        """Flattened rows and the image shape, setting n_features_in_."""
        was_images = image_ndim(X) in (3, 4)
        shape = tuple(np.shape(X)[1:]) if was_images else self.image_shape
        rows = self._check_X(X, reset=True)
        if not was_images:
            as_image_rows(rows, self.image_shape)  # clear errors for 2-D rows
        self.image_shape_ = check_image_shape(shape, rows.shape[1])
        return np.asarray(rows, dtype=np.float64)

    def _set_label_map(self, label_map):
        self.label_map_ = relabel(label_map)
        groups = groups_from_label_map(self.label_map_, self.image_shape_)
        self._set_partition(groups, [f"g{k}" for k in range(len(groups))])

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
    groups_ : list of list of int
        Column positions of each group in the flattened rows.
    labels_ : ndarray of shape (n_features_in_,)
        Group of every column.
    n_groups_ : int
    group_names_ : ndarray of str
        ``"g0"``, ``"g1"``, ... (the ids of ``label_map_``).
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
        self._fit_shape(X)
        H, W = self.image_shape_[:2]
        self._set_label_map(patch_label_map(H, W, self.patch_size, self.remainder))
        return self


class SuperpixelGrouper(_ImageGrouper):
    """Superpixels of each image (QUICKSHIFT, SLIC or Felzenszwalb), via scikit-image.

    Baseline partitions to compare with AGREED. Needs scikit-image, the
    optional extra ``skdecomp[image]``. Each image gets its own partition;
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
        ``kernel_size=2, max_dist=4, ratio=0.5``; slic ``n_segments=16,
        compactness=0.1``; felzenszwalb ``scale=1, min_size=4``. Colour
        conversion to Lab is used only for 3-channel images.
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
    groups_, labels_, n_groups_, group_names_
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
                "install it with pip install 'skdecomp[image]' (or pip install "
                "scikit-image)."
            ) from None
        from sklearn.utils import check_random_state

        rows = self._fit_shape(X)
        shape = self.image_shape_
        params = dict(_SUPERPIXEL_DEFAULTS[self.segmentation])
        params.update(self.segmentation_params or {})
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
                    kw = {"convert2lab": rgb, "start_label": 0, **params}
                    lm = segmentation.slic(img, channel_axis=-1, **kw)
                else:
                    lm = segmentation.felzenszwalb(img, channel_axis=-1, **params)
            except TypeError as exc:
                raise ValueError(
                    f"method_params={self.method_params!r} are not arguments of "
                    f"skimage.segmentation.{self.method} ({exc})."
                ) from exc
            maps.append(connected_label_map(lm, "4"))
        self.label_maps_ = np.stack(maps)
        self._set_label_map(self.label_maps_[0])
        return self


# -- the Explainer on images -----------------------------------------------------
def explainer_image_setup(baseline, groups, X):
    """Image shape (from an image grouper) and baseline row of an Explainer.

    Returns
    -------
    image_shape : tuple or None
        From the ``image_shape`` of ``groups`` when it is a grouper with one.
    baseline_row : ndarray of shape (n_features,) or None
        None when ``baseline`` is None (the ``background`` rows are used).
    """
    shape = None
    if hasattr(groups, "get_params"):
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
    if isinstance(baseline, str) and baseline == "mean":
        if rows.shape[0] < 2:
            raise ValueError(
                "baseline='mean' is the mean image of the rows passed to fit, a "
                "reference set, and fit got a single image (whose mean would be "
                "the image itself); fit on reference images, or give the mean "
                "image as an array: baseline=reference.mean(axis=0)."
            )
        return shape, rows.mean(axis=0)
    if isinstance(baseline, str) and baseline == "blur":
        if shape is None:
            raise ValueError(
                "baseline='blur' needs the image shape; use an image grouper with "
                "it, e.g. groups=PatchGrouper(4, image_shape=(H, W)), or give the "
                "blurred image as an array."
            )
        if rows.shape[0] != 1:
            raise ValueError(
                f"baseline='blur' blurs the explained image, but fit got "
                f"{rows.shape[0]} images; fit the explainer on the one image it "
                "explains (fit(x[None])), or give the blurred image as an array."
            )
        return shape, _blur(rows, shape)[0]
    return shape, np.array(baseline_rows(baseline, rows[:1], shape or (d,))[0])
