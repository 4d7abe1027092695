"""Owen and Winter values through model calls, exact from few coalitions or sampled.

The hierarchical value of player i is the mean of its marginal
contributions over the orders consistent with the hierarchy: a uniform
random order of the children at every internal node, independently. Along
the path from the root to i, let ``a_0, ..., a_d`` be i's ancestors and
``n_l`` the child of ``a_l`` on the path (``n_d = i``). The players before i
are the union over the levels l of the siblings of ``n_l`` that come before
it, ``T_l``, and the ``T_l`` are independent, each with the Shapley weight
``|T|! (m - 1 - |T|)! / m!`` among the ``m - 1`` siblings. So

    phi_i = sum over T_0, ..., T_d of prod_l w(|T_l|, m_l)
            * (v(C ∪ {i}) - v(C)),   C = union of the leaves of T_0 .. T_d.

Read top-down: the value of a node is the Shapley value of its children in
the quotient game at its level, with the nodes above either whole in or
whole out of the coalition (the context), averaged over the contexts, and
then split among its children the same way. Only the coalitions
``context ∪ (union of a subset of a node's children)`` are needed (as in
shap's PartitionExplainer): a node ``a`` with ``m_a`` children meets
``prod over its ancestors b of 2**(m_b - 1)`` contexts, and adds
``2**m_a - 2`` new coalitions in each (the empty and the full subsets are
coalitions of its parent). A balanced binary hierarchy over M players
needs about ``M**2`` coalitions (:func:`owen_coalition_count`), against the
``2**M`` of the components.

Beyond a budget the value is sampled: pairs of a consistent order and its
reverse (also consistent), drawn for each background row's own game
(v_x,z(S) = f(x_S, z_-S)), as permutation SHAP does; each order's marginal
contributions add up to ``f(x) - f(z)``, so the estimate is efficient. Its
standard errors are permutation SHAP's: the spread of the antithetic pairs
within each background row's game, the variances of the independent games
added up, scaled by t / 1.96 for their Welch-Satterthwaite degrees of
freedom, and pairs that all agree bounded rather than taken as exact.
"""

# SPDX-License-Identifier: BSD-3-Clause


import numpy as np
from scipy import sparse

from .._config import MAX_EXACT_GROUPS, working_memory_bytes
from ._errors import Draws
from ._kernels import permutation_attributions
from ._owen_partition import (
    check_partition_budget,
    children_subsets,
    partition_min_budget,
    partition_owen_attributions,
    shapley_weights,
)
from ._registry import (
    REGISTRY,
    _largest_budget,
    budget_bytes,
    check_budget_memory,
    min_samples,
    resolve_budget,
)
from ._designs import _unique_rows, prefix_design
from ._evaluation import _evaluate, _rows_first, _Segment
from ._sampled import _Variances, order_terms

__all__ = [
    "check_owen_budget",
    "hierarchical_attributions",
    "owen_attributions",
    "owen_coalition_count",
    "owen_coalitions",
    "owen_orders",
]

#: The random stream of the sampled Owen value: its seed_id in the registry.
OWEN_SEED_ID = REGISTRY["owen"].seed_id

#: Coalitions per row below which the value is exact when ``n_samples`` is None:
#: the cost of enumerating every coalition of ``MAX_EXACT_GROUPS`` groups.
DEFAULT_EXACT_COALITIONS = 1 << MAX_EXACT_GROUPS

# values held at once (explained rows x background rows x coalitions x outputs)
_MAX_VALUES = 1 << 23


def _n_children(hierarchy):
    K = hierarchy.n_players
    return {a: len(ch) for a, ch in enumerate(hierarchy.children, start=K)}


def owen_coalition_count(hierarchy):
    """Coalitions other than the empty and the full one that the exact value needs.

    ``sum over internal nodes a of contexts(a) * (2**m_a - 2)``, with
    ``contexts(root) = 1`` and ``contexts(a) = contexts(parent) * 2**(m_parent
    - 1)``: a Python int, exact for any hierarchy.

    Parameters
    ----------
    hierarchy : Hierarchy

    Returns
    -------
    count : int
    """
    K = hierarchy.n_players
    if K < 2:
        return 0
    m = _n_children(hierarchy)
    contexts = {hierarchy.root: 1}
    total = 0
    for a in range(hierarchy.root, K - 1, -1):
        total += contexts[a] * ((1 << m[a]) - 2)
        for c in hierarchy.children[a - K]:
            if c >= K:
                contexts[c] = contexts[a] << (m[a] - 1)
    return total


def owen_coalitions(hierarchy):
    """The coalitions of the exact hierarchical value and its linear map.

    Parameters
    ----------
    hierarchy : Hierarchy

    Returns
    -------
    coalitions : ndarray of shape (n_coalitions, K), bool
        Distinct coalitions, the empty and the full one among them.
    weights : scipy.sparse.csr_matrix of shape (n_coalitions, K)
        ``phi = v @ weights`` for the values ``v`` of ``coalitions``.
    """
    K = hierarchy.n_players
    node_matrix = hierarchy.node_matrix()
    blocks, rows, cols, vals = [], [], [], []
    start = 0
    # (node, contexts (n_ctx, K), their weights (n_ctx,))
    stack = [(hierarchy.root, np.zeros((1, K), dtype=bool), np.ones(1))]
    while stack:
        a, ctx, w = stack.pop()
        ch = hierarchy.children[a - K]
        m = len(ch)
        subsets, union = children_subsets(node_matrix, ch)
        sizes = subsets.sum(axis=1)
        coal = ctx[:, None, :] | union[None, :, :]  # (n_ctx, 2**m, K)
        blocks.append(coal.reshape(-1, K))
        shapley = shapley_weights(m)
        where = start + np.arange(ctx.shape[0])[:, None] * (1 << m)
        for j, c in enumerate(ch):
            without = np.flatnonzero(~subsets[:, j])
            ww = w[:, None] * shapley[sizes[without]][None, :]
            if c < K:
                rows += [(where + without + (1 << j)).ravel(), (where + without).ravel()]
                cols += [np.full(ww.size, c), np.full(ww.size, c)]
                vals += [ww.ravel(), -ww.ravel()]
            else:
                stack.append((c, coal[:, without].reshape(-1, K), ww.ravel()))
        start += coal.shape[0] * coal.shape[1]
    allc = np.vstack(blocks)
    coalitions, _, inverse = _unique_rows(allc)
    rows = inverse[np.concatenate(rows)]
    weights = sparse.coo_matrix(
        (np.concatenate(vals), (rows, np.concatenate(cols))),
        shape=(coalitions.shape[0], K),
    ).tocsr()
    return coalitions, weights


def owen_orders(hierarchy, n_pairs, rng):
    """Orders consistent with the hierarchy, each followed by its reverse.

    Every internal node orders its children by independent uniform keys;
    a player's place is the lexicographic order of the ranks along its path
    from the root.

    Parameters
    ----------
    hierarchy : Hierarchy
    n_pairs : int
    rng : RandomState

    Returns
    -------
    orders : ndarray of shape (2 * n_pairs, K), int64
        Player at every position; row ``2p + 1`` is row ``2p`` reversed.
    """
    K = hierarchy.n_players
    if K == 1:
        return np.zeros((2 * n_pairs, 1), dtype=np.int64)
    ranks = np.zeros((hierarchy.n_nodes, n_pairs), dtype=np.int64)
    for a, ch in enumerate(hierarchy.children, start=K):
        keys = rng.random_sample((n_pairs, len(ch)))
        ranks[ch] = np.argsort(np.argsort(keys, axis=1), axis=1).T
    D = hierarchy.depth
    # key[l, p, i]: rank of i's ancestor at depth l + 1 (0 below i)
    key = np.zeros((D, n_pairs, K), dtype=np.int64)
    for i in range(K):
        path = [i] + hierarchy.ancestors(i)[:-1]  # from i up to the root's child
        for l, node in enumerate(reversed(path)):
            key[l, :, i] = ranks[node]
    pair = np.repeat(np.arange(n_pairs), K)
    sort_keys = [key[l].ravel() for l in range(D - 1, -1, -1)] + [pair]
    forward = np.lexsort(sort_keys).reshape(n_pairs, K) % K
    orders = np.empty((2 * n_pairs, K), dtype=np.int64)
    orders[0::2] = forward
    orders[1::2] = forward[:, ::-1]
    return orders


def _order_design(hierarchy, n_pairs, rng):
    """Consistent antithetic orders, their distinct prefixes and the prefix index."""
    orders = owen_orders(hierarchy, n_pairs, rng)
    return orders, *prefix_design(orders)


def _exact(game, X, prediction, hierarchy):
    coalitions, weights = owen_coalitions(hierarchy)
    values = game.values(X, coalitions, prediction=prediction)  # (n, n_coal, n_out)
    n, n_coal, n_out = values.shape
    flat = _rows_first(values)  # (n * n_out, n_coal)
    phi = np.asarray((weights.T @ flat.T).T)  # (n * n_out, K)
    return phi.reshape(n, n_out, -1).transpose(0, 2, 1)


def _sampled(game, X, prediction, hierarchy, budget, seed, errors=False):
    """Mean over the background rows of each one's sampled game; optional errors.

    The standard errors are those of permutation SHAP (``_sampled._Variances``):
    each game's variance from its own pairs, a group's variance moderated
    towards its row's, and a group whose pairs all agree in a game bounded
    by the rule of three rather than taken as exact. A group out of play in
    a game (the explained row and the background row agree on it) adds
    nothing there: its contributions are 0 in every order.
    """
    from ._dummy import differing_groups

    K = hierarchy.n_players
    n_rows, n_out = prediction.shape
    n_pairs = max(1, budget // (2 * (K - 1)))
    if game.anchored:
        n_bg = game.background.shape[0]
        differ = differing_groups(game, X) if errors else None
        bg_pred = game.background_prediction
    else:  # one game, the imputer's own
        n_bg = 1
        differ = np.ones((n_rows, 1, K), dtype=bool) if errors else None
        bg_pred = game.expected_value[None, :]
    designs = [_order_design(hierarchy, n_pairs, np.random.RandomState(
        [seed, OWEN_SEED_ID, j])) for j in range(n_bg)]
    phi = np.zeros((n_rows, K, n_out))
    acc = _Variances(n_rows, K, n_out) if errors and n_pairs >= 2 else None
    draws = Draws(np.zeros(n_pairs), [np.inf])
    per_row = max(1, n_bg * designs[0][1].shape[0] * n_out)
    step = max(1, _MAX_VALUES // per_row)
    groups_all = np.arange(K)
    for lo in range(0, n_rows, step):
        rows = np.arange(lo, min(n_rows, lo + step))
        segments = [_Segment(Z, rows, np.broadcast_to(groups_all, (rows.size, K)),
                             np.full(rows.size, j)) for j, (_, Z, _) in enumerate(designs)]
        for j, (seg, (orders, Z, index), values) in enumerate(
                zip(segments, designs, _evaluate(game, X, prediction, segments))):
            flat = _rows_first(values)
            est = permutation_attributions(orders, index, flat)
            phi[rows] += est.reshape(rows.size, n_out, K).transpose(0, 2, 1)
            if acc is not None:
                base = np.broadcast_to(bg_pred[j], (rows.size, n_out)).reshape(-1)
                acc.add(seg, order_terms(orders, index), draws, flat, base, est,
                        play=differ[rows, j])
    phi /= n_bg
    if not errors:
        return phi
    if acc is None:  # pragma: no cover - min_samples asks for three pairs
        return phi, np.full(phi.shape, np.inf)
    return phi, acc.standard_errors(n_bg)


def _exact_bytes(hierarchy, count, n_outputs=1):
    """Bytes the exact value holds at once for one explained row: an upper estimate.

    The coalitions of every node in every context (before and after taking
    the distinct ones), the sparse map from their values to the players'
    values (a few entries per child), and the values of one row.
    """
    K = hierarchy.n_players
    widest = max((len(ch) for ch in hierarchy.children), default=1)
    return int(count) * (8 * K + 24 * widest + 16 * max(int(n_outputs), 1) + 64)


def owen_plan(hierarchy, n_samples, n_background=1, n_outputs=1):
    """``("exact", count)`` or ``("sampled", budget)`` for a budget ``n_samples``.

    Exact when the coalitions the hierarchy needs fit the budget (None:
    ``DEFAULT_EXACT_COALITIONS``, the cost of every coalition of
    ``MAX_EXACT_GROUPS`` groups); else sampled with ``n_samples`` coalitions
    per row and background row (None: the default budget of the sampled
    methods). Either is refused, naming the largest budget that fits, when
    it cannot fit in the working memory with ``n_background`` background
    rows and ``n_outputs`` outputs (see
    :func:`~skdecomp._methods._registry.check_budget_memory`).
    """
    K = hierarchy.n_players
    count = owen_coalition_count(hierarchy)
    limit = DEFAULT_EXACT_COALITIONS if n_samples is None else int(n_samples)
    low = min_samples("owen", K)

    def sampled_cost(b):
        return budget_bytes("owen", K, b, n_background, n_outputs, hierarchy.depth)

    if count <= limit:
        if K > 1 and n_samples is not None:
            # every budget from count up is exact; below it, sampled
            below = None
            if _exact_bytes(hierarchy, count, n_outputs) > working_memory_bytes():
                below = _largest_budget(sampled_cost, low, count - 1,
                                        working_memory_bytes())
            check_budget_memory(
                "owen", int(n_samples), K,
                lambda b: (_exact_bytes(hierarchy, count, n_outputs) if b >= count
                           else sampled_cost(b)),
                low, n_background=n_background, fits=below)
        return "exact", count
    return "sampled", resolve_budget("owen", n_samples, K, n_background=n_background,
                                     n_outputs=n_outputs, depth=hierarchy.depth)


def resolve_owen_estimator(hierarchy, n_samples, method_params=None):
    """The estimator beyond the exact coalitions: ``method_params``'s, or for "auto"
    the sampled orders ("permutation") when ``n_samples`` reaches their smallest
    budget, else the partition recursion when it covers the root's split."""
    estimator = (method_params or {}).get("estimator", "auto")
    if estimator != "auto":
        return estimator
    K = hierarchy.n_players
    if (n_samples is None or K < 2 or int(n_samples) >= min_samples("owen", K)
            or int(n_samples) < partition_min_budget(hierarchy)):
        return "permutation"  # which names both budgets when it refuses
    return "partition"


def check_owen_budget(game, hierarchy, n_samples, method_params=None):
    """``(kind, budget)`` of the Owen value through model calls, or a ValueError.

    ``kind`` is "exact", "sampled" or "partition" (``method_params``'s
    ``estimator`` beyond the exact coalitions); a budget too small for its
    kind, or beyond the working memory, is refused (see :func:`owen_plan`
    and :func:`~skdecomp._methods._owen_partition.check_partition_budget`).
    """
    estimator = resolve_owen_estimator(hierarchy, n_samples, method_params)
    K = hierarchy.n_players
    limit = DEFAULT_EXACT_COALITIONS if n_samples is None else int(n_samples)
    if estimator == "partition" and K > 1 and owen_coalition_count(hierarchy) > limit:
        return "partition", check_partition_budget(
            hierarchy, 2 * K + 2048 if n_samples is None else int(n_samples),
            game.n_outputs)
    return owen_plan(hierarchy, n_samples,
                     game.background.shape[0] if game.anchored else 1, game.n_outputs)


def owen_attributions(game, X, hierarchy, rng, n_samples=None, errors=False,
                      prediction=None, estimator="permutation"):
    """Owen/Winter values through model calls, exact, sampled or by the partition recursion.

    Exact when the hierarchy's coalitions fit the budget (:func:`owen_plan`);
    beyond it, sampled orders (``estimator="permutation"``) or the partition
    recursion (``"partition"``, see ``_owen_partition``).

    Parameters
    ----------
    game : CoalitionGame
    X : ndarray or DataFrame
        Checked rows in the model's input form.
    hierarchy : Hierarchy
    rng : RandomState
        Gives the seed of the sampled value (drawn whether or not it is used).
    n_samples : int or None, default=None
        Budget of coalitions per row (see :func:`owen_plan`).
    errors : bool, default=False
        Whether to give the standard errors of a sampled value.
    prediction : ndarray of shape (n_rows, n_outputs) or None, default=None
    estimator : {"permutation", "partition"}, default="permutation"

    Returns
    -------
    phi : ndarray of shape (n_rows, K) or (n_rows, K, n_outputs)
    se : ndarray of the shape of ``phi``, or None
        Standard errors of a sampled value with ``errors``; None when exact
        or by the partition recursion (deterministic).
    """
    seed = int(rng.randint(np.iinfo(np.int32).max))
    K = hierarchy.n_players
    # a budget that cannot run or fit in the working memory is refused before any work
    kind, budget = check_owen_budget(game, hierarchy, n_samples, {"estimator": estimator})
    if kind == "partition":
        if prediction is None:
            prediction = game.predict(X)
        from ._dummy import dummy_groups

        dummy = dummy_groups(game, X) if game.anchored else None
        phi = partition_owen_attributions(game, X, hierarchy, budget, prediction, dummy)
        return (phi[:, :, 0].copy() if phi.shape[2] == 1 else phi), None
    if prediction is None:
        prediction = game.predict(X)
    n_out = prediction.shape[1]
    se = None
    if K == 1:
        phi = (prediction - game.expected_value[None, :])[:, None, :]
    elif kind == "exact":
        phi = _exact(game, X, prediction, hierarchy)
    else:
        phi = _sampled(game, X, prediction, hierarchy, budget, seed, errors=errors)
        if errors:
            phi, se = phi

    def shaped(a):
        return a[:, :, 0].copy() if n_out == 1 else np.ascontiguousarray(a)

    return shaped(phi), None if se is None else shaped(se)


def hierarchical_attributions(game, X, hierarchy, methods, rng, n_samples=None,
                              errors=None, method_params=None):
    """Dict method -> Owen/Winter values, for ``owen`` and aliases.

    On the tree path, exact leaf by leaf for any number of groups. Through
    model calls, exact from the coalitions of the hierarchy when they fit ``n_samples``,
    else sampled (:func:`owen_plan`); a dict ``errors`` receives the
    standard errors of a sampled value. Without a hierarchy, raises the
    registry's error.
    """
    from .._tree._owen import explainer_owen_values
    from ._registry import get_method

    if hierarchy is None:
        get_method(methods[0]).weights(game.n_groups)  # raises
    if game.tree is not None:
        # leaf by leaf, exact for any number of groups
        phi = explainer_owen_values(
            game.tree, X, None if game.imputation == "path_dependent" else game.background,
            game.labels, game.n_groups, hierarchy, n_jobs=game.n_jobs,
        )
        return {m: phi.copy() for m in methods}
    estimator = resolve_owen_estimator(hierarchy, n_samples, method_params)
    phi, se = owen_attributions(game, X, hierarchy, rng, n_samples=n_samples,
                                errors=errors is not None, estimator=estimator)
    out = {}
    for m in methods:
        out[m] = phi.copy()
        if se is not None:
            errors[m] = se.copy()
    return out
