"""Owen values at a budget by the partition recursion, as shap's PartitionExplainer.

Read top-down, the Owen value of a node in a context C (a coalition made of
whole nodes above it) is ``v(C ∪ node) - v(C)``; expanding the node splits
it among its m children by their Shapley values in the quotient game of the
children, with C added: child j gets, for every subset S of its siblings,
``w(|S|, m) * (v(C ∪ S ∪ j) - v(C ∪ S))``, ``w`` the Shapley weight, so child
j meets ``2**(m - 1)`` contexts ``C ∪ S`` of its own. An expansion costs the
``2**m - 2`` new coalitions ``C ∪ S`` (the empty and the full S are the
context's). Expanded to the players in every context, this is the exact
Owen value (Owen, "Values of games with a priori unions", 1977).

At a budget, the (node, context) pairs are expanded largest ``|w (v(C ∪
node) - v(C))|`` first, in batches, as shap does; what is left unexpanded
when the budget is spent stays with its node and is spread over the node's
players in proportion to their sizes (their numbers of columns: pixels of
an image). So the players' values always add up to ``f(x) - E_B f``, and
the total of a node is its exact Owen value as soon as its parent was
expanded in all of its contexts. The values are deterministic: no standard
errors, like the quadrature of Integrated Gradients; the finer structure
below the unexpanded nodes is not estimated at all.

The cost is counted in coalitions per explained row, each evaluated with
every background row (like LIME's and RISE's); the explained rows are
expanded one by one, each by its own priorities.
"""

# SPDX-License-Identifier: BSD-3-Clause

import heapq
from math import factorial

import numpy as np

from .._config import working_memory_bytes

__all__ = ["children_subsets", "partition_min_budget", "partition_owen_attributions",
           "shapley_weights"]

# coalitions evaluated at once for one explained row
_BATCH = 64


def _root_cost(hierarchy):
    return (1 << len(hierarchy.children[-1])) - 2 if hierarchy.children else 0


def partition_min_budget(hierarchy):
    """Smallest budget: the root's expansion, ``2**m - 2`` for m children of the root."""
    return _root_cost(hierarchy)


def _entry_bytes(K):
    # a heap entry: its context mask, two value arrays and the tuple
    return K + 200


def check_partition_budget(hierarchy, budget, n_outputs=1):
    """The budget as an int, or a ValueError naming the smallest or largest that works."""
    K = hierarchy.n_players
    low = partition_min_budget(hierarchy)
    widest = max(len(ch) for ch in hierarchy.children)
    if budget < low:
        raise ValueError(
            f"n_samples={budget} is below the {low} coalitions of the first split of "
            f"the hierarchy (its root has {len(hierarchy.children[-1])} children, "
            f"2**{len(hierarchy.children[-1])} - 2 coalitions): pass n_samples >= "
            f"{low}, or a hierarchy whose root has fewer children (a binary one, such "
            "as a linkage, splits in 2)."
        )
    # every coalition evaluated adds at most m * 2**(m-1) / (2**m - 2) <= widest entries
    per = widest * _entry_bytes(K) * (1 + int(n_outputs))
    if budget * per > working_memory_bytes():
        largest = max(low, working_memory_bytes() // per)
        raise ValueError(
            f"n_samples={budget} with the partition recursion over {K} groups would "
            f"hold about {budget * per / 2**30:.1f} GiB; the largest budget that fits "
            f"the working memory is n_samples={largest}."
        )
    return int(budget)


def shapley_weights(m):
    """Shapley weight ``|S|! (m - 1 - |S|)! / m!`` of a subset of each size 0 .. m-1."""
    return np.array([factorial(s) * factorial(m - 1 - s) / factorial(m) for s in range(m)])


def children_subsets(node_matrix, children):
    """Every subset S of the children (row S by its bitmask) and the players of each.

    Returns ``subsets`` of shape (2**m, m) and ``union`` of shape (2**m, K), bool.
    """
    m = len(children)
    subsets = ((np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
    union = (subsets.astype(np.int64) @ node_matrix[children].astype(np.int64)) > 0
    return subsets, union


class _Recursion:
    """The partition recursion for one explained row (see the module docstring).

    Its rules are methods: the priority of a (node, context) pair (``key``),
    whether a popped pair may be expanded (``may_expand``), what each node
    receives exactly (``received``) and how what is left unexpanded reaches
    the players (``spread_left``), so that a variant changes one of them.
    """

    def __init__(self, hierarchy, spread):
        self.hierarchy = hierarchy
        self.spread = spread  # the players' weights for what is left: sizes

    def key(self, node, delta):
        """Priority of a (node, context) pair: its largest contribution."""
        return float(np.abs(delta).max())

    def may_expand(self, node):
        """Whether a popped node may be expanded in its context (budget aside)."""
        return True

    def received(self, node, delta):
        """Called with every exact contribution a node receives."""

    def spread_left(self, phi, left):
        """Add each node's unexpanded contributions to its players, by their weights."""
        for a in np.flatnonzero(np.abs(left).sum(axis=1) > 0):
            players = self.hierarchy.leaves[a]
            share = self.spread[players]
            total = share.sum()
            share = share / total if total > 0 else np.full(players.size, 1.0 / players.size)
            phi[players] += share[:, None] * left[a][None, :]
        return phi

    def run(self, value, budget, f0, f1):
        """Values of the players for one row; ``value(masks)`` -> (n, n_out)."""
        hierarchy = self.hierarchy
        K = hierarchy.n_players
        n_out = f0.shape[0]
        node_matrix = hierarchy.node_matrix()
        phi = np.zeros((K, n_out))
        left = np.zeros((hierarchy.n_nodes, n_out))  # unexpanded contributions, per node
        heap = []
        tick = 0

        def push(node, ctx, lo, hi, w):
            nonlocal tick
            delta = (hi - lo) * w
            self.received(node, delta)
            if node < K:  # a player: its contribution is exact
                phi[node] += delta
                return
            heapq.heappush(heap, (-self.key(node, delta), tick, node, ctx, lo, hi, w))
            tick += 1

        push(hierarchy.root, np.zeros(K, dtype=bool), f0, f1, 1.0)
        spent = 0
        while heap:
            batch, masks = [], []
            while heap and len(masks) < _BATCH:
                item = heapq.heappop(heap)
                node, ctx = item[2], item[3]
                ch = hierarchy.children[node - K]
                if (spent + len(masks) + (1 << len(ch)) - 2 > budget
                        or not self.may_expand(node)):
                    left[node] += (item[5] - item[4]) * item[6]
                    continue
                subsets, union = children_subsets(node_matrix, ch)
                coalitions = ctx[None, :] | union  # ctx ∪ S for every subset S
                batch.append((item, len(masks), subsets, coalitions))
                masks.extend(coalitions[1:-1])  # the empty and the full S are known
            if not batch:
                break
            out = value(np.asarray(masks))
            spent += len(masks)
            for (_, _, node, _, lo, hi, w), start, subsets, coalitions in batch:
                ch = hierarchy.children[node - K]
                m = len(ch)
                # v(ctx ∪ S) for every subset S by its bitmask
                v = np.concatenate([lo[None], out[start:start + (1 << m) - 2], hi[None]])
                sizes = subsets.sum(axis=1)
                sw = shapley_weights(m)
                for j, c in enumerate(ch):
                    for s in np.flatnonzero(~subsets[:, j]):
                        push(c, coalitions[s], v[s], v[s | 1 << j], w * sw[sizes[s]])
        for item in heap:
            left[item[2]] += (item[5] - item[4]) * item[6]
        return self.spread_left(phi, left)


def _one_row(value, hierarchy, budget, f0, f1, spread):
    """Values of the players for one explained row; ``value(masks)`` -> (n, n_out)."""
    return _Recursion(hierarchy, spread).run(value, budget, f0, f1)


def partition_owen_attributions(game, X, hierarchy, budget, prediction, dummy=None):
    """Owen values by the partition recursion within ``budget`` coalitions per row.

    Parameters
    ----------
    game : CoalitionGame
    X : ndarray or DataFrame
        Checked rows in the model's input form.
    hierarchy : Hierarchy
    budget : int
        Coalitions evaluated per explained row (checked by
        :func:`check_partition_budget`).
    prediction : ndarray of shape (n_rows, n_outputs)
    dummy : ndarray of shape (n_rows, K), bool, or None
        Groups on which a row equals every background row: they get no share
        of the unexpanded values (their exact value is 0).

    Returns
    -------
    phi : ndarray of shape (n_rows, K, n_outputs)
    """
    K = hierarchy.n_players
    sizes = np.bincount(game.labels, minlength=K).astype(np.float64)
    f0 = np.asarray(game.expected_value, dtype=np.float64).reshape(-1)
    n_rows = prediction.shape[0]
    phi = np.zeros((n_rows, K, prediction.shape[1]))
    for i in range(n_rows):
        row = X.iloc[i:i + 1] if hasattr(X, "iloc") else X[i:i + 1]

        def value(masks, row=row, i=i):
            return game.values(row, masks, prediction=prediction[i:i + 1])[0]

        spread = sizes if dummy is None else sizes * ~dummy[i]
        phi[i] = _one_row(value, hierarchy, budget, f0,
                          np.asarray(prediction[i], dtype=np.float64), spread)
    return phi
