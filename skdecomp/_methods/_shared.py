"""Several sampled methods from one design of coalitions.

Asked for together, KernelSHAP, permutation SHAP, LIME (constant kernel, no
ridge) and RISE read one set of model calls: one design of coalitions is
drawn from the seed, every coalition is evaluated once, and each method is
an estimator of its own weights on those values (every explainer is a
weighting of one game; "Tackling the XAI Disagreement Problem with Adaptive
Feature Grouping", ICLR 2026, Theorem 3.1).

The design
    KernelSHAP's own (``_designs._kernel_design``), from KernelSHAP's random
    stream: layers of coalition sizes s and K - s with equal shares (Musco &
    Witter, ICLR 2025), small layers whole, each drawn coalition with its
    complement. A coalition drawn in a layer is uniform in it, so the mean
    of the layer's draws estimates the layer's mean. KernelSHAP's values are
    those it gives alone; a budget that covers every coalition gives every
    estimator its closed form.

The estimators (``SHARED_ESTIMATORS``)
    - KernelSHAP: its own constrained regression;
    - permutation SHAP: the Shapley value by strata of sizes (Kolpaczki et
      al., AAAI 2024) on the residuals of KernelSHAP's additive fit
      (regression-adjusted Monte Carlo; Witter et al., 2025);
    - LIME: the least squares fit under Bernoulli(p) weights, each layer
      weighted by its binomial mass over its draws;
    - RISE: ``E_M[v(M)] + (1 - p) beta_k``, with beta LIME's coefficients
      (their normal equations give ``E_M[v(M) M_k] / p``) and the mean by the
      regression estimator of each layer's mean.

With several background rows, each explained row plays one anchored game per
background row z over the groups on which it differs from z, each with the
design relabelled at random (as KernelSHAP does alone); every method is the
mean over z of its estimate in those games. This is the method's value of
the mean game: the Shapley value is linear in the game; so are LIME's
coefficients under a product measure (a group that never changes the
anchored game gets 0) and RISE (such a group gets the game's mean).

Standard errors come from the independent units of the design, the drawn
pairs of a coalition and its complement, within their layers: every
estimate is, to first order, a sum of one term per pair (the regressions by
their influence terms), so its variance is the spread of those terms; the
variances of the games of the background rows add up. The error of the
difference of two methods is the spread of the difference of their terms:
it carries the correlation of their errors, which a shared design makes
large. The terms are kept factored (``_Piece``) and the spreads are sums of
matrix products (``_Spreads``). Each is moderated and t scaled as the
methods' own errors are (``_errors.moderated_se``).
"""

# SPDX-License-Identifier: BSD-3-Clause

from itertools import combinations
from math import comb

import numpy as np

from ._errors import moderated_se
from ._kernels import coalition_gram, coalition_moments, constrained_least_squares
from ._registry import get_method
from ._designs import _kernel_design
from ._evaluation import _by_count, _evaluate, _row_chunks, _rows_first, _Segment

__all__ = ["SHARED_ESTIMATORS", "SHARED_SEED_ID", "SharedDesign", "can_share", "n_designs"]

#: The random stream of the shared design: KernelSHAP's own, so that
#: KernelSHAP gives the same values alone or with other methods.
SHARED_SEED_ID = get_method("kernel_shap").seed_id


# -- the design -----------------------------------------------------------------
class SharedDesign:
    """KernelSHAP's design over k groups, read as a sample of every size layer.

    ``coalitions`` (n_coal, k): the drawn coalitions, then the empty and the
    full one; ``kernel_weights`` their KernelSHAP regression weights (the
    inner ones). ``layer_share[c]`` is one over the number of coalitions
    drawn in c's size layer, so ``layer_share @ g`` over a layer is the mean
    of g over its draws. ``pairs`` (n_units, 2) are the independent draws (a
    coalition and its complement) and ``draws`` their strata (``_errors.
    Draws``); None when every drawn layer is whole (no error).
    """

    def __init__(self, k, budget, rng):
        inner, self.kernel_weights, self.pairs, self.draws = _kernel_design(k, budget, rng)
        ends = np.array([[False] * k, [True] * k])
        self.coalitions = np.vstack([inner, ends])
        self.k = k
        self.sizes = self.coalitions.sum(axis=1)
        count = np.bincount(self.sizes, minlength=k + 1).astype(np.float64)
        self.layer_share = 1.0 / count[self.sizes]
        self.exact = self.draws is None


def can_share(methods, method_params):
    """The requested methods that one design serves (two or more), else []."""
    shared = [m for m in methods if m in SHARED_ESTIMATORS]
    lime = (method_params or {})
    if "lime" in shared and (lime.get("kernel", "constant") != "constant"
                             or lime.get("alpha", 0.0) != 0.0):
        # the distance kernel and the ridge weigh the mean game as a whole
        shared.remove("lime")
    return shared if len(shared) >= 2 else []


def n_designs(methods, method_params=None):
    """Designs the sampled ``methods`` draw: one for those that share, one each else."""
    return len(methods) - max(len(can_share(methods, method_params)) - 1, 0)


def _binomial(k, p):
    s = np.arange(k + 1)
    return np.array([comb(k, int(i)) for i in s], dtype=np.float64) * p**s * (1 - p) ** (k - s)


class _Piece:
    """Terms ``r[:, c] * A[c]`` of the draws, summed over each unit's two coalitions.

    Kept factored, as the rows ``r`` (n_games, n_coal) and the matrix ``A``
    (n_coal, k; None for one term per unit, the same for every group), so
    that the variances of every method and difference are sums of matrix
    products (``_Spreads``) and no (n_games, n_units, k) array is made.
    """

    def __init__(self, design, r, A=None):
        a, b = design.pairs[:, 0], design.pairs[:, 1]
        self.sides = [(np.ascontiguousarray(r[:, a]), None if A is None else A[a]),
                      (np.ascontiguousarray(r[:, b]), None if A is None else A[b])]


def _combine(*parts):
    """Terms as {piece: coefficient}, from (terms, coefficient) parts."""
    out = {}
    for terms, coef in parts:
        for piece, c in (terms or {}).items():
            out[piece] = out.get(piece, 0.0) + coef * c
    return out


# -- the estimators -------------------------------------------------------------
class _Estimate:
    """A method's estimate in each game and its terms per independent draw.

    ``inner`` (n_games, k): the groups in play; ``rest`` (n_games,) or None:
    the value of every group not in play (RISE's mean of the game), else 0.
    ``terms`` and ``rest_terms``: {_Piece: coefficient}, the terms per unit
    (n_games, n_units, k) and (n_games, n_units) as sums of pieces; to first
    order, the estimate's deviation is the sum of the terms over the units.
    """

    def __init__(self, inner, rest=None, terms=None, rest_terms=None, scale=1.0):
        self.inner = inner
        self.rest = rest
        # residual terms of a fit spread less than independent ones: the
        # fit spends degrees of freedom on the draws (``Draws.spent``)
        self.terms = None if terms is None else _combine((terms, scale))
        self.rest_terms = None if rest_terms is None else _combine((rest_terms, scale))


def _spent_scale(design, X, w, inv):
    """``1 / sqrt(Draws.spent())`` of a least squares fit on the design's draws.

    The fit spends the leverages ``w_c x_c' inv x_c`` of the drawn
    coalitions on them, as the residual degrees of freedom of a regression.
    """
    drawn = design.pairs.ravel()
    x = X[drawn].astype(np.float64)
    design.draws.fitted = float(np.sum(w[drawn] * ((x @ inv) * x).sum(axis=1)))
    return 1.0 / np.sqrt(design.draws.spent())


def _kernel(design, y, params, errors, cache=None):
    """KernelSHAP: its own estimate on its own design."""
    if cache is not None and "kernel_shap" in cache:
        return cache["kernel_shap"]
    out = _kernel_fit(design, y, errors)
    if cache is not None:
        cache["kernel_shap"] = out
    return out


def _kernel_fit(design, y, errors):
    Z, w = design.coalitions[:-2], design.kernel_weights
    base, full = y[:, -2], y[:, -1]
    gram = coalition_gram(Z, w)
    moments = coalition_moments(Z, w, y[:, :-2] - base[:, None])
    est, ok = constrained_least_squares(gram, moments, full - base)
    if not ok:  # pragma: no cover - the singletons make the design full rank
        raise ValueError("The KernelSHAP design is singular; increase n_samples.")
    if not errors or design.exact:
        return _Estimate(est)
    inv = np.linalg.inv(gram)
    ones = inv.sum(axis=1)
    M = inv - np.outer(ones, ones) / ones.sum()
    r = (y[:, :-2] - base[:, None] - est @ Z.T.astype(np.float64)) * w
    return _Estimate(est, terms={_Piece(design, r, Z @ M): 1.0},
                     scale=_spent_scale(design, Z, w, M))


def _permutation(design, y, params, errors, cache=None):
    """The Shapley value by strata of sizes, adjusted by KernelSHAP's fit.

    ``phi_j = beta_j + 1/k sum_s [mean r(S), |S| = s + 1, j in S - mean r(S),
    |S| = s, j not in S]`` with r = v - v(empty) - beta(S) the residual of
    KernelSHAP's additive fit beta: the stratified estimator of Kolpaczki et
    al. (AAAI 2024) on the residual, a regression-adjusted Monte Carlo
    estimator (Witter et al., 2025). Its value is unbiased whatever the fit;
    a size/membership cell with no draw adds nothing.
    """
    kern = _kernel(design, y, params, errors, cache)
    if design.exact:
        return kern
    k = design.k
    Z = design.coalitions.astype(np.float64)
    sizes = design.sizes
    beta = kern.inner
    r = y - y[:, -2:-1] - beta @ Z.T  # 0 at the ends
    # counts of each (size, group in / out) cell
    onehot = np.eye(k + 1)[sizes]  # (n_coal, k + 1)
    n_in = onehot.T @ Z  # (k + 1, k)
    n_out = onehot.sum(axis=0)[:, None] - n_in
    # the weight of coalition c for group j: +1/(k n_in) if j in c, its size
    # counted at s = |c| - 1; -1/(k n_out) if j not in c
    inv_in = np.divide(1.0, k * n_in, out=np.zeros_like(n_in), where=n_in > 0)
    inv_out = np.divide(1.0, k * n_out, out=np.zeros_like(n_out), where=n_out > 0)
    inv_in[0], inv_out[k] = 0.0, 0.0  # no group is in the empty set, none out of the full
    weight = Z * inv_in[sizes] - (1.0 - Z) * inv_out[sizes]  # (n_coal, k)
    est = beta + r @ weight
    if not errors:
        return _Estimate(est)
    return _Estimate(est, terms=_combine(({_Piece(design, r, weight): 1.0}, 1.0),
                                         (kern.terms, 1.0)))


def _lime(design, y, params, errors, cache=None):
    """LIME, constant kernel: least squares under Bernoulli(p), by layer."""
    key = ("lime", params["p"])
    if cache is not None and key in cache:
        return cache[key]
    out = _lime_fit(design, y, params, errors)
    if cache is not None:
        cache[key] = out
    return out


def _lime_fit(design, y, params, errors):
    k, p, alpha = design.k, params["p"], params.get("alpha", 0.0)
    B = _binomial(k, p)
    w = B[design.sizes] * design.layer_share
    X = np.hstack([np.ones((design.coalitions.shape[0], 1), dtype=bool), design.coalitions])
    base = y[:, -2]
    yc = y - base[:, None]
    gram = coalition_gram(X, w)
    gram[np.arange(1, k + 1), np.arange(1, k + 1)] += alpha
    inv = np.linalg.inv(gram)
    coef = coalition_moments(X, w, yc) @ inv  # gram is symmetric
    est = coef[:, 1:]
    if not errors or design.exact:
        return _Estimate(est)
    r = (yc - coef @ X.T.astype(np.float64)) * w
    return _Estimate(est, terms={_Piece(design, r, (X @ inv)[:, 1:]): 1.0},
                     scale=_spent_scale(design, X, w, inv))


def _rise(design, y, params, errors, cache=None):
    """RISE, ``E_M[v(M) M_k] / p``, as ``E_M[v(M)] + (1 - p) beta_k``.

    beta are LIME's coefficients under Bernoulli(p) weights (the identity is
    the normal equations of that fit). ``E_M[v(M)]`` is the regression
    estimator of each layer's mean, whose auxiliary means are known: each
    group is in s / k of the coalitions of size s.
    """
    k, p = design.k, params["p"]
    lime = _lime(design, y, params, errors, cache)
    beta = lime.inner
    B = _binomial(k, p)
    base = y[:, -2]
    Z = design.coalitions.astype(np.float64)
    resid = (y - base[:, None] - beta @ Z.T) * design.layer_share
    layer = np.zeros((k + 1, y.shape[0]))
    np.add.at(layer, design.sizes, resid.T)
    s = np.arange(k + 1)
    mean = base + B @ layer + beta.sum(axis=1) * (B @ (s / k))
    est = mean[:, None] + (1 - p) * beta
    if not errors or design.exact:
        return _Estimate(est, mean)
    rest_terms = {_Piece(design, resid * B[design.sizes]): 1.0}
    terms = _combine((rest_terms, 1.0), (lime.terms, 1 - p))
    return _Estimate(est, mean, terms, rest_terms)


#: Canonical method name -> estimator over the shared design:
#: ``estimator(design, values, params, errors, cache) -> _Estimate``, with
#: values (n_games, n_coal) in the design's order of coalitions; ``cache``
#: (a dict per set of values) holds the fits that several estimators read.
SHARED_ESTIMATORS = {
    "kernel_shap": _kernel,
    "permutation_shap": _permutation,
    "lime": _lime,
    "rise": _rise,
}


# -- the errors -----------------------------------------------------------------
class SharedErrors:
    """Variances of every method and every difference of two, over the games.

    Keys are method names and pairs (a, b) of them; each accumulates the
    variance of the mean over the n_bg games of a row, and its square over
    its degrees of freedom (Welch-Satterthwaite).
    """

    def __init__(self, methods, n_rows, K, n_out, n_bg):
        self.keys = list(methods) + list(combinations(methods, 2))
        shape = (n_rows, K, n_out)
        self.var = {key: np.zeros(shape) for key in self.keys}
        self.per_dof = {key: np.zeros(shape) for key in self.keys}
        self.live = np.zeros((n_rows, K), dtype=bool)
        self.n_bg = n_bg

    def add(self, rows, groups, estimates, n_out, draws):
        """Add the games of one segment: ``estimates`` method -> _Estimate."""
        n_b, k = groups.shape
        self.live[rows[:, None], groups] = True
        dof = max(draws.dof, 1.0)
        spreads = _Spreads(draws)
        for key in self.keys:
            a, b = key if isinstance(key, tuple) else (key, None)
            ea, eb = estimates[a], None if b is None else estimates[b]
            terms = ea.terms if eb is None else _combine((ea.terms, 1.0), (eb.terms, -1.0))
            v = np.broadcast_to(spreads.variance(terms), (n_b * n_out, k)) / self.n_bg**2
            v = v.reshape(n_b, n_out, k).transpose(0, 2, 1)
            rest = ea.rest_terms if eb is None else (
                None if ea.rest_terms is None and eb.rest_terms is None
                else _combine((ea.rest_terms, 1.0), (eb.rest_terms, -1.0)))
            if rest:
                # a group out of play in a game takes the variance of its rest
                vr = (spreads.variance(rest)[:, 0] / self.n_bg**2).reshape(n_b, 1, n_out)
                _scatter_rows(self.var[key], rows, vr)
                _scatter_rows(self.per_dof[key], rows, vr**2 / dof)
                _scatter(self.var[key], rows, groups, -np.broadcast_to(vr, v.shape))
                _scatter(self.per_dof[key], rows, groups,
                         -np.broadcast_to(vr**2 / dof, v.shape))
            _scatter(self.var[key], rows, groups, v)
            _scatter(self.per_dof[key], rows, groups, v**2 / dof)

    def standard_errors(self):
        """Key -> standard errors (n_rows, K, n_out), moderated and t scaled."""
        out = {}
        for key in self.keys:
            var = np.maximum(self.var[key], 0.0)
            per_dof = np.maximum(self.per_dof[key], 0.0)
            live = self.live | (var > 0).any(axis=2)
            out[key] = moderated_se(var, per_dof, live)
        return out


class _Spreads:
    """``Draws.variance`` of sums of pieces, from matrix products.

    For terms ``T = sum_i c_i R_i A_i`` (each side of each piece), the
    variance over the strata h (factor f_h, n_h units) is ``sum_h f_h
    (sum_u T_u**2 - (sum_u T_u)**2 / n_h)``: the squares are ``sum_ij c_i c_j
    (R_i R_j f) @ (A_i A_j)``, the stratum sums ``R_i[:, h] @ A_i[h]``; both
    are kept per pair of sides and per side, for every key of a segment.
    """

    def __init__(self, draws):
        self.groups = [(np.asarray(at), float(factor)) for at, factor in draws.groups]
        self.n_units = draws.n_draws
        self.f = np.zeros(self.n_units)
        for at, factor in self.groups:
            self.f[at] = factor
        self.f_over_n = np.array([factor / at.size for at, factor in self.groups])
        self._grams, self._sums = {}, {}

    def _gram(self, i, j):
        key = tuple(sorted(((id(i[0]), i[1]), (id(j[0]), j[1]))))
        if key not in self._grams:
            (ri, ai), (rj, aj) = i[0].sides[i[1]], j[0].sides[j[1]]
            if ai is None and aj is None:
                aa = np.ones((self.n_units, 1))
            else:
                aa = ai * aj if ai is not None and aj is not None else (
                    ai if ai is not None else aj)
            self._grams[key] = (ri * rj * self.f) @ aa
        return self._grams[key]

    def _sum(self, i):
        key = (id(i[0]), i[1])
        if key not in self._sums:
            r, a = i[0].sides[i[1]]
            self._sums[key] = np.stack([
                r[:, at].sum(axis=1)[:, None] if a is None else r[:, at] @ a[at]
                for at, _ in self.groups])
        return self._sums[key]

    def variance(self, terms):
        """(n_games, k) variances of the sum over the units of ``terms``."""
        sides = [((piece, side), c) for piece, c in terms.items() if c
                 for side in (0, 1)]
        if not sides or not self.groups:
            return np.zeros((1, 1))
        total = 0.0
        for n, (i, ci) in enumerate(sides):
            for j, cj in sides[n:]:
                total = total + (1.0 if j is i else 2.0) * ci * cj * self._gram(i, j)
        sums = 0.0
        for i, ci in sides:
            sums = sums + ci * self._sum(i)
        total = total - np.einsum("h,hgk->gk", self.f_over_n, sums**2)
        return np.maximum(total, 0.0)


def _scatter(target, rows, groups, values):
    """``target[rows[b], groups[b, j]] += values[b, j]`` with repeated rows."""
    K, n_out = target.shape[1:]
    cells = (rows[:, None] * K + groups)[:, :, None] * n_out + np.arange(n_out)
    target += np.bincount(cells.ravel(), weights=np.ravel(values),
                          minlength=target.size).reshape(target.shape)


def _scatter_rows(target, rows, values):
    """``target[rows[b], :] += values[b]`` (n_b, 1, n_out), for every group."""
    n_rows, K, n_out = target.shape
    cells = rows[:, None] * n_out + np.arange(n_out)
    add = np.bincount(cells.ravel(), weights=np.ravel(values), minlength=n_rows * n_out)
    target += add.reshape(n_rows, 1, n_out)


# -- the run ---------------------------------------------------------------------
def shared_attributions(game, X, prediction, differ, budget, seed, methods, params,
                        errors=False):
    """Attributions (n_rows, K, n_out) of ``methods`` from one design per K'.

    ``differ`` (n_rows, n_bg, K) marks the groups in play in the game of each
    row and background row; ``params`` maps each method to its options.
    Returns a dict method -> attributions and, with ``errors``, a dict of
    standard errors keyed by method and by pair of methods (of the difference).
    """
    n_rows, n_bg, K = differ.shape
    n_out = prediction.shape[1]
    phi = {m: np.zeros((n_rows, K, n_out)) for m in methods}
    acc = SharedErrors(methods, n_rows, K, n_out, n_bg) if errors else None
    bg_pred = game.background_prediction if game.anchored else (
        game.expected_value[None, :]
    )
    designs = {}
    per_row = min(budget, 1 << K) * n_out * n_bg * (8 if errors else 1)
    for rows in _row_chunks(n_rows, per_row):
        segments = []
        for k, (blocks, groups) in _by_count(differ[rows]).items():
            i, j = np.divmod(blocks, n_bg)
            i = rows[i]
            if k < 2:
                _closed(phi, methods, params, i, groups, prediction[i], bg_pred[j], k)
                continue
            if k not in designs:
                design = SharedDesign(k, budget, np.random.RandomState([seed, SHARED_SEED_ID]))
                keys = np.random.RandomState([seed, SHARED_SEED_ID, k]).random_sample(
                    (n_bg, k)
                )
                designs[k] = (design, np.argsort(keys, axis=1))
            design, relabel = designs[k]
            segments.append((design, _Segment(
                design.coalitions, i, np.take_along_axis(groups, relabel[j], axis=1), j
            )))
        values = _evaluate(game, X, prediction, [seg for _, seg in segments])
        for (design, seg), vals in zip(segments, values):
            y = _rows_first(vals)
            n_b, k = seg.groups.shape
            estimates, cache = {}, {}
            for m in methods:
                e = SHARED_ESTIMATORS[m](design, y, params[m], errors, cache)
                estimates[m] = e
                inner = e.inner.reshape(n_b, n_out, k).transpose(0, 2, 1)
                if e.rest is not None:
                    rest = e.rest.reshape(n_b, 1, n_out)
                    _scatter_rows(phi[m], seg.rows, rest)
                    inner = inner - rest
                _scatter(phi[m], seg.rows, seg.groups, inner)
            if errors and not design.exact:
                acc.add(seg.rows, seg.groups, estimates, n_out, design.draws)
    out = {m: phi[m] / n_bg for m in methods}
    if errors:
        return out, acc.standard_errors()
    return out


def _closed(phi, methods, params, rows, groups, full, empty, k):
    """Games with at most one group in play: every method in closed form."""
    for m in methods:
        if m == "rise":
            p = params[m]["p"]
            rest = empty if k == 0 else (1 - p) * empty + p * full
            np.add.at(phi[m], rows, np.broadcast_to(rest[:, None, :],
                                                    (rows.size,) + phi[m].shape[1:]))
            if k == 1:
                np.add.at(phi[m], (rows, groups[:, 0]), full - rest)
        elif k == 1:
            np.add.at(phi[m], (rows, groups[:, 0]), full - empty)
