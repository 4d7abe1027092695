"""Per-image AGREED: the part of :class:`~skdecomp.AdaptiveGrouper` that fits images.

Every image is grouped against its own baseline on the sample {x, b} (see
:func:`~skdecomp._grouping._image.agreed_images`); the fitted attributes
describe the first image, and ``label_maps_`` every image.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils.validation import check_is_fitted, validate_data

from .._game import CoalitionGame
from .._image import (
    ImageModel,
    baseline_rows,
    check_image_shape,
    colour_tree,
    connected_label_map,
    groups_from_label_map,
    image_dtype,
    read_images,
    region_adjacency,
    relabel,
    wrap_runtime,
)
from ._image import agreed_images, image_response, initial_label_maps
from ._base import _progress
from ._merge import check_cut, cut

__all__ = ["ImageAgreedMixin"]

# A partition whose loss is at most this share of the output variance on
# {x, b} already agrees, whatever share of the initial loss it leaves.
_AGREEING_SHARE = 0.05

# Model evaluations per initial group at max_evaluations="auto".
_EVALUATIONS_PER_GROUP = 10

# Regions of the colour tree that AGREED starts from on an image when
# initial_groups is None and no budget is set: about 1,300 evaluations per
# photo, and regions of about 400 pixels at 224x224.
_INITIAL_REGIONS = 128


def initial_regions(max_evaluations, n_pixels):
    """Regions of the colour tree AGREED starts from: as many as its budget scores."""
    if isinstance(max_evaluations, Integral) and not isinstance(max_evaluations, bool):
        k = int(max_evaluations) // _EVALUATIONS_PER_GROUP
    else:
        k = _INITIAL_REGIONS
    return int(min(n_pixels, max(2, k)))


class _Counted:
    """The model's response, advancing a progress bar by the images it is given."""

    def __init__(self, response, bar):
        self._response, self._bar = response, bar

    def __call__(self, X, *args, **kwargs):
        out = self._response(X, *args, **kwargs)
        self._bar.update(len(X))
        return out

    def __getattr__(self, name):
        return getattr(self._response, name)


class ImageAgreedMixin:
    """Fit, path and label maps of per-image AGREED."""

    def _fit_images(self, X, reference):
        """Per-image AGREED: the merge loop on every image against its baseline."""
        if not (isinstance(self.imputer, str) and self.imputer == "marginal"):
            raise ValueError(
                "Images are grouped against one baseline image, the marginal "
                "game; imputer applies to tabular data only. Use "
                "imputer='marginal' (the default) for images."
            )
        # "auto": the paper's rule for a number of groups or rel_tol, which
        # lowers the loss most at a given number of groups; else the pairs
        # rule with its price and bounds
        paper = self.strategy == "paper" or (
            self.strategy == "auto"
            and (self.rel_tol is not None or isinstance(self.n_groups, Integral))
        )
        self.strategy_ = "paper" if paper else "pairs"
        flat, image_shape = read_images(
            X, self.image_shape, dtype=image_dtype(wrap_runtime(self.estimator))
        )
        flat = validate_data(self, flat, dtype="numeric", ensure_min_features=1, reset=True)
        self.image_shape_ = image_shape = check_image_shape(image_shape, flat.shape[1])
        threads = None if self.n_jobs is None else effective_n_jobs(self.n_jobs)
        self.estimator_, response, self.output_names_ = image_response(
            self.estimator, self.response_method, self.target, flat, image_shape,
            n_threads=threads,
        )
        # an image model's runtime has the threads: no workers of our own
        n_jobs = None if isinstance(self.estimator_, ImageModel) else self.n_jobs
        self.n_outputs_ = len(self.output_names_)
        self.response_method_ = response.method
        base = "zeros" if self.baseline is None else self.baseline
        baselines = baseline_rows(base, flat, image_shape, reference=reference)
        self.baseline_images_ = np.asarray(baselines).reshape(-1, *image_shape).copy()
        # one copy of the baselines: the merges and transform's game read it
        baselines = self.baseline_images_.reshape(len(self.baseline_images_), -1)
        if self.initial_groups is None:
            # a data-aware start: the cut of each image's colour tree
            n_regions = initial_regions(self.max_evaluations,
                                        image_shape[0] * image_shape[1])
            if isinstance(self.n_groups, Integral):  # never fewer than asked for
                n_regions = min(max(n_regions, int(self.n_groups)),
                                image_shape[0] * image_shape[1])
            self.colour_trees_ = [colour_tree(im.reshape(image_shape))
                                  for im in flat.reshape(-1, *image_shape)]
            self.initial_label_maps_ = np.stack(
                [connected_label_map(t.cut(n_regions), self.adjacency)
                 for t in self.colour_trees_])
        else:
            self.colour_trees_ = None
            self.initial_label_maps_ = initial_label_maps(
                self.initial_groups, flat, image_shape, self.adjacency
            )
        n_initial = max(int(m.max()) + 1 for m in self.initial_label_maps_)
        max_size, budget = self.max_group_size, self.max_evaluations
        auto = not paper and not isinstance(self.n_groups, Integral)
        if max_size is None and auto:
            # no group larger than a quarter of the image: the map stays readable
            max_size = image_shape[0] * image_shape[1] // 4
        if isinstance(budget, str):
            budget = _EVALUATIONS_PER_GROUP * n_initial if auto else None
        bar = _progress(self.verbose, None if budget is None or paper
                        else int(budget) * len(flat), "AGREED model evaluations")
        trees, ev = agreed_images(
            _Counted(response, bar), flat, baselines, image_shape, self.initial_label_maps_,
            adjacency=self.adjacency,
            n_groups=self.n_groups if isinstance(self.n_groups, Integral) else None,
            rel_tol=0.25 if self.rel_tol is None else self.rel_tol,
            max_group_size=max_size,
            merge_score=self.merge_score, max_memory=self.max_memory, n_jobs=n_jobs,
            strategy=self.strategy_, max_evaluations=None if paper else budget,
            price=self.group_penalty * min(1.0, 20.0 / max(n_initial, 1)),
        )
        bar.close()
        self.max_group_size_ = max_size
        self.model_calls_ = ev.model_calls
        self.model_batches_ = ev.model_batches
        # history_, loss_ and the partition describe the first image
        initial = groups_from_label_map(self.initial_label_maps_[0], image_shape)
        names = [f"g{k}" for k in range(len(initial))]
        merged = trees[0].leaves()[len(initial) :]
        names += [":".join(f"g{k}" for k in leaves) for leaves in merged]
        self._set_merges(trees, initial, names, images=True)
        self.label_maps_ = np.stack(
            [self._cut_map(s, t.n_leaves - t.n_merges) for s, t in enumerate(trees)]
        )
        self.label_map_ = self.label_maps_[0]
        variance = float(ev.output_variance(0))
        self._set_remaining(
            float(self.initial_losses_[0]), float(self.losses_[0]), variance,
            agreeing=_AGREEING_SHARE,
        )
        self.stop_reasons_ = [t.stop_reason for t in trees]
        self._set_image_path(trees[0], initial, variance)
        groups = groups_from_label_map(self.label_map_, image_shape)
        self._set_partition(groups, [f"g{k}" for k in range(len(groups))], arrays=True)
        # transform: each group's Arch effect against the first image's baseline
        self.background_ = baselines[:1]  # a view of baseline_images_
        f_b = ev.baseline_values[0]
        # over the groups, not one player per column (no 12 million names)
        self.game_ = CoalitionGame(
            response, self.background_, self.labels_, group_names=list(self.group_names_),
            output_names=self.output_names_, n_jobs=self.n_jobs,
            background_prediction=np.asarray(f_b, dtype=np.float64).reshape(1, -1),
        )
        self.expected_value_ = float(f_b[0]) if self.n_outputs_ == 1 else np.asarray(f_b)
        return self

    def _set_image_path(self, tree, initial, variance):
        """``path_`` of the first image: its partitions along the merges and past the stop.

        Every entry gives the trade-off of one partition: its loss, the number
        of groups, the largest group's share of the image and the effective
        number of groups ``exp(-sum_k p_k log p_k)`` (``p_k`` the area share of
        group k; K for K equal groups).
        """
        full = tree.with_tail()
        n_kept = tree.n_merges
        area = {k: len(g) for k, g in enumerate(initial)}
        total = float(sum(area.values()))
        names = [f"g{k}" for k in range(full.n_leaves)]
        for leaves in full.leaves()[full.n_leaves:]:
            names.append(":".join(f"g{k}" for k in leaves))
        self._path_tree = full
        self.path_ = []
        base = full.losses[0]
        live = dict(area)
        for t in range(full.n_merges + 1):
            merged = None
            if t:
                a, b = full.children[t - 1]
                live[full.n_leaves + t - 1] = live.pop(a) + live.pop(b)
                merged = (names[a], names[b])
            p = np.array(list(live.values())) / total
            self.path_.append({
                "n_groups": len(live),
                "merged": merged,
                "loss": full.losses[t],
                "largest_group": int(max(live.values())),
                "largest_share": float(p.max()),
                "effective_n_groups": float(np.exp(-np.sum(p * np.log(p)))),
                "remaining_share": float(full.losses[t] / base) if base > 0 else 0.0,
                "loss_share_of_variance": float(full.losses[t] / variance)
                if variance > 0 else 0.0,
                "model_evaluations": int(full.model_calls[t - 1]) if t else None,
                "chosen": t == n_kept,
            })

    def _check_image_index(self, image, what):
        """Check that ``image`` is the index of a fitted image."""
        check_is_fitted(self)
        if not hasattr(self, "label_maps_"):
            raise ValueError(
                f"{what}() is for a grouper fitted on images; this one was fitted on a "
                "table. Its merges are in path_ (pass the grouper itself as "
                "Explainer(hierarchy=...))."
            )
        n_images = self.label_maps_.shape[0]
        if not isinstance(image, Integral) or not -n_images <= image < n_images:
            raise ValueError(
                f"image={image!r} is not the index of one of the {n_images} fitted images."
            )

    def _image_tree(self, image):
        """The merges of an image, past the stop for the first (``path_``)."""
        tree = self._trees[image]
        return tree.with_tail() if image in (0, -len(self._trees)) else tree

    def _cut_map(self, image, n_groups):
        """Label map of an image with ``n_groups`` groups along its merges."""
        _, labels = cut(self._image_tree(image), n_groups)
        return relabel(labels[self.initial_label_maps_[image]])

    def cut_label_map(self, n_groups, image=0):
        """Images: the label map with ``n_groups`` groups along an image's merges.

        Parameters
        ----------
        n_groups : int
            Between the image's final and initial numbers of groups; for the
            first image, any partition of ``path_``, past the stop too.
        image : int, default=0
            Index of the image among those passed to :meth:`fit`.

        Returns
        -------
        label_map : ndarray of shape (H, W)
            Group ids in order of each group's first pixel (row by row).
        """
        self._check_image_index(image, "cut_label_map")
        check_cut(self._image_tree(image), n_groups, f"merge history of image {image}")
        return self._cut_map(image, n_groups)

    def linkage(self, image=0, n_leaves=None):
        """Images: an image's merges as a binary tree, a scipy linkage matrix.

        AGREED's merges of the image (for the first image, its ``path_`` past
        the stop too), then the groups left joined two at a time, the
        adjacent pair of least area first, up to one group. As
        ``Explainer(hierarchy=...)`` with ``groups=`` the initial groups,
        it splits the image in two at every node, which the partition
        recursion of the Owen value (``method_params={"estimator":
        "partition"}``) expands at 2 coalitions per node and context.

        With ``n_leaves``, for a grouper that started from its colour tree
        (``initial_groups=None``), the tree reaches below the initial groups
        to ``n_leaves`` finer regions of the same colour tree
        (:meth:`leaf_label_map`): the colour tree's merges that build each
        initial group from them, then AGREED's merges above, as before.

        Parameters
        ----------
        image : int, default=0
            Index of the image among those passed to :meth:`fit`.
        n_leaves : int or None, default=None
            Number of leaves below the initial groups; None: the initial
            groups are the leaves.

        Returns
        -------
        Z : ndarray of shape (n_leaves - 1, 4)
            Per merge: the two clusters (the leaves ``0 .. n_leaves - 1``,
            the initial groups in the order of ``initial_label_maps_`` or
            the regions of :meth:`leaf_label_map`, then the merges in
            order), the merge's rank (1, 2, ...) and its number of leaves.
        """
        self._check_image_index(image, "linkage")
        if n_leaves is not None:
            return self._fine_linkage(image, n_leaves)
        tree = self._image_tree(image)
        lm0 = np.asarray(self.initial_label_maps_[image])
        K = tree.n_leaves
        area = np.bincount(lm0.ravel(), minlength=K).astype(np.int64)
        children = [(int(a), int(b)) for a, b in tree.children]
        size = [1] * K + [0] * len(children)
        cell_area = list(area) + [0] * len(children)
        top = np.arange(K)
        for t, (a, b) in enumerate(children):
            size[K + t] = size[a] + size[b]
            cell_area[K + t] = cell_area[a] + cell_area[b]
            top[(top == a) | (top == b)] = K + t
        initial_edges = region_adjacency(lm0, self.adjacency)
        while len(children) < K - 1:
            # the edges between the current groups, from those of the initial ones
            edges = np.sort(top[initial_edges], axis=1)
            edges = np.unique(edges[edges[:, 0] != edges[:, 1]], axis=0)
            total = np.asarray(cell_area)[edges].sum(axis=1)
            a, b = (int(v) for v in edges[np.lexsort((edges[:, 1], edges[:, 0], total))[0]])
            new = K + len(children)
            children.append((a, b))
            size.append(size[a] + size[b])
            cell_area.append(cell_area[a] + cell_area[b])
            top[(top == a) | (top == b)] = new
        Z = np.empty((K - 1, 4))
        Z[:, :2] = children
        Z[:, 2] = np.arange(1, K)
        Z[:, 3] = size[K:]
        return Z

    def _colour_tree(self, image, what):
        """The colour tree of an image, or a ValueError for a grouper without one."""
        self._check_image_index(image, what)
        trees = getattr(self, "colour_trees_", None)
        if trees is None:
            raise ValueError(
                f"{what}(n_leaves=...) reads the colour tree that the grouper starts "
                "from with initial_groups=None; this one started from "
                f"initial_groups={self.initial_groups!r}. Use linkage() without "
                "n_leaves, whose leaves are the initial groups."
            )
        return trees[image]

    def leaf_label_map(self, n_leaves, image=0):
        """Images: ``n_leaves`` regions of an image's colour tree, a label map.

        For a grouper that started from its colour tree (``initial_groups=
        None``): the tree's cut into ``n_leaves`` regions, each inside one
        initial group when ``n_leaves`` is at least their number (the leaves
        of ``linkage(image, n_leaves)``).

        Parameters
        ----------
        n_leaves : int
            Number of regions, from 1 to the tree's number of leaf blocks.
        image : int, default=0
            Index of the image among those passed to :meth:`fit`.

        Returns
        -------
        label_map : ndarray of shape (H, W)
            Region ids in order of each region's first pixel (row by row).
        """
        return self._colour_tree(image, "leaf_label_map").cut(n_leaves)

    def _fine_linkage(self, image, n_leaves):
        tree = self._colour_tree(image, "linkage")
        initial = np.asarray(self.initial_label_maps_[image])
        K0 = int(initial.max()) + 1
        if (not isinstance(n_leaves, Integral) or isinstance(n_leaves, bool)
                or not K0 <= n_leaves <= tree.n_blocks):
            raise ValueError(
                f"n_leaves={n_leaves!r} must be an int from the {K0} initial groups "
                f"to the {tree.n_blocks} leaf blocks of the image's colour tree."
            )
        top = self.linkage(image)  # AGREED's tree over the initial groups
        if n_leaves == K0:
            return top
        below, top_nodes = tree.linkage_between(int(n_leaves), K0)
        # initial group g is the region of the cut into K0 with the same first pixel
        cut0 = tree.cut(K0)
        first = np.unique(initial.ravel(), return_index=True)[1]
        node = top_nodes[cut0.ravel()[first]]
        Z = np.empty((n_leaves - 1, 4))
        Z[: len(below)] = below
        size = np.concatenate([np.ones(n_leaves), below[:, 3]])
        offset = n_leaves + len(below)
        for t, (a, b, _, _) in enumerate(top):
            a, b = (int(node[int(c)]) if c < K0 else int(c) - K0 + offset for c in (a, b))
            Z[len(below) + t] = a, b, 0, size[a] + size[b]
            size = np.append(size, size[a] + size[b])
        Z[:, 2] = np.arange(1, n_leaves)
        return Z
