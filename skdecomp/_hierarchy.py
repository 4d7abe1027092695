"""Hierarchies over the players (groups of columns): nested blocks, as a rooted tree.

A hierarchy is a rooted tree whose leaves are the K players of a game (the
groups of ``groups=``, one per column by default). Two levels (one partition
into blocks) is a coalition structure. The hierarchical value of a player,
the Owen value of a coalition structure (Owen 1977) and the Winter value of
deeper hierarchies (Winter 1989), is the average of its marginal
contributions over all orders of the players in which the players of every
node arrive one after the other. As weights on the Möbius components
(:func:`Hierarchy.component_weights`): the component of a set U is shared
equally among the top-level blocks U touches, then within each block equally
among its children U touches, and so on down to the players.

A hierarchy is given as nested lists or dicts of columns, a scipy linkage
matrix over the players, a fitted ``FeatureAgglomeration`` (or an
``AgglomerativeClustering`` fitted on the columns), or a grouper that keeps
a merge path (its merge tree from the players up). On images, a grouper
that keeps a merge tree per image (``AdaptiveGrouper`` fitted on images:
``merges_`` over ``initial_label_maps_``) gives the tree of the first image,
over its initial groups, which must be the players
(:func:`fit_hierarchy` fits it as the explainer fits ``groups=``).
"""

# SPDX-License-Identifier: BSD-3-Clause

import copy
from collections.abc import Mapping
from numbers import Integral

import numpy as np

__all__ = ["Hierarchy", "fit_hierarchy", "resolve_hierarchy", "tree_budget"]

# An explanation's budget on an image (fit_hierarchy): AGREED's merges over
# the colour tree get this share of it, at least _TREE_MIN_EVALUATIONS; the
# Owen value's partition recursion the rest, over regions of the colour tree,
# _LEAVES_PER_EVALUATION per evaluation of the budget (the recursion expands
# at most one node per two evaluations). See the user guide, "Image maps".
_TREE_SHARE = 0.1
_TREE_MIN_EVALUATIONS = 20
_LEAVES_PER_EVALUATION = 2
# the explainer's own evaluations of a photo beyond the grouper's and the
# recursion's: the output probe and f(b) in fit, f(x) in transform
_EXPLAINER_EVALUATIONS = 3


class Hierarchy:
    """A rooted tree over K players: leaves ``0 .. K-1``, internal nodes after them.

    Parameters
    ----------
    n_players : int
        Number of players (leaves).
    children : list of list of int
        Children of every internal node ``K, K+1, ...``, each with a larger
        index than its children; the last node is the root.
    names : list of str or None, default=None
        Names of the internal nodes (None: their players' names joined).
    player_names : list of str or None, default=None
        Names of the players.

    Attributes
    ----------
    n_nodes : int
        Leaves and internal nodes.
    parent : ndarray of shape (n_nodes,)
        Parent of every node (-1 for the root).
    leaves : list of ndarray
        Players under every node.
    depth : int
        Largest number of edges from the root to a player.
    """

    def __init__(self, n_players, children, names=None, player_names=None):
        K = int(n_players)
        self.n_players = K
        self.children = [[int(c) for c in ch] for ch in children]
        if K == 1 and not self.children:
            self.children = []
        self.n_nodes = K + len(self.children)
        self.player_names = ([f"x{k}" for k in range(K)] if player_names is None
                             else [str(n) for n in player_names])
        self.parent = np.full(self.n_nodes, -1, dtype=np.int64)
        leaves = [np.array([k]) for k in range(K)]
        for a, ch in enumerate(self.children, start=K):
            for c in ch:
                if c >= a or self.parent[c] != -1:
                    raise ValueError("Hierarchy: every node needs one parent of a "
                                     "larger index.")
                self.parent[c] = a
            leaves.append(np.sort(np.concatenate([leaves[c] for c in ch])))
        self.leaves = leaves
        roots = np.flatnonzero(self.parent == -1)
        if roots.size != 1 or roots[0] != self.n_nodes - 1:
            raise ValueError("Hierarchy: the last node must be the only root.")
        self.names = list(self.player_names)
        for a in range(K, self.n_nodes):
            given = None if names is None else names[a - K]
            if given is not None:
                name = str(given)
                if name in self.names:
                    raise ValueError(
                        f"hierarchy: the block name {name!r} is already the name of "
                        f"a {'group' if name in self.player_names else 'block'}; "
                        "give every block a name of its own (a cut shows groups "
                        "and blocks side by side, one column each)."
                    )
            else:
                # the players joined, in brackets where that is taken
                name = ":".join(self.player_names[k] for k in leaves[a])
                while name in self.names:
                    name = f"[{name}]"
            self.names.append(name)
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for a in range(self.n_nodes - 2, -1, -1):
            depth[a] = depth[self.parent[a]] + 1
        self.node_depth = depth
        self.depth = int(depth[:K].max()) if K else 0

    @property
    def root(self):
        return self.n_nodes - 1

    def ancestors(self, k):
        """The internal nodes from ``k``'s parent up to the root."""
        out = []
        a = self.parent[k]
        while a != -1:
            out.append(int(a))
            a = self.parent[a]
        return out

    def is_flat(self):
        """True when the hierarchical value is the Shapley value (one level)."""
        return all(len(ch) == self.n_players or all(c < self.n_players for c in ch)
                   for ch in self.children) and len(self.children) <= 1

    def node_matrix(self):
        """Players under every node, shape (n_nodes, K), bool."""
        out = np.zeros((self.n_nodes, self.n_players), dtype=bool)
        for a in range(self.n_nodes):
            out[a, self.leaves[a]] = True
        return out

    def leaf_masks(self):
        """Bitmask of the players under every node (K <= 62)."""
        return np.array([int(np.sum(np.left_shift(1, self.leaves[a].astype(np.int64))))
                         for a in range(self.n_nodes)], dtype=np.int64)

    def component_weights(self):
        """Weights of every component on every player, shape (2**K, K).

        ``W[U, i] = prod over the ancestors a of i of 1 / |{children of a
        that meet U}|`` for i in U, else 0, so that the hierarchical value
        is ``phi_i = sum_U W[U, i] F_U``.
        """
        K = self.n_players
        masks = np.arange(1 << K, dtype=np.int64)
        node_masks = self.leaf_masks()
        # children of every internal node that meet U
        meets = {a: sum(((masks & node_masks[c]) != 0).astype(np.int64)
                        for c in ch)
                 for a, ch in enumerate(self.children, start=K)}
        W = np.zeros((1 << K, K))
        for i in range(K):
            w = ((masks >> i) & 1).astype(np.float64)
            for a in self.ancestors(i):
                w = w / np.maximum(meets[a], 1)
            W[:, i] = w
        return W

    # -- cuts ----------------------------------------------------------------------
    def split_order(self):
        """Internal nodes in the order a cut splits them: the root first.

        A node is split before any of its descendants; among nodes that are
        not nested, the later-made (larger index) first, as undoing merges
        in reverse order.
        """
        return list(range(self.n_nodes - 1, self.n_players - 1, -1))

    def cut_sizes(self):
        """Numbers of nodes of every cut along :meth:`split_order`."""
        sizes, n = [1], 1
        for a in self.split_order():
            n += len(self.children[a - self.n_players]) - 1
            sizes.append(n)
        return sizes

    def cut(self, n_nodes):
        """The nodes of the cut with ``n_nodes`` nodes, in order of their first player."""
        sizes = self.cut_sizes()
        if (not isinstance(n_nodes, Integral) or isinstance(n_nodes, bool)
                or n_nodes not in sizes):
            raise ValueError(
                f"n_groups={n_nodes!r} is not a level of the hierarchy; its cuts have "
                f"{', '.join(str(s) for s in sizes)} nodes."
            )
        nodes = {self.root}
        for a in self.split_order()[: sizes.index(n_nodes)]:
            nodes.remove(a)
            nodes.update(self.children[a - self.n_players])
        return sorted(nodes, key=lambda a: self.leaves[a][0])

    def pruned(self, nodes):
        """The hierarchy above a cut: the cut's nodes as players, the levels above kept."""
        nodes = list(nodes)
        index = {a: k for k, a in enumerate(nodes)}
        keep = []
        above = set()
        for a in nodes:
            b = self.parent[a]
            while b != -1:
                above.add(int(b))
                b = self.parent[b]
        for a in sorted(above):
            keep.append(a)
            index[a] = len(nodes) + len(keep) - 1
        children = [[index[c] for c in self.children[a - self.n_players]] for a in keep]
        return Hierarchy(len(nodes), children, names=[self.names[a] for a in keep],
                         player_names=[self.names[a] for a in nodes])

    def linkage(self):
        """A scipy linkage matrix of a binary hierarchy (None when a node has more children).

        Distances are the node's height (the number of merges below it, plus
        one), so that ``scipy.cluster.hierarchy.dendrogram`` and shap's
        ``clustering=`` draw it.
        """
        if any(len(ch) != 2 for ch in self.children):
            return None
        height = np.zeros(self.n_nodes)
        Z = np.zeros((len(self.children), 4))
        for t, (a, b) in enumerate(self.children):
            node = self.n_players + t
            height[node] = max(height[a], height[b]) + 1
            Z[t] = [a, b, height[node], self.leaves[node].size]
        return Z

    def __repr__(self):
        return (f"Hierarchy(n_players={self.n_players}, n_nodes={self.n_nodes}, "
                f"depth={self.depth})")


# -- building ------------------------------------------------------------------------
def _from_nested(spec, positions, feature_names, player_names, column_labels=None):
    """Nested lists or dicts of columns -> Hierarchy (1-D arrays are lists).

    The walk keeps its own stack, so the depth of the nesting is limited
    by memory only, not by Python's recursion limit.
    """
    from ._partition import _column_position

    owner = {int(j): k for k, cols in enumerate(positions) for j in cols}
    n_features = len(owner)
    K = len(positions)
    seen_columns = {}  # column -> the id of the block that holds it
    children, names = [], []
    # a block's path (e.g. hierarchy[0]['a']) as (parent id, suffix), drawn
    # only for an error: a deep nesting would make every path long
    paths = [(None, "hierarchy")]

    def path_of(pid):
        parts = []
        while pid is not None:
            pid, suffix = paths[pid]
            parts.append(suffix)
        return "".join(reversed(parts))

    def items_of(node):
        if isinstance(node, np.ndarray) and node.ndim == 1:
            node = node.tolist()  # e.g. list(explainer.groups_)
        if isinstance(node, Mapping):
            return list(node.items())
        if isinstance(node, (list, tuple)):
            return [(None, v) for v in node]
        return None

    def player(node, block):
        j = _column_position(node, n_features, feature_names, "hierarchy",
                             column_labels)
        if j in seen_columns:
            raise ValueError(
                f"hierarchy: column {node!r} appears twice (in "
                f"{path_of(seen_columns[j])} and in {path_of(block)}); every column "
                "must be in exactly one block."
            )
        seen_columns[j] = block
        return ("player", owner[j])

    def close(items, subs):
        for (k, _), sub in zip(items, subs):
            if k is not None and sub[0] == "node":  # a dict names its blocks
                names[sub[1] - K] = str(k)
        # the columns of one player, read together, are that player
        players = {s[1] for s in subs if s[0] == "player"}
        nodes = [s[1] for s in subs if s[0] == "node"]
        if not nodes and len(players) == 1:
            return ("player", players.pop())
        members = sorted(players) + nodes
        if len(members) == 1:
            return subs[0] if subs[0][0] == "node" else ("player", members[0])
        children.append(members)
        names.append(None)
        return ("node", K + len(children) - 1)

    # a frame: [items, next child, results of the children so far, path id]
    stack, result = [], None
    root_items = items_of(spec)
    if root_items is None:
        result = player(spec, 0)
    else:
        stack.append([root_items, 0, [], 0])
    while stack:
        frame = stack[-1]
        items, i, subs, pid = frame
        if i == 0 and not items:
            raise ValueError(f"hierarchy: the block {path_of(pid)} is empty; give "
                             "every block at least one column.")
        if i == len(items):
            stack.pop()
            done = close(items, subs)
            if stack:
                stack[-1][2].append(done)
            else:
                result = done
            continue
        frame[1] = i + 1
        k, v = items[i]
        sub_items = items_of(v)
        if sub_items is None:
            subs.append(player(v, pid))
            continue
        paths.append((pid, f"[{k!r}]" if k is not None else f"[{i}]"))
        stack.append([sub_items, 0, [], len(paths) - 1])
    del result
    missing = [j for j in owner if j not in seen_columns]
    if missing:
        shown = [feature_names[j] if feature_names is not None else j for j in missing]
        raise ValueError(
            f"hierarchy: columns {shown[:8]} are in no block; every column must be in "
            "exactly one."
        )
    # a player whose columns lie in different blocks
    for k, cols in enumerate(positions):
        places = {seen_columns[int(j)] for j in cols}
        if len(places) > 1:
            raise ValueError(
                f"hierarchy: the columns of group {player_names[k]!r} lie in "
                f"different blocks ({', '.join(sorted(path_of(b) for b in places))}); "
                "a group is one player and must sit in one block."
            )
    if K == 1:
        children, names = [], []
    return Hierarchy(K, children, names=names, player_names=player_names)


def _from_merges(K, merges_by_player, player_names):
    """Merges of sets of players, in order -> Hierarchy (the rest joined at a root)."""
    node_of = list(range(K))  # player -> its current top node
    children = []
    for players in merges_by_player:
        tops = sorted({node_of[k] for k in players})
        if len(tops) < 2:
            continue  # within one node already (e.g. the columns of one player)
        children.append(tops)
        new = K + len(children) - 1
        for k in range(K):
            if node_of[k] in tops:
                node_of[k] = new
    tops = sorted(set(node_of))
    if len(tops) > 1:
        children.append(tops)
    if not children and K > 1:  # pragma: no cover - K > 1 always has a root
        children.append(list(range(K)))
    return Hierarchy(K, children, player_names=player_names)


def _grouper_merges(grouper):
    """The merges of a fitted grouper's path, as pairs of column lists."""
    merges = getattr(grouper, "_path_merges", None)
    if merges is not None:
        return [(list(a), list(b)) for a, b in merges]
    tree = getattr(grouper, "_path_tree", None)
    if tree is None:
        return None
    leaves = {k: list(g) for k, g in enumerate(grouper.initial_groups_)}
    out = []
    for t, (a, b) in enumerate(tree.children):
        out.append((leaves[a], leaves[b]))
        leaves[tree.n_leaves + t] = leaves[a] + leaves[b]
    return out


# -- the merge trees of images ---------------------------------------------------------
def _keeps_image_merges(est):
    """Whether ``est`` is a grouper fitted on images with a merge tree per image."""
    return hasattr(est, "merges_") and hasattr(est, "initial_label_maps_")


class _ImageMerges:
    """What the explainer reads of an image grouper it fitted: the first image's merges.

    A photo's grouper holds arrays of every pixel (its groups, baselines, initial
    grouper); this keeps its name, parameters, merges and initial label map only.
    """

    def __init__(self, est):
        self.name = type(est).__name__
        self._params = est.get_params(deep=False)
        self.merges_ = [np.array(est.merges_[0], dtype=np.int64)]
        self.initial_label_maps_ = np.array(est.initial_label_maps_[:1])

    def get_params(self, deep=True):
        return dict(self._params)


def _name(est):
    """The class name of a grouper, or of the one an _ImageMerges was read from."""
    return est.name if isinstance(est, _ImageMerges) else type(est).__name__


def _is_unfitted_grouper(est):
    """An unfitted grouper (not a scikit-learn clustering, which is read as it is)."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    if (isinstance(est, Hierarchy) or not (hasattr(est, "fit") and hasattr(est, "get_params"))
            or hasattr(est, "n_clusters") or getattr(est, "children_", None) is not None):
        return False
    try:
        check_is_fitted(est)
    except NotFittedError:
        return True
    return False


def _label_groups(label_map, n_features):
    """Columns of every label of a pixel label map (H, W), for rows of n_features columns."""
    label_map = np.asarray(label_map)
    if n_features % label_map.size:
        return None
    column_label = np.repeat(label_map.reshape(-1).astype(np.int64),
                             n_features // label_map.size)
    order = np.argsort(column_label, kind="stable")
    bounds = np.searchsorted(column_label[order], np.arange(int(column_label.max()) + 2))
    return [order[bounds[k]:bounds[k + 1]] for k in range(len(bounds) - 1)]


def _is_unfitted_clustering(est):
    """An unfitted FeatureAgglomeration or AgglomerativeClustering."""
    return (hasattr(est, "fit") and hasattr(est, "get_params")
            and "compute_full_tree" in est.get_params()
            and getattr(est, "children_", None) is None)


def fit_hierarchy(hierarchy, groups, data, y=None, *, images=False, budget=None,
                  **fit_params):
    """Fit a grouper or clustering given as ``hierarchy=``, as ``groups=`` is fitted.

    An unfitted grouper is fitted on ``data`` by
    :func:`~skdecomp._partition.fit_grouper` with ``fit_params`` (the
    explainer's model, response method, target, random state, price,
    baseline image and imputer), as the explainer fits a grouper given as
    ``groups=``; an unfitted ``FeatureAgglomeration`` is fitted on the
    columns of ``data`` (an ``AgglomerativeClustering`` on its transpose),
    so that a clone (in ``GridSearchCV``) works as the original. On images,
    when ``groups`` is None and the grouper keeps a merge tree per image,
    the groups are its initial groups of the first image (named ``g0``,
    ``g1``, ... as the grouper names them): the players of its tree.

    Parameters
    ----------
    hierarchy : object
        The explainer's ``hierarchy``; anything but an unfitted grouper or
        clustering is returned as it is.
    groups : object
        The explainer's ``groups`` (a fitted grouper's groups already read).
    data : array-like or DataFrame
        The rows the explainer is fitted on; images of shape (n_images, H,
        W[, C]) with ``images=True``.
    y : array-like or None, default=None
        Passed on to the grouper's ``fit``.
    images : bool, default=False
        Whether ``data`` holds images.
    budget : int or None, default=None
        The explanation's model evaluations per image (``n_samples``). On
        images, an unfitted grouper that starts from its colour tree
        (AdaptiveGrouper with ``initial_groups=None``) is then given
        ``max_evaluations`` from it (:func:`tree_budget`), and the hierarchy
        is its ``linkage`` reaching below AGREED's groups to the colour
        tree's regions (``_LEAVES_PER_EVALUATION`` per evaluation), which
        are the players.
    **fit_params : dict
        Keyword arguments of :func:`~skdecomp._partition.fit_grouper`.

    Returns
    -------
    hierarchy : object
        The fitted grouper or clustering, ``hierarchy`` as it was, or a
        linkage matrix over the colour tree's regions.
    groups : object
        ``groups``, or a dict of the grouper's initial groups, or of the
        colour tree's regions.
    plan : dict or None
        With a budget and a colour tree: the Owen value's budget left
        (``n_samples``: the budget less the grouper's evaluations and the
        explainer's own, f(b) and f(x)), its ``estimator`` ("partition")
        and ``tree_evaluations``, the grouper's.
    """
    from sklearn.base import clone

    from ._partition import fit_grouper

    if _is_unfitted_clustering(hierarchy) and not images:
        try:
            values = np.asarray(data, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"hierarchy: the {type(hierarchy).__name__} clusters the columns by "
                "their values, and the data has non-numeric columns; give the "
                "hierarchy as nested lists of columns or a grouper instead."
            ) from None
        transpose = not hasattr(hierarchy, "pooling_func")  # AgglomerativeClustering
        return clone(hierarchy).fit(values.T if transpose else values), groups, None
    plan = None
    if _is_unfitted_grouper(hierarchy):
        colour = images and _starts_from_colour_tree(hierarchy)
        if colour and groups is not None:
            raise ValueError(
                f"hierarchy: the {type(hierarchy).__name__} starts from its colour tree "
                "(initial_groups=None), whose regions are the players; leave groups=None, "
                "or give the grouper initial_groups=<the same grouper as groups=>."
            )
        if colour and budget is not None and hierarchy.get_params().get(
                "max_evaluations") == "auto":
            hierarchy = copy.copy(hierarchy).set_params(
                max_evaluations=tree_budget(budget))
        hierarchy = fit_grouper(hierarchy, data, y, **fit_params)
        if colour and budget is not None:
            # the colour tree below AGREED's groups, binary, down to its leaves
            n_features = int(np.prod(data.shape[1:]))
            spent = int(hierarchy.model_calls_)
            tree = hierarchy.colour_trees_[0]
            K0 = int(hierarchy.initial_label_maps_[0].max()) + 1
            n_leaves = int(min(tree.n_blocks, max(K0, _LEAVES_PER_EVALUATION * budget)))
            groups = dict(enumerate(_label_groups(
                hierarchy.leaf_label_map(n_leaves), n_features)))
            groups = {f"g{k}": cols for k, cols in groups.items()}
            hierarchy = hierarchy.linkage(0, n_leaves=n_leaves)
            plan = {"n_samples": max(1, int(budget) - spent - _EXPLAINER_EVALUATIONS),
                    "estimator": "partition", "tree_evaluations": spent}
            return hierarchy, groups, plan
        if images and _keeps_image_merges(hierarchy):
            hierarchy = _ImageMerges(hierarchy)  # the grouper's arrays are freed
    if images and groups is None and _keeps_image_merges(hierarchy):
        n_features = int(np.prod(data.shape[1:]))
        initial = _label_groups(hierarchy.initial_label_maps_[0], n_features)
        if initial is not None:
            groups = {f"g{k}": cols for k, cols in enumerate(initial)}
    return hierarchy, groups, plan


def _starts_from_colour_tree(est):
    """An image grouper whose initial groups come from its colour tree (AGREED's default)."""
    params = est.get_params()
    return ("initial_groups" in params and params["initial_groups"] is None
            and "max_evaluations" in params)


def tree_budget(budget):
    """Model evaluations of AGREED's merges within an explanation's budget of ``budget``."""
    return max(_TREE_MIN_EVALUATIONS, int(_TREE_SHARE * budget))


def _mismatch(est, initial, K, problem):
    """The error of a grouper whose initial groups are not the explainer's groups."""
    name = _name(est)
    params = est.get_params() if hasattr(est, "get_params") else {}
    start = params.get("initial_groups")
    example = ("Explainer(groups=PatchGrouper(8), hierarchy="
               f"{name}(initial_groups=PatchGrouper(8)))")
    if hasattr(start, "fit"):
        fix = f"Pass groups={start!r}, the {name}'s initial_groups, to the explainer"
    elif start is None and "initial_groups" in params:
        fix = ("Its initial groups are the pixels: give it the explainer's groups as "
               f"initial_groups (e.g. {example})")
    else:
        fix = (f"Give the explainer's groups= and the {name}'s initial_groups the same "
               f"groups (e.g. {example})")
    return (
        f"hierarchy: the {name}'s merge tree is over its initial groups, {initial}, "
        f"which are not the explainer's {K} groups ({problem}); the leaves of the "
        f"hierarchy must be the explainer's groups. {fix}, or leave groups=None to "
        "take the grouper's initial groups."
    )


def _from_image_merges(est, positions, player_names, image=0):
    """The merge tree of one image of a fitted image grouper, over the players.

    The players must be the grouper's initial groups of that image (in any
    order); its merges, each given by one initial group of either side,
    nest them, and the groups left at the end are the root's children.
    """
    name = _name(est)
    K = len(positions)
    n_features = sum(len(p) for p in positions)
    label_map = np.asarray(est.initial_label_maps_[image])
    if n_features % label_map.size:
        raise ValueError(
            f"hierarchy: the {name} was fitted on images of {label_map.shape[0]}x"
            f"{label_map.shape[1]} pixels; the explainer's rows have {n_features} "
            "columns. Fit it on the explained images (or pass it unfitted)."
        )
    # column c is a channel of pixel c // n_channels (rows are pixel-major)
    pixel_label = label_map.reshape(-1).astype(np.int64)
    n_channels = n_features // label_map.size
    sizes = np.bincount(pixel_label) * n_channels
    n_initial = sizes.size
    player_of = np.full(n_initial, -1, dtype=np.int64)
    problem = None
    for k, cols in enumerate(positions):
        labels = np.unique(pixel_label[np.asarray(cols, dtype=np.int64) // n_channels])
        if labels.size > 1:
            problem = (f"group {player_names[k]!r} covers pixels of {labels.size} of "
                       "them")
            break
        if sizes[labels[0]] != len(cols):
            problem = f"group {player_names[k]!r} is a part of one of them"
            break
        player_of[labels[0]] = k
    if problem is None and K != n_initial:  # pragma: no cover - implied by the above
        problem = f"{K} groups for {n_initial} initial groups"
    if problem is not None:
        raise ValueError(_mismatch(est, f"{n_initial} groups of pixels of image {image}",
                                   K, problem))
    merges = np.asarray(est.merges_[image], dtype=np.int64).reshape(-1, 2)
    return _from_merges(K, [[int(player_of[a]), int(player_of[b])] for a, b in merges],
                        player_names)


def resolve_hierarchy(hierarchy, positions, player_names, feature_names=None, X=None,
                      method=None, column_labels=None):
    """A :class:`Hierarchy` over the players from what the user passed.

    Parameters
    ----------
    hierarchy : list, dict, ndarray, fitted clustering or grouper
        See :class:`~skdecomp.Explainer`.
    positions : list of ndarray
        Column positions of every player (group).
    player_names : list of str
        Names of the players.
    feature_names : list of str or None, default=None
        Column names, for hierarchies that name columns.
    X : array-like or None, default=None
        Data on which an unfitted grouper is fitted.
    method : str or None, default=None
        The explainer's method, named in the error when a hierarchical
        method has no hierarchy.
    column_labels : list or None, default=None
        The labels of a DataFrame whose column labels are not all strings:
        a column in nested lists is read as ``groups=`` reads it, a label
        of the frame first.

    Returns
    -------
    hierarchy : Hierarchy
    """
    if hierarchy is None:
        raise ValueError(
            f"method={method!r} shares every interaction along a hierarchy over the "
            "groups; pass one: Explainer(hierarchy=[[...], [...]]) (nested lists of "
            "columns), a linkage matrix, a fitted FeatureAgglomeration, or a grouper "
            "such as AdaptiveGrouper()."
        )
    K = len(positions)
    owner = np.empty(sum(len(p) for p in positions), dtype=np.int64)
    for k, cols in enumerate(positions):
        owner[np.asarray(cols, dtype=np.int64)] = k
    if isinstance(hierarchy, Hierarchy):
        if hierarchy.n_players != K:
            raise ValueError(f"hierarchy has {hierarchy.n_players} players, the "
                             f"explainer {K} groups.")
        return hierarchy
    if _keeps_image_merges(hierarchy):  # the merge tree of the first image
        return _from_image_merges(hierarchy, positions, player_names)
    if hasattr(hierarchy, "fit") and hasattr(hierarchy, "get_params"):
        return _from_estimator(hierarchy, owner, K, player_names, X)
    if isinstance(hierarchy, np.ndarray):
        return _from_linkage(hierarchy, K, player_names)
    if isinstance(hierarchy, (list, tuple, Mapping)):
        return _from_nested(hierarchy, positions, feature_names, player_names,
                            column_labels)
    raise TypeError(
        "hierarchy must be nested lists or dicts of columns, a scipy linkage matrix, "
        "a fitted FeatureAgglomeration or AgglomerativeClustering, or a grouper that "
        f"keeps a merge path; got {type(hierarchy).__name__}."
    )


def _from_linkage(Z, K, player_names):
    dtype = np.asarray(Z).dtype
    if dtype.kind not in "fiu":
        raise TypeError(
            f"hierarchy: a linkage matrix is a float array of shape ({K - 1}, 4) over "
            f"{K} groups, as scipy.cluster.hierarchy.linkage returns it; got an array "
            f"of dtype {dtype}. Pass the linkage as linkage() returns it (float64), or "
            "the hierarchy as nested lists of columns."
        )
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[0] != K - 1 or Z.shape[1] < 2:
        raise ValueError(
            f"hierarchy: a linkage matrix over {K} groups has shape ({K - 1}, 4), "
            f"got {Z.shape}."
        )
    ids = Z[:, :2]
    if (ids != np.round(ids)).any() or (ids < 0).any() or (
            ids >= K + np.arange(K - 1)[:, None]).any():
        raise ValueError(
            "hierarchy: the linkage matrix names clusters that do not exist yet (each "
            "row merges two of the players and the clusters of earlier rows)."
        )
    children = [[int(a), int(b)] for a, b in ids]
    used = sorted(c for ch in children for c in ch)
    if len(set(used)) != len(used):
        raise ValueError("hierarchy: the linkage matrix merges one cluster twice.")
    return Hierarchy(K, children, player_names=player_names)


def _from_estimator(est, owner, K, player_names, X):
    from sklearn.base import clone
    from sklearn.utils.validation import check_is_fitted

    children_ = getattr(est, "children_", None)
    if children_ is None and hasattr(est, "n_clusters") and not hasattr(est, "path_"):
        if "compute_full_tree" not in est.get_params():  # KMeans: flat clusters
            raise ValueError(
                f"hierarchy: a {type(est).__name__} has no merge tree (its clusters do "
                "not nest), fitted or not, so it gives no hierarchy. Pass a "
                "FeatureAgglomeration or an AgglomerativeClustering fitted on the "
                "columns (FeatureAgglomeration().fit(X), or AgglomerativeClustering()"
                ".fit(X.T)), a scipy linkage matrix over the groups, nested lists of "
                "columns, or a grouper such as AdaptiveGrouper()."
            )
        raise ValueError(
            f"hierarchy: the {type(est).__name__} is not fitted; fit it on the columns "
            "(FeatureAgglomeration().fit(X), or AgglomerativeClustering().fit(X.T))."
        )
    if children_ is not None:
        children_ = np.asarray(children_, dtype=np.int64)
        n = children_.shape[0] + 1
        if n != owner.size:
            raise ValueError(
                f"hierarchy: the {type(est).__name__} clusters {n} items, but the data "
                f"has {owner.size} columns; fit it on the columns (FeatureAgglomeration"
                "().fit(X), or AgglomerativeClustering().fit(X.T))."
            )
        leaves = {j: [j] for j in range(n)}
        merges = []
        for t, (a, b) in enumerate(children_):
            leaves[n + t] = leaves[int(a)] + leaves[int(b)]
            merges.append(leaves[n + t])
        return _from_merges(K, [sorted({int(owner[j]) for j in m}) for m in merges],
                            player_names)
    try:
        check_is_fitted(est)
    except Exception:
        if X is None:
            raise ValueError(f"hierarchy: the {type(est).__name__} is not fitted.")
        est = clone(est).fit(X)
    n_in = getattr(est, "n_features_in_", None)
    if n_in is not None and int(n_in) != owner.size:
        raise ValueError(
            f"hierarchy: the {type(est).__name__} was fitted on {int(n_in)} "
            f"columns, but the data has {owner.size}; fit it on the data the "
            "explainer explains, or pass it unfitted (the explainer fits it)."
        )
    merges = _grouper_merges(est)
    if merges is None:
        raise ValueError(
            f"hierarchy: the {type(est).__name__} keeps no merge path, so it gives no "
            "hierarchy; pass a grouper with one (AdaptiveGrouper, PairwiseGrouper, "
            "RecursiveGrouper, IShapGrouper, CorrelationGrouper) or nested lists."
        )
    by_player = [sorted({int(owner[j]) for j in list(a) + list(b)}) for a, b in merges]
    return _from_merges(K, by_player, player_names)
