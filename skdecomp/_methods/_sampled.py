"""Sampled explainers over groups: KernelSHAP, permutation SHAP, LIME, RISE, IG.

All methods work on the coalition game v_x(S) = mean_{z in B} f(x_{G_S},
z_{-G_S}) (see the user guide, :ref:`functional_decomposition`), except
Integrated Gradients, which evaluates the
model along straight lines from the background rows to x.

Coalitions are drawn once per call in NumPy and shared by every explained row:
each method then needs one design (one regression matrix factorisation, one
set of weights) for all rows, a row's attribution does not depend on which
other rows are explained with it, and the chunked, parallel evaluation of the
value function cannot change the draws. Coalitions are boolean arrays of shape
(n_coalitions, n_groups), so any number of groups works. The empty and the full
coalitions are never sent to the model: their values are E_B f and f(x).

When the budget covers every coalition (``n_samples >= 2**K - 2``), each
method enumerates all of them and returns its closed form (see
:ref:`explainers_as_weights`).
"""

# SPDX-License-Identifier: BSD-3-Clause

from itertools import combinations
from math import comb

import numpy as np
import pandas as pd
from sklearn.utils.parallel import Parallel, delayed

from ._kernels import (
    coalition_gram,
    coalition_moments,
    cholesky_solve,
    constrained_least_squares,
    permutation_attributions,
)
from ._registry import check_method_params, get_method, n_coalitions, resolve_budget

__all__ = [
    "kernel_shap_design",
    "sampled_attributions",
    "shapley_kernel",
    "single_group_attributions",
]

# -- evaluation of coalitions ---------------------------------------------------
def _rows_first(values):
    # (n_rows, n_coal, n_out) -> (n_rows * n_out, n_coal), row-major in (row, output)
    n_rows, n_coal, n_out = values.shape
    return np.ascontiguousarray(values.transpose(0, 2, 1)).reshape(n_rows * n_out, n_coal)


def _unique_rows(coalitions):
    """Distinct boolean rows (sorted) with their counts and the inverse index."""
    K = coalitions.shape[1]
    packed = np.packbits(coalitions, axis=1)
    uniq, inverse, counts = np.unique(
        packed, axis=0, return_inverse=True, return_counts=True
    )
    rows = np.unpackbits(uniq, axis=1, count=K).astype(bool)
    return rows, counts.astype(np.float64), inverse.reshape(-1)


def all_coalitions(n_groups, nontrivial=False):
    """Every coalition of K groups as a boolean array, in bitmask order."""
    masks = np.arange(1 << n_groups, dtype=np.int64)
    if nontrivial:
        masks = masks[1:-1]
    return ((masks[:, None] >> np.arange(n_groups)[None, :]) & 1).astype(bool)


def _random_subsets(rng, n_groups, sizes):
    """One uniformly random subset of each given size (boolean rows)."""
    keys = rng.random_sample((sizes.shape[0], n_groups))
    ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
    return ranks < sizes[:, None]


# -- KernelSHAP -----------------------------------------------------------------
def shapley_kernel(n_groups, sizes):
    """Shapley kernel (K-1) / (C(K, s) s (K-s)) of coalitions of the given sizes."""
    K = n_groups
    binom = np.array([comb(K, int(s)) for s in range(K + 1)], dtype=np.float64)
    s = np.asarray(sizes, dtype=np.float64)
    return (K - 1) / (binom[np.asarray(sizes)] * s * (K - s))


def kernel_shap_design(n_groups, budget, rng):
    """Coalitions and regression weights of KernelSHAP.

    Sizes s and K - s are paired. Size layers are taken whole, in order of
    decreasing weight per coalition (s = 1 first, which makes the design
    full rank), while the budget left covers the layer's share of the Shapley
    kernel; the remaining budget is drawn at random from the other layers,
    each subset with its complement (antithetic draws), and repeated draws
    add to the weight of the pair already drawn. Sampled weights are scaled
    to the kernel mass of the layers they stand for.

    Returns
    -------
    coalitions : ndarray of shape (n_coalitions, K), bool
    weights : ndarray of shape (n_coalitions,)
    """
    K = n_groups
    if budget >= n_coalitions(K):
        Z = all_coalitions(K, nontrivial=True)
        return Z, shapley_kernel(K, Z.sum(axis=1))
    n_sizes = K // 2  # sizes 1 .. K//2; s and K - s paired unless s == K - s
    sizes = np.arange(1, n_sizes + 1)
    paired = sizes != K - sizes
    layer_weight = (K - 1) / (sizes * (K - sizes)) * np.where(paired, 2.0, 1.0)
    layer_weight /= layer_weight.sum()

    coal, weights = [], []
    left = budget
    n_full = 0
    for i, s in enumerate(sizes):
        n_sub = comb(K, int(s)) * (2 if paired[i] else 1)
        share = layer_weight[i] / layer_weight[i:].sum()
        if n_sub > left or (i > 0 and left * share < n_sub - 1e-8):
            break
        for members in combinations(range(K), int(s)):
            z = np.zeros(K, dtype=bool)
            z[list(members)] = True
            coal.append(z)
            if paired[i]:
                coal.append(~z)
        weights.extend([layer_weight[i] / n_sub] * n_sub)
        left -= n_sub
        n_full += 1

    if left >= 2 and n_full < n_sizes:
        # every draw adds a subset and its complement (also for s = K/2), so
        # each pair has equal weight: the residual of a game with at most
        # pairwise interactions is then orthogonal to the design, and such
        # games are estimated exactly
        prob = layer_weight[n_full:] / layer_weight[n_full:].sum()
        seen = {}
        drawn, counts = [], []
        for _ in range(64):
            if left < 2:
                break
            layer = rng.choice(prob.shape[0], size=max(1, left // 2), p=prob)
            subsets = _random_subsets(rng, K, sizes[n_full:][layer])
            for z in subsets:
                key = np.packbits(z).tobytes()
                if key in seen:  # seen as a subset or as a complement
                    counts[seen[key]] += 1.0
                    continue
                if left < 2:
                    break
                seen[key] = seen[np.packbits(~z).tobytes()] = len(drawn)
                drawn.append(z)
                counts.append(1.0)
                left -= 2
        if drawn:
            # stratified by size: each sampled layer keeps its kernel mass,
            # shared among its drawn coalitions in proportion to their counts
            drawn = np.asarray(drawn, dtype=bool)
            drawn = np.stack([drawn, ~drawn], axis=1).reshape(-1, K)
            counts = np.repeat(np.asarray(counts), 2)
            layer_of = np.minimum(drawn.sum(axis=1), K - drawn.sum(axis=1)) - 1
            per_layer = np.bincount(layer_of, weights=counts, minlength=n_sizes)
            counts *= layer_weight[layer_of] / per_layer[layer_of]
            coal.extend(drawn)
            weights.extend(counts.tolist())
    return np.asarray(coal, dtype=bool).reshape(-1, K), np.asarray(weights)


def _kernel_shap(game, n_groups, budget, rng):
    Z, w = kernel_shap_design(n_groups, budget, rng)
    y = game.values(Z) - game.base[:, None]
    gram = coalition_gram(Z, w)
    moments = coalition_moments(Z, w, y)
    phi, ok = constrained_least_squares(gram, moments, game.total)
    if not ok:  # pragma: no cover - the singletons make the design full rank
        raise ValueError(
            "The KernelSHAP design is singular; increase n_samples."
        )
    return phi


# -- permutation SHAP -----------------------------------------------------------
def _permutation_shap(game, n_groups, budget, rng):
    K = n_groups
    if budget >= n_coalitions(K):
        return _kernel_shap(game, K, budget, rng)
    n_pairs = budget // (2 * (K - 1))
    forward = np.argsort(rng.random_sample((n_pairs, K)), axis=1)
    orders = np.empty((2 * n_pairs, K), dtype=np.int64)
    orders[0::2] = forward
    orders[1::2] = forward[:, ::-1]  # antithetic: the reverse permutation
    rank = np.argsort(orders, axis=1)  # position of every group
    # prefix j of permutation p holds the groups at positions < j
    prefixes = rank[:, None, :] < np.arange(1, K)[None, :, None]
    coal, _, inverse = _unique_rows(prefixes.reshape(-1, K))
    n_coal = coal.shape[0]
    values = np.empty((game.n_rows, n_coal + 2))
    values[:, :n_coal] = game.values(coal)
    values[:, n_coal] = game.base
    values[:, n_coal + 1] = game.base + game.total
    index = np.empty((orders.shape[0], K + 1), dtype=np.int64)
    index[:, 0] = n_coal
    index[:, 1:K] = inverse.reshape(orders.shape[0], K - 1)
    index[:, K] = n_coal + 1
    return permutation_attributions(orders, index, values)


# -- LIME and RISE --------------------------------------------------------------
def _bernoulli_design(n_groups, budget, p, rng):
    """Coalitions with their weights: i.i.d. Bernoulli(p) draws, or all with their probabilities."""
    K = n_groups
    if budget >= n_coalitions(K):
        Z = all_coalitions(K)
        s = Z.sum(axis=1)
        return Z, p**s * (1.0 - p) ** (K - s)
    draws = rng.random_sample((budget, K)) < p
    Z, counts, _ = _unique_rows(draws)
    return Z, counts / budget


def _lime(game, n_groups, budget, rng, p, kernel, kernel_width, alpha):
    K = n_groups
    Z, w = _bernoulli_design(K, budget, p, rng)
    if kernel == "distance":
        # cosine distance between the presence vector and all-ones (as for
        # LIME on images), exponential kernel sqrt(exp(-d**2 / width**2))
        d = 1.0 - np.sqrt(Z.sum(axis=1) / K)
        w = w * np.sqrt(np.exp(-(d**2) / kernel_width**2))
    w = w / w.sum()
    design = np.hstack([np.ones((Z.shape[0], 1), dtype=bool), Z])
    y = game.values(Z) - game.base[:, None]
    gram = coalition_gram(design, w)
    gram[np.arange(1, K + 1), np.arange(1, K + 1)] += alpha
    moments = coalition_moments(design, w, y)
    coef, ok = cholesky_solve(gram, moments)
    if not ok:
        raise ValueError(
            f"The {Z.shape[0]} distinct coalitions drawn for LIME do not "
            f"determine {K} group coefficients (some group is always present "
            "or always absent, or groups move together); increase n_samples "
            f"(the draws are random: n_samples >= {4 * (K + 1)} rarely fails) "
            "or set method_params={'alpha': ...} > 0 for a ridge fit."
        )
    return coef[:, 1:]


def _rise(game, n_groups, budget, rng, p):
    Z, w = _bernoulli_design(n_groups, budget, p, rng)
    # S_k = E_M[v(M) M_k] / p  (RISE; Petsiuk et al., BMVC 2018)
    return coalition_moments(Z, w, game.values(Z)) / p


# -- Integrated Gradients ------------------------------------------------------
def numeric_matrix(X, feature_names, what):
    """X as a float64 array, or a ValueError naming the non-numeric columns."""
    names = (
        list(X.columns)
        if isinstance(X, pd.DataFrame)
        else (list(feature_names) if feature_names is not None else None)
    )
    if isinstance(X, pd.DataFrame):
        bad = [
            j
            for j, dt in enumerate(X.dtypes)
            if not pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt)
        ]
    else:
        arr = np.asarray(X)
        if arr.dtype.kind in "iuf":
            bad = []
        else:
            bad = []
            for j in range(arr.shape[1]):
                col = arr[:, j]
                if arr.dtype.kind == "b" or any(
                    isinstance(v, (bool, np.bool_, str, bytes)) for v in col
                ):
                    bad.append(j)
                    continue
                try:
                    np.asarray(col, dtype=np.float64)
                except (TypeError, ValueError):
                    bad.append(j)
    if bad:
        labels = [names[j] for j in bad] if names is not None else bad
        raise ValueError(
            f"integrated_gradients interpolates every column between the "
            f"background and x, but {what} has non-numeric columns {labels}. "
            "Encode them as numbers first (e.g. one-hot encode them and put "
            "each encoded block in one group), or use a coalition method such "
            "as 'kernel_shap', which moves each group as a whole."
        )
    if isinstance(X, pd.DataFrame):
        return X.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(X, dtype=np.float64)


class _PathPoints:
    """Column weights alpha of the points on the paths from z to x: (1 - alpha) z + alpha x.

    ``"path"`` scheme, n steps with alpha_t = t / n: the inner grid points
    t = 1..n-1, then for every step the K - 1 points where groups 0..j-1
    have moved to alpha_{t+1} (forward order) and the K - 1 points where
    groups K-j..K-1 have (reverse order). ``"central"`` scheme: for every step
    and every column, the step midpoint with that column at alpha_t or at
    alpha_{t+1}.
    """

    def __init__(self, scheme, n_steps, labels, n_groups):
        self.scheme = scheme
        self.n_steps = n_steps
        self.labels = labels
        self.n_groups = n_groups
        n, K, d = n_steps, n_groups, labels.shape[0]
        if scheme == "path":
            self.n_points = (n - 1) + 2 * n * (K - 1)
        else:
            self.n_points = 2 * n * d

    def alphas(self, ids):
        n, K = self.n_steps, self.n_groups
        d = self.labels.shape[0]
        if self.scheme == "central":
            t, rest = np.divmod(ids, 2 * d)
            col, plus = np.divmod(rest, 2)
            out = np.repeat(((t + 0.5) / n)[:, None], d, axis=1)
            out[np.arange(ids.size), col] = (t + plus) / n
            return out
        group_alpha = np.empty((ids.size, K))
        grid = ids < n - 1
        group_alpha[grid] = ((ids[grid] + 1) / n)[:, None]
        q = ids[~grid] - (n - 1)
        reverse, q = np.divmod(q, n * (K - 1))
        t, j = np.divmod(q, K - 1)
        j = j + 1
        k = np.arange(K)[None, :]
        moved = np.where(
            reverse[:, None] == 1, k >= K - j[:, None], k < j[:, None]
        )
        group_alpha[~grid] = np.where(moved, (t + 1)[:, None], t[:, None]) / n
        return group_alpha[:, self.labels]


class _PathData:
    """Input rows at the path points of (explained row, point) pairs; picklable."""

    def __init__(self, x, background, points, columns):
        self.x = x
        self.background = background
        self.points = points
        self.columns = columns

    def __call__(self, pairs):
        rows, ids = np.divmod(pairs, self.points.n_points)
        a = self.points.alphas(ids)[:, None, :]
        data = (1.0 - a) * self.background[None, :, :] + a * self.x[rows][:, None, :]
        data = data.reshape(-1, self.x.shape[1])
        if self.columns is not None:
            data = pd.DataFrame(data, columns=self.columns)
        return data


def _path_values(game, x, background, points):
    """Mean model output over the background at every path point: (n_rows, n_points, n_outputs)."""
    n_rows = x.shape[0]
    n_points = points.n_points

    def describe(pair, row):
        return (
            f"the path point {pair % n_points} from background row {row} to "
            f"explained row {pair // n_points}"
        )

    values = game.mean_predictions(
        _PathData(x, background, points, game.columns), n_rows * n_points,
        background.shape[0], describe=describe,
    )
    return values.reshape(n_rows, n_points, -1)


def _integrated_gradients(game, X, prediction, n_steps, scheme, feature_names=None):
    """Derivative-free Integrated Gradients over groups, (n_rows, K, n_outputs)."""
    x = numeric_matrix(X, feature_names, "X")
    bg = numeric_matrix(game.background, feature_names, "the background")
    K, labels = game.n_groups, game.labels
    n_rows, n_out = prediction.shape
    base = game.expected_value
    if K == 1 and scheme == "path":
        return (prediction - base[None, :])[:, None, :]
    points = _PathPoints(scheme, n_steps, labels, K)
    V = _path_values(game, x, bg, points) if points.n_points else (
        np.empty((n_rows, 0, n_out))
    )
    n = n_steps
    if scheme == "central":
        diff = V.reshape(n_rows, n, x.shape[1], 2, n_out)
        per_column = (diff[:, :, :, 1] - diff[:, :, :, 0]).sum(axis=1)
        phi = np.zeros((n_rows, K, n_out))
        np.add.at(phi, (slice(None), labels), per_column)
        return phi
    grid = np.concatenate(
        [np.broadcast_to(base, (n_rows, 1, n_out)), V[:, : n - 1], prediction[:, None]],
        axis=1,
    )
    m = n * (K - 1)
    phi = np.zeros((n_rows, K, n_out))
    for r, inner in enumerate((V[:, n - 1 : n - 1 + m], V[:, n - 1 + m :])):
        stairs = np.concatenate(
            [grid[:, :-1, None], inner.reshape(n_rows, n, K - 1, n_out), grid[:, 1:, None]],
            axis=2,
        )
        steps = np.diff(stairs, axis=2).sum(axis=1)  # (n_rows, K, n_out) by position
        phi += steps if r == 0 else steps[:, ::-1]
    return phi / 2.0


# -- ArchAttribute and Occlusion ------------------------------------------------
def single_group_attributions(game, X, methods):
    """Arch/PDP and Occlusion/PFI from K singletons and K leave-one-out coalitions.

    ``arch_k = v_x({k}) - v_x({})`` and ``occlusion_k = f(x) - v_x(all but k)``
    exactly, for any number of groups K: 2K coalitions
    instead of the 2**K of the full decomposition.
    """
    prediction = game.predict(X)
    n_rows, n_out = prediction.shape
    K = game.n_groups
    eye = np.eye(K, dtype=bool)
    arch_like = [m for m in methods if m in ("arch", "pdp")]
    occ_like = [m for m in methods if m in ("occlusion", "pfi")]
    blocks = ([eye] if arch_like else []) + ([~eye] if occ_like else [])
    values = game.values(X, np.vstack(blocks), prediction=prediction)
    base = game.expected_value[None, None, :]
    phis = {}
    if arch_like:
        phis["arch"] = values[:, :K] - base
    if occ_like:
        phis["occlusion"] = prediction[:, None, :] - values[:, -K:]
    out = {}
    for m in methods:
        phi = phis["arch" if m in ("arch", "pdp") else "occlusion"]
        out[m] = phi[:, :, 0].copy() if n_out == 1 else np.ascontiguousarray(phi)
    return out


# -- dispatch ------------------------------------------------------------------
class _RowGame:
    """Coalition values of the explained rows, flattened to (rows x outputs)."""

    def __init__(self, game, X, prediction):
        self.game = game
        self.X = X
        self.prediction = prediction
        n_rows, n_out = prediction.shape
        self.n_rows = n_rows * n_out
        self.base = np.tile(game.expected_value, n_rows)
        self.total = prediction.reshape(-1) - self.base

    def values(self, coalitions):
        vals = self.game.values(self.X, coalitions, prediction=self.prediction)
        return _rows_first(vals)


def sampled_attributions(game, X, methods, rng, *, n_samples=None,
                         method_params=None, feature_names=None):
    """Attributions of sampled methods for checked X: dict method -> array.

    Each array is (n_rows, K) for one output, else (n_rows, K, n_outputs).
    ``rng`` gives one seed; each method draws from its own stream, seeded by
    that seed and the method's fixed ``seed_id`` in the registry, so a
    method's result depends neither on the other methods requested with it
    nor on the order of the registry.
    """
    seed = int(rng.randint(np.iinfo(np.int32).max))
    K = game.n_groups
    prediction = game.predict(X)
    n_rows, n_out = prediction.shape
    row_game = _RowGame(game, X, prediction)
    out = {}
    for method in methods:
        spec = get_method(method)
        params = check_method_params(
            spec.name,
            {k: v for k, v in (method_params or {}).items() if k in spec.params},
        )
        method_rng = np.random.RandomState([seed, spec.seed_id])
        if spec.name == "integrated_gradients":
            phi = _integrated_gradients(
                game, X, prediction, feature_names=feature_names, **params
            )
        else:
            budget = resolve_budget(spec.name, n_samples, K)
            if K == 1 and spec.estimates == "shapley":
                flat = row_game.total[:, None].copy()
            else:
                flat = _ESTIMATORS[spec.name](row_game, K, budget, method_rng, **params)
            phi = flat.reshape(n_rows, n_out, K).transpose(0, 2, 1)
        out[method] = phi[:, :, 0].copy() if n_out == 1 else np.ascontiguousarray(phi)
    return out


#: The coalition estimators of the sampled methods, by canonical name.
_ESTIMATORS = {
    "kernel_shap": _kernel_shap,
    "permutation_shap": _permutation_shap,
    "lime": _lime,
    "rise": _rise,
}
