"""Hierarchies beside bar plots: leaf order, cuts and the tree's lines."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from .._hierarchy import Hierarchy, resolve_hierarchy

__all__ = ["as_hierarchy", "cut_for", "draw_tree", "leaf_order", "node_totals"]


def as_hierarchy(hierarchy, group_names):
    """A :class:`Hierarchy` over the shown groups from what was passed.

    Parameters
    ----------
    hierarchy : Hierarchy, list, dict or ndarray
        A Hierarchy, nested lists or dicts of group names or indices, or a
        scipy linkage matrix over the groups.
    group_names : list of str
        Names of the groups (the players).

    Returns
    -------
    hierarchy : Hierarchy
    """
    names = [str(n) for n in group_names]
    K = len(names)
    if isinstance(hierarchy, Hierarchy):
        if hierarchy.n_players != K:
            raise ValueError(
                f"hierarchy has {hierarchy.n_players} players, the attributions "
                f"{K} groups; give a hierarchy over the shown groups."
            )
        return hierarchy
    return resolve_hierarchy(hierarchy, [np.array([k]) for k in range(K)], names,
                             feature_names=names)


def leaf_order(hierarchy):
    """The players from the root's first child down, children in their order."""
    K = hierarchy.n_players
    out, stack = [], [hierarchy.root]
    while stack:
        a = stack.pop()
        if a < K:
            out.append(a)
        else:
            stack.extend(reversed(hierarchy.children[a - K]))
    return np.array(out, dtype=np.int64)


def cut_for(hierarchy, level, max_groups):
    """Nodes of the cut to draw: of ``level`` nodes, else the finest within ``max_groups``.

    Returns None when every player is drawn.
    """
    sizes = hierarchy.cut_sizes()
    if level is None:
        if hierarchy.n_players <= max_groups:
            return None
        level = max([s for s in sizes if s <= max(int(max_groups), 1)], default=1)
    try:
        nodes = hierarchy.cut(level)
    except ValueError:
        raise ValueError(
            f"hierarchy_level={level!r} is not a level of the hierarchy; its cuts "
            f"have {', '.join(str(s) for s in sizes)} nodes."
        ) from None
    return None if len(nodes) == hierarchy.n_players else nodes


def node_totals(values, hierarchy, nodes):
    """Sums of ``values`` (groups on the last axis) over the players of every node."""
    values = np.asarray(values, dtype=np.float64)
    return np.stack([values[..., hierarchy.leaves[a]].sum(axis=-1) for a in nodes],
                    axis=-1)


def _heights(hierarchy):
    """Leaves at 0, every internal node one above its highest child."""
    K = hierarchy.n_players
    height = np.zeros(hierarchy.n_nodes)
    for a, ch in enumerate(hierarchy.children, start=K):
        height[a] = 1 + max(height[c] for c in ch)
    return height


def draw_tree(ax, hierarchy, positions, *, color="0.35", width=None):
    """Draw the tree to the right of ``ax``, its leaves at the y ``positions``.

    Every internal node is a vertical line spanning its children, at the
    node's height, with one horizontal line from each child to it; nodes of
    any number of children are drawn alike.

    Parameters
    ----------
    ax : matplotlib Axes
        The bar axes; the tree goes into an inset sharing its y axis.
    hierarchy : Hierarchy
        The tree drawn; player ``k`` sits at ``positions[k]``.
    positions : ndarray of shape (n_players,)
        y of every player's bar.
    color : color, default="0.35"
        Colour of the lines.
    width : float or None, default=None
        Width of the inset as a fraction of ``ax``; None grows with the depth.

    Returns
    -------
    tree_ax : matplotlib Axes
        The inset holding the tree.
    lines : LineCollection
        For every internal node, in order, its vertical line then one
        horizontal line per child.
    """
    from matplotlib.collections import LineCollection

    K = hierarchy.n_players
    height = _heights(hierarchy)
    y = np.zeros(hierarchy.n_nodes)
    y[:K] = positions
    segments = []
    for a, ch in enumerate(hierarchy.children, start=K):
        ys = [y[c] for c in ch]
        lo, hi = min(ys), max(ys)
        y[a] = (lo + hi) / 2
        segments.append([(height[a], lo), (height[a], hi)])
        segments += [[(height[c], y[c]), (height[a], y[c])] for c in ch]
    top = max(height.max(), 1.0)
    if width is None:
        width = min(0.08 + 0.04 * top, 0.3)
    tree_ax = ax.inset_axes([1.01, 0.0, width, 1.0], sharey=ax)
    lines = LineCollection(segments, colors=color, linewidths=1.2,
                           capstyle="butt")
    tree_ax.add_collection(lines)
    tree_ax.set_xlim(0.0, top * 1.05)
    tree_ax.set_axis_off()
    # the names given to blocks (not their players' names joined)
    for a in range(K, hierarchy.n_nodes - 1):
        joined = ":".join(hierarchy.names[k] for k in hierarchy.leaves[a])
        if hierarchy.names[a] != joined:
            tree_ax.annotate(hierarchy.names[a], (height[a], y[a]), xytext=(3, 2),
                             textcoords="offset points", fontsize="x-small",
                             color=color, ha="left", va="bottom")
    return tree_ax, lines
