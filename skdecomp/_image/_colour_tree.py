"""A binary partition tree of an image's pixels, from their colours: no model call.

Adjacent regions are merged bottom-up by Ward's criterion (the least
increase of the within-region sum of squares) on each pixel's CIELAB colour
and position, as scikit-learn's :func:`~sklearn.cluster.ward_tree` does with
the grid's connectivity: small, similar, touching regions first, so every
region of the tree is connected, compact and of one colour where the image
allows. Such data-aware trees are the coalition structures of ShapBPT
(Rashid, Amparore et al., AAAI 2026), whose regions follow the image
instead of cutting objects the way axis-aligned splits do.

The tree starts from blocks of ``block x block`` pixels (a few thousand to
some ten thousand leaves: about 0.1 to 1 s on one core), and its cuts give
partitions of any number of regions, nested: the regions of a cut at k are
unions of those of every cut at more than k.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._shapes import relabel

__all__ = ["ColourTree", "colour_tree", "lab_colours"]

# largest number of leaf blocks: 2x2 pixels up to 260x260 (EfficientNet-Lite2's
# input; 3x3 blocks there gave lower SRG on 10 and 11 of 14 photos, blur and
# grey, at 500 evaluations); ward_tree takes about 0.7 s on 12,544, 1 s on 16,900
_MAX_BLOCKS = 16_900


def lab_colours(image):
    """CIELAB colours (H, W, 3) of an RGB image; other channels standardised.

    uint8 images, and float images whose largest value exceeds 1.5, are
    read on the 0..255 scale, other float images on 0..1. Grey images
    (one channel) give their lightness; images of other channel counts
    give each channel scaled to the spread of L (0..100).
    """
    x = np.asarray(image, dtype=np.float64)
    if x.ndim == 2:
        x = x[..., None]
    if np.asarray(image).dtype == np.uint8 or (x.size and float(np.max(x)) > 1.5):
        x = x / 255.0
    if x.shape[-1] == 1:
        x = np.repeat(x, 3, axis=-1)
    if x.shape[-1] != 3:
        spread = x.std(axis=(0, 1), keepdims=True)
        return 100.0 * (x - x.mean(axis=(0, 1), keepdims=True)) / np.where(
            spread > 0, spread, 1.0)
    x = np.clip(x, 0.0, 1.0)
    # sRGB to linear RGB to XYZ (D65) to CIELAB
    lin = np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.412453, 0.357580, 0.180423],
                  [0.212671, 0.715160, 0.072169],
                  [0.019334, 0.119193, 0.950227]])
    xyz = lin @ m.T / np.array([0.950456, 1.0, 1.088754])
    eps = 0.008856
    f = np.where(xyz > eps, np.cbrt(xyz), 7.787 * xyz + 16.0 / 116.0)
    L = np.where(xyz[..., 1] > eps, 116.0 * f[..., 1] - 16.0, 903.3 * xyz[..., 1])
    return np.stack([L, 500.0 * (f[..., 0] - f[..., 1]), 200.0 * (f[..., 1] - f[..., 2])],
                    axis=-1)


class ColourTree:
    """A binary partition tree of an image's pixels (see :func:`colour_tree`).

    Attributes
    ----------
    children : ndarray of shape (n_blocks - 1, 2)
        The merges in order: node ``n_blocks + i`` joins ``children[i]``
        (leaf blocks are ``0 .. n_blocks - 1``).
    block_map : ndarray of shape (H, W)
        The leaf block of every pixel.
    n_blocks : int
        Number of leaves.
    """

    def __init__(self, children, block_map):
        self.children = np.asarray(children, dtype=np.int64)
        self.block_map = np.asarray(block_map, dtype=np.int64)
        self.n_blocks = int(self.children.shape[0] + 1)

    def _check(self, n_regions):
        n = int(n_regions)
        if not 1 <= n <= self.n_blocks:
            raise ValueError(
                f"The colour tree cuts into 1 to {self.n_blocks} regions (its leaf "
                f"blocks); got {n_regions}."
            )
        return n

    def _alive(self, n_regions):
        """Node id of the region of every leaf block at the cut into n_regions."""
        n = self.n_blocks
        top = 2 * n - n_regions  # nodes below this id exist at the cut
        node = np.arange(2 * n - 1)
        parent = np.full(2 * n - 1, -1, dtype=np.int64)
        parent[self.children.ravel()] = np.repeat(np.arange(n, 2 * n - 1), 2)
        # every node's region: itself if it exists at the cut, else its parent's
        region = node.copy()
        for v in range(top - 1, -1, -1):
            if parent[v] >= 0 and parent[v] < top:
                region[v] = region[parent[v]]
        return region[:n]

    def cut(self, n_regions):
        """Label map (H, W) of the partition into ``n_regions`` regions.

        Regions are numbered 0..n_regions-1 in order of their first pixel.
        """
        n_regions = self._check(n_regions)
        return relabel(self._alive(n_regions)[self.block_map])

    def linkage(self, n_regions):
        """The tree above the cut into ``n_regions`` regions, a scipy linkage.

        Leaves are the regions of :meth:`cut` in its numbering; row t joins
        two clusters into cluster ``n_regions + t``, with the merge's rank
        and its number of leaves.
        """
        n_regions = self._check(n_regions)
        return self.linkage_between(n_regions, 1)

    def linkage_between(self, n_leaves, n_top):
        """The merges from the cut at ``n_leaves`` up to the cut at ``n_top``.

        Returns the rows of a linkage over the regions of ``cut(n_leaves)``
        (numbered as there): the ``n_leaves - n_top`` merges, in order, that
        join them into the regions of ``cut(n_top)``; and ``top_nodes``,
        the cluster id of each region of ``cut(n_top)`` in its numbering.
        With ``n_top=1`` the rows are the whole linkage (and ``top_nodes``
        is not returned).
        """
        n = self.n_blocks
        n_leaves, n_top = self._check(n_leaves), self._check(n_top)
        if n_top > n_leaves:
            raise ValueError("n_top must be at most n_leaves.")
        leaf_node = self._alive(n_leaves)
        labels = relabel(leaf_node[self.block_map]).ravel()
        blocks = self.block_map.ravel()
        ids = {}
        # each region of the cut: its node id, by way of one of its pixels
        first = np.unique(labels, return_index=True)[1]
        for r, p in enumerate(first):
            ids[int(leaf_node[blocks[p]])] = r
        start = n - n_leaves
        stop = n - n_top
        Z = np.empty((stop - start, 4))
        size = {}
        for t, i in enumerate(range(start, stop)):
            a, b = (ids[int(c)] for c in self.children[i])
            Z[t] = a, b, t + 1, size.get(a, 1) + size.get(b, 1)
            ids[n + i] = n_leaves + t
            size[n_leaves + t] = int(Z[t, 3])
        if n_top == 1:
            return Z
        top_node = self._alive(n_top)[self.block_map]
        top_labels = relabel(top_node).ravel()
        first_top = np.unique(top_labels, return_index=True)[1]
        top_nodes = np.array([ids[int(top_node.ravel()[p])] for p in first_top],
                             dtype=np.int64)
        return Z, top_nodes


def colour_tree(image, *, compactness=1.0, max_blocks=_MAX_BLOCKS):
    """Build the binary partition tree of one image from its colours.

    Parameters
    ----------
    image : ndarray of shape (H, W) or (H, W, C)
        One image, uint8 or float (see :func:`lab_colours` for the scale).
    compactness : float, default=1.0
        Weight of position against colour: a pixel's position spans 0..100
        times ``compactness`` across the image's longer side, as CIELAB's
        lightness spans 0..100. Larger values give rounder regions, smaller
        ones regions that follow colour more closely.
    max_blocks : int, default=16900
        Largest number of leaves: the tree starts from square blocks of
        pixels, of the smallest side that gives at most this many.

    Returns
    -------
    tree : ColourTree
    """
    from sklearn.cluster import ward_tree
    from sklearn.feature_extraction.image import grid_to_graph

    from ._shapes import patch_label_map

    img = np.asarray(image)
    H, W = img.shape[:2]
    side = max(1, int(np.ceil(np.sqrt(H * W / max_blocks))))
    block_map = patch_label_map(H, W, side, remainder="shrink")
    h, w = -(-H // side), -(-W // side)
    counts = np.bincount(block_map.ravel(), minlength=h * w).astype(np.float64)
    lab = lab_colours(img).reshape(H * W, -1)
    colour = np.stack([np.bincount(block_map.ravel(), weights=lab[:, c], minlength=h * w)
                       for c in range(lab.shape[1])], axis=1) / counts[:, None]
    yy, xx = np.mgrid[:h, :w]
    scale = 100.0 * float(compactness) / max(h, w)
    features = np.column_stack([colour, scale * yy.ravel(), scale * xx.ravel()])
    if h * w == 1:
        return ColourTree(np.zeros((0, 2), dtype=np.int64), block_map)
    children = ward_tree(features, connectivity=grid_to_graph(h, w))[0]
    return ColourTree(children, block_map)
