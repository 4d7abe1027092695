"""Per-image AGREED at a fraction of the model calls: lazy, bounded, batched.

:func:`lazy_merges` merges adjacent groups of pixels, the pair of largest
loss decrease per pair of initial groups it joins first, like the "pairs"
rule of tabular AGREED. A merge of groups i and j lowers the loss by at most
``Psi_i + Psi_j`` (``Psi`` of their union is not negative), so a pair's
union is evaluated only when that bound could beat the best score known and
pay the merge's price: the statistics of the initial groups are evaluated at
the start, then, in rounds, the unions of the few pairs of largest bound,
one batch over all images per round. Nothing is re-scored after a merge
until the bound of a pair asks for it: a growing group does not re-score its
whole boundary.

The merge of groups of a and b initial groups costs ``price * a * b`` of the
variance of the output on {x, b}; merging stops when the best pair does not
pay it, when no admissible pair is left (``max_group_size``, a quarter of the
image by default, keeps every map informative), or when the evaluations are
spent (``max_evaluations``).
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._merge import _ATOL, _evaluate, _pair, _Partition, _tree_of

__all__ = ["lazy_merges"]

# Unions evaluated per image and round: the pairs of largest bound.
_ROUND = 8


def _leaf_counts(pb):
    counts = getattr(pb, "leaf_count", None)
    if counts is None:
        counts = pb.leaf_count = {k: 1 for k in range(pb.n_leaves)}
    return counts


def _edges(pb):
    """The admissible adjacent pairs (i, j), i < j, of the active groups."""
    out = []
    for i in pb.active:
        for j in pb.neighbours[i]:
            if i < j and pb.admissible(i, j):
                out.append((i, j))
    return out


def _scores(pb, evaluator, edges):
    """Per-pair score of every edge whose union is known, and bounds of the others.

    Returns ``(known, unknown)``: lists of ``(score, pair, psi_union)`` and of
    ``(bound, pair)``.
    """
    counts = _leaf_counts(pb)
    known, unknown = [], []
    new = [e for e in edges if e in pb.unions and e not in pb.pair_scores]
    if new:
        union = tuple(np.stack(s) for s in zip(*(pb.unions[e] for e in new)))
        psi_union = evaluator.potentials_from(union)
        for e, psi in zip(new, psi_union):
            gain = pb.psi[e[0]] + pb.psi[e[1]] - float(psi)
            pb.pair_scores[e] = (gain, float(psi))
    for e in edges:
        n_pairs = counts[e[0]] * counts[e[1]]
        if e in pb.pair_scores:
            gain, psi = pb.pair_scores[e]
            known.append((gain / n_pairs, e, psi))
        else:
            unknown.append(((pb.psi[e[0]] + pb.psi[e[1]]) / n_pairs, e))
    return known, unknown


def lazy_merges(
    evaluator, initial_groups, connectivity, *, price, n_groups=None,
    max_group_size=None, max_evaluations=None, path=False,
):
    """Greedy merges of adjacent groups, scoring only the pairs that can win.

    Parameters
    ----------
    evaluator : ImageStatistics
        Statistics of unions of pixel sets (see :mod:`._merge`).
    initial_groups : list of list of array-like of int
        For every image, the pixels of every initial group.
    connectivity : list of array-like of int of shape (n_edges, 2)
        For every image, the adjacent pairs of initial groups.
    price : float
        Price of a pair of initial groups joined, as a share of the output
        variance on {x, b}; a merge of groups of a and b initial groups
        is made only when it lowers the loss by more than ``price * a * b``
        times the variance. Ignored when ``n_groups`` is given.
    n_groups : int or None, default=None
        Merge until this many groups are left, whatever the price.
    max_group_size : int or None, default=None
        Largest number of pixels of a group.
    max_evaluations : int or None, default=None
        Largest number of model evaluations per image, f(x), f(b) and those
        of the initial groups included (two per group or union: the image
        with it alone, and without it).
    path : bool, default=False
        Go on merging past the stop, at no price, while evaluations are left
        (at most as many again as up to the stop), and keep those merges as
        the trees' ``tail``.

    Returns
    -------
    trees : list of MergeTree
        The merges of every image; ``stop_reason`` is ``"n_groups"``,
        ``"price"``, ``"max_group_size"``, ``"connectivity"`` or
        ``"max_evaluations"``.
    """
    partitions = [
        _Partition(p, groups, connectivity[p], "created", max_group_size)
        for p, groups in enumerate(initial_groups)
    ]
    for pb in partitions:
        pb.asked = 0  # union statistics asked for
    _evaluate(evaluator, [(pb, None, list(range(pb.n_leaves))) for pb in partitions])
    tiny = np.finfo(float).tiny
    for pb in partitions:
        pb.leaf_gains = None
        pb.losses.append(pb.loss())
        variance = max(evaluator.output_variance(pb.index), tiny)
        pb.atol = _ATOL * variance
        pb.level = price * variance  # the price of one pair of initial groups
        pb.n_stop = None
        pb.past = False
        # union statistics: two model evaluations each, after f(x) and f(b)
        pb.budget = np.inf if max_evaluations is None else (int(max_evaluations) - 2) // 2

    def stop(pb, reason):
        """Record the stop; whether the merges go on past it (``path``)."""
        if pb.n_stop is None:
            pb.stop_reason = reason
            pb.n_stop = len(pb.children)
        pb.past = path and reason == "price" and len(pb.active) > 1
        if pb.past:
            # the path past the stop at most doubles the evaluations
            pb.budget = min(pb.budget, 2 * pb.asked)
        return not pb.past

    while True:
        requests, merges = [], []
        for pb in partitions:
            if pb.done:
                continue
            if n_groups is not None and len(pb.active) <= n_groups and pb.n_stop is None:
                pb.done = stop(pb, "n_groups")
                continue
            if len(pb.active) <= 1 or (n_groups is None and pb.losses[-1] <= pb.atol):
                reason = "n_groups" if len(pb.active) <= 1 else "price"
                pb.done = stop(pb, reason) if pb.n_stop is None else True
                pb.done = pb.done or pb.losses[-1] <= pb.atol
                continue
            edges = _edges(pb)
            if not edges:
                bounded = pb.max_size is not None and any(pb.neighbours[k] for k in pb.active)
                pb.done = True
                if pb.n_stop is None:
                    stop(pb, "max_group_size" if bounded else "connectivity")
                continue
            known, unknown = _scores(pb, evaluator, edges)
            best = max(known, key=lambda t: (t[0], -t[1][0], -t[1][1]), default=None)
            level = -np.inf if (n_groups is not None or pb.past) else pb.level
            floor = max(level, -np.inf if best is None else best[0])
            open_ = sorted((u for u in unknown if u[0] > floor), key=lambda u: -u[0])
            left = pb.budget - pb.asked
            if open_ and left > 0:
                take = [e for _, e in open_[: int(min(_ROUND, left))]]
                by_base = {}
                for i, j in take:
                    by_base.setdefault(i, []).append(j)
                requests.extend((pb, i, parts) for i, parts in by_base.items())
                continue
            if best is None or best[0] <= level:
                if pb.n_stop is None:
                    pb.done = stop(pb, "price" if not open_ else "max_evaluations")
                else:
                    pb.done = True
                continue
            if open_ and pb.n_stop is None and left <= 0:
                # out of evaluations: the best known pair may not be the best pair
                pb.done = stop(pb, "max_evaluations")
                continue
            merges.append((pb, best))
        if not requests and not merges and all(pb.done for pb in partitions):
            break
        _evaluate(evaluator, requests)
        for pb, (score, (i, j), psi) in merges:
            counts = _leaf_counts(pb)
            gain = pb.pair_scores[(i, j)][0]
            g = pb.merge(i, j, pb.unions[_pair(i, j)], psi, gain)
            counts[g] = counts.pop(i) + counts.pop(j)
            pb.model_calls.append(evaluator.model_calls)
    return [_tree_of(pb) for pb in partitions]
