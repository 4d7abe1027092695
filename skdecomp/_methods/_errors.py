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
t interval; a group's variance is moderated towards the mean of its row's
(``moderated_se``). A standard error is 0 only for an exact value: draws
that all agree, to rounding (``rounding``), do not show that a term is
constant, and their stratum adds the interval of a bound instead
(``agreeing_bound``): with 95 % confidence at most a share 1 - 0.05**(1/n)
(about 3/n, the rule of three) of the draws differ, by at most what the
range of the game's evaluated values allows. ``benchmarks/
bench_coverage.py``, ``benchmarks/bench_coverage_games.py`` and
``benchmarks/bench_standard_errors.py`` measure the coverage of the
intervals.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.stats import t as student_t

__all__ = [
    "Agreeing",
    "Draws",
    "Reach",
    "agreeing_bound",
    "differ_chance",
    "fill_range",
    "lime_variances",
    "moderated_se",
    "pair_bounds",
    "pair_terms",
    "permutation_terms",
    "rise_variances",
    "rounding",
    "t_scale",
    "value_scale",
    "widen",
]

_Z95 = 1.959963984540054

# a standard error below this share of the scale of the game's values is
# rounding: that of the values (1e-16), amplified by the solves of the fits
# (up to 1e-12 measured in the jackknife of the interaction indices)
ROUNDING = 1e-9

# prior degrees of freedom of the mean variance of a row's groups, for a
# group without degrees of freedom of its own (moderated_se)
PRIOR_DOF = 3.0

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

    A stratum of one draw cannot measure its own spread: it is pooled with
    its neighbour (collapsed strata, which overstates the variance a little).
    """

    def __init__(self, strata, n_population):
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
        # parameters a fit on the same draws spends on them (``spent``)
        self.fitted = 0.0

    def spent(self):
        """Share of each stratum's degrees of freedom left after the fit, in (0, 1].

        Terms from the residuals of a fit on the same draws spread less than
        independent ones: the fit spends ``fitted`` degrees of freedom on the
        draws (the sum of their leverages), as the residual degrees of
        freedom ``n - tr(H)`` of a regression, shared by the strata in
        proportion to their own.
        """
        if not self.fitted or not self.dof:
            return 1.0
        return max(1.0 - self.fitted / self.dof, 0.25)

    def variance(self, terms):
        """Variance of the sum of ``terms`` (..., n_draws, k) over the draws."""
        out = np.zeros(terms.shape[:-2] + terms.shape[-1:])
        for at, factor in self.groups:
            sub = terms[..., at, :]
            dev = sub - sub.mean(axis=-2, keepdims=True)
            out += factor * np.einsum("...uk,...uk->...k", dev, dev)
        return out

    def split(self, terms, reach, scale):
        """Measured variances, and what the strata whose draws agree leave open.

        ``terms`` (..., n_draws, k) are the draws' terms; ``reach`` a
        ``Reach``: how far the term of a draw like each (of its stratum)
        could be from 0, per unit of the scale of a differing draw;
        ``scale`` (...,) the scale of the game's values (``value_scale``).
        A stratum whose measured variance is of rounding size (``rounding``)
        measures no spread, which does not show that its terms are
        constant: a tree may use a group only in orders that were not
        drawn, a game may change only on coalitions that were not drawn.
        Its n draws agree on a term c, and one that differs is at most
        ``unit s + |c|`` from it, s the scale of a differing draw: were a
        share p of its draws to differ, its part of the estimate would be
        off by at most ``p (a s + b)``, ``a = n max unit``, ``b = n |c|``
        (``Agreeing``).

        Returns the measured variance of the other strata, the sum over
        them of its square over their degrees of freedom (their
        Welch-Satterthwaite degrees of freedom, ``t_scale``), all (..., k),
        and the ``Agreeing`` strata.
        """
        shape = terms.shape[:-2] + terms.shape[-1:]
        var, per_dof = np.zeros(shape), np.zeros(shape)
        agreeing = Agreeing(shape)
        agreeing.seen = np.broadcast_to(reach.seen, shape).copy()
        scale = np.asarray(scale)[..., None]
        fallback = np.asarray(reach.fallback)[..., None]
        left = self.spent()
        for at, factor in self.groups:
            sub = terms[..., at, :]
            mean = sub.mean(axis=-2)
            dev = sub - mean[..., None, :]
            v = factor * np.einsum("...uk,...uk->...k", dev, dev)
            agree = rounding(v, scale)
            a = at.size * reach.unit[..., at, :].max(axis=-2)
            v = np.where(agree, 0.0, v)
            var += v
            per_dof += v * v / ((at.size - 1.0) * left)
            agreeing.add(agree, at.size, a, at.size * np.abs(mean), fallback)
        return var, per_dof, agreeing


class Reach:
    """How far the term of a draw that differs could be, per unit of a scale s.

    ``unit`` (..., n_draws, k): the term of a draw like each, per unit of
    s; ``seen`` (..., k): the scale this game's draws were seen to move by
    (0 where none moved); ``fallback`` (...,): the scale where no game of
    the row saw any, from the range of the game's values.
    """

    def __init__(self, unit, seen, fallback):
        self.unit, self.seen, self.fallback = unit, seen, fallback


class Agreeing:
    """Strata whose n_j draws all agree, each off by at most ``p_j D_j``.

    A share p_j of stratum j's draws may differ without any of its n_j
    draws showing it with probability ``(1 - p_j)**n_j``; the strata are
    independent, so all agree with probability ``prod (1 - p_j)**n_j <=
    exp(-sum n_j p_j)``. With 95 % confidence, then, ``sum n_j p_j <= ln
    20`` (about 3: the rule of three, over every stratum at once) and each
    ``p_j <= 1 - 0.05**(1/n_j)``, so the estimate, off by at most ``sum p_j
    D_j``, is off by at most ``min(ln 20 max_j D_j / n_j, sum_j (1 -
    0.05**(1/n_j)) D_j)``. The first term does not grow with the number of
    strata that agree (the games of many background rows); the second is
    the exact bound of a single one. Its variance is that bound over 1.96,
    squared (``variance``): ``value +- 1.96 se`` is the interval of the
    bound, which is not scaled by t.

    ``D_j = a_j s + b_j``, s the scale of a differing draw: the largest
    the row's games saw their draws move by (``seen``, the largest over the
    games added), else each game's own ``fallback``.
    """

    def __init__(self, shape):
        z = np.zeros
        self.A, self.B, self.F = z(shape), z(shape), z(shape)  # sums of q a, q b, q D0
        self.ra, self.rb, self.rf = z(shape), z(shape), z(shape)  # max a/n, b/n, D0/n
        self.seen = z(shape)

    def add(self, agree, n, a, b, fallback):
        """Add strata (a mask ``agree``) of n draws each, ``D = a s + b``."""
        q = np.where(agree, differ_chance(n), 0.0)
        d0 = a * fallback + b
        self.A += q * a
        self.B += q * b
        self.F += q * d0
        self.ra = np.maximum(self.ra, np.where(agree, a / n, 0.0))
        self.rb = np.maximum(self.rb, np.where(agree, b / n, 0.0))
        self.rf = np.maximum(self.rf, np.where(agree, d0 / n, 0.0))

    def merge(self, other, where):
        """Add another's strata (of other games) at the index ``where``."""
        for name in ("A", "B", "F"):
            getattr(self, name)[where] += getattr(other, name)
        for name in ("ra", "rb", "rf", "seen"):
            mine = getattr(self, name)
            mine[where] = np.maximum(mine[where], getattr(other, name))

    def variance(self):
        """The bound over 1.96, squared."""
        seen = self.seen > 0
        total = np.where(seen, self.A * self.seen + self.B, self.F)
        ratio = np.where(seen, self.ra * self.seen + self.rb, self.rf)
        bound = np.minimum(np.log(20.0) * ratio, total)
        return (bound / _Z95) ** 2


def differ_chance(n):
    """95 % upper bound on the chance that a draw differs, after n draws that agreed.

    ``1 - 0.05**(1/n)``: the exact binomial bound, about ``3 / n`` (the rule
    of three) for large n; 0.95 for one draw, 0.78 for two.
    """
    n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    return 1.0 - 0.05 ** (1.0 / n)


def rounding(var, scale):
    """Whether variances are of rounding size: se <= ``ROUNDING`` * scale.

    Such a variance measures no spread: the draws agree, to rounding.
    ``scale`` is that of the game's values (``value_scale``).
    """
    return np.asarray(var) <= (ROUNDING * np.asarray(scale)) ** 2


def value_scale(lo, hi):
    """Scale of a game's values in ``[lo, hi]``: their range or largest magnitude.

    Rounding in sums of values of magnitude s is of order 1e-16 s, whatever
    their range.
    """
    return np.maximum(np.asarray(hi) - lo, np.maximum(np.abs(lo), np.abs(hi)))


def fill_range(R, values):
    """R with its zeros replaced by a scale of the whole call.

    A game whose evaluated values all agree has no range of its own; it
    takes the largest range among the others, else the largest magnitude of
    the values, else 1.
    """
    R = np.asarray(R, dtype=np.float64)
    if np.all(R > 0):
        return R
    fallback = float(R.max()) if R.size else 0.0
    if not fallback > 0:
        fallback = float(np.abs(values).max()) if np.size(values) else 0.0
    if not (fallback > 0 and np.isfinite(fallback)):
        fallback = 1.0
    return np.where(R > 0, R, fallback)


def widen(lo, hi, values):
    """``[lo, hi]`` with each empty range (all values equal) widened by ``fill_range``.

    A game whose evaluated values all agree bounds nothing by itself: its
    range is taken, on both sides, as that of the other games of the call.
    """
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    R = hi - lo
    pad = np.where(R > 0, 0.0, fill_range(R, values))
    return lo - pad, hi + pad


def agreeing_bound(n, spread):
    """Variance standing for the error of an estimate whose n draws all agreed.

    Draws that agree measure no spread, yet a draw not made may differ: with
    95 % confidence at most a share ``q = differ_chance(n)`` of the draws
    differ (the rule of three), and were every draw to differ the estimate
    would move by at most ``spread`` (from a bound on the range of a draw's
    term, read from the game's evaluated values, in the units of the
    estimate). So the estimate is within ``q * spread`` of its expectation,
    and the variance is that bound over 1.96, squared: ``value +- 1.96 se``
    is the interval of the bound. It is not scaled by t: it is already an
    interval. For several independent strata at once, ``Agreeing``.
    """
    return (differ_chance(n) * np.asarray(spread) / _Z95) ** 2


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


def moderated_se(var, var_per_dof, live, floor=0.0):
    """Standard errors from variances of few degrees of freedom, moderated.

    ``var`` (n_rows, k, n_out) are the measured variances of the groups of
    each row, with Welch-Satterthwaite degrees of freedom ``nu = var**2 /
    var_per_dof``; ``live`` (n_rows, k) the groups in play. Each is shrunk
    towards the mean variance m of the live groups of its row, as the
    moderated variance of Smyth (2004), ``(nu var + nu0 m) / (nu + nu0)``
    on ``nu + nu0`` degrees of freedom with ``nu0 = PRIOR_DOF**2 / (nu +
    PRIOR_DOF)`` prior degrees of freedom, which fade as the group's own
    grow, and the larger of its t interval and the group's own is kept: a
    group's variance from one or two degrees of freedom is unreliable, and
    the marginal contributions of a group are skewed and discrete, so that
    draws which happen to land close together understate it (single games
    of 8 groups at two pairs of permutations covered 70 to 90 % of the
    exact values, 92 to 98 % moderated). ``floor`` (the bounds of agreeing
    strata, ``Draws.split``) is added after the t scaling.
    """
    var = np.asarray(var, dtype=np.float64)
    live = np.asarray(live, dtype=bool)[..., None]
    count = np.maximum(live.sum(axis=1, keepdims=True), 1)
    m = np.where(live, var, 0.0).sum(axis=1, keepdims=True) / count
    nu = np.where(var_per_dof > 0, var**2 / np.where(var_per_dof > 0, var_per_dof, 1.0),
                  0.0)
    own = var * t_scale(var, var_per_dof) ** 2
    # the prior fades as the group's own degrees of freedom grow
    prior = PRIOR_DOF**2 / (nu + PRIOR_DOF)
    mod = (nu * var + prior * m) / (nu + prior)
    shrunk = mod * t_scale(mod, mod**2 / (nu + prior)) ** 2
    return np.sqrt(np.where(live, np.maximum(own, shrunk), own) + floor)


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


def pair_bounds(Z, w, pairs, values, base, phi, gram, spread):
    """How far the KernelSHAP term of a pair like each drawn one could be: a ``Reach``.

    A pair (S, complement) of the layer of a drawn pair adds ``w (r_S -
    r_~S) M z_S`` (``pair_terms``, without the leverage of a drawn pair).
    ``|(M z_S)_k|`` is at most the largest magnitude of a sum of |S|
    entries of row k of M (``unit``, per unit of ``|r_S - r_~S|``); the
    scale ``|r_S - r_~S|`` is the largest seen among the game's drawn pairs
    (``seen``), or, where every drawn pair fits, ``spread + sum_k |phi_k|``
    (``spread`` the range of the game's values).
    """
    inv = np.linalg.inv(gram)
    ones = inv.sum(axis=1)
    M = inv - np.outer(ones, ones) / ones.sum()
    K = M.shape[0]
    # largest |sum of s entries of row k| for s = 0..K: the s largest or smallest
    row = np.sort(M, axis=1)
    top = np.c_[np.zeros(K), np.cumsum(row[:, ::-1], axis=1)]
    bottom = np.c_[np.zeros(K), np.cumsum(row, axis=1)]
    largest = np.maximum(np.abs(top), np.abs(bottom)).T  # (K + 1, k)
    size = Z[pairs[:, 0]].sum(axis=1)
    unit = w[pairs[:, 0]][:, None] * largest[size]  # (n_draws, k)
    S = Z[pairs[:, 0]].astype(np.float64)
    fitted_S = phi @ S.T
    fitted_C = phi.sum(axis=1, keepdims=True) - fitted_S
    seen = np.abs((values[:, pairs[:, 0]] - fitted_S)
                  - (values[:, pairs[:, 1]] - fitted_C)).max(axis=1, initial=0.0)
    spread = np.asarray(spread, dtype=np.float64)
    seen = np.where(seen > ROUNDING * spread, seen, 0.0)
    return Reach(np.broadcast_to(unit[None], (phi.shape[0],) + unit.shape),
                 seen[:, None], spread + np.abs(phi).sum(axis=1))


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


def lime_variances(design, w, counts, n_draws, gram, coef, y, ridge, lo, hi,
                   kernel_ratio=1.0, base=0.0):
    """Variances of LIME's coefficients (n_rows, k + 1) from i.i.d. Bernoulli draws.

    The weighted ridge regression solves ``sum_d omega_d h_d = 0`` with
    ``h_d = x_d r_d - ridge * D beta`` and ratio weights omega (the kernel
    over its sum); its sandwich variance is ``G^-1 (n / (n - 1) sum_d
    omega_d**2 h_d h_d') G^-1``. A coalition drawn c times with total
    weight w has ``omega_d = w / c`` for each draw. The residuals of the fit
    on the same draws are divided by the square root of one minus the
    coalition's leverage ``w x' G^-1 x`` (HC2; HC3, one minus the leverage
    itself, overstated the spread over seeds by 6 to 21 %).

    A coefficient whose variance is of rounding size (every drawn coalition
    on the fit: the draws agree) gets ``agreeing_bound`` instead: a share q
    of the coalitions may be off the fit, each by at most the residual
    bound ``Delta`` that the range ``[lo, hi]`` of the game's values (y,
    per row) and the fitted values give, which moves the coefficient by at
    most ``q Delta max_x |(G^-1 x)_k|`` times ``kernel_ratio``, the largest
    kernel over its mean over the draws (x a coalition with the intercept).
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
    # rounding relative to the values themselves, y + base
    agree = rounding(out, fill_range(value_scale(lo + base, hi + base), y)[:, None])
    # the t interval with the residual degrees of freedom of the fit, the
    # coefficients' variances moderated towards their mean
    dof = max(n_draws - X.shape[1], 1)
    var = np.where(agree, 0.0, out)[:, 1:, None]
    out[:, 1:] = moderated_se(var, var**2 / dof, np.ones(var.shape[:2], dtype=bool),
                              )[:, :, 0] ** 2
    out[:, 0] *= t_scale(1.0, dof) ** 2
    if agree.any():
        # residuals off the fit: the values against the range of the fit
        fit_lo = coef[:, 0] + np.minimum(coef[:, 1:], 0.0).sum(axis=1)
        fit_hi = coef[:, 0] + np.maximum(coef[:, 1:], 0.0).sum(axis=1)
        wide_lo, wide_hi = widen(lo, hi, y)
        gap = np.maximum(wide_hi - fit_lo, fit_hi - wide_lo)
        # max over coalitions x of |(G^-1 x)_k|, x_0 = 1
        row = inv[:, 1:]
        reach = np.maximum(np.abs(inv[:, 0] + np.maximum(row, 0.0).sum(axis=1)),
                           np.abs(inv[:, 0] + np.minimum(row, 0.0).sum(axis=1)))
        bound = agreeing_bound(n_draws, gap[:, None] * reach[None, :] * kernel_ratio)
        out = np.where(agree, bound, out)
    return out


def rise_variances(Z, w, n_draws, y, scores, mean, p, lo, hi):
    """Variances of RISE's scores (n_rows, k) and mean (n_rows,): means of i.i.d. draws.

    A group whose terms ``v(M) M_k / p`` all agree to rounding (no mask kept
    it, or v(M) was the same in every mask that did) measures no spread; it
    gets ``agreeing_bound`` instead: a share q of the masks may differ, each
    term within ``{0} u [lo / p, hi / p]`` (``[lo, hi]`` the range of the
    game's values, per row), so at most ``max(|S|, |hi / p - S|, |lo / p -
    S|)`` from the score S. The same for the mean, with terms in ``[lo,
    hi]``.
    """
    k = Z.shape[1]
    if n_draws < 2:
        return np.zeros((y.shape[0], k)), np.zeros(y.shape[0])
    Zf = Z.astype(np.float64)
    out = np.empty((y.shape[0], k))
    for block in _blocks(y.shape[0], Z.shape[0] * k):
        kept = y[block][:, :, None] * Zf[None, :, :] / p
        t = kept - scores[block][:, None, :]
        out[block] = np.einsum("u,ruk->rk", w, t * t)
    dev = y - mean[:, None]
    mean_var = (dev * dev) @ w
    dof = n_draws - 1.0
    out, mean_var = out / dof, mean_var / dof
    spread = fill_range(value_scale(lo, hi), y)
    agree = rounding(out, spread[:, None])
    floor = np.zeros(out.shape)
    lo, hi = widen(lo, hi, y)
    if agree.any():
        reach = np.maximum(np.abs(scores), np.maximum(
            np.abs(hi[:, None] / p - scores), np.abs(lo[:, None] / p - scores)))
        floor = np.where(agree, agreeing_bound(n_draws, reach), 0.0)
        out = np.where(agree, 0.0, out)
    # the groups' terms v(M) M_k / p spread alike: moderated towards their mean
    out = moderated_se(out[:, :, None], out[:, :, None] ** 2 / dof,
                       np.ones(out.shape, dtype=bool), floor[:, :, None])[:, :, 0] ** 2
    agree = rounding(mean_var, spread)
    mean_var = mean_var * t_scale(1.0, dof) ** 2
    if agree.any():
        reach = np.maximum(np.abs(hi - mean), np.abs(lo - mean))
        mean_var = np.where(agree, agreeing_bound(n_draws, reach), mean_var)
    return out, mean_var
