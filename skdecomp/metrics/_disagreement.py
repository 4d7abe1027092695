"""Disagreement between explanations, and between faithfulness metrics."""

# SPDX-License-Identifier: BSD-3-Clause

import inspect
import itertools
from numbers import Integral

import numpy as np
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import HasMethods, Interval, StrOptions, validate_params
from .._decomposition import Decomposition
from .._methods import comparison_methods
from .._model import LazyFrames, to_pandas
from ._faithfulness import METRICS, _as_float_array, _split_errors, _weighted_corr


# -- disagreement -----------------------------------------------------------------
def _as_named(attributions, what="attributions"):
    if isinstance(attributions, dict):
        names = [str(k) for k in attributions]
        arrays = list(attributions.values())
    elif isinstance(attributions, (list, tuple)):
        names = [str(i) for i in range(len(attributions))]
        arrays = list(attributions)
    else:
        raise TypeError(
            f"{what} must be a list or a dict of attribution arrays, got "
            f"{type(attributions).__name__}."
        )
    return names, arrays


def _check_errors(name, se, shape):
    """Standard errors ``se`` of attributions ``name`` as a (n_samples, n_groups) array."""
    se = _as_float_array(se, f"standard_errors {name!r}")
    if se.ndim == 1:
        se = se[None, :]
    if se.shape != shape:
        raise ValueError(
            f"standard_errors {name!r} have shape {se.shape}; expected {shape}, "
            "the shape of the attributions."
        )
    if not np.all(np.isfinite(se)) or np.any(se < 0):
        raise ValueError(
            f"standard_errors {name!r} must be finite and >= 0."
        )
    return se


def _given_errors(standard_errors, names):
    """The entries of ``standard_errors=``, in the order of ``names``."""
    se_names, entries = _as_named(standard_errors, "standard_errors")
    if isinstance(standard_errors, dict):
        if sorted(se_names) != sorted(names):
            raise ValueError(
                f"standard_errors has keys {se_names} but attributions have "
                f"{names}; give one entry (an array, or None for exact "
                "attributions) per explanation."
            )
        by_name = dict(zip(se_names, entries))
        return [by_name[n] for n in names]
    if len(entries) != len(names):
        raise ValueError(
            f"standard_errors has {len(entries)} entries for {len(names)} "
            "attribution arrays; give one entry (an array, or None for exact "
            "attributions) per explanation."
        )
    return entries


def _as_rows(name, a, expected):
    """Attributions ``a`` as a float (n_samples, n_groups) array.

    A (n_groups,) vector is one row; any other shape raises a ValueError
    whose message ends with ``expected``.
    """
    a = _as_float_array(a, f"attributions {name!r}")
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError(f"attributions {name!r} have shape {a.shape}; {expected}")
    return a


def _top_k(a, k):
    return np.argsort(-np.abs(a), axis=1, kind="stable")[:, :k]


def _spearman_rows(a, b):
    from scipy.stats import rankdata

    ra = rankdata(a, axis=1)
    rb = rankdata(b, axis=1)
    w = np.full(a.shape[1], 1.0 / a.shape[1])
    return _weighted_corr(ra[:, :, None], rb[:, :, None], w)[:, 0]


def _pair_disagreement(a, b, measure, k):
    if measure == "l2":
        return ((a - b) ** 2).mean(axis=1)
    if measure == "pearson":
        w = np.full(a.shape[1], 1.0 / a.shape[1])
        return 1.0 - _weighted_corr(a[:, :, None], b[:, :, None], w)[:, 0]
    if measure == "spearman":
        return 1.0 - _spearman_rows(np.abs(a), np.abs(b))
    ta, tb = _top_k(a, k), _top_k(b, k)
    if measure == "rank_agreement":
        return 1.0 - (ta == tb).mean(axis=1)
    inter = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        common = np.intersect1d(ta[i], tb[i])
        if measure == "feature_agreement":
            inter[i] = common.size
        else:  # sign_agreement
            inter[i] = np.sum(np.sign(a[i, common]) == np.sign(b[i, common]))
    return 1.0 - inter / k


@validate_params(
    {
        "attributions": [list, tuple, dict],
        "measure": [
            StrOptions(
                {
                    "l2",
                    "pearson",
                    "spearman",
                    "feature_agreement",
                    "rank_agreement",
                    "sign_agreement",
                }
            )
        ],
        "top_k": [Interval(Integral, 1, None, closed="left"), None],
        "normalize": [StrOptions({"mean", "sum"})],
        "standard_errors": [list, tuple, dict, None],
    },
    prefer_skip_nested_validation=True,
)
def disagreement(
    attributions, *, measure="l2", top_k=None, normalize="mean", standard_errors=None
):
    """Disagreement between two or more attribution arrays.

    Each measure is 0 when the explanations agree and is averaged over all
    pairs of explanations (see :ref:`why_disagree`):

    - ``"l2"``: mean (or, with ``normalize="sum"``, sum) over groups of
      ``(phi - phi')**2``;
    - ``"pearson"``: ``1 - r`` with r the Pearson correlation across groups;
    - ``"spearman"``: ``1 - rho`` with rho the Spearman correlation of
      ``|phi|`` across groups;
    - ``"feature_agreement"``, ``"rank_agreement"``, ``"sign_agreement"``:
      one minus the agreement of Krishna et al. (2022) at top-k (groups
      ranked by ``|phi|``, ties by group order): the fraction of top-k groups
      shared; of top-k positions holding the same group; of top-k groups
      shared with the same sign.

    Explanations from sampled methods (``kernel_shap``,
    ``permutation_shap``, ``lime``, ``rise``) carry their own noise, and
    part of their ``"l2"`` disagreement is that noise. Given their standard
    errors (read from :class:`~skdecomp.Explanation` objects, or passed as
    ``standard_errors``), the result states the *noise floor*: the
    expected ``"l2"`` disagreement of two explanations that agree in
    expectation and whose errors are independent. For a pair (a, b) and a
    row it is the mean (``normalize="sum"``: the sum) over groups of
    ``se_a**2 + se_b**2``, since ``E[(e_a - e_b)**2] = se_a**2 + se_b**2``
    for independent errors of mean 0, whatever their correlation across
    groups; it is 0 for a pair of exact methods, and averaged over rows
    and pairs exactly as ``score`` is (see :ref:`standard errors <standard_errors>`).
    Sampled methods that :meth:`Explainer.explain <skdecomp.Explainer.explain>`
    estimated from one design of coalitions have correlated errors; their
    Explanation objects carry the standard error of their difference
    (``difference_standard_errors``), and the floor of that pair is the mean
    of its square, ``E[(e_a - e_b)**2]``, instead.

    Parameters
    ----------
    attributions : list or dict of array-like or Explanation
        Explanations of shape (n_samples, n_groups), or (n_groups,) for
        global importances; a dict names them. Entries may be
        :class:`~skdecomp.Explanation` objects of one output (the
        :class:`~skdecomp.Explanations` of :meth:`Explainer.explain
        <skdecomp.Explainer.explain>`, for example), whose
        ``standard_errors`` give the noise floor (None: exact, no noise).
    measure : {"l2", "pearson", "spearman", "feature_agreement", \
            "rank_agreement", "sign_agreement"}, default="l2"
        The disagreement measure, as listed above.
    top_k : int or None, default=None
        The k of the top-k measures; None uses all groups.
    normalize : {"mean", "sum"}, default="mean"
        How ``"l2"`` combines the groups. "mean" (the mean over groups)
        compares explanations of one partition. "sum" (the sum over groups)
        is the choice for comparing partitions of different sizes, e.g.
        along the merges of :class:`~skdecomp.AdaptiveGrouper`: the mean
        divides by the number of groups, which falls as groups merge, so it
        can rise while the summed disagreement falls. The other measures
        are correlations or fractions of the top-k groups and take only
        "mean"; "sum" with them raises a ValueError.
    standard_errors : list or dict of array-like or None, default=None
        Standard errors of the attributions, as ``attributions`` (the same
        keys, or the same length), each of the shape of its attributions;
        an entry None marks exact attributions (standard error 0). Given,
        they replace those of Explanation objects. None reads them from
        the Explanation objects; when an entry is a plain array the noise
        floor is then unknown (None).

    Returns
    -------
    result : Bunch
        ``score`` (mean over rows and pairs), ``scores`` (per row, mean over
        pairs), ``pairwise`` ((n_explanations, n_explanations) mean over rows)
        and ``names``; with ``measure="l2"`` and the standard errors of every
        explanation known, ``noise_floor`` (the expected ``score`` from the
        noise alone), ``noise_floors`` (per row, as ``scores``),
        ``pairwise_noise_floor`` (as ``pairwise``) and ``excess``, equal to
        ``score - noise_floor``: the disagreement beyond noise, an estimate
        that is negative when the measured disagreement falls below the
        floor (explanations that agree up to their noise, or standard
        errors that overstate it). These four are None when a standard
        error is unknown, and for the other measures, which have no closed
        form for the noise: they are correlations or top-k fractions,
        non-linear in the values, whose expected value under noise depends
        on the values themselves and on how the errors are distributed,
        not only on their variances.

    References
    ----------
    S. Krishna, T. Han, A. Gu, S. Wu, S. Jabbari and H. Lakkaraju. "The
    disagreement problem in explainable machine learning: a practitioner's
    perspective". Transactions on Machine Learning Research, 2024 (preprint
    2022).
    """
    names, arrays = _as_named(attributions)
    if len(arrays) < 2:
        raise ValueError(
            f"disagreement needs at least two attribution arrays, got {len(arrays)}."
        )
    originals = list(arrays)
    arrays, errors = map(list, zip(*(_split_errors(a) for a in arrays)))
    if standard_errors is not None:
        errors = [
            np.zeros(np.shape(a)) if se is None else se
            for a, se in zip(arrays, _given_errors(standard_errors, names))
        ]
    mats = []
    for name, a in zip(names, arrays):
        a = _as_rows(
            name,
            a,
            "give 2-D arrays (n_samples, n_groups), selecting one output of "
            "multi-output attributions.",
        )
        if not np.all(np.isfinite(a)):
            raise ValueError(f"attributions {name!r} contain NaN or infinity.")
        mats.append(a)
    if any(m.shape != mats[0].shape for m in mats):
        raise ValueError(
            "attribution arrays must share one shape, got "
            f"{[m.shape for m in mats]}."
        )
    K = mats[0].shape[1]
    if K == 0:
        raise ValueError(
            "attribution arrays have no column; give one column per group."
        )
    if mats[0].shape[0] == 0:
        raise ValueError(
            "attribution arrays have no row, so their disagreement is undefined; "
            "explain at least one row."
        )
    k = K if top_k is None else top_k
    if k > K:
        raise ValueError(f"top_k={k} is larger than the number of groups ({K}).")
    if normalize == "sum" and measure != "l2":
        raise ValueError(
            f"normalize='sum' applies to measure='l2' only; measure={measure!r} "
            "is a correlation or a fraction of groups. Use normalize='mean'."
        )
    known = measure == "l2" and all(se is not None for se in errors)
    if known:
        variances = [
            _check_errors(name, se, m.shape) ** 2
            for name, se, m in zip(names, errors, mats)
        ]
    E = len(mats)
    pairwise = np.zeros((E, E))
    pairwise_floor = np.zeros((E, E)) if known else None
    per_row, floor_rows = [], []
    for i, j in itertools.combinations(range(E), 2):
        d = _pair_disagreement(mats[i], mats[j], measure, k)
        if normalize == "sum":
            d = d * K
        per_row.append(d)
        pairwise[i, j] = pairwise[j, i] = d.mean()
        if known:
            # E[(e_a - e_b)**2]: se_a**2 + se_b**2 for independent errors
            both = None if standard_errors is not None else _difference_errors(
                originals[i], originals[j], mats[i].shape)
            floor = (variances[i] + variances[j] if both is None else both**2).mean(axis=1)
            if normalize == "sum":
                floor = floor * K
            floor_rows.append(floor)
            pairwise_floor[i, j] = pairwise_floor[j, i] = floor.mean()
    scores = np.mean(per_row, axis=0)
    score = float(scores.mean())
    floors = np.mean(floor_rows, axis=0) if known else None
    noise_floor = float(floors.mean()) if known else None
    return Bunch(
        score=score,
        scores=scores,
        pairwise=pairwise,
        names=names,
        noise_floor=noise_floor,
        noise_floors=floors,
        pairwise_noise_floor=pairwise_floor,
        excess=score - noise_floor if known else None,
    )


def _difference_errors(a, b, shape):
    """Standard errors of a - b from one design of coalitions, or None."""
    table = getattr(a, "difference_standard_errors", None)
    other = getattr(b, "method", None)
    if not table or other not in table:
        return None
    se = np.asarray(table[other], dtype=np.float64)
    return se if se.shape == shape else None


def _order_agreement(a, b, tol_a, tol_b):
    """Share of pairs of explainers that two score vectors order the same way."""
    pairs = list(itertools.combinations(range(a.size), 2))
    if not pairs:
        return 1.0

    def sign(x, i, j, tol):
        d = x[i] - x[j]
        return 0 if abs(d) <= tol else int(np.sign(d))

    return float(
        np.mean([sign(a, i, j, tol_a) == sign(b, i, j, tol_b) for i, j in pairs])
    )


@validate_params(
    {
        "explainer": [HasMethods(["decompose"]), None],
        "X": ["array-like", LazyFrames(), None],
        "attributions": [dict, None],
        "metrics": [list, tuple, None],
        "metric_params": [dict, None],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "decomposition": [Decomposition, None],
    },
    prefer_skip_nested_validation=True,
)
def metric_disagreement(
    explainer,
    X,
    *,
    attributions=None,
    metrics=None,
    metric_params=None,
    n_samples=1024,
    random_state=None,
    decomposition=None,
):
    """Measure whether faithfulness metrics rank explainers the same way.

    Scores every explainer with every metric and compares the orders: two
    metrics agree on a pair of explainers when they order it the same way
    (scores within 1e-9 of the metric's largest score, plus 1e-12, tie).
    Between-group interactions make the optimum of each metric a different
    explainer, so the metrics disagree; without them all scores are 0 and
    they agree (see :ref:`why_disagree`).

    Parameters
    ----------
    explainer : Explainer or None
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (n_samples, n_features) or None
        Explained rows.
    attributions : dict of array-like or None, default=None
        Explainer name -> attributions. None compares "arch", "shapley",
        "banzhaf" and "occlusion" from the exact decomposition.
    metrics : list of str or None, default=None
        Names of metrics of this module; None uses all six faithfulness
        metrics.
    metric_params : dict or None, default=None
        Metric name -> dict of extra keyword arguments.
    n_samples : int, default=1024
        Passed to every metric.
    random_state : int, RandomState instance or None, default=None
        One seed, drawn once, is passed to every metric so all explainers
        are scored on the same coalitions.
    decomposition : Decomposition or None, default=None
        Exact decomposition of the rows X. None computes it when the
        explainer has at most 10 groups; otherwise the metrics call the
        model.

    Returns
    -------
    result : Bunch
        ``scores`` (n_metrics, n_explainers); ``ranks`` (1 = most faithful);
        ``best`` (best explainer per metric); ``agreement`` (n_metrics,
        n_metrics) share of explainer pairs ordered alike; ``score``,
        1 minus the mean agreement over pairs of metrics (0: the metrics rank
        the explainers identically); ``metric_names``; ``explainer_names``.
    """
    from scipy.stats import rankdata

    X = to_pandas(X)  # polars rows are read as pandas (a LazyFrame collected once)
    metric_names = list(METRICS) if metrics is None else [str(m) for m in metrics]
    unknown = [m for m in metric_names if m not in METRICS]
    if unknown:
        raise ValueError(f"Unknown metrics {unknown}; choose among {list(METRICS)}.")
    if not metric_names:
        raise ValueError("metrics is empty; give at least one metric name.")
    metric_params = dict(metric_params or {})
    bad = [m for m in metric_params if m not in metric_names]
    if bad:
        raise ValueError(
            f"metric_params names metrics {bad} that are not scored; give "
            f"parameters only for the metrics in {metric_names}."
        )
    # standard_errors go with each explainer's attributions, not with a metric
    shared = {"explainer", "X", "attributions", "n_samples", "random_state",
              "decomposition", "standard_errors"}
    for m, params in metric_params.items():
        if not isinstance(params, dict):
            raise TypeError(
                f"metric_params[{m!r}] must be a dict of keyword arguments of "
                f"{m}, got {type(params).__name__}."
            )
        allowed = set(inspect.signature(METRICS[m]).parameters) - shared
        unknown = sorted(str(k) for k in params if k not in allowed)
        if unknown:
            raise TypeError(
                f"metric_params[{m!r}] has keys {unknown} that {m} does not "
                f"take; allowed keys: {sorted(allowed) or 'none'}."
            )
    if decomposition is None and explainer is not None and X is not None:
        check_is_fitted(explainer)
        if explainer.n_groups_ <= 10:
            decomposition = explainer.decompose(X)
    if attributions is None:
        if decomposition is None:
            raise ValueError(
                "Pass attributions={name: array}, or an explainer with at most "
                "10 groups (or a decomposition) to compare the exact methods."
            )
        attributions = {
            m: decomposition.attributions(m)
            for m in comparison_methods()
        }
    if len(attributions) < 2:
        raise ValueError("metric_disagreement needs at least two explainers.")
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max + 1)
    explainer_names = [str(k) for k in attributions]
    scores = np.zeros((len(metric_names), len(explainer_names)))
    for i, m in enumerate(metric_names):
        for j, phi in enumerate(attributions.values()):
            scores[i, j] = METRICS[m](
                explainer,
                X,
                attributions=phi,
                n_samples=n_samples,
                random_state=seed,
                decomposition=decomposition,
                **metric_params.get(m, {}),
            ).score
    ranks = np.vstack([rankdata(row, method="min") for row in scores]).astype(int)
    best = [explainer_names[int(np.argmin(row))] for row in scores]
    M = len(metric_names)
    agreement = np.ones((M, M))
    tols = 1e-9 * np.abs(scores).max(axis=1) + 1e-12
    for a, b in itertools.combinations(range(M), 2):
        agree = _order_agreement(scores[a], scores[b], tols[a], tols[b])
        agreement[a, b] = agreement[b, a] = agree
    off = agreement[~np.eye(M, dtype=bool)]
    score = float(1.0 - off.mean()) if off.size else 0.0
    return Bunch(
        score=score,
        scores=scores,
        ranks=ranks,
        best=best,
        agreement=agreement,
        metric_names=metric_names,
        explainer_names=explainer_names,
    )
