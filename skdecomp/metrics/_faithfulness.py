"""Faithfulness metrics: how well attributions predict insertion and deletion."""

# SPDX-License-Identifier: BSD-3-Clause

import itertools
import warnings
from math import comb
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import HasMethods, Interval, StrOptions, validate_params
from .._decomposition import Decomposition
from .._methods import shapley_kernel
from .._model import LazyFrames, to_pandas

_COMMON = {
    "explainer": [HasMethods(["decompose"]), None],
    "X": ["array-like", LazyFrames(), None],
    "attributions": ["array-like", None],
    "n_samples": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "decomposition": [Decomposition, None],
}

#: The constraints of the metrics with an inclusion probability ``p``.
_COMMON_P = {**_COMMON, "p": [Interval(Real, 0, 1, closed="neither")]}


# -- coalition designs --------------------------------------------------------
# Coalitions are boolean membership matrices (n_coalitions, K), for any number
# of groups K; int64 bitmasks (bit k for group k) only index the closed-form
# coalition values of a Decomposition, whose K is small.
def _to_masks(members):
    """int64 bitmasks from a boolean (n_masks, K) membership array (K <= 62)."""
    members = np.asarray(members, dtype=bool)
    bits = np.left_shift(np.int64(1), np.arange(members.shape[1], dtype=np.int64))
    return (members.astype(np.int64) * bits[None, :]).sum(axis=1).astype(np.int64)


def _indicator(masks, K):
    """Boolean (n_masks, K) membership of each group in each bitmask."""
    return ((masks[:, None] >> np.arange(K, dtype=np.int64)[None, :]) & 1).astype(bool)


def _all_coalitions(K, *, first=0, stop=None):
    """The coalitions with bitmasks ``first .. stop - 1`` (all 2**K by default)."""
    stop = (1 << K) if stop is None else stop
    return _indicator(np.arange(first, stop, dtype=np.int64), K)


def _design(kind, K, *, n_samples, rng, p=0.5, size=1):
    """Coalitions and their weights for a coalition distribution pi.

    Returns ``(members, weights)``: a boolean (n_coalitions, K) matrix, one
    coalition per row, for any number of groups K, and weights summing to
    1: the exact support of pi when it has at most ``n_samples`` coalitions
    (in the order of their bitmasks), else ``n_samples`` draws from pi with
    equal weights.

    kind : "singletons" (uniform over one-group coalitions), "size" (uniform
    over coalitions of ``size`` groups), "bernoulli" (each group in S
    independently with probability ``p``; all 2**K coalitions) or "shapley"
    (the Shapley kernel over coalitions with 1 <= |S| <= K - 1).
    """
    if kind == "singletons":
        kind, size = "size", 1
    if kind == "size":
        if comb(K, size) <= n_samples:
            combos = list(itertools.combinations(range(K), size))
            members = np.zeros((len(combos), K), dtype=bool)
            for i, c in enumerate(combos):
                members[i, list(c)] = True
            return members, np.full(len(combos), 1.0 / len(combos))
        members = np.zeros((n_samples, K), dtype=bool)
        for i in range(n_samples):
            members[i, rng.choice(K, size=size, replace=False)] = True
        return members, np.full(n_samples, 1.0 / n_samples)
    if kind == "bernoulli":
        if (1 << K) <= n_samples:
            members = _all_coalitions(K)
            s = members.sum(axis=1)
            w = p**s * (1.0 - p) ** (K - s)
            return members, w / w.sum()
        members = rng.random_sample((n_samples, K)) < p
        return members, np.full(n_samples, 1.0 / n_samples)
    if kind == "shapley":
        if K < 2:
            return np.zeros((0, K), dtype=bool), np.zeros(0)
        if (1 << K) - 2 <= n_samples:
            members = _all_coalitions(K, first=1, stop=(1 << K) - 1)
            w = shapley_kernel(K, members.sum(axis=1))
            return members, w / w.sum()
        sizes = np.arange(1, K)
        size_p = 1.0 / (sizes * (K - sizes))
        drawn = rng.choice(sizes, size=n_samples, p=size_p / size_p.sum())
        members = np.zeros((n_samples, K), dtype=bool)
        for i, s in enumerate(drawn):
            members[i, rng.choice(K, size=int(s), replace=False)] = True
        return members, np.full(n_samples, 1.0 / n_samples)
    raise ValueError(f"Unknown coalition distribution {kind!r}.")  # pragma: no cover


# -- inputs ---------------------------------------------------------------------
def _as_float_array(values, what):
    """``values`` as a float64 array, or a ValueError naming ``what``."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(
            f"{what} must be an array of numbers, one row per explained row and "
            f"one column per group ({first}); give the output of an explainer's "
            "transform or of Decomposition.attributions."
        ) from exc


def _split_errors(a):
    """The values of one attribution entry and what is known of their errors.

    An :class:`~skdecomp.Explanation` gives its values and its
    ``standard_errors``, zeros when these are None (an exact or
    deterministic method has no sampling noise). Any other entry gives
    itself and None: its errors are unknown.
    """
    from .._explanation import Explanation

    if isinstance(a, Explanation):
        values = a.values
        se = a.standard_errors
        return values, np.zeros(np.shape(values)) if se is None else se
    return a, None


class _Problem:
    """Games, prediction and attributions of one metric call.

    With ``with_errors``, the standard errors of the attributions are kept
    when known: given as ``standard_errors``, read from an Explanation, or,
    for ``attributions=None``, from ``explainer.explain`` (instead of
    ``transform``, which gives the same values without them).

    Attributes
    ----------
    K, n_rows, n_outputs : int
    prediction : (n_rows, n_outputs) f(x)
    baseline : (n_rows, n_outputs) E_B f
    phi : (n_rows, K, n_outputs) attributions
    se : (n_rows, K, n_outputs) standard errors of phi, or None when unknown
    """

    def __init__(self, explainer, X, attributions, decomposition, *,
                 standard_errors=None, with_errors=False):
        attributions, se = _split_errors(attributions)
        X = to_pandas(X)  # polars rows are read as pandas (a LazyFrame collected once)
        if decomposition is None and (explainer is None or X is None):
            raise ValueError(
                "Pass a fitted explainer and the rows X, or the exact "
                "decomposition= of the rows to score."
            )
        if decomposition is not None:
            self.dec = decomposition
            self.K = decomposition.n_groups
            self.n_rows = decomposition.n_samples
            self.n_outputs = decomposition.n_outputs
            v = np.asarray(decomposition.coalition_values(), dtype=np.float64)
            self._v = v[:, :, None] if v.ndim == 2 else v
            self.prediction = self._v[:, -1, :]
            self.baseline = self._v[:, 0, :]
            if explainer is not None:
                check_is_fitted(explainer)
                if explainer.n_groups_ != self.K:
                    raise ValueError(
                        f"decomposition has {self.K} groups but the explainer "
                        f"has {explainer.n_groups_}; pass the decomposition of "
                        "the same explainer."
                    )
            if X is not None and len(X) != self.n_rows:
                raise ValueError(
                    f"X has {len(X)} rows but decomposition has {self.n_rows}; "
                    "pass the decomposition of the rows X."
                )
            if attributions is None:
                method = (getattr(explainer, "method_", "shapley")
                          if explainer is not None else "shapley")
                attributions = decomposition.attributions(method)
                se = np.zeros(np.shape(attributions))  # exact
        else:
            check_is_fitted(explainer)
            self.dec = None
            self.game = explainer.game_
            self.X = self.game.check_X(X)
            self.K = self.game.n_groups
            self.prediction = self.game.predict(self.X)
            self.n_rows, self.n_outputs = self.prediction.shape
            self.baseline = np.broadcast_to(self.game.expected_value, self.prediction.shape)
            if attributions is None and with_errors:
                method = explainer.method_
                attributions, se = _split_errors(
                    explainer.explain(X, methods=[method])[method]
                )
            elif attributions is None:
                attributions = explainer.transform(X)
        self.phi = self._check_attributions(attributions)
        if standard_errors is not None:
            se = standard_errors
        self.se = None if se is None else self._check_errors(se)
        self._cache = {}

    def _check_errors(self, se):
        se = _as_float_array(se, "standard_errors")
        if se.ndim == 2 and self.n_outputs == 1:
            se = se[:, :, None]
        if se.shape != self.phi.shape:
            raise ValueError(
                f"standard_errors have shape {se.shape}; expected the shape of "
                "the attributions."
            )
        if not np.all(np.isfinite(se)) or np.any(se < 0):
            raise ValueError("standard_errors must be finite and >= 0.")
        return se

    def efficient(self, rtol=1e-8):
        """(n_rows, n_outputs) whether phi adds up to f(x) - E_B f (to round-off)."""
        gap = self.phi.sum(axis=1) - (self.prediction - self.baseline)
        scale = np.abs(self.phi).sum(axis=1) + np.abs(self.prediction - self.baseline)
        return np.abs(gap) <= rtol * scale + np.finfo(float).tiny

    def _check_attributions(self, phi):
        phi = _as_float_array(phi, "attributions")
        n, K, o = self.n_rows, self.K, self.n_outputs
        if phi.ndim == 2 and o == 1:
            phi = phi[:, :, None]
        if phi.shape != (n, K, o):
            expected = f"({n}, {K})" if o == 1 else f"({n}, {K}, {o})"
            raise ValueError(
                f"attributions have shape {phi.shape}; expected {expected}: one "
                "row per explained row and one column per group (and one slice "
                "per output)."
            )
        if not np.all(np.isfinite(phi)):
            raise ValueError("attributions contain NaN or infinity.")
        return phi

    def values(self, members):
        """v_x(S) for the coalitions ``members`` (n_masks, K): (n_rows, n_masks, n_outputs).

        Each distinct coalition is evaluated once per call and kept for the
        next: the deletion game asks for complements that the insertion
        game may already have.
        """
        members = np.asarray(members, dtype=bool)
        if self.dec is not None:  # closed form: the decomposition's K is small
            return self._v[:, _to_masks(members), :]
        sizes = members.sum(axis=1)
        out = np.empty((self.n_rows, members.shape[0], self.n_outputs))
        out[:, sizes == 0, :] = self.baseline[:, None, :]
        out[:, sizes == self.K, :] = self.prediction[:, None, :]
        inner = np.flatnonzero((sizes > 0) & (sizes < self.K))
        if inner.size == 0:
            return out
        keys = [row.tobytes() for row in np.packbits(members[inner], axis=1)]
        todo = {}  # first position of each coalition not yet evaluated
        for i, key in zip(inner, keys):
            if key not in self._cache and key not in todo:
                todo[key] = i
        if todo:
            vals = self.game.values(
                self.X, members[list(todo.values())], prediction=self.prediction
            )
            for j, key in enumerate(todo):
                self._cache[key] = vals[:, j, :]
        out[:, inner, :] = np.stack([self._cache[key] for key in keys], axis=1)
        return out

    def insertion(self, members):
        return self.values(members) - self.baseline[:, None, :]

    def deletion(self, members):
        return self.prediction[:, None, :] - self.values(~np.asarray(members, dtype=bool))

    def predicted(self, members):
        """phi(S) = sum_{k in S} phi_k: (n_rows, n_masks, n_outputs)."""
        ind = np.asarray(members, dtype=np.float64)
        return np.einsum("sk,nko->nso", ind, self.phi)


def _result(per_row_output):
    scores = per_row_output.mean(axis=-1)
    return Bunch(score=float(scores.mean()), scores=scores)


def _weighted_error(pred, target, weights, fit_intercept=False):
    r = pred - target
    if fit_intercept:
        r = r - np.einsum("s,nso->no", weights, r)[:, None, :]
    return np.einsum("s,nso->no", weights, r**2)


def _weighted_corr(a, b, w):
    """Weighted Pearson correlation over coalitions, per row and output.

    A coalition set on which both sides are constant counts as correlation 1
    and one on which only one side is constant as 0.
    """
    ac = a - np.einsum("s,nso->no", w, a)[:, None, :]
    bc = b - np.einsum("s,nso->no", w, b)[:, None, :]
    va = np.einsum("s,nso->no", w, ac**2)
    vb = np.einsum("s,nso->no", w, bc**2)
    cov = np.einsum("s,nso->no", w, ac * bc)
    scale = np.einsum("s,nso->no", w, a**2) + np.einsum("s,nso->no", w, b**2)
    tiny = 1e-20 * scale + 1e-300
    flat_a, flat_b = va <= tiny, vb <= tiny
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(va * vb)
    r = np.where(flat_a & flat_b, 1.0, np.where(flat_a | flat_b, 0.0, r))
    return np.clip(r, -1.0, 1.0)


# -- faithfulness metrics -------------------------------------------------------
@validate_params(
    {**_COMMON, "n": [Interval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def sensitivity_n(
    explainer,
    X,
    *,
    attributions=None,
    n=1,
    n_samples=1024,
    random_state=None,
    decomposition=None,
):
    """Sensitivity-n unfaithfulness of grouped attributions.

    Per row, the Pearson correlation r over coalitions S of ``n`` groups
    (uniform) between ``phi(S) = sum_{k in S} phi_k`` and the deletion game
    ``w_del(S)``, the drop of the model when the groups of S are replaced by
    background values (Ancona et al., 2018). The score is ``1 - r`` (0 is
    perfect, 2 is anti-correlated). For ``n=1`` occlusion (local PFI) scores
    0 (see :ref:`why_disagree`). When both sides are constant over the
    coalitions r is taken as 1; when only one side is, as 0.

    A correlation needs at least 3 distinct points: over 2 coalitions (for
    example ``n=1`` with 2 groups) r is always -1, 0 or 1, so any
    attribution, even a random one, scores 0 or 2. A row whose coalitions
    give fewer than 3 distinct points ``(phi(S), w_del(S))``, and whose
    two sides are not both constant, therefore scores NaN, with a
    RuntimeWarning that says how many rows; ``score`` is the mean over the
    other rows (NaN when there is none). Use at least 3 groups (and
    ``1 <= n <= n_groups - 1``) to get a score on every row.

    Parameters
    ----------
    explainer : Explainer or None
        A fitted :class:`~skdecomp.Explainer`: model, background and groups.
        May be None when ``decomposition`` and ``attributions`` are given.
    X : array-like of shape (n_samples, n_features) or None
        Explained rows.
    attributions : array-like of shape (n_samples, n_groups[, n_outputs]), default=None
        Attributions to score; None uses ``explainer.transform(X)``.
    n : int, default=1
        Coalition size, at most the number of groups.
    n_samples : int, default=1024
        All coalitions of size n are used when there are at most that many;
        otherwise that many are drawn.
    random_state : int, RandomState instance or None, default=None
        Draws the coalitions when they are sampled.
    decomposition : Decomposition or None, default=None
        Exact decomposition of the rows X; the games then come in closed
        form from its components (no model call).

    Returns
    -------
    result : Bunch
        ``score`` (mean over the rows that are not NaN) and ``scores`` (one
        per row, NaN when the row has fewer than 3 distinct points; with
        several outputs, the mean over outputs).

    References
    ----------
    M. Ancona, E. Ceolini, C. Öztireli and M. Gross. "Towards better
    understanding of gradient-based attribution methods for deep neural
    networks". ICLR 2018.
    """
    prob = _Problem(explainer, X, attributions, decomposition)
    if n > prob.K:
        raise ValueError(f"n={n} is larger than the number of groups ({prob.K}).")
    rng = check_random_state(random_state)
    members, w = _design("size", prob.K, n_samples=n_samples, rng=rng, size=n)
    pred, target = prob.predicted(members), prob.deletion(members)
    r = _weighted_corr(pred, target, w)
    few = _too_few_points(pred, target, w)
    if np.any(few):
        n_few = int(np.any(few, axis=-1).sum())
        warnings.warn(
            f"sensitivity_n: {n_few} of {prob.n_rows} rows have fewer than 3 "
            f"distinct coalition points (n={n} over {prob.K} groups gives "
            f"{np.unique(members, axis=0).shape[0]} distinct coalitions); a correlation over "
            "2 points is always -1, 0 or 1, so these rows score NaN. Use at "
            "least 3 groups and 1 <= n <= n_groups - 1.",
            RuntimeWarning,
            stacklevel=2,
        )
    scores = np.where(few, np.nan, 1.0 - r).mean(axis=-1)
    valid = scores[~np.isnan(scores)]
    score = float(valid.mean()) if valid.size else float("nan")
    return Bunch(score=score, scores=scores)


def _too_few_points(a, b, w, rel_tol=1e-10):
    """Rows and outputs whose coalitions give fewer than 3 distinct points.

    ``a`` and ``b`` are (n_rows, n_masks, n_outputs); only coalitions of
    positive weight count, and points closer than ``rel_tol`` times the
    scale of the values are the same. Rows on which both sides are
    constant (one point) are left to the convention of
    :func:`_weighted_corr`.
    """
    keep = np.asarray(w) > 0
    a, b = a[:, keep, :], b[:, keep, :]
    n_rows, _, n_out = a.shape
    out = np.zeros((n_rows, n_out), dtype=bool)
    for i in range(n_rows):
        for o in range(n_out):
            pts = np.stack([a[i, :, o], b[i, :, o]], axis=1)
            scale = max(float(np.max(np.abs(pts), initial=0.0)), np.finfo(float).tiny)
            n_distinct = np.unique(np.round(pts / (rel_tol * scale)), axis=0).shape[0]
            out[i, o] = n_distinct == 2
    return out


def _noise_floor(prob, members, w):
    """Expected error of the attributions' noise on the coalitions ``members``.

    ``sum_s w_s Var(sum_{k in S_s} e_k)`` per row and output, with the
    errors uncorrelated, or summing to 0 where the attributions are
    efficient (see :func:`infidelity`); None when the errors are unknown.
    """
    if prob.se is None:
        return None
    var = prob.se**2
    ind = np.asarray(members, dtype=np.float64)
    pi = w @ ind  # share of the weight of the coalitions holding group k
    floor = np.einsum("k,nko->no", pi, var)
    if prob.K >= 2:
        sizes = ind.sum(axis=1)
        # mean over pairs of groups k != l of the share holding both
        pi_pair = float(w @ (sizes * (sizes - 1))) / (prob.K * (prob.K - 1))
        correlated = np.einsum("k,nko->no", pi - pi_pair, var)
        floor = np.where(prob.efficient(), np.clip(correlated, 0.0, None), floor)
    return floor


@validate_params(
    {**_COMMON_P, "standard_errors": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def infidelity(
    explainer,
    X,
    *,
    attributions=None,
    p=0.5,
    n_samples=1024,
    random_state=None,
    decomposition=None,
    standard_errors=None,
):
    """Infidelity of grouped attributions under group-removal perturbations.

    Yeh et al. (2019) with perturbations that replace a random set S of
    groups by background values, each group independently with probability
    ``p``:

        INFD(phi) = E_x E_S[(phi(S) - w_del(S))**2]

    With a single background row b this is
    ``E_S[(I^T phi - (f(x) - f(x - I)))**2]`` for ``I = (x - b) * 1_{G_S}``.
    In squared output units; 0 is perfect.

    **Noise floor.** A sampled estimate ``phi + e`` (``kernel_shap``,
    ``permutation_shap``, ``lime``, ``rise``) scores worse on average than
    its expectation phi through its noise alone: for errors e of mean 0,
    independent of the coalitions, the expected score is
    ``INFD(phi) + noise_floor``, where per row, over the coalitions S_s and
    weights w_s that the metric uses::

        noise_floor = sum_s w_s Var(sum_{k in S_s} e_k)
                    = sum_k pi_k se_k**2 + sum_{k != l} pi_kl cov(e_k, e_l)

    with ``pi_k = sum_s w_s [k in S_s]`` and ``pi_kl = sum_s w_s [k, l in
    S_s]``. Standard errors give the variances but not the covariances,
    so two cases are told apart:

    - attributions that add up to ``f(x) - E_B f`` on the row (to
      round-off), as KernelSHAP and permutation SHAP estimates do at every
      draw: their errors sum to 0, so ``sum_{l != k} cov(e_k, e_l) =
      -se_k**2``; with ``pi_kl`` replaced by its mean over pairs,
      ``pi_2 = sum_s w_s |S_s| (|S_s| - 1) / (K (K - 1))``, the floor is
      ``sum_k (pi_k - pi_2) se_k**2`` (clipped at 0);
    - other attributions (LIME, RISE): errors taken as uncorrelated across
      groups, ``sum_k pi_k se_k**2``, which understates the floor when
      they are positively correlated (RISE's groups share masks).

    When all 2**K coalitions are enumerated, ``pi_k = p`` and ``pi_2 =
    p**2``: the floor is ``p (1 - p) sum_k se_k**2`` for efficient
    estimates (exact, given the standard errors) and ``p sum_k se_k**2``
    for the others. The floor is only as good as the standard errors (see
    :ref:`standard errors <standard_errors>`). One estimate's ``score`` is a single draw;
    ``score - noise_floor`` estimates the infidelity of its expectation.

    Parameters
    ----------
    explainer : Explainer or None
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (n_samples, n_features) or None
        Explained rows.
    attributions : array-like of shape (n_samples, n_groups[, n_outputs]) \
            or Explanation, default=None
        Attributions to score; an :class:`~skdecomp.Explanation` brings its
        ``standard_errors`` (None: exact). None scores the explainer's
        ``method`` at X, as ``explainer.transform(X)`` gives it, with the
        standard errors of a sampled method.
    p : float in (0, 1), default=0.5
        Probability that a group is removed.
    n_samples : int, default=1024
        All 2**K coalitions are enumerated when 2**K <= n_samples; otherwise
        that many are drawn.
    random_state : int, RandomState instance or None, default=None
        Draws the coalitions when they are sampled.
    decomposition : Decomposition or None, default=None
        Exact decomposition of the rows X (closed form, no model call).
    standard_errors : array-like of the shape of ``attributions``, default=None
        Standard errors of the attributions, for plain arrays; given, they
        replace those of an Explanation.

    Returns
    -------
    result : Bunch
        ``score`` and per-row ``scores``; ``noise_floor`` and per-row
        ``noise_floors`` (mean over outputs, as ``scores``): the expected
        part of the score due to the attributions' noise, 0 for exact
        attributions; ``excess = score - noise_floor``, which can be
        negative (one draw scoring better than the average draw). The three
        are None when the standard errors are unknown (plain arrays without
        ``standard_errors``).

    References
    ----------
    C.-K. Yeh, C.-Y. Hsieh, A. S. Suggala, D. I. Inouye and P. Ravikumar.
    "On the (in)fidelity and sensitivity of explanations". NeurIPS 2019.
    """
    prob = _Problem(explainer, X, attributions, decomposition,
                    standard_errors=standard_errors, with_errors=True)
    rng = check_random_state(random_state)
    members, w = _design("bernoulli", prob.K, n_samples=n_samples, rng=rng, p=p)
    result = _result(_weighted_error(prob.predicted(members), prob.deletion(members), w))
    floor = _noise_floor(prob, members, w)
    if floor is None:
        result.update(noise_floor=None, noise_floors=None, excess=None)
    else:
        floors = floor.mean(axis=-1)
        noise_floor = float(floors.mean())
        result.update(noise_floor=noise_floor, noise_floors=floors,
                      excess=result.score - noise_floor)
    return result


_GAME_CONSTRAINTS = {
    **_COMMON_P,
    "coalitions": [StrOptions({"singletons", "bernoulli", "shapley"})],
    "fit_intercept": ["boolean"],
}


_GAME_DOC = """
    Parameters
    ----------
    explainer : Explainer or None
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (n_samples, n_features) or None
        Explained rows.
    attributions : array-like of shape (n_samples, n_groups[, n_outputs]), default=None
        Attributions to score; None uses ``explainer.transform(X)``.
    coalitions : {{"singletons", "bernoulli", "shapley"}}, default="{default}"
        The weights pi over coalitions: uniform over single groups; each
        group in S independently with probability ``p``; or the Shapley
        kernel over coalitions with 1 <= |S| <= K - 1.
    p : float in (0, 1), default=0.5
        Inclusion probability for ``coalitions="bernoulli"``.
    fit_intercept : bool, default=False
        Measure the error after the best constant shift of ``phi(S)``
        (the weighted variance of the residual), as in a regression with
        an intercept.
    n_samples : int, default=1024
        The support of pi is enumerated with exact weights when it has at
        most that many coalitions; otherwise that many are drawn from pi.
    random_state : int, RandomState instance or None, default=None
        Draws the coalitions when they are sampled.
    decomposition : Decomposition or None, default=None
        Exact decomposition of the rows X (closed form, no model call).

    Returns
    -------
    result : Bunch
        ``score`` and per-row ``scores`` (squared output units, 0 is
        perfect; with several outputs, the mean over outputs).
"""


def _game_metric(game, summary):
    """The metric ``{game}_error``: attributions scored on one game.

    The insertion and deletion metrics share their signature, constraints
    and parameter documentation; ``summary`` heads the docstring.
    """

    def metric(
        explainer,
        X,
        *,
        attributions=None,
        coalitions="singletons",
        p=0.5,
        fit_intercept=False,
        n_samples=1024,
        random_state=None,
        decomposition=None,
    ):
        prob = _Problem(explainer, X, attributions, decomposition)
        rng = check_random_state(random_state)
        members, w = _design(coalitions, prob.K, n_samples=n_samples, rng=rng, p=p)
        if members.shape[0] == 0:
            return _result(np.zeros((prob.n_rows, prob.n_outputs)))
        target = (prob.insertion(members) if game == "insertion"
                  else prob.deletion(members))
        pred = prob.predicted(members)
        return _result(_weighted_error(pred, target, w, fit_intercept))

    metric.__name__ = metric.__qualname__ = f"{game}_error"
    metric.__doc__ = summary + _GAME_DOC.format(default="singletons")
    return validate_params(_GAME_CONSTRAINTS, prefer_skip_nested_validation=True)(
        metric
    )


insertion_error = _game_metric(
    "insertion",
    """Weighted L2 error of attributions on the insertion game.

    ``UF_ins(phi) = E_x E_{S~pi}[(phi(S) - w_ins(S))**2]`` with
    ``w_ins(S) = v_x(S) - v_x({})`` (see :ref:`why_disagree`). Its
    least-squares optimum is ArchAttribute (Tsang et al., NeurIPS 2020) /
    local PDP for single groups, and the p-weighted Banzhaf value for
    ``"bernoulli"`` with ``fit_intercept=True`` (LIME with binary group
    features; Ribeiro et al., KDD 2016).
    """,
)

deletion_error = _game_metric(
    "deletion",
    """Weighted L2 error of attributions on the deletion game.

    ``UF_del(phi) = E_x E_{S~pi}[(phi(S) - w_del(S))**2]`` with
    ``w_del(S) = v_x(all) - v_x(all minus S)`` (see :ref:`why_disagree`). Its
    least-squares optimum is occlusion / local PFI for single groups.
    """,
)


@validate_params(_COMMON, prefer_skip_nested_validation=True)
def shapley_weighted_faithfulness(
    explainer,
    X,
    *,
    attributions=None,
    n_samples=1024,
    random_state=None,
    decomposition=None,
):
    """Shapley-weighted faithfulness (SWF) error of grouped attributions.

    With ``e = sum_k phi_k - w_ins(all)`` the efficiency gap and pi the
    Shapley kernel ``(K - 1) / (C(K, |S|) |S| (K - |S|))`` over coalitions
    with 1 <= |S| <= K - 1,

        SWF(phi) = E_x[ E_{S~pi}[(phi(S) - w_ins(S) - |S| e / K)**2] + e**2 ].

    The first term is the KernelSHAP objective at the efficient projection
    ``phi - e / K`` of phi, so the unique minimiser is the group Shapley
    value (Charnes et al., 1988; Lundberg & Lee, 2017). This formula is our
    reading of the Shapley-weighted faithfulness of the AGREED paper; 0 is
    perfect.

    Parameters
    ----------
    explainer : Explainer or None
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (n_samples, n_features) or None
        Explained rows.
    attributions : array-like of shape (n_samples, n_groups[, n_outputs]), default=None
        Attributions to score; None uses ``explainer.transform(X)``.
    n_samples : int, default=1024
        The 2**K - 2 coalitions are enumerated when there are at most that
        many; otherwise that many are drawn from the kernel.
    random_state : int, RandomState instance or None, default=None
        Draws the coalitions when they are sampled.
    decomposition : Decomposition or None, default=None
        Exact decomposition of the rows X (closed form, no model call).

    Returns
    -------
    result : Bunch
        ``score`` and per-row ``scores``.

    References
    ----------
    S. M. Lundberg and S.-I. Lee. "A unified approach to interpreting model
    predictions". NeurIPS 2017.

    "Tackling the XAI Disagreement Problem with Adaptive Feature Grouping".
    ICLR 2026.
    """
    prob = _Problem(explainer, X, attributions, decomposition)
    rng = check_random_state(random_state)
    K = prob.K
    gap = prob.phi.sum(axis=1) - (prob.prediction - prob.baseline)
    per = gap**2
    members, w = _design("shapley", K, n_samples=n_samples, rng=rng)
    if members.shape[0]:
        sizes = members.sum(axis=1).astype(np.float64)
        pred = prob.predicted(members) - sizes[None, :, None] / K * gap[:, None, :]
        per = per + _weighted_error(pred, prob.insertion(members), w)
    return _result(per)


@validate_params(_COMMON_P, prefer_skip_nested_validation=True)
def faithfulness_correlation(
    explainer,
    X,
    *,
    attributions=None,
    p=0.5,
    n_samples=1024,
    random_state=None,
    decomposition=None,
):
    """Faithfulness-correlation unfaithfulness of grouped attributions.

    Per row, the Pearson correlation r between ``phi(S)`` and the deletion
    game ``w_del(S)`` over random coalitions S, each group removed
    independently with probability ``p`` (Bhatt et al., 2020, with random
    subset sizes). The score is ``1 - r``; 0 is perfect.
    Degenerate rows follow :func:`sensitivity_n`.

    Parameters
    ----------
    explainer : Explainer or None
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (n_samples, n_features) or None
        Explained rows.
    attributions : array-like of shape (n_samples, n_groups[, n_outputs]), default=None
        Attributions to score; None uses ``explainer.transform(X)``.
    p : float in (0, 1), default=0.5
        Probability that a group is removed.
    n_samples : int, default=1024
        All 2**K coalitions (weighted) when 2**K <= n_samples; otherwise
        that many are drawn.
    random_state : int, RandomState instance or None, default=None
        Draws the coalitions when they are sampled.
    decomposition : Decomposition or None, default=None
        Exact decomposition of the rows X (closed form, no model call).

    Returns
    -------
    result : Bunch
        ``score`` and per-row ``scores``.

    References
    ----------
    U. Bhatt, A. Weller and J. M. F. Moura. "Evaluating and aggregating
    feature-based model explanations". IJCAI 2020.
    """
    prob = _Problem(explainer, X, attributions, decomposition)
    rng = check_random_state(random_state)
    members, w = _design("bernoulli", prob.K, n_samples=n_samples, rng=rng, p=p)
    r = _weighted_corr(prob.predicted(members), prob.deletion(members), w)
    return _result(1.0 - r)


#: Faithfulness metrics by name, for :func:`metric_disagreement`.
METRICS = {
    "sensitivity_n": sensitivity_n,
    "infidelity": infidelity,
    "insertion_error": insertion_error,
    "deletion_error": deletion_error,
    "shapley_weighted_faithfulness": shapley_weighted_faithfulness,
    "faithfulness_correlation": faithfulness_correlation,
}
