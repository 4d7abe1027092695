"""Sampled explainers over groups: KernelSHAP, permutation SHAP, LIME, RISE, IG.

All methods work on the coalition game v_x(S) = mean_{z in B} f(x_{G_S},
z_{-G_S}) (see the user guide, :ref:`functional_decomposition`), except
Integrated Gradients, which evaluates the model along straight lines from the
background rows to x (``_paths``), or takes a torch module's gradients
there (``_gradients``).

Groups on which x equals every background row (dummies) get exactly 0, and no
budget is spent on them: each method runs on the game of the other groups.
RISE gives a dummy its constant E_M[v_x(M)] (see :ref:`sampled_estimators`).

KernelSHAP and permutation SHAP use that the game is the mean of the
anchored games f(x_{G_S}, z_{-G_S}) over the background rows z, and so is
its Shapley value. Each pair (x, z) gets its own draws over the groups on
which x and z differ, with the full budget: as many model calls as
coalitions shared by all z, but errors that average out over z instead of
repeating (the joint sampling of coalitions and reference rows of Strumbelj
& Kononenko, KAIS 2014). On an MLP on the digits with 10 background rows
this cuts the mean squared error about fivefold at an equal number of model
calls (``benchmarks/bench_sampled_accuracy.py``). LIME and RISE keep one
set of coalitions for the mean game, as they are defined.

Draws depend only on the seed, the method and the number K' of groups in
play (and, for a per-z design, the index of z), never on which other rows
are explained: rows with the same K' share one design (one set of weights,
one factorisation), relabelled at random for each background row. The
chunked, parallel evaluation of the model cannot change the draws.
Coalitions are boolean arrays of shape (n_coalitions, n_groups), so any
number of groups works. The empty and the full coalitions are never sent to
the model.

When the budget covers every coalition (``n_samples >= 2**K' - 2``), each
method enumerates all of them and returns its closed form (see
:ref:`explainers_as_weights`).

On request, the coalition methods also give the standard error of every
estimate, from the same model calls (``_errors``): the spread of one term
per independent draw (an antithetic pair of permutations, a drawn pair of
a coalition and its complement, a Bernoulli mask). For KernelSHAP and
permutation SHAP, each background row's game measures its own spread, and
the variances of the games add up.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._designs import (  # noqa: F401 - the designs, read from here too
    _bernoulli_design,
    _kernel_design,
    _permutation_design,
    all_coalitions,
    kernel_shap_design,
    prefix_design,
    shapley_kernel,
)
from ._dummy import differing_groups, dummy_groups, zero_dummy_groups
from ._errors import (
    ROUNDING,
    Agreeing,
    Draws,
    Reach,
    fill_range,
    lime_variances,
    moderated_se,
    pair_bounds,
    pair_terms,
    permutation_terms,
    rise_variances,
    value_scale,
)
from ._gradients import gradient_integrated_gradients, resolve_ig_scheme
from ._kernels import (
    cholesky_solve,
    coalition_gram,
    coalition_moments,
    constrained_least_squares,
    permutation_attributions,
)
from ._paths import integrated_gradients
from ._evaluation import _by_count, _evaluate, _row_chunks, _rows_first, _Segment
from ._registry import check_method_params, get_method, n_coalitions, resolve_budget
from ._shared import can_share, shared_attributions

__all__ = [
    "kernel_shap_design",
    "sampled_attributions",
    "shapley_kernel",
    "single_group_attributions",
]

# values held at once per method call (explained rows x z x coalitions x outputs)
# -- KernelSHAP and permutation SHAP, one anchored game per background row ------
def _anchored(game, X, prediction, differ, budget, seed, seed_id, estimator,
              errors=False):
    """Shapley estimates (n_rows, K, n_out) as the mean over z of anchored estimates.

    ``estimator(k, rng)`` gives the design over k groups in play:
    (coalitions, solve, terms, draws), where ``solve(values, base, total)``
    maps the values of the coalitions (n_blocks * n_out, n_coal), of the
    empty coalition and of the full one (n_blocks * n_out,) to estimates
    (n_blocks * n_out, k), and ``terms(values, base, phi, spread)`` gives
    each draw's term of their error (n_blocks * n_out, n_draws, k) for the
    independent ``draws`` (None when the design has no random draw), and a
    bound of the same shape on the term of a draw like it, from the range
    ``spread`` of the game's values (``_errors.Draws.split``).

    With ``errors``, also returns the standard errors: each game's variance
    from the spread of its own draws, summed over the independent games of
    the background rows, and scaled by t / 1.96 for the Welch-Satterthwaite
    degrees of freedom of that sum (``t_scale``), plus the bounds of the
    strata whose draws all agree (``_Variances``).
    """
    n_rows, n_bg, K = differ.shape
    n_out = prediction.shape[1]
    phi = np.zeros((n_rows, K, n_out))
    # the variances, their squares over their degrees of freedom, and the
    # bounds of the strata whose draws agree
    acc = _Variances(n_rows, K, n_out) if errors else None
    designs = {}
    # one "background row" standing for the game's empty coalition when the
    # game is not a mean over background rows
    bg_pred = game.background_prediction if game.anchored else (
        game.expected_value[None, :]
    )
    per_row = min(budget, 1 << K) * n_out * (max(n_bg, K) if errors else n_bg)
    for rows in _row_chunks(n_rows, per_row):
        segments, solvers = [], []
        for k, (blocks, groups) in _by_count(differ[rows]).items():
            i, j = np.divmod(blocks, n_bg)
            i = rows[i]
            if k == 1:
                np.add.at(phi, (i, groups[:, 0]), prediction[i] - bg_pred[j])
            if k < 2:
                continue
            if k not in designs:
                # one design per K' for every row and z, each z relabelling it
                # by its own random permutation of the groups in play
                design = estimator(k, np.random.RandomState([seed, seed_id]))
                keys = np.random.RandomState([seed, seed_id, k]).random_sample(
                    (n_bg, k)
                )
                designs[k] = design + (np.argsort(keys, axis=1),)
            coalitions, solve, terms, draws, relabel = designs[k]
            segments.append(_Segment(
                coalitions, i, np.take_along_axis(groups, relabel[j], axis=1), j
            ))
            solvers.append((solve, terms, draws))
        for seg, (solve, terms, draws), values in zip(
            segments, solvers, _evaluate(game, X, prediction, segments)
        ):
            base = bg_pred[seg.background_rows]
            total = (prediction[seg.rows] - base).reshape(-1)
            flat = _rows_first(values)
            est = solve(flat, base.reshape(-1), total)
            n_b, k = seg.groups.shape
            np.add.at(
                phi, (seg.rows[:, None], seg.groups),
                est.reshape(n_b, n_out, k).transpose(0, 2, 1),
            )
            if errors and draws is not None:
                acc.add(seg, terms, draws, flat, base, est)
    if errors:
        return phi / n_bg, acc.standard_errors(n_bg)
    return phi / n_bg


class _Variances:
    """The variances of the games of each explained row, added up.

    The games of the background rows are independent (each relabels the
    design by its own random permutation of the groups in play), so the
    variance of their mean is the sum of their variances over n_bg**2.

    A stratum whose draws all agree in a game, to rounding (``Draws.split``:
    a permutation SHAP group whose pairs agree, a KernelSHAP layer whose
    pairs all fit), measures no spread. The strata that agree, over all
    games of a row, add instead the variance of ``_errors.Agreeing``: with
    95 % confidence the shares of their draws that differ are small (about
    3 over their draws in all), each draw by as much as the row's games saw
    draws move (``_errors.Reach``: a permutation SHAP group's own pair
    terms, a KernelSHAP game's residuals), else by a bound from the range of
    its game's evaluated values. That bound is already an interval: it is
    added after the t scaling of the measured variances. It is positive
    whenever the estimate is not the closed form.

    With few draws a game, a group's own variance is itself uncertain, and
    the marginal contributions are skewed and discrete: draws that happen
    to land close together understate it. Each group's variance is shrunk
    towards the mean variance of the groups of its row (``_errors.
    moderated_se``), never below its own t interval.
    """

    def __init__(self, n_rows, K, n_out):
        self.var = np.zeros((n_rows, K, n_out))
        self.var_per_dof = np.zeros((n_rows, K, n_out))
        self.agreeing = Agreeing((n_rows, K, n_out))
        self.live = np.zeros((n_rows, K), dtype=bool)  # in play in some game

    def add(self, seg, terms, draws, flat, base, est, play=None):
        """Add the games of a segment; ``play`` (n_b, k): the groups in play in each."""
        n_b, k = seg.groups.shape
        n_out = self.var.shape[2]
        # the range of each game's values, the empty and the full coalition
        # included (their values sum the estimates up)
        empty = np.reshape(base, -1)
        full = empty + est.sum(axis=1)
        lo = np.minimum(flat.min(axis=1), np.minimum(empty, full))
        hi = np.maximum(flat.max(axis=1), np.maximum(empty, full))
        spread = fill_range(hi - lo, flat).reshape(n_b, n_out)
        scale = fill_range(value_scale(lo, hi), flat).reshape(n_b, n_out)
        flat = flat.reshape(n_b, n_out, -1)
        base = base.reshape(n_b, n_out)
        est = est.reshape(n_b, n_out, k)
        for j in np.unique(seg.background_rows):
            at = np.flatnonzero(seg.background_rows == j)
            t, reach = terms(flat[at].reshape(at.size * n_out, -1),
                             base[at].reshape(-1), est[at].reshape(at.size * n_out, k),
                             spread[at].reshape(-1))
            v, per_dof, agreeing = draws.split(t, reach, scale[at].reshape(-1))

            def by_group(a):
                return a.reshape(at.size, n_out, k).transpose(0, 2, 1)

            rows = seg.rows[at]
            # a row meets each z once, so no index repeats; a group out of
            # play adds nothing (its contributions are 0 in every order)
            where = (rows[:, None], seg.groups[at])
            keep = np.ones((at.size, k, 1)) if play is None else play[at][:, :, None]
            self.var[where] += by_group(v) * keep
            self.var_per_dof[where] += by_group(per_dof) * keep
            for name, value in vars(agreeing).items():
                setattr(agreeing, name, by_group(value) * keep)
            self.agreeing.merge(agreeing, where)
            self.live[where] |= keep[:, :, 0] > 0

    def standard_errors(self, n_bg):
        """The standard errors (n_rows, K, n_out) of the mean over n_bg games."""
        return moderated_se(self.var, self.var_per_dof, self.live,
                            self.agreeing.variance()) / n_bg


def _kernel_solver(Z, w):
    gram = coalition_gram(Z, w)

    def solve(values, base, total):
        # not a BLAS product, whose rounding depends on the number of rows
        moments = coalition_moments(Z, w, values - base[:, None])
        phi, ok = constrained_least_squares(gram, moments, total)
        if not ok:  # pragma: no cover - the singletons make the design full rank
            raise ValueError("The KernelSHAP design is singular; increase n_samples.")
        return phi

    return solve, gram


def _kernel_estimator(budget):
    def estimator(k, rng):
        Z, w, pairs, draws = _kernel_design(k, budget, rng)
        solve, gram = _kernel_solver(Z, w)
        if draws is not None:
            # the leverages of the drawn coalitions in the constrained fit:
            # the degrees of freedom it spends on them (``Draws.spent``)
            inv = np.linalg.inv(gram)
            ones = inv.sum(axis=1)
            M = inv - np.outer(ones, ones) / ones.sum()
            drawn = Z[pairs.ravel()].astype(np.float64)
            draws.fitted = float(np.sum(w[pairs.ravel()]
                                        * np.einsum("uk,kj,uj->u", drawn, M, drawn)))

        def terms(values, base, phi, spread):
            return (pair_terms(Z, w, pairs, values, base, phi, gram),
                    pair_bounds(Z, w, pairs, values, base, phi, gram, spread))

        return Z, solve, terms, draws

    return estimator


def _permutation_estimator(budget):
    def estimator(k, rng):
        if budget >= n_coalitions(k):
            return _kernel_estimator(budget)(k, rng)
        orders, Z, index = _permutation_design(k, budget, rng)

        def solve(values, base, total):
            return permutation_attributions(orders, index, values)

        n_pairs = orders.shape[0] // 2
        return Z, solve, order_terms(orders, index), Draws(np.zeros(n_pairs), [np.inf])

    return estimator


def order_terms(orders, index):
    """``terms(values, base, phi, spread)`` of antithetic orders, for ``_Variances``.

    A pair's term is the mean of its two marginal contributions over the
    number of pairs; one that differs from the others moves as far as the
    group's pair terms were seen to move in the row's games, or, where they
    never moved, within the range of the game's values.
    """
    n_pairs = orders.shape[0] // 2

    def terms(values, base, phi, spread):
        t = permutation_terms(orders, index, values)
        # how far each group's pair terms moved, as a pair's term
        moved = np.abs(t - t.mean(axis=1, keepdims=True)).max(axis=1) * n_pairs
        moved = np.where(moved > ROUNDING * spread[:, None], moved, 0.0)
        return t, Reach(np.full(t.shape, 1.0 / n_pairs), moved, spread)

    return terms


def _kernel_shap(game, X, prediction, differ, budget, seed, seed_id, errors=False):
    return _anchored(
        game, X, prediction, differ, budget, seed, seed_id, _kernel_estimator(budget),
        errors,
    )


def _permutation_shap(game, X, prediction, differ, budget, seed, seed_id,
                      errors=False):
    estimator = _permutation_estimator(budget)
    return _anchored(
        game, X, prediction, differ, budget, seed, seed_id, estimator, errors
    )


# -- LIME and RISE, one design for the mean game over the non-dummy groups ------
def _reduced(game, X, prediction, dummy, budget, seed, seed_id, design, solve,
             errors=False):
    """Run ``solve`` on the game of each row's non-dummy groups.

    ``design(k, rng)`` gives (coalitions, weights, counts) over k groups,
    shared by all rows with k non-dummy groups (counts None when every
    coalition is taken); ``solve(values, Z, w, counts, errors, ends)`` maps values
    (n_blocks, n_coal, n_out) to (group estimates (n_blocks, k, n_out),
    dummy value (n_blocks, n_out) or None), followed with ``errors`` by
    their standard errors. Returns the estimates (n_rows, K, n_out) and the
    dummy values (E_B f where all are dummies), then their standard errors.
    """
    n_rows, K = dummy.shape
    n_out = prediction.shape[1]
    phi = np.zeros((n_rows, K, n_out))
    const = np.broadcast_to(game.expected_value, (n_rows, n_out)).copy()
    phi_se, const_se = np.zeros_like(phi), np.zeros_like(const)
    designs = {}
    for rows in _row_chunks(n_rows, n_out * min(budget, 1 << K)):
        segments = []
        for k, (blocks, groups) in _by_count(~dummy[rows]).items():
            if k == 0:
                continue
            if k not in designs:
                designs[k] = design(k, np.random.RandomState([seed, seed_id]))
            segments.append(_Segment(designs[k][0], rows[blocks], groups))
        for seg, values in zip(segments, _evaluate(game, X, prediction, segments)):
            Z = seg.coalitions
            # the values of the empty and the full coalition, for the errors
            ends = (np.broadcast_to(game.expected_value, (seg.rows.size, n_out)),
                    prediction[seg.rows])
            out = solve(values, Z, *designs[Z.shape[1]][1:], errors, ends)
            phi[seg.rows[:, None], seg.groups] = out[0]
            if out[1] is not None:
                const[seg.rows] = out[1]
            if errors:
                phi_se[seg.rows[:, None], seg.groups] = out[2]
                if out[3] is not None:
                    const_se[seg.rows] = out[3]
    if errors:
        return phi, const, phi_se, const_se
    return phi, const


def _value_range(y, ends, base):
    """Smallest and largest value (n_b * n_out,) of each game, its ends included.

    ``y`` (n_b * n_out, n_coal) are the drawn values less ``base``, ``ends``
    the values of the empty and the full coalition (n_b, n_out) each.
    """
    empty, full = (np.reshape(e - np.atleast_1d(base)[None, :], -1) for e in ends)
    lo = np.minimum(y.min(axis=1), np.minimum(empty, full))
    hi = np.maximum(y.max(axis=1), np.maximum(empty, full))
    return lo, hi


def _by_group(flat, n_b, n_out):
    # (n_b * n_out, k) -> (n_b, k, n_out)
    return flat.reshape(n_b, n_out, -1).transpose(0, 2, 1)


def _lime(game, X, prediction, dummy, budget, seed, seed_id, p, kernel,
          kernel_width, alpha, errors=False):
    def design(k, rng):
        Z, w, counts = _bernoulli_design(k, budget, p, rng)
        if kernel == "distance":
            # cosine distance between the presence vector and all-ones (as for
            # LIME on images), exponential kernel sqrt(exp(-d**2 / width**2))
            d = 1.0 - np.sqrt(Z.sum(axis=1) / k)
            w = w * np.sqrt(np.exp(-(d**2) / kernel_width**2))
        return Z, w / w.sum(), counts

    def solve(values, Z, w, counts, errors, ends):
        n_b, _, n_out = values.shape
        k = Z.shape[1]
        design_matrix = np.hstack([np.ones((Z.shape[0], 1), dtype=bool), Z])
        y = _rows_first(values - game.expected_value[None, None, :])
        gram = coalition_gram(design_matrix, w)
        gram[np.arange(1, k + 1), np.arange(1, k + 1)] += alpha
        coef, ok = cholesky_solve(gram, coalition_moments(design_matrix, w, y))
        if not ok:
            raise ValueError(
                f"The {Z.shape[0]} distinct coalitions drawn for LIME do not "
                f"determine {k} group coefficients (some group is always present "
                "or always absent, or groups move together); increase n_samples "
                f"(the draws are random: n_samples >= {4 * (k + 1)} rarely fails) "
                "or set method_params={'alpha': ...} > 0 for a ridge fit."
            )
        est = _by_group(coef[:, 1:], n_b, n_out)
        if not errors:
            return est, None
        lo, hi = _value_range(y, ends, game.expected_value)
        ratio = 1.0
        if kernel == "distance" and counts is not None:
            # the largest kernel (1, at every group) over its mean over the draws
            d = 1.0 - np.sqrt(Z.sum(axis=1) / k)
            ratio = budget / (counts @ np.sqrt(np.exp(-(d**2) / kernel_width**2)))
        var = lime_variances(design_matrix, w, counts, budget, gram, coef, y, alpha,
                             lo, hi, ratio, np.tile(game.expected_value, n_b))
        return est, None, _by_group(np.sqrt(var[:, 1:]), n_b, n_out), None

    out = _reduced(
        game, X, prediction, dummy, budget, seed, seed_id, design, solve, errors
    )
    return (out[0], out[2]) if errors else out[0]


def _rise(game, X, prediction, dummy, budget, seed, seed_id, p, errors=False):
    def design(k, rng):
        return _bernoulli_design(k, budget, p, rng)

    def solve(values, Z, w, counts, errors, ends):
        n_b, _, n_out = values.shape
        y = _rows_first(values)
        # S_k = E_M[v(M) M_k] / p  (RISE; Petsiuk et al., BMVC 2018)
        S = coalition_moments(Z, w, y) / p
        mean = coalition_moments(np.ones((Z.shape[0], 1), dtype=bool), w, y)[:, 0]
        est = _by_group(S, n_b, n_out), mean.reshape(n_b, n_out)
        if not errors:
            return est
        if counts is None:
            return est + (np.zeros((n_b, Z.shape[1], n_out)), np.zeros((n_b, n_out)))
        lo, hi = _value_range(y, ends, 0.0)
        var, mean_var = rise_variances(Z, w, budget, y, S, mean, p, lo, hi)
        return est + (_by_group(np.sqrt(var), n_b, n_out),
                      np.sqrt(mean_var).reshape(n_b, n_out))

    out = _reduced(
        game, X, prediction, dummy, budget, seed, seed_id, design, solve, errors
    )
    # a dummy group never changes v(M): its score is the mean E_M[v(M)]
    phi = np.where(dummy[:, :, None], out[1][:, None, :], out[0])
    if not errors:
        return phi
    return phi, np.where(dummy[:, :, None], out[3][:, None, :], out[2])


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
def sampled_attributions(game, X, methods, rng, *, n_samples=None,
                         method_params=None, feature_names=None, errors=None):
    """Attributions of sampled methods for checked X: dict method -> array.

    Each array is (n_rows, K) for one output, else (n_rows, K, n_outputs).
    ``rng`` gives one seed; each method draws from its own stream, seeded by
    that seed and the method's fixed ``seed_id`` in the registry, so a
    method's result depends neither on the other methods requested with it
    nor on the order of the registry. A dict ``errors`` receives the
    standard errors of the coalition methods, arrays of the same shapes
    (see ``_errors``); the estimates are the same with or without it.
    """
    seed = int(rng.randint(np.iinfo(np.int32).max))
    K = game.n_groups
    # budgets that cannot fit in the working memory are refused before any work
    sizes = {"n_background": game.background.shape[0] if game.anchored else 1,
             "n_outputs": game.n_outputs}
    for method in methods:
        spec = get_method(method)
        if spec.uses_budget:
            resolve_budget(spec.name, n_samples, K, **sizes)
    prediction = game.predict(X)
    n_out = prediction.shape[1]
    differ = dummy = None
    out = {}
    shared = _shared(game, X, prediction, methods, seed, n_samples, method_params,
                     sizes, errors)
    for method in methods:
        spec = get_method(method)
        if spec.name in shared:
            out[method] = shared[spec.name]
            continue
        params = _own_params(spec.name, method_params)
        if not game.anchored:
            if spec.name == "integrated_gradients":
                raise ValueError(
                    "integrated_gradients moves along straight paths from the "
                    f"background rows and has no {game.imputation} form; use "
                    "imputer='marginal' or another method."
                )
            # every group in play: the mean game over one stand-in row
            differ = np.ones((X.shape[0], 1, K), dtype=bool)
            dummy = np.zeros((X.shape[0], K), dtype=bool)
        if spec.name in ("kernel_shap", "permutation_shap") and differ is None:
            differ = differing_groups(game, X)
            dummy = ~differ.any(axis=1)
        if dummy is None:
            dummy = dummy_groups(game, X)
        if spec.name == "integrated_gradients":
            scheme = resolve_ig_scheme(game, params["scheme"])
            if scheme == "gradient":
                phi = gradient_integrated_gradients(
                    game, X, n_out, params["n_steps"]
                )
            else:
                phi = integrated_gradients(
                    game, X, prediction, feature_names=feature_names,
                    n_steps=params["n_steps"], scheme=scheme,
                )
            # a dummy's columns never move along the paths
            phi = zero_dummy_groups(phi, dummy)
        else:
            budget = resolve_budget(spec.name, n_samples, K, **sizes)
            anchored = spec.name in ("kernel_shap", "permutation_shap")
            given = differ if anchored else dummy
            phi = _ESTIMATORS[spec.name](
                game, X, prediction, given, budget, seed, spec.seed_id, **params,
                errors=errors is not None,
            )
            if errors is not None:
                phi, se = phi
                errors[method] = (
                    se[:, :, 0].copy() if n_out == 1 else np.ascontiguousarray(se)
                )
        out[method] = phi[:, :, 0].copy() if n_out == 1 else np.ascontiguousarray(phi)
    return out


def _own_params(method, method_params):
    """The options of ``method`` among ``method_params``, checked, with defaults."""
    own = get_method(method).params
    return check_method_params(
        method, {k: v for k, v in (method_params or {}).items() if k in own})


def _shared(game, X, prediction, methods, seed, n_samples, method_params, sizes,
            errors):
    """The methods that one design serves, from it: dict name -> attributions.

    Fills ``errors`` with their standard errors, and those of the difference
    of every two of them under the key (a, b).
    """
    names = list(dict.fromkeys(get_method(m).name for m in methods))
    together = can_share(names, method_params)
    if not together:
        return {}
    K = game.n_groups
    # each method's smallest budget is checked on its own (above)
    budget = max(resolve_budget(m, n_samples, K, check=False) for m in together)
    params = {m: _own_params(m, method_params) for m in together}
    if game.anchored:
        differ = differing_groups(game, X)
    else:
        differ = np.ones((X.shape[0], 1, K), dtype=bool)
    result = shared_attributions(game, X, prediction, differ, budget, seed, together,
                                 params, errors is not None)
    phi, se = result if errors is not None else (result, {})
    n_out = prediction.shape[1]

    def squeeze(a):
        return a[:, :, 0].copy() if n_out == 1 else np.ascontiguousarray(a)

    for key, value in se.items():
        errors[key] = squeeze(value)
    return {m: squeeze(v) for m, v in phi.items()}


#: The coalition estimators of the sampled methods, by canonical name.
_ESTIMATORS = {
    "kernel_shap": _kernel_shap,
    "permutation_shap": _permutation_shap,
    "lime": _lime,
    "rise": _rise,
}
