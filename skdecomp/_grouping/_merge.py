"""The greedy merge loop of AGREED, which returns its merge tree.

:func:`greedy_merges` merges two groups at a time, like
:func:`sklearn.cluster.ward_tree`, and returns a :class:`MergeTree`: the
merges in order, with their scores and the loss after each one. :func:`cut`
replays the first merges of a tree to get the partition with a given number
of groups, like scikit-learn's ``_hc_cut``. Tabular AGREED runs the loop on
one partition of the columns. Per-image AGREED runs it on one partition per
image, with an adjacency graph (scikit-learn's ``connectivity=``) so that
only adjacent groups merge, and in lockstep: each round sends the requests
of every image to the model at once.

The loop never calls the model itself. It asks an evaluator for statistics
of unions of groups, and the evaluator turns them into potentials and
interaction strengths. An evaluator has:

- ``union_statistics(requests)``: for every request ``(problem, base,
  parts)`` (``base`` and every part are arrays of units: columns, or pixels
  of an image), the statistics of ``base ∪ part`` for every part, as a pair
  of arrays whose first axis runs over the parts;
- ``potentials_from(stats)``: the interaction potential Psi of every group;
- ``interactions_from(first, second, union)``: the interaction strength of
  the pair of groups ``first`` and ``second``, given the statistics of both
  and of their union;
- ``output_variance(problem)``: the variance of the model output, which
  scales the tolerance below which a loss counts as zero;
- ``model_calls``: the rows sent to the model so far.

:class:`~skdecomp._game.AnchoredStatistics` is the evaluator of tabular
AGREED and :class:`~skdecomp._game._anchored.ImageStatistics` the one of per-image
AGREED (see :ref:`agreed`).
"""

# SPDX-License-Identifier: BSD-3-Clause

import bisect
from numbers import Integral

import numpy as np

__all__ = ["MergeTree", "check_cut", "cut", "greedy_merges"]

# Losses below this fraction of the output variance count as zero.
_ATOL = 1e-9

# Strategy "pairs" scores the pairs with one of this many groups of largest
# potential: every pair up to this many plus one groups. A pair of groups i
# and j lowers the loss by at most Psi_i + Psi_j, so a pair of two groups of
# small potential rarely wins, and wide tables cost O(d) unions per merge.
_PAIR_GROUPS = 24

# Strategy "pairs" with the loss score, beyond _PAIR_GROUPS + 1 groups: after
# the pairs of the group of largest potential, at most this many times K - 1
# more unions are scored per merge.
_PAIR_BUDGET = 1.5


class MergeTree:
    """The merges of one partition by :func:`greedy_merges`, in order.

    The leaves ``0 .. n_leaves - 1`` are the initial groups, in the order
    they were given; merge ``t`` makes node ``n_leaves + t`` from the two
    nodes ``children[t]``, the one with the smaller first unit first (as
    the ``children_`` of :class:`sklearn.cluster.AgglomerativeClustering`).

    Parameters
    ----------
    n_leaves : int
        Number of initial groups.
    children : array-like of int of shape (n_merges, 2)
        The two nodes of every merge.
    scores : array-like of float of shape (n_merges,)
        Score of every merge: loss decrease or interaction strength.
    losses : array-like of float of shape (n_merges + 1,)
        Loss of the initial partition, then after every merge.
    model_calls : array-like of int of shape (n_merges,)
        Rows sent to the model so far, after every merge.
    stop_reason : str, default="n_groups"
        Why the merges stopped (see :func:`greedy_merges`).
    tail : MergeTree or None, default=None
        The merges made past the stopping point (``path=True`` of
        :func:`greedy_merges`), as a tree whose leaves are the nodes of this
        tree left at its end, in the order of their first unit.

    Attributes
    ----------
    n_merges : int
        Number of merges.
    """

    def __init__(self, n_leaves, children, scores, losses, model_calls,
                 stop_reason="n_groups", tail=None):
        self.n_leaves = int(n_leaves)
        self.stop_reason = str(stop_reason)
        self.children = np.asarray(children, dtype=np.int64).reshape(-1, 2)
        self.scores = [float(s) for s in scores]
        self.losses = [float(v) for v in losses]
        self.model_calls = [int(c) for c in model_calls]
        self.tail = tail

    def with_tail(self):
        """This tree and its tail as one tree of the same leaves.

        Returns
        -------
        tree : MergeTree
            All merges, those past the stopping point included; its own
            ``tail`` is None.
        """
        if self.tail is None or self.tail.n_merges == 0:
            return self
        # the tail's leaf k is the k-th node left at the end, by first leaf
        nodes, _ = cut(self, self.n_leaves - self.n_merges)
        ids = list(nodes) + [self.n_leaves + self.n_merges + t
                             for t in range(self.tail.n_merges)]
        children = [[ids[a], ids[b]] for a, b in self.tail.children]
        return MergeTree(
            self.n_leaves,
            np.concatenate([self.children, np.asarray(children).reshape(-1, 2)]),
            self.scores + self.tail.scores,
            self.losses + self.tail.losses[1:],
            self.model_calls + self.tail.model_calls,
            stop_reason=self.stop_reason,
        )

    @property
    def n_merges(self):
        """Number of merges."""
        return self.children.shape[0]

    def leaves(self):
        """List the leaves under every node.

        Returns
        -------
        leaves : list of list of int
            Sorted leaves of node ``k``, for every node of the tree.
        """
        out = [[k] for k in range(self.n_leaves)]
        for a, b in self.children:
            out.append(sorted(out[a] + out[b]))
        return out

    def first_leaves(self):
        """List the smallest leaf under every node.

        Returns
        -------
        first : list of int
            Smallest leaf of node ``k``, for every node of the tree.
        """
        out = list(range(self.n_leaves))
        for a, b in self.children:
            out.append(min(out[a], out[b]))
        return out


def check_cut(tree, n_groups, where="merge path"):
    """Refuse a number of groups that ``tree`` does not reach.

    Parameters
    ----------
    tree : MergeTree
        The merges.
    n_groups : object
        The number of groups asked for.
    where : str, default="merge path"
        What the tree is, in the message.
    """
    n_initial = tree.n_leaves
    n_end = n_initial - tree.n_merges
    if (not isinstance(n_groups, Integral) or isinstance(n_groups, bool)
            or not n_end <= n_groups <= n_initial):
        raise ValueError(
            f"n_groups={n_groups!r} is outside the {where}, which goes from "
            f"{n_initial} to {n_end} groups; refit with a smaller n_groups (or "
            "rel_tol=0) to go further."
        )


def cut(tree, n_groups):
    """Replay the first merges of a tree, leaving ``n_groups`` groups.

    Parameters
    ----------
    tree : MergeTree
        The merges.
    n_groups : int
        Number of groups, between ``tree.n_leaves - tree.n_merges`` and
        ``tree.n_leaves``.

    Returns
    -------
    nodes : ndarray of int of shape (n_groups,)
        Node of every group, in order of each group's first leaf.
    labels : ndarray of int of shape (n_leaves,)
        Group of every leaf.
    """
    n_merges = tree.n_leaves - int(n_groups)
    if not 0 <= n_merges <= tree.n_merges:
        raise ValueError(
            f"n_groups={n_groups} is outside the merge tree, which goes from "
            f"{tree.n_leaves} to {tree.n_leaves - tree.n_merges} groups."
        )
    n_nodes = tree.n_leaves + n_merges
    top = np.arange(n_nodes)
    # a node's parent is made later than the node: walk from the last one
    parent = np.arange(n_nodes)
    for t in range(n_merges):
        parent[tree.children[t]] = tree.n_leaves + t
    for node in range(n_nodes - 1, -1, -1):
        top[node] = top[parent[node]]
    roots, first_leaf, labels = np.unique(
        top[: tree.n_leaves], return_index=True, return_inverse=True
    )
    order = np.argsort(first_leaf, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return roots[order], rank[labels.reshape(-1)]


class _Partition:
    """Groups, cached statistics and merges of one problem of the loop."""

    def __init__(self, index, groups, edges, order, max_size=None):
        self.index = index
        self.max_size = max_size
        self.n_leaves = len(groups)
        self.units = {k: np.asarray(g, dtype=np.int64) for k, g in enumerate(groups)}
        self.first = {k: int(g.min()) for k, g in self.units.items()}
        self.next_id = self.n_leaves
        self.by_first = order == "first"
        self.active = sorted(range(self.n_leaves), key=self.key)
        self.neighbours = None
        if edges is not None:
            self.neighbours = {k: set() for k in range(self.n_leaves)}
            for i, j in np.asarray(edges, dtype=np.int64).reshape(-1, 2):
                self.neighbours[int(i)].add(int(j))
                self.neighbours[int(j)].add(int(i))
        self.stats, self.psi, self.unions = {}, {}, {}
        # strategy "pairs": score, per-pair score and Psi of the union of every pair
        self.pair_scores = {}
        self.children, self.scores, self.losses, self.model_calls = [], [], [], []
        self.done = False
        self.stop_reason = None

    def key(self, node):
        """Position of a node in the order of the groups."""
        return self.first[node] if self.by_first else node

    def admissible(self, i, j):
        """Whether the union of groups i and j respects the size bound."""
        if self.max_size is None:
            return True
        return self.units[i].size + self.units[j].size <= self.max_size

    def has_candidates(self, i):
        """Whether group i may merge with another group."""
        if self.max_size is not None:
            return bool(self.candidates(i))
        if self.neighbours is None:
            return len(self.active) > 1
        return bool(self.neighbours[i])

    def candidates(self, i):
        """Groups that may merge with group i, in the order of the groups."""
        if self.neighbours is None:
            cands = [k for k in self.active if k != i]
        else:
            cands = sorted(self.neighbours[i], key=self.key)
        if self.max_size is None:
            return cands
        return [k for k in cands if self.admissible(i, k)]

    def loss(self):
        """AGREED loss of the current partition: the sum of the potentials."""
        return float(np.sum([self.psi[k] for k in self.active]))

    def merge(self, i, j, stats, psi, score):
        """Merge groups i and j into a new node; return it."""
        g = self.next_id
        self.next_id += 1
        self.children.append(sorted((i, j), key=lambda k: self.first[k]))
        self.scores.append(score)
        self.units[g] = np.sort(np.concatenate([self.units.pop(i), self.units.pop(j)]))
        self.first[g] = int(self.units[g][0])
        self.stats[g], self.psi[g] = stats, psi
        for k in (i, j):
            del self.stats[k], self.psi[k]
            self.active.remove(k)
        keys = [self.key(k) for k in self.active]
        self.active.insert(bisect.bisect(keys, self.key(g)), g)
        self.unions = {e: v for e, v in self.unions.items() if i not in e and j not in e}
        self.pair_scores = {
            e: v for e, v in self.pair_scores.items() if i not in e and j not in e
        }
        if self.neighbours is not None:
            nb = (self.neighbours.pop(i) | self.neighbours.pop(j)) - {i, j}
            self.neighbours[g] = nb
            for h in nb:
                self.neighbours[h] -= {i, j}
                self.neighbours[h].add(g)
        self.losses.append(self.loss())
        return g


def _pair(i, j):
    return (i, j) if i < j else (j, i)


def _best_pair(pb, evaluator, merge_score, groups):
    """The admissible pair of largest score per pair of units it joins.

    Only pairs with at least one of ``groups`` count. Returns ``((i, j),
    score, psi_union)``, or None when no pair may merge. Scores of pairs
    whose union is known are computed once and cached.
    """
    new = [e for e in pb.unions if e not in pb.pair_scores]
    if new:
        union = tuple(np.stack(s) for s in zip(*(pb.unions[e] for e in new)))
        psi_union = evaluator.potentials_from(union)
        if merge_score == "loss":
            psi_i = np.array([pb.psi[i] for i, _ in new])
            psi_j = np.array([pb.psi[j] for _, j in new])
            scores = psi_i + psi_j - psi_union
        else:
            first = tuple(np.stack(s) for s in zip(*(pb.stats[i] for i, _ in new)))
            second = tuple(np.stack(s) for s in zip(*(pb.stats[j] for _, j in new)))
            scores = evaluator.interactions_from(first, second, union)
        for e, score, psi in zip(new, scores, psi_union):
            n_pairs = pb.units[e[0]].size * pb.units[e[1]].size
            pb.pair_scores[e] = (float(score), float(score) / n_pairs, float(psi))
            _record_leaves(pb, e, pb.psi[e[0]] + pb.psi[e[1]] - psi)
    best, best_key = None, None
    for e, (score, per_pair, psi) in pb.pair_scores.items():
        if not pb.admissible(*e) or (e[0] not in groups and e[1] not in groups):
            continue
        # ties go to the pair of the smallest first units, as in the paper's rule
        key = (per_pair, -pb.key(e[0]), -pb.key(e[1]))
        if best_key is None or key > best_key:
            best, best_key = (e, score, psi), key
    return best


def _score_until_certain(pb, evaluator):
    """Evaluate just the unions that can hold the best pair per pair of units.

    A merge of groups i and j lowers the loss by at most ``Psi_i + Psi_j``
    (``Psi`` of the union is not negative), so its score per pair of units
    is at most ``(Psi_i + Psi_j) / (|G_i| |G_j|)``. The pairs of the group of
    largest potential are scored first; then, in rounds, every pair not
    yet scored whose bound reaches the best score found, until none is
    left, or until the budget of new unions for this merge is spent: the
    best pair is then the best of all pairs (unless the budget ran out),
    with far fewer unions than scoring every pair.
    """
    active = list(pb.active)
    if len(active) < 2:
        return
    index = {k: t for t, k in enumerate(active)}
    psi = np.array([pb.psi[k] for k in active])
    size = np.array([pb.units[k].size for k in active], dtype=float)
    K = len(active)
    upper = np.triu(np.ones((K, K), dtype=bool), 1)
    if pb.max_size is not None:
        upper &= (size[:, None] + size[None, :]) <= pb.max_size
    known = np.zeros((K, K), dtype=bool)
    for i, j in pb.unions:
        if i in index and j in index:
            a, b = sorted((index[i], index[j]))
            known[a, b] = True
    bound = (psi[:, None] + psi[None, :]) / (size[:, None] * size[None, :])
    if not (known & upper).any():
        # the first round: the pairs of the group of largest potential
        top = int(np.argmax(np.where(upper.any(0) | upper.any(1), psi, -np.inf)))
        want = np.zeros((K, K), dtype=bool)
        want[top, :] = True
        want[:, top] = True
        want = np.triu(want | want.T, 1) & upper
    else:
        want = None
    # beyond the first round, at most this many new unions per merge, those of
    # the largest bounds first: where every bound is loose (the small
    # interactions of a fitted model, once its true ones are merged) the
    # search stops there instead of scoring every pair
    budget = K * K if K <= _PAIR_GROUPS + 1 else int(np.ceil(_PAIR_BUDGET * (K - 1)))
    while True:
        if want is None:
            best = _best_pair(pb, evaluator, "loss", set(active))
            if best is None:
                return
            level = best[1] / (pb.units[best[0][0]].size * pb.units[best[0][1]].size)
            slack = 1e-12 * max(abs(level), np.finfo(float).tiny)
            want = upper & ~known & (bound >= level - slack)
            if want.sum() > budget:
                if budget <= 0:
                    return
                a, b = np.nonzero(want)
                keep = np.argsort(-bound[a, b], kind="stable")[:budget]
                want = np.zeros_like(want)
                want[a[keep], b[keep]] = True
            budget -= int(want.sum())
        want &= ~known
        if not want.any():
            return
        requests = []
        for a in np.flatnonzero(want.any(axis=1)):
            parts = [active[b] for b in np.flatnonzero(want[a])]
            requests.append((pb, active[a], parts))
        _evaluate(evaluator, requests)
        known |= want
        want = None


def _record_leaves(pb, pair, gain):
    """Keep the loss decrease of a pair of initial groups, when asked to."""
    if pb.leaf_gains is not None and pair[0] < pb.n_leaves and pair[1] < pb.n_leaves:
        pb.leaf_gains[_pair(*pair)] = float(gain)


def _evaluate(evaluator, requests):
    """Ask the evaluator for one batch and store the statistics it returns.

    ``requests`` holds ``(partition, base, parts)`` with node ids: ``base``
    None asks for the groups ``parts`` themselves, otherwise for the unions
    of ``base`` with every part.
    """
    if not requests:
        return
    empty = np.zeros(0, dtype=np.int64)
    results = evaluator.union_statistics(
        [
            (
                pb.index,
                empty if base is None else pb.units[base],
                [pb.units[k] for k in parts],
            )
            for pb, base, parts in requests
        ]
    )
    for (pb, base, parts), stats in zip(requests, results):
        pb.asked += len(parts)
        if base is None:
            psi = evaluator.potentials_from(stats)
            for t, k in enumerate(parts):
                pb.stats[k] = tuple(s[t] for s in stats)
                pb.psi[k] = psi[t]
        else:
            for t, k in enumerate(parts):
                pb.unions[_pair(base, k)] = tuple(s[t] for s in stats)


def greedy_merges(
    evaluator,
    initial_groups,
    *,
    connectivity=None,
    n_groups=None,
    rel_tol=0.0,
    merge_score="loss",
    order="first",
    progress=None,
    max_group_size=None,
    accept=None,
    strategy="paper",
    path=False,
    leaf_gains=None,
):
    """Run the greedy merges of AGREED on one or several partitions in lockstep.

    With ``strategy="paper"``, at every step the group i of largest
    interaction potential Psi_i (among
    the groups that have a candidate partner) is merged with the candidate j
    of best score: the loss decrease ``Psi_i + Psi_j - Psi_{i∪j}`` or the
    interaction strength of the pair (see :ref:`agreed`). Without a
    connectivity every other group is a candidate, and only the unions of i
    with them are evaluated; with one only adjacent groups are, the unions
    of every edge are evaluated at the start and those of the new group's
    edges right after each merge (as :func:`sklearn.cluster.ward_tree` does
    with its distances), so each round is one batch of model calls.

    With ``strategy="pairs"``, the pair merged is the admissible pair of
    largest score per pair of units it joins, ``score / (|G_i| |G_j|)``: a
    group that is already large gets no credit for the many small
    interactions it has with everything else (see :ref:`agreed_fitted`).
    With ``merge_score="loss"`` it is searched over all pairs without
    scoring them all: a pair lowers the loss by at most ``Psi_i + Psi_j``,
    so after the pairs of the group of largest potential only the pairs
    whose bound ``(Psi_i + Psi_j) / (|G_i| |G_j|)`` reaches the best score
    found are scored, largest bound first, in rounds until none is left or,
    beyond 25 groups, 1.5 (K - 1) more unions were scored for this merge
    (without a connectivity). The pair found is the best of all pairs
    unless that budget ran out, which happens only where every bound is
    loose: among the many small interactions of a fitted model, once its
    true ones are merged. Otherwise, every admissible pair with one of the 24
    groups of largest potential (every pair, up to 25 groups) is a
    candidate. A union is evaluated once, and a pair's score computed once.

    With ``max_group_size``, a pair of groups whose union would hold more
    units than the bound is not a candidate: the chosen group i is the one of
    largest Psi among the groups that still have an admissible partner, and
    the loop stops when no admissible merge remains.

    The ``stop_reason`` of every returned tree says why its merges stopped:
    ``"n_groups"`` (the requested number of groups, or a single group, was
    reached), ``"rel_tol"`` (the loss fell to the tolerance),
    ``"max_group_size"`` (no two groups may merge without exceeding the
    bound), ``"connectivity"`` (no two adjacent groups are left) or
    ``"held_out"`` (``accept`` refused the last merge, which stays in the
    tree).

    Parameters
    ----------
    evaluator : object
        The statistics of unions of groups (see the module docstring), e.g.
        :class:`~skdecomp._game.AnchoredStatistics`.
    initial_groups : list of list of array-like of int
        For every partition (problem), the units of every initial group.
    connectivity : list of array-like of int of shape (n_edges, 2) or None, \
            default=None
        For every partition, the pairs of initial groups that are adjacent;
        merged groups are adjacent to the neighbours of both. None lets
        every pair merge.
    n_groups : int or None, default=None
        Stop at this many groups; None stops on ``rel_tol``.
    rel_tol : float, default=0.0
        With ``n_groups=None``, stop once the loss is at most ``rel_tol``
        times the initial loss (or ``1e-9`` times the output variance).
    merge_score : {"loss", "interaction"}, default="loss"
        Score that picks the partner j.
    order : {"first", "created"}, default="first"
        Order of the groups, which breaks ties and sums the loss: "first"
        keeps them by their first unit, "created" keeps the initial groups
        first and appends every merged group.
    progress : object or None, default=None
        Its ``update(n)`` is called with the number of merges of every round.
    max_group_size : int or None, default=None
        Largest number of units of a merged group; None sets no bound.
        Initial groups larger than the bound are kept but never merged.
    accept : callable or None, default=None
        Called after every merge as ``accept(problem, i, j, g, units,
        n_pairs)``, with the merged nodes i and j, the new node g, its units
        and the number of pairs of units the merge joins; merging of that
        problem stops when it returns False.
    strategy : {"paper", "pairs"}, default="paper"
        Which merge is made at every step (see above).
    path : bool, default=False
        Go on merging past the stopping point, with the same rule, and keep
        those merges as the tree's ``tail``: to a single group, to a loss of
        0, or until the merges past the stop have asked for as many union
        statistics as those up to it (so the path at most doubles the
        cost). ``accept`` is still called on them; its answer is ignored.

    leaf_gains : list of dict or None, default=None
        For every partition, a dict that the loop fills with the loss
        decrease ``Psi_a + Psi_b - Psi_{a∪b}`` of every pair ``(a, b)``
        (``a < b``) of initial groups whose union it evaluates, and under
        the key ``"psi"`` the potential of every initial group; ``accept``
        may read it.

    Returns
    -------
    trees : list of MergeTree
        The merges of every partition.
    """
    partitions = [
        _Partition(
            p,
            groups,
            None if connectivity is None else connectivity[p],
            order,
            max_group_size,
        )
        for p, groups in enumerate(initial_groups)
    ]
    for pb in partitions:
        pb.leaf_gains = None if leaf_gains is None else leaf_gains[pb.index]
        pb.n_stop = None  # merges up to the stopping point, once past it
        pb.asked = 0  # union statistics asked for
    if strategy not in ("paper", "pairs"):
        raise ValueError(f"strategy={strategy!r} is not 'paper' or 'pairs'.")
    pairs = strategy == "pairs"
    # every initial group, and every edge of the graph when there is one
    requests = []
    for pb in partitions:
        requests.append((pb, None, list(range(pb.n_leaves))))
        if pb.neighbours is not None:
            for i, nb in pb.neighbours.items():
                later = [j for j in nb if j > i]
                if later:
                    requests.append((pb, i, later))
    _evaluate(evaluator, requests)
    tiny = np.finfo(float).tiny
    for pb in partitions:
        if pb.leaf_gains is not None:
            pb.leaf_gains["psi"] = {k: float(pb.psi[k]) for k in range(pb.n_leaves)}
        pb.losses.append(pb.loss())
        pb.atol = _ATOL * max(evaluator.output_variance(pb.index), tiny)

    def past(pb, reason):
        """Record the stopping point; whether the path goes on past it."""
        if pb.n_stop is None:
            pb.stop_reason = reason
            pb.n_stop, pb.asked_at_stop = len(pb.children), pb.asked
        return path and len(pb.active) > 1 and pb.losses[-1] > pb.atol

    def stop(pb):
        if pb.n_stop is not None:
            # past the stopping point: to one group, a loss of 0 or the budget
            return (len(pb.active) <= 1 or pb.losses[-1] <= pb.atol
                    or pb.asked - pb.asked_at_stop >= max(pb.asked_at_stop, 1))
        K = len(pb.active)
        if K <= 1 or (n_groups is not None and K <= n_groups):
            return not past(pb, "n_groups")
        if n_groups is None and pb.losses[-1] <= max(rel_tol * pb.losses[0], pb.atol):
            return not past(pb, "rel_tol")
        return False

    for pb in partitions:
        pb.done = stop(pb)
    while True:
        # the group to merge, and the unions with its candidates not yet known
        chosen, requests = [], []
        for pb in partitions:
            if pb.done:
                continue
            if pairs and merge_score == "loss" and pb.neighbours is None:
                # exactly the best pair, scoring only the pairs that can be it
                _score_until_certain(pb, evaluator)
                chosen.append((pb, set(pb.active), None))
                continue
            if pairs:
                # the pairs with one of the groups of largest potential: all
                # pairs up to _PAIR_GROUPS + 1 groups; the unions not yet
                # known, all of them at first, then those of new groups
                top = sorted(pb.active, key=lambda k: -pb.psi[k])[:_PAIR_GROUPS]
                asked = set(pb.unions)
                for i in top:
                    missing = [j for j in pb.candidates(i) if _pair(i, j) not in asked]
                    asked.update(_pair(i, j) for j in missing)
                    if missing:
                        requests.append((pb, i, missing))
                chosen.append((pb, set(top), None))
                continue
            psi = [pb.psi[k] if pb.has_candidates(k) else -np.inf for k in pb.active]
            if not np.isfinite(np.max(psi)):
                pb.done = True  # no two groups may merge
                bounded = pb.max_size is not None and (
                    pb.neighbours is None
                    or any(pb.neighbours[k] for k in pb.active)
                )
                if pb.n_stop is None:
                    pb.stop_reason = "max_group_size" if bounded else "connectivity"
                continue
            i = pb.active[int(np.argmax(psi))]
            cands = pb.candidates(i)
            missing = [j for j in cands if _pair(i, j) not in pb.unions]
            if missing:
                requests.append((pb, i, missing))
            chosen.append((pb, i, cands))
        if not chosen:
            break
        _evaluate(evaluator, requests)
        # merge, then ask for the new group's edges
        requests = []
        for pb, i, cands in chosen:
            if cands is None:
                # strategy "pairs": the best pair with a group of ``i``
                best = _best_pair(pb, evaluator, merge_score, i)
                if best is None:
                    pb.done = True
                    if pb.n_stop is None:
                        pb.stop_reason = "max_group_size"
                    continue
                (a, b), score, psi_union = best
                n_pairs = pb.units[a].size * pb.units[b].size
                g = pb.merge(a, b, pb.unions[_pair(a, b)], psi_union, score)
                if (accept is not None
                        and not accept(pb.index, a, b, g, pb.units[g], n_pairs)
                        and pb.n_stop is None):
                    pb.done = not past(pb, "held_out")
                else:
                    pb.done = stop(pb)
                continue
            unions = [pb.unions[_pair(i, j)] for j in cands]
            union = tuple(np.stack(s) for s in zip(*unions))
            psi_union = evaluator.potentials_from(union)
            psi_cands = np.array([pb.psi[j] for j in cands])
            gains = pb.psi[i] + psi_cands - psi_union
            for j, gain in zip(cands, gains):
                _record_leaves(pb, (i, j), gain)
            if merge_score == "loss":
                scores = gains
            else:
                parts = tuple(np.stack(s) for s in zip(*(pb.stats[j] for j in cands)))
                scores = evaluator.interactions_from(pb.stats[i], parts, union)
            best = int(np.argmax(scores))
            j = cands[best]
            n_pairs = pb.units[i].size * pb.units[j].size
            g = pb.merge(i, j, unions[best], psi_union[best], float(scores[best]))
            if (accept is not None
                    and not accept(pb.index, i, j, g, pb.units[g], n_pairs)
                    and pb.n_stop is None):
                pb.done = not past(pb, "held_out")
            else:
                pb.done = stop(pb)
            if pb.neighbours is not None and not pb.done:
                nb = pb.candidates(g)
                if nb:
                    requests.append((pb, g, nb))
        _evaluate(evaluator, requests)
        for pb, _, _ in chosen:
            if len(pb.model_calls) < len(pb.children):
                pb.model_calls.append(evaluator.model_calls)
        if progress is not None:
            progress.update(len(chosen))
    return [_tree_of(pb) for pb in partitions]


def _tree_of(pb):
    """The MergeTree of a partition, with the merges past its stop as its tail."""
    n = len(pb.children) if pb.n_stop is None else pb.n_stop
    tail = None
    if n < len(pb.children):
        # the tail's leaves: the nodes left at the stop, by their first unit
        head = MergeTree(pb.n_leaves, pb.children[:n], [], [], [])
        nodes, _ = cut(head, pb.n_leaves - n)
        ids = {int(node): k for k, node in enumerate(nodes)}
        for t in range(n, len(pb.children)):
            ids[pb.n_leaves + t] = len(nodes) + t - n
        tail = MergeTree(
            len(nodes),
            [[ids[a], ids[b]] for a, b in pb.children[n:]],
            pb.scores[n:],
            pb.losses[n:],
            pb.model_calls[n:],
            stop_reason="path",
        )
    return MergeTree(
        pb.n_leaves,
        pb.children[:n],
        pb.scores[:n],
        pb.losses[: n + 1],
        pb.model_calls[:n],
        stop_reason=pb.stop_reason,
        tail=tail,
    )
