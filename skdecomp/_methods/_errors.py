"""Standard errors of the sampled estimators, from the draws they were made of.

Every sampled estimate is a smooth function of sums over independent draws
(antithetic pairs of permutations, pairs of a coalition and its complement
within a layer of sizes, Bernoulli masks). Linearised around the estimate,
its error is a sum of one term per draw, and the spread of those terms
gives its variance (the sandwich or delta method; for a stratified sample
without replacement, with the finite population correction):

    Var = sum over strata l of n_l (1 - n_l / N_l) / (n_l - 1)
          * sum_{u in l} (d_u - mean_l d)**2,

where d_u is draw u's term. Coalitions taken whole (KernelSHAP's complete
layers, full enumeration) add nothing. No model call is spent: the terms
come from the values the estimate was made from.

KernelSHAP and permutation SHAP average independent games, one per
background row; each game's variance comes from its own draws and the
variances add up, so two draws per game give one degree of freedom per
background row. With few degrees of freedom the standard errors are scaled
by t_{0.975, nu} / 1.96 (``t_scale``), so that ``value +- 1.96 se`` is the
t interval. Draws that all agree do not show that a term is constant: a
permutation SHAP group whose pairs all agree in a game gets the variance of
one more draw that disagrees, and a RISE group whose terms all agree the
spread of v(M) / p. ``benchmarks/bench_coverage.py`` and ``benchmarks/
bench_standard_errors.py`` measure the coverage of the intervals.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.stats import t as student_t

__all__ = [
    "Draws",
    "lime_variances",
    "pair_terms",
    "permutation_terms",
    "rise_variances",
    "t_scale",
]

_Z95 = 1.959963984540054

# floats held at once by the per-draw terms of one block of rows
_MAX_TERMS = 1 << 22


class Draws:
    """Independent draws of a design: the strata and their variance factors.

    Parameters
    ----------
    strata : ndarray of shape (n_draws,), int
        Stratum of each draw.
    n_population : ndarray of shape (n_strata,)
        Number of units each stratum draws from (``inf`` with replacement).

    agreeing_floor : bool, default=False
        Whether a group whose draws all agree gets a floor on its variance
        (``agreeing``; the floor is set where the games are added up).

    A stratum of one draw cannot measure its own spread: it is pooled with
    its neighbour (collapsed strata, which overstates the variance a little).
    """

    def __init__(self, strata, n_population, agreeing_floor=False):
        self.agreeing_floor = agreeing_floor
        strata = np.asarray(strata, dtype=np.int64)
        n_pop = np.asarray(n_population, dtype=np.float64)
        labels = np.unique(strata)
        counts = np.array([np.sum(strata == s) for s in labels])
        merged = labels.copy()
        for i in range(labels.size):
            if counts[i] < 2 and labels.size > 1:
                j = i + 1 if i + 1 < labels.size else i - 1
                merged[merged == merged[i]] = merged[j]
        self.groups = []
        for s in np.unique(merged):
            members = labels[merged == s]
            at = np.flatnonzero(np.isin(strata, members))
            n, N = float(at.size), float(n_pop[members].sum())
            factor = 0.0 if n < 2 else n * (1.0 - n / N) / (n - 1.0)
            if factor > 0:
                self.groups.append((at, factor))
        self.n_draws = strata.size
        # degrees of freedom of the variance estimate
        self.dof = float(sum(at.size - 1 for at, _ in self.groups))

    def variance(self, terms):
        """Variance of the sum of ``terms`` (..., n_draws, k) over the draws."""
        out = np.zeros(terms.shape[:-2] + terms.shape[-1:])
        for at, factor in self.groups:
            sub = terms[..., at, :]
            dev = sub - sub.mean(axis=-2, keepdims=True)
            out += factor * np.einsum("...uk,...uk->...k", dev, dev)
        return out

    def agreeing(self, terms):
        """Groups (..., k) whose ``terms`` (..., n_draws, k) agree to rounding.

        Their measured variance is 0 (or rounding), which does not show that
        the term is constant: a tree may use a group only in orders that
        were not drawn. Only with ``agreeing_floor``; else none.
        """
        shape = terms.shape[:-2] + terms.shape[-1:]
        if not self.agreeing_floor:
            return np.zeros(shape, dtype=bool)
        dev = terms - terms.mean(axis=-2, keepdims=True)
        spread = np.einsum("...uk,...uk->...k", dev, dev)
        return spread <= 1e-20 * np.einsum("...uk,...uk->...k", terms, terms)


def t_scale(var, var_per_dof):
    """Factor t_{0.975, nu} / 1.96 for a variance summed from independent estimates.

    ``var`` is the sum of independent variance estimates v_j with d_j
    degrees of freedom, ``var_per_dof`` the sum of v_j**2 / d_j; nu is
    their Welch-Satterthwaite degrees of freedom. Scaling a standard error
    by it makes ``value +- 1.96 se`` the t interval. A number instead of
    ``var_per_dof`` gives the degrees of freedom themselves. 1 where ``var``
    is 0.
    """
    var = np.asarray(var, dtype=np.float64)
    out = np.ones(var.shape)
    if np.ndim(var_per_dof) == 0:  # the degrees of freedom
        var_per_dof = var**2 / var_per_dof if var_per_dof > 0 else np.zeros(var.shape)
    live = (var > 0) & (np.asarray(var_per_dof) > 0)
    if live.any():
        nu = var[live] ** 2 / np.asarray(var_per_dof)[live]
        out[live] = student_t.ppf(0.975, nu) / _Z95
    return out


def _blocks(n_rows, per_row):
    step = max(1, _MAX_TERMS // max(1, per_row))
    return [slice(lo, min(n_rows, lo + step)) for lo in range(0, n_rows, step)]


def pair_terms(Z, w, pairs, values, base, phi, gram):
    """KernelSHAP's per-draw error terms, (n_rows, n_draws, k).

    The constrained weighted least squares solves ``A phi + lam 1 = b``,
    ``1' phi = total``; perturbing A and b gives ``d phi = M (d b - d A
    phi)`` with ``M = A^-1 - A^-1 1 1' A^-1 / (1' A^-1 1)``, and a drawn pair
    (S, complement of S) of weight w adds ``w (r_S z_S + r_~S (1 - z_S))``
    to ``d b - d A phi`` (r the residuals). As ``M 1 = 0``, its term is
    ``w (r_S - r_~S) M z_S``.

    The residuals come from a fit on the same draws, which they are drawn
    towards: each is divided by one minus the leverage of its coalition,
    ``h = w z_S' M z_S`` (the same for the complement, as ``M 1 = 0``), as
    in the HC3 sandwich.

    ``pairs`` is (n_draws, 2): the rows of Z of each drawn pair.
    """
    inv = np.linalg.inv(gram)
    ones = inv.sum(axis=1)
    M = inv - np.outer(ones, ones) / ones.sum()
    S = Z[pairs[:, 0]].astype(np.float64)
    Q = S @ M  # (n_draws, k)
    fitted_S = phi @ S.T
    fitted_C = phi.sum(axis=1, keepdims=True) - fitted_S
    r_S = values[:, pairs[:, 0]] - base[:, None] - fitted_S
    r_C = values[:, pairs[:, 1]] - base[:, None] - fitted_C
    h = w[pairs[:, 0]] * np.einsum("uk,uk->u", Q, S)
    a = w[pairs[:, 0]][None, :] * (r_S - r_C) / np.clip(1.0 - h, 0.05, 1.0)[None, :]
    return a[:, :, None] * Q[None, :, :]


def permutation_terms(orders, index, values):
    """Permutation SHAP's per-draw terms, (n_rows, n_pairs, k): one per antithetic pair.

    Orders 2p and 2p + 1 are a permutation and its reverse, which are not
    independent; the mean of their marginal contributions over the number
    of pairs is the term of draw p.
    """
    n_orders, k = orders.shape
    rank = np.argsort(orders, axis=1)
    out = np.empty((values.shape[0], n_orders // 2, k))
    for block in _blocks(values.shape[0], n_orders * k):
        v = values[block]
        steps = v[:, index[:, 1:]] - v[:, index[:, :-1]]  # by position
        by_group = np.take_along_axis(steps, rank[None, :, :], axis=2)
        out[block] = (by_group[:, 0::2] + by_group[:, 1::2]) / n_orders
    return out


def lime_variances(design, w, counts, n_draws, gram, coef, y, ridge):
    """Variances of LIME's coefficients (n_rows, k + 1) from i.i.d. Bernoulli draws.

    The weighted ridge regression solves ``sum_d omega_d h_d = 0`` with
    ``h_d = x_d r_d - ridge * D beta`` and ratio weights omega (the kernel
    over its sum); its sandwich variance is ``G^-1 (n / (n - 1) sum_d
    omega_d**2 h_d h_d') G^-1``. A coalition drawn c times with total
    weight w has ``omega_d = w / c`` for each draw. The residuals of the fit
    on the same draws are divided by the square root of one minus the
    coalition's leverage ``w x' G^-1 x`` (HC2; HC3, one minus the leverage
    itself, overstated the spread over seeds by 6 to 21 %).
    """
    if counts is None or n_draws < 2:
        return np.zeros(coef.shape)
    inv = np.linalg.inv(gram)
    X = design.astype(np.float64)
    a = w**2 / counts * n_draws / (n_draws - 1.0)
    shrink = np.clip(1.0 - w * np.einsum("uk,kj,uj->u", X, inv, X), 0.05, 1.0)
    out = np.empty(coef.shape)
    for block in _blocks(y.shape[0], X.shape[0] * X.shape[1]):
        b = coef[block]
        r = (y[block] - b @ X.T) / np.sqrt(shrink)[None, :]
        h = r[:, :, None] * X[None, :, :]
        h[:, :, 1:] -= ridge * b[:, None, 1:]
        t = h @ inv
        out[block] = np.einsum("u,ruk->rk", a, t * t)
    # the t interval with the residual degrees of freedom of the fit
    return out * t_scale(1.0, max(n_draws - X.shape[1], 1)) ** 2


def rise_variances(Z, w, n_draws, y, scores, mean, p):
    """Variances of RISE's scores (n_rows, k) and mean (n_rows,): means of i.i.d. draws."""
    k = Z.shape[1]
    if n_draws < 2:
        return np.zeros((y.shape[0], k)), np.zeros(y.shape[0])
    Zf = Z.astype(np.float64)
    out = np.empty((y.shape[0], k))
    agree = np.empty((y.shape[0], k), dtype=bool)
    for block in _blocks(y.shape[0], Z.shape[0] * k):
        kept = y[block][:, :, None] * Zf[None, :, :] / p
        t = kept - scores[block][:, None, :]
        out[block] = np.einsum("u,ruk->rk", w, t * t)
        # the terms agree to rounding
        agree[block] = out[block] <= 1e-20 * np.einsum("u,ruk->rk", w, kept * kept)
    dev = y - mean[:, None]
    mean_var = (dev * dev) @ w
    # a group whose terms all agree (no mask kept it, or v(M) was 0 in every
    # mask that did) has no spread of its own: take that of v(M) / p over
    # all masks, as if the group were kept in a share p
    if agree.any():
        out = np.where(agree, ((y * y) @ w / p)[:, None], out)
    scale = t_scale(1.0, n_draws - 1.0) ** 2 / (n_draws - 1.0)
    return out * scale, mean_var * scale
