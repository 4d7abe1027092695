"""Interaction indices from a budget of coalitions, with standard errors.

Every index of :data:`~skdecomp._methods._indices.INDICES` weighs the
Moebius components by ``c(|S|, |T|, k)``, and so is also a weighted sum of
discrete derivatives over the coalitions T outside S, with a weight
``p_s(|T|)`` that follows from c (one triangular solve per size s)::

    I(S) = sum over T in N \\ S of p_s(|T|) sum over L in S of
           (-1)**(|S| - |L|) v(T u L)
         = sum over A of v(A) (-1)**(|S| - |A n S|) p_s(|A \\ S|).

The estimate is regression-adjusted stratified sampling (a fitted game as
control variate, as in Witter, Liu and Musco, "Regression-adjusted Monte
Carlo estimators for Shapley values and probabilistic values", 2025):

1. The coalitions of the KernelSHAP design (``_sampled.kernel_shap_design``):
   the layers of the smallest and largest sizes taken whole while the
   budget allows (the border trick), then, in each other layer of sizes s
   and K - s, distinct pairs of a coalition and its complement (paired
   sampling), the budget shared equally between the layers.
2. A surrogate game g: the Shapley-kernel weighted least squares fit of v
   in the Moebius basis truncated at the largest order the budget carries
   (at most the index's order), with g = v on the empty and the full
   coalitions. Its index values are exact, from the registry's weights.
3. The index of the residual v - g, from the sum above over the drawn
   coalitions: exact on the layers taken whole, each other layer weighted
   by its number of pairs over the number drawn.

The estimate is g's index plus the residual's; it is exact when the budget
covers every coalition (then all of them are evaluated and transformed),
and efficient indices add up to v(N) - v({}) exactly, as the residual sums
to zero over the terms of each coalition.

The standard error is the delete-a-pair jackknife of the whole estimate,
layer by layer with the finite population correction (``_errors.Draws``):
each drawn pair left out in turn refits the surrogate and reweighs its
layer, in closed form (``_Design._jackknife``). The surrogate is fitted on
the same draws, with up to half as many coefficients as coalitions; the
spread of the residual's terms alone, each residual divided by one minus
its leverage (HC3), left out the fit's own error and gave standard errors
up to 4.5 times too small (31 % coverage of the 95 % intervals for the
order-2 k-SII of 30 groups at 1,000 coalitions), the calibrated weights of
the estimate in place of the residual's (the linearised variance of the
regression estimator) 1.6 times too small. The jackknife is exact for the
estimate, and conservative where the fit has nearly as many coefficients
as draws (then up to 3 times too large, at 2 to 4 coalitions a
coefficient). With few drawn pairs a layer the spread itself is uncertain:
the standard errors are scaled by t_{0.975, nu} / 1.96, nu the drawn pairs
less one a layer, so that ``value +- 1.96 se`` is the t interval, and a
budget must give each layer not taken whole at least 4 pairs, 6 for
the order-2 FSII and FBII (``min_budget``). At order 3 and above the layers of 1 to order - 1 groups
(and their complements) are taken whole, and a fit of at most that order is
made from them alone (``whole_layers``). ``benchmarks/
bench_coverage_interactions.py`` measures the coverage.

A standard error is 0 only for an exact value: a term whose weighted
coalitions all lie in layers taken whole (``_Design._agreeing``). A layer
whose drawn pairs agree, to rounding, measures no spread and adds the
interval of a bound from the rule of three instead; the variances are
moderated towards the mean of the terms of each size (``_errors.
moderated_se``). Terms that depend only on the coalitions inside them (the
Moebius components, ``is_local``) are computed exactly from the coalitions
of at most ``order`` groups, and a smaller budget is refused
(``smallest_index_budget``): drawn, a pair term rests on the one coalition
of its two groups, which the draws mostly miss, and its intervals covered
25 to 31 %. ``benchmarks/bench_coverage_games.py`` measures the coverage on
smooth, AND-like and majority games.
"""

# SPDX-License-Identifier: BSD-3-Clause

from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from math import comb
from numbers import Integral

import numpy as np
import scipy.linalg
import scipy.sparse
from scipy.stats import t as student_t

from .._decomposition._kernels import moebius_transform
from ._errors import differ_chance, fill_range, moderated_se, rounding, value_scale
from ._indices import exact_indices, index_terms, index_values
from ._registry import n_coalitions
from ._designs import _kernel_design, all_coalitions
from ._evaluation import _evaluate, _row_chunks, _Segment

__all__ = ["DEFAULT_BUDGET", "index_budget", "sampled_interactions",
           "smallest_index_budget"]

#: Coalitions per row when neither the call nor the explainer sets a budget.
DEFAULT_BUDGET = 4096

# random stream of the interaction indices, apart from the methods' seed_ids
_SEED_ID = 100

# floats held at once by the per-draw terms of the standard errors
_MAX_TERMS = 1 << 22

# weights of coalitions on terms held by one design
_MAX_HELD = 1 << 25

_Z95 = 1.959963984540054

# drawn pairs per layer at the smallest budget
_MIN_PAIRS = 4

# drawn pairs per layer at the smallest budget of the order-2 FSII and FBII
_FAITHFUL_PAIRS = 6


def _min_pairs(spec, order):
    """Drawn pairs a layer at the smallest budget of an index (``min_budget``).

    6 for FSII and FBII of order 2: their singletons weigh every layer, with
    both signs, and with 4 pairs a layer on a majority game of 6 groups
    against one background row they covered 87 % (FSII) and 89 % (FBII),
    with 6 pairs 91 % or more. 4 for the others.
    """
    if spec is not None and order <= 2 and spec.name in ("FSII", "FBII"):
        return _FAITHFUL_PAIRS
    return _MIN_PAIRS

# smallest determinant of I - (leverage of a drawn pair)
_MIN_DET = 0.05**2


def _n_basis(n_groups, order):
    return sum(comb(n_groups, j) for j in range(1, order + 1))


def surrogate_order(n_groups, order, budget):
    """Largest order q <= order whose Moebius basis the budget fits twice over."""
    q = 1
    while q < order and 2 * _n_basis(n_groups, q + 1) <= budget:
        q += 1
    return q


def whole_layers(order):
    """Layers of sizes 1 to ``order - 1`` (and their complements), always taken whole.

    At order 3 and above the terms of fewer groups than the order weigh a
    few coalitions of the smallest and largest sizes far more than the
    others (k-SII's pair {i, j} puts 0.64 on v({i, j}) and at most 0.024 on
    the other coalitions of two groups over 8 groups; STII's pairs are
    Moebius components, which rest on that one coalition): drawn, those
    coalitions are mostly missed, and the spread of the drawn pairs does not
    show it (pairs and singletons covered 71 to 87 % at 4 pairs a layer).
    A fit of at most order - 1 is made from those layers alone: fitted on
    the draws too, it bent towards them and their residuals shrank (FSII's
    and FBII's singletons covered 41 to 60 % over 8 groups).
    """
    return max(order - 1, 1)


def _layer_size(K, s):
    return comb(K, s) if 2 * s == K else 2 * comb(K, s)


def min_budget(n_groups, order=2, pairs=_MIN_PAIRS):
    """Smallest budget: the layers taken whole (``whole_layers``), then 4 pairs a layer.

    Each layer of sizes s and K - s not taken whole measures its own spread
    from its drawn pairs; with fewer than 4 pairs a layer the 95 %
    intervals covered less than 90 % of the exact values on the coverage
    benchmark (``pairs``: 6 for the order-2 FSII and FBII, ``_min_pairs``).
    At order 2 and below only the singletons and their complements are
    taken whole. At least every coalition (the exact values).
    """
    K = n_groups
    top = min(whole_layers(order), K // 2)
    whole = sum(_layer_size(K, s) for s in range(1, top + 1))
    return min(whole + 2 * pairs * max(K // 2 - top, 0), n_coalitions(K))


def is_local(spec, n_groups, order):
    """Whether every term S depends only on the coalitions inside S.

    True when ``p_s(t) = 0`` for t > 0 at every size s up to the order: the
    Moebius components, ``m(S) = sum over L in S of (-1)**(|S| - |L|) v(L)``.
    """
    p = derivative_weights(spec, n_groups, order)
    return not np.any(p[:, 1:])


def _local_coalitions(n_groups, order):
    """Coalitions of at most ``order`` groups, the empty one first (bitmask order)."""
    Z = all_coalitions(n_groups)
    return Z[Z.sum(axis=1) <= order]


def smallest_index_budget(n_groups, spec, order):
    """Smallest budget of an index of some order over K groups.

    The Moebius components of at most k groups depend only on the
    coalitions of at most k groups: they are computed exactly from those,
    and a smaller budget is refused (drawn from a layer of sizes, a pair
    term rests on the one coalition of its two groups, which the draws
    mostly miss: its intervals covered 25 to 31 %). Other indices:
    ``min_budget``.
    """
    if is_local(spec, n_groups, order):
        K = n_groups
        return min(sum(comb(K, j) for j in range(1, min(order, K) + 1)), n_coalitions(K))
    return min_budget(n_groups, order, _min_pairs(spec, order))


def check_index_budget(n_groups, order, budget, spec=None):
    """The budget as an int, or a ValueError that names the smallest one."""
    if spec is not None and is_local(spec, n_groups, order):
        low = smallest_index_budget(n_groups, spec, order)
        if budget < low:
            raise ValueError(
                f"n_samples={budget} is too small for {spec.name} terms of at most "
                f"{order} groups over {n_groups} groups; give at least "
                f"n_samples={low}: each term depends only on the coalitions inside "
                f"it, and from these {low} coalitions (every coalition of 1 to "
                f"{order} groups) the values are exact, while drawn they rest on "
                "single coalitions that the draws mostly miss."
            )
        return int(budget)
    pairs = _min_pairs(spec, order)
    low = min_budget(n_groups, order, pairs)
    if budget < low:
        top = min(whole_layers(order), n_groups // 2)
        whole = (f"the {2 * n_groups} coalitions of one group and of all but one"
                 if top == 1 else
                 f"every coalition of 1 to {top} groups and of all but 1 to {top}")
        why = ("" if top == 1 else
               f" (terms of fewer than {order} groups rest mostly on those "
               "coalitions, which draws would mostly miss)")
        raise ValueError(
            f"n_samples={budget} is too small for interaction indices of order "
            f"{order} over {n_groups} groups; give at least n_samples={low}: "
            f"{whole}{why}, then {pairs} pairs of a coalition and its "
            "complement for each other size, so that each size measures its own "
            "spread for the standard errors"
            + ("" if pairs == _MIN_PAIRS else
               f" ({spec.name}'s singletons weigh every size, and with 4 pairs "
               "their intervals covered too little)")
            + " (about "
            f"{2 * _n_basis(n_groups, order)} fit the terms of order {order})."
        )
    return int(budget)


@lru_cache(maxsize=64)
def derivative_weights(spec, n_groups, order):
    """``p_s(t)`` for s = 0..order and t = 0..K-s, as a float table.

    From ``c(s, s + l, k) = sum over j >= l of C(K - s - l, j - l) p_s(j)``,
    solved from l = K - s down, in exact rationals.
    """
    K = n_groups
    table = np.zeros((order + 1, K + 1))
    for s in range(order + 1):
        p = [Fraction(0)] * (K - s + 1)
        for l in range(K - s, -1, -1):
            rest = sum((comb(K - s - l, j - l) * p[j] for j in range(l + 1, K - s + 1)),
                       Fraction(0))
            p[l] = Fraction(spec.weight(s, s + l, order)) - rest
        table[s, : K - s + 1] = [float(x) for x in p]
    return table


def _basis(n_groups, q):
    """Moebius basis terms of 1 to q groups."""
    return index_terms(n_groups, q)[1:]


def _basis_matrix(Z, terms):
    """[T in A] for the coalitions A (rows) and basis terms T (columns)."""
    out = np.empty((Z.shape[0], len(terms)))
    pos = 0
    sizes = [len(t) for t in terms]
    Zf = Z.astype(np.float64)
    for s in range(1, max(sizes) + 1):
        members = np.array([t for t in terms if len(t) == s], dtype=np.int64)
        block = np.ones((Z.shape[0], members.shape[0]))
        for j in range(s):
            block *= Zf[:, members[:, j]]
        out[:, pos : pos + members.shape[0]] = block
        pos += members.shape[0]
    return out


def _surrogate_index(spec, terms, basis, order):
    """Sparse map from (m(empty), basis coefficients) to the index of each term."""
    where = {t: j for j, t in enumerate(terms)}
    rows, cols, vals = [0], [0], [float(spec.weight(0, 0, order))]
    for b, T in enumerate(basis, start=1):
        t = len(T)
        for s in range(0, min(t, order) + 1):
            c = float(spec.weight(s, t, order))
            if c == 0.0:
                continue
            for S in combinations(T, s):
                rows.append(where[S])
                cols.append(b)
                vals.append(c)
    return scipy.sparse.csr_matrix(
        (vals, (rows, cols)), shape=(len(terms), len(basis) + 1)
    )


def _term_weights(spec, Z, terms, order, factor):
    """``factor(A) (-1)**(s - |A n S|) p_s(|A| - |A n S|)``: coalitions by terms."""
    K = Z.shape[1]
    p = derivative_weights(spec, K, order)
    sizes = Z.sum(axis=1)
    out = np.empty((Z.shape[0], len(terms)))
    pos = 0
    for s in range(order + 1):
        of_size = [t for t in terms if len(t) == s]
        members = np.array(of_size, dtype=np.int64).reshape(len(of_size), s)
        j = np.zeros((Z.shape[0], members.shape[0]), dtype=np.int64)
        for i in range(s):
            j += Z[:, members[:, i]]
        sign = np.where((s - j) % 2 == 0, 1.0, -1.0)
        out[:, pos : pos + members.shape[0]] = sign * p[s, sizes[:, None] - j]
        pos += members.shape[0]
    return out * factor[:, None]


class _Design:
    """The coalitions of one budget over K groups and what the estimate needs."""

    def __init__(self, spec, n_groups, order, budget, rng):
        K = n_groups
        Z, w, pairs, draws = _kernel_design(K, budget, rng, whole_layers(order))
        self.terms = index_terms(K, order)
        q = surrogate_order(K, order, Z.shape[0])
        if 2 <= q <= whole_layers(order) and draws is not None:
            # the layers taken whole fix the Moebius terms of up to q groups:
            # the fit leaves the drawn coalitions out (see ``whole_layers``)
            w = np.where(np.isin(np.arange(Z.shape[0]), pairs), 0.0, w)
        self.basis = _basis(K, q)
        # the empty and the full coalition last
        self.Z = np.vstack([Z, np.zeros((1, K), bool), np.ones((1, K), bool)])
        n = Z.shape[0]
        Phi = _basis_matrix(Z, self.basis)
        gram = Phi.T @ (w[:, None] * Phi)
        gram[np.diag_indices_from(gram)] += 1e-12 * max(1.0, np.trace(gram) / len(gram))
        self.chol = scipy.linalg.cho_factor(gram)
        self.Phi, self.w = Phi, w
        self.ones = scipy.linalg.cho_solve(self.chol, np.ones(len(self.basis)))
        self.to_index = _surrogate_index(spec, self.terms, self.basis, order)
        # weight of each drawn coalition in the residual's sum: the pairs of
        # its layer over the pairs drawn there
        factor = np.ones(n)
        self.draws, self.pairs = draws, pairs
        if draws is not None:
            s = np.minimum(Z[pairs[:, 0]].sum(axis=1), K - Z[pairs[:, 0]].sum(axis=1))
            population = np.array([comb(K, int(i)) / (2.0 if 2 * i == K else 1.0)
                                   for i in range(K + 1)])
            drawn = np.bincount(s, minlength=K + 1)
            factor[pairs[:, 0]] = factor[pairs[:, 1]] = population[s] / drawn[s]
        self.W = _term_weights(spec, Z, self.terms, order, factor)
        self.n_inner = n
        self.t_scale = 1.0
        self._agreeing(spec, K, order, Z, draws, pairs, factor)
        if draws is not None:
            self._jackknife(Phi, w, pairs, s, drawn)
            # value +- 1.96 se is the t interval with the degrees of freedom
            # of the stratified spread: the drawn pairs less one per layer
            dof = sum(at.size - 1 for at, _ in draws.groups)
            self.t_scale = float(student_t.ppf(0.975, max(dof, 1)) / _Z95)

    def _agreeing(self, spec, K, order, Z, draws, pairs, factor):
        """What the standard errors need beyond the jackknife: exact terms, bounds.

        A term is exact when every coalition with a weight in it (``p_s(|A
        \\ S|) != 0``) lies in a layer taken whole: then the fit cancels
        and the estimate is the index itself (its jackknife is rounding).

        A layer of drawn pairs whose jackknife terms agree, to rounding,
        measures no spread, and one without any draw measures none either.
        With 95 % confidence at most a share ``q = differ_chance(n)`` of the
        layer's N pairs differ from its n drawn ones (all of them for a layer
        without draws); the residual of a coalition is at most ``Delta``
        (the range of the game's values and the largest value of the fit,
        ``estimate``), so the layer's part of the estimate is off by at most
        ``Delta`` times the largest sum of ``|p_s(A \\ S)| + |p_s(~A \\
        S)|`` over qN of its pairs, plus ``q N |c|`` for the mean
        contribution c of the drawn pairs. Here are those sums, per layer
        (or stratum of ``draws``) and size of term.
        """
        p = derivative_weights(spec, K, order)
        sizes = np.array([len(t) for t in self.terms])
        self.term_size = sizes
        half = np.arange(1, K // 2 + 1)
        counts = np.bincount(Z.sum(axis=1), minlength=K + 1)
        whole = np.array([counts[h] == comb(K, int(h)) for h in half], dtype=bool)
        n_pop = np.array([comb(K, int(h)) / (2.0 if 2 * h == K else 1.0) for h in half])

        def pair_weights(s_t, h):
            """(sum of |p| over a pair, count) by |A n S| for the layer of h, K - h."""
            out = []
            for j in range(max(0, h - (K - s_t)), min(s_t, h) + 1):
                n = comb(s_t, j) * comb(K - s_t, h - j) / (2.0 if 2 * h == K else 1.0)
                out.append((abs(p[s_t, h - j]) + abs(p[s_t, K - h - s_t + j]), n))
            return out

        def largest(weights, share):
            """Largest sum of ``share`` of the pairs' weights (a count, not whole)."""
            total, left = 0.0, share
            for value, n in sorted(weights, reverse=True):
                take = min(n, left)
                total, left = total + take * value, left - take
                if left <= 0:
                    break
            return total

        span = range(order + 1)
        depends = np.array([[any(v > 0 for v, _ in pair_weights(s_t, int(h)))
                             for h in half] for s_t in span]).reshape(order + 1, -1)
        # exact terms: no weight outside the whole layers
        self.exact = ~np.any(depends[:, ~whole], axis=1)[sizes]
        drawn_layers = set()
        self.strata = []
        if draws is not None:
            layer = np.minimum(Z[pairs[:, 0]].sum(axis=1), K - Z[pairs[:, 0]].sum(axis=1))
            for at, _ in draws.groups:
                members = np.unique(layer[at])
                drawn_layers.update(int(h) for h in members)
                q = float(differ_chance(at.size))
                N = float(n_pop[members - 1].sum())
                table = np.array([
                    largest([wt for h in members for wt in pair_weights(s_t, int(h))],
                            q * N) for s_t in span])
                dep = np.any(depends[:, members - 1], axis=1)
                self.strata.append((table[sizes], q * N, dep[sizes]))
        # layers neither whole nor drawn (none at the budgets accepted)
        missing = [int(h) for h, full in zip(half, whole)
                   if not full and int(h) not in drawn_layers]
        self.missing = np.array([
            sum(largest(pair_weights(s_t, h), n_pop[h - 1]) for h in missing)
            for s_t in span])[sizes]
        # unscaled weights of the drawn coalitions (without pairs over drawn)
        if draws is not None:
            self.W0a = self.W[pairs[:, 0]] / factor[pairs[:, 0], None]
            self.W0c = self.W[pairs[:, 1]] / factor[pairs[:, 1], None]

    def _jackknife(self, Phi, w, pairs, layer, drawn):
        """Weights and pair inverses of the delete-a-pair jackknife.

        Deleting the drawn pair j (coalitions a, c) of a layer of n_h pairs
        refits the surrogate without it and weighs the other pairs of the
        layer by N_h / (n_h - 1). With M the inverse of the constrained
        normal equations (the constraint sum m = v(N) - v({}) as a row of
        infinite weight), X_j the pair's basis rows and r_j its residuals,
        the fit moves by ``M X_j' w_j e_j``, ``e_j = (I - X_j M X_j' w_j)^-1
        r_j`` (the residuals of the pair left out), and the estimate by

            theta_(j) - theta = -n_h / (n_h - 1) * (omega_j' e_j
                                 + (W_j - V_j - omega_j)' e_j / n_h) + const,

        where ``omega = W + w Phi M (c - Phi' W)`` are the calibrated weights
        of the estimate (``theta = sum omega y``), ``V = w Phi M g_h`` with
        ``g_h`` the layer's weighted basis sums, and the constant is the same
        for every pair of the layer. The jackknife variance ``(1 - f_h) (n_h -
        1) / n_h sum_j (theta_(j) - mean)**2`` is then the stratified spread of
        ``e_a' eff_a + e_c' eff_c`` with ``eff = ((n_h - 1) omega + W - V) /
        n_h`` (``Draws.variance``).
        """
        a, c = pairs[:, 0], pairs[:, 1]
        total = self.ones.sum()
        # M Phi' for the drawn rows only, in blocks
        rows = np.r_[a, c]
        MPhi = scipy.linalg.cho_solve(self.chol, Phi[rows].T).T
        MPhi -= np.outer(Phi[rows] @ self.ones, self.ones) / total
        na = a.size
        Ma, Mc = MPhi[:na], MPhi[na:]
        qaa = np.einsum("ij,ij->i", Ma, Phi[a])
        qac = np.einsum("ij,ij->i", Ma, Phi[c])
        qcc = np.einsum("ij,ij->i", Mc, Phi[c])
        # I - X_j M X_j' w_j and its inverse, pair by pair
        A00, A01, A10, A11 = 1.0 - qaa * w[a], -qac * w[c], -qac * w[a], 1.0 - qcc * w[c]
        det = A00 * A11 - A01 * A10
        # a pair the fit hinges on (leverage near 1): its residuals enlarged
        # at most 20-fold, as the 0.05 floor of HC3
        det = np.maximum(det, _MIN_DET)
        self.inverse = (A11 / det, -A01 / det, -A10 / det, A00 / det)
        d = self.to_index[:, 1:].toarray().T - Phi.T @ self.W
        eff = np.empty((rows.size, self.W.shape[1]))
        where = np.r_[layer, layer]
        for h in np.unique(layer):
            at = np.flatnonzero(where == h)
            R = rows[at]
            g = Phi[R].T @ self.W[R]
            n_h = float(drawn[h])
            # ((n_h - 1) omega + W - V) / n_h
            eff[at] = (self.W[R] + (n_h - 1.0) / n_h * w[R, None] * (MPhi[at] @ d)
                       - w[R, None] * (MPhi[at] @ g) / n_h)
        self.eff_a, self.eff_c = eff[:na], eff[na:]

    def estimate(self, values, errors):
        """Values (n_rhs, n_inner + 2) -> index estimates and standard errors."""
        n = self.n_inner
        empty, full = values[:, n], values[:, n + 1]
        y = values[:, :n] - empty[:, None]
        b = scipy.linalg.cho_solve(self.chol, self.Phi.T @ (self.w[:, None] * y.T))
        # g(N) = v(N): the fit with the constraint sum_T m(T) = v(N) - v({})
        gap = (b.sum(axis=0) - (full - empty)) / self.ones.sum()
        m = b - self.ones[:, None] * gap[None, :]
        coef = np.vstack([empty[None, :], m])
        residual = y - (self.Phi @ m).T
        est = (self.to_index @ coef).T + residual @ self.W
        if not errors:
            return est, np.zeros_like(est)
        # the range of the game's values, and a bound on a residual: that
        # range and the largest magnitude of the fit (y is v - v({}))
        ends = np.c_[np.zeros(y.shape[0]), full - empty]
        lo = np.minimum(y.min(axis=1), ends.min(axis=1))
        hi = np.maximum(y.max(axis=1), ends.max(axis=1))
        spread = fill_range(hi - lo, y)
        # rounding relative to the values themselves, y + v({})
        scale = fill_range(value_scale(lo + empty, hi + empty), y)
        gap = spread + np.abs(m).sum(axis=0)
        var, per_dof = np.zeros_like(est), np.zeros_like(est)
        floor = (self.missing[None, :] * gap[:, None] / _Z95) ** 2
        if self.draws is not None:
            a, c = self.pairs[:, 0], self.pairs[:, 1]
            step = max(1, _MAX_TERMS // max(1, self.pairs.shape[0] * est.shape[1]))
            i00, i01, i10, i11 = self.inverse
            for lo in range(0, est.shape[0], step):
                block = slice(lo, lo + step)
                ra, rc = residual[block][:, a], residual[block][:, c]
                # the residuals of each pair left out of the fit
                ea, ec = i00 * ra + i01 * rc, i10 * ra + i11 * rc
                t = ea[:, :, None] * self.eff_a[None] + ec[:, :, None] * self.eff_c[None]
                # each pair's part of the residual's index, unscaled
                part = ra[:, :, None] * self.W0a[None] + rc[:, :, None] * self.W0c[None]
                for (at, factor), (table, share, dep) in zip(self.draws.groups,
                                                             self.strata):
                    sub = t[:, at]
                    dev = sub - sub.mean(axis=1, keepdims=True)
                    v = factor * np.einsum("ruk,ruk->rk", dev, dev)
                    agree = rounding(v, scale[block, None]) & dep[None, :]
                    bound = (table[None, :] * gap[block, None]
                             + share * np.abs(part[:, at].mean(axis=1)))
                    v = np.where(agree, 0.0, v)
                    var[block] += v
                    per_dof[block] += v * v / (at.size - 1.0)
                    floor[block] += np.where(agree, (bound / _Z95) ** 2, 0.0)
        # the t interval (Welch-Satterthwaite over the layers), each term's
        # variance moderated towards the mean of the terms of its size: an
        # estimate far off often comes with draws that hardly spread
        se = np.zeros_like(est)
        for size in np.unique(self.term_size):
            at = np.flatnonzero((self.term_size == size) & ~self.exact)
            if at.size:
                se[:, at] = moderated_se(
                    var[:, at, None], per_dof[:, at, None],
                    np.ones((est.shape[0], at.size), dtype=bool),
                    floor[:, at, None])[:, :, 0]
        # exact terms: their jackknife is rounding
        return est, se


def sampled_interactions(game, X, spec, order, budget, seed, errors=True):
    """Index values (n_rows, n_terms, n_out) from ``budget`` coalitions per row.

    With ``errors``, also their standard errors (0 where the value is exact:
    every coalition is evaluated, or every coalition the term depends on;
    ``_Design.estimate``). ``seed`` fixes the draws, shared by all rows.
    Terms that depend only on the coalitions inside them (``is_local``:
    Moebius) are computed exactly from the coalitions of at most ``order``
    groups.
    """
    K = game.n_groups
    prediction = game.predict(X)
    n_rows, n_out = prediction.shape
    terms = index_terms(K, order)
    full = budget >= n_coalitions(K)
    local = not full and is_local(spec, K, order)
    if full:
        Z = all_coalitions(K)
        design = None
    elif local:
        # the coalitions inside the terms give them exactly
        Z = _local_coalitions(K, order)
        design = None
        weights = _term_weights(spec, Z, terms, order, np.ones(Z.shape[0]))
    else:
        design = _Design(spec, K, order, budget, np.random.RandomState([seed, _SEED_ID]))
        Z = design.Z
    groups = np.arange(K)
    out = np.empty((n_rows, len(terms), n_out))
    se = np.zeros_like(out)
    for rows in _row_chunks(n_rows, Z.shape[0] * n_out):
        seg = _Segment(Z, rows, np.broadcast_to(groups, (rows.size, K)))
        values = _evaluate(game, X, prediction, [seg])[0]
        flat = np.ascontiguousarray(values.transpose(0, 2, 1)).reshape(-1, Z.shape[0])
        if full:
            est = index_values(moebius_transform(flat), spec.name, order)
            var = np.zeros_like(est)
        elif local:
            est = flat @ weights
            var = np.zeros_like(est)
        else:
            est, var = design.estimate(flat, errors)
        out[rows] = est.reshape(rows.size, n_out, -1).transpose(0, 2, 1)
        se[rows] = var.reshape(rows.size, n_out, -1).transpose(0, 2, 1)
    if spec.efficient:
        out[:, 0] = game.expected_value[None, :]
        se[:, 0] = 0.0
    return (out, se) if errors else out


def index_budget(order, n_groups, tree, n_samples, default, spec=None):
    """Coalitions per row of a query, or None for the exact values.

    ``n_samples`` (the call's) forces the estimate; ``default`` (the
    explainer's ``n_samples``) sets its budget when the exact values are
    out of reach, else 4096 or twice the number of terms, whichever is
    larger, within the weights the working memory holds, and at least the
    smallest budget.
    """
    if n_samples is not None and (
        not isinstance(n_samples, Integral) or isinstance(n_samples, bool)
        or n_samples < 1
    ):
        raise ValueError(f"n_samples must be a positive int or None, got {n_samples!r}.")
    if n_samples is None and exact_indices(order, n_groups, tree):
        return None
    n_terms = _n_basis(n_groups, order) + 1
    budget = n_samples or default
    if budget is None:
        smallest = smallest_index_budget(n_groups, spec, order) if spec is not None else 0
        # the default, within what the working memory holds
        budget = max(min(max(DEFAULT_BUDGET, 2 * _n_basis(n_groups, order)),
                         _MAX_HELD // n_terms - 2), smallest)
    budget = check_index_budget(n_groups, order, budget, spec)
    held = n_terms * min(budget + 2, 1 << n_groups)
    if held > _MAX_HELD:
        raise ValueError(
            f"{n_terms} terms of at most {order} groups over {min(budget + 2, 1 << n_groups)}"
            f" coalitions hold {held:,} weights, more than {_MAX_HELD:,}; lower "
            "max_order or n_samples, or merge columns into fewer groups."
        )
    return budget
