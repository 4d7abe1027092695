"""Where the explainers' disagreement comes from: interactions and dependence."""

# SPDX-License-Identifier: BSD-3-Clause

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.utils import Bunch, check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from ._compat import HasMethods, Interval, StrOptions, validate_params
from ._game import AnchoredStatistics, CoalitionGame, make_imputer
from ._game._imputation import ConditionalImputer
from ._game._kernels import interaction_potentials
from ._model import (
    LazyFrames,
    as_model,
    is_fitted,
    read_frame,
    resolve_response,
    to_pandas,
)
from ._partition import group_labels, resolve_groups

__all__ = ["disagreement_sources"]

#: rows each of the two conditional samplers is fitted on, at least
_MIN_FIT_ROWS = 10
#: a bound of the dependence estimate's error above this share of the output
#: variance draws a warning
_NOISY = 0.1


@validate_params(
    {
        "estimator": [
            HasMethods(["predict"]), HasMethods(["predict_proba"]),
            HasMethods(["decision_function"]), HasMethods(["decompose"]), callable,
        ],
        "X": ["array-like", LazyFrames()],
        "groups": [None, list, tuple, dict],
        "sampler": [None, HasMethods(["fit", "sample"])],
        "max_samples": [Interval(Integral, 2, None, closed="left")],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function",
                        "log_odds", "margin"})
        ],
        "target": "no_validation",
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def disagreement_sources(estimator, X, *, groups=None, sampler=None, max_samples=200,
                         response_method="auto", target=None, random_state=None):
    """How much of the explainers' disagreement comes from interactions and from dependence.

    Explainers disagree for two reasons (Herbinger et al., "GRANITE",
    AISTATS 2026). *Interactions*: under marginal imputation, the PDP and
    PFI effects of a group differ by the interactions between that group
    and the others; their mean squared gap is the AGREED loss (see
    :ref:`agreed`). *Dependence*: when columns are dependent, marginal and
    conditional imputation give different effects of the same group, the
    PDP against its conditional form (the M-plot) and PFI against
    conditional PFI. With ``PDP_k(x) = v_x(G_k) - v({})`` and
    ``PFI_k(x) = f(x) - v_x(-G_k)`` under each imputation,

    * ``interaction_k = mean_x (PDP^m_k(x) - PFI^m_k(x))**2``,
    * ``dependence_k = mean_x [(PDP^m_k - PDP^c_k)**2 + (PFI^m_k - PFI^c_k)**2] / 2``,

    both divided by the variance of the model output on the sample. An
    additive model of dependent columns has no interaction but dependence;
    a model with interactions of independent columns has no dependence.
    The gaps are estimated twice, on two disjoint halves of the rows of
    ``X``: each half fits its own conditional sampler (see
    :class:`~skdecomp.GaussianCopulaSampler`) and serves as the marginal
    game's background, and both are evaluated at the same ``max_samples``
    rows, centred there. The product of the two halves' gaps estimates the
    squared gap without the noise of the fits, of the draws and of the
    finite background, which one sampler fitted on the rows it explains
    would read as dependence (each group's value is clipped at 0, and so
    is the total).

    Parameters
    ----------
    estimator : estimator, callable or Explainer
        A fitted model (an unfitted one is refused), a function
        ``f(X) -> array``, or a fitted :class:`~skdecomp.Explainer`, whose
        model, response and groups are used.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Data. The effects are measured on ``max_samples`` of its rows, which
        are also the background of the marginal game and the rows the
        conditional sampler is fitted on, so that both games share one
        distribution of the data.
    groups : list of lists, dict or None, default=None
        Groups of columns (None: one per column, or the explainer's).
    sampler : object or None, default=None
        The conditional sampler (``fit(X)``, ``sample(X, known, n_draws,
        random_state)``); None uses :class:`~skdecomp.GaussianCopulaSampler`.
    max_samples : int, default=200
        Rows on which the effects are measured; also the draws per
        conditional value.
    response_method : str, default="auto"
        As for :class:`~skdecomp.Explainer`.
    target : class label or int, default=None
        As for :class:`~skdecomp.Explainer`.
    random_state : int, RandomState instance or None, default=None
        Draws the rows and the conditional samples.

    Returns
    -------
    result : Bunch
        ``interaction`` and ``dependence`` (floats, in units of the output
        variance), ``interaction_per_group`` and ``dependence_per_group``
        (arrays of shape (n_groups,)), ``dependence_noise`` (a bound of the
        error of ``dependence``: half the mean squared gap between the two
        halves' estimates bounds the mean square of either one's error, and
        by the Cauchy-Schwarz inequality the error of their product; a
        ``dependence`` below it cannot be told from 0 at this sample size),
        ``group_names``, ``variance`` (of the output on the sample, summed
        over outputs) and ``n_samples``.

    Warns
    -----
    UserWarning
        When ``dependence_noise`` is above a tenth of the variance: too few
        rows to measure dependence.

    Examples
    --------
    >>> import numpy as np
    >>> from skdecomp.inspection import disagreement_sources
    >>> rng = np.random.RandomState(0)
    >>> X = rng.multivariate_normal([0, 0, 0], [[1, .9, 0], [.9, 1, 0], [0, 0, 1]], 500)
    >>> res = disagreement_sources(lambda X: X.sum(axis=1), X, random_state=0)
    >>> bool(res.interaction < 1e-12 and res.dependence > 0.1)
    True
    """
    rng = check_random_state(random_state)
    explainer = estimator if hasattr(estimator, "decompose") else None
    if explainer is not None:
        check_is_fitted(explainer)
        model = explainer.estimator_
        response_method = explainer.response_method_
        target = explainer.target
        if groups is None:
            groups = [list(g) for g in explainer.groups_]
        # a model fitted on polars rows is called with them, as the explainer does
        container = getattr(explainer.game_.response, "container", None)
        X = explainer.game_.check_X(to_pandas(X))
    else:
        # polars rows are read as pandas; a model is called with polars rows
        X, container = read_frame(X)
        model = as_model(estimator)
        if not is_fitted(model):
            raise ValueError(
                f"disagreement_sources explains a fitted model, but "
                f"{type(model).__name__} is not fitted; fit it first."
            )
    if isinstance(X, pd.DataFrame):
        feature_names = [str(c) for c in X.columns]
        Xv = X
    else:
        Xv = check_array(X, dtype=None, ensure_all_finite=False)
        feature_names = None
    positions, names = resolve_groups(groups, Xv.shape[1], feature_names)
    labels = group_labels(positions, Xv.shape[1])
    n = Xv.shape[0]
    if n < 2:
        raise ValueError(f"disagreement_sources needs at least 2 rows, got {n}.")
    idx = np.arange(n) if max_samples >= n else np.sort(
        rng.choice(n, size=max_samples, replace=False)
    )
    sample = Xv.iloc[idx] if isinstance(Xv, pd.DataFrame) else Xv[idx]
    response, _ = resolve_response(
        model, response_method, target,
        sample.iloc[:1] if isinstance(sample, pd.DataFrame) else sample[:1],
        container=container,
    )
    imputer, tree, _ = make_imputer("marginal", "auto", model, response, sample, Xv, rng)
    marginal = AnchoredStatistics(
        CoalitionGame(response, sample, labels, group_names=names, tree=tree),
        sample, what="X",
    )
    # Two halves of the data, each giving an estimate of the gap of every
    # effect: a conditional sampler fitted on its rows (with draws of its own)
    # against the marginal game with its sample rows as background. Their
    # errors (the sampler's fit, its draws, the finite background) are then
    # independent, and the product of the two gaps estimates the squared gap
    # free of them all; one sampler fitted on the rows it explains reads its
    # own noise as dependence.
    if n < 2 * _MIN_FIT_ROWS or min(sample.shape[0] // 2, n // 2) < _MIN_FIT_ROWS:
        raise ValueError(
            f"disagreement_sources needs at least {2 * _MIN_FIT_ROWS} rows (and "
            f"max_samples >= {2 * _MIN_FIT_ROWS}) to tell dependence from the noise "
            f"of a fitted sampler, got {n} rows and max_samples={max_samples}; pass "
            "more rows."
        )
    half = np.zeros(n, dtype=bool)
    half[rng.permutation(n)[: n // 2]] = True
    in_first = half[idx]
    if in_first.all() or not in_first.any():  # every sample row on one side
        in_first = np.arange(sample.shape[0]) % 2 == 0
    n_draws = max(1, sample.shape[0] // 2)
    gaps = []
    every = np.ones(sample.shape[0], dtype=bool)
    means = _background_means(marginal, positions, [in_first, ~in_first, every])
    for (rows_m, cols_m), rows_of in zip(means, (half, ~half)):
        fit_rows = Xv.iloc[np.flatnonzero(rows_of)] if isinstance(Xv, pd.DataFrame) \
            else Xv[rows_of]
        imputer = ConditionalImputer.fit(sampler, fit_rows, n_draws, rng)
        game = CoalitionGame(response, sample, labels, group_names=names,
                             imputer=imputer,
                             background_prediction=marginal.anchor_values)
        rows_c, cols_c = AnchoredStatistics(
            game, sample, what="X", anchor_values=marginal.anchor_values, split=False
        ).group_means(positions)
        # the true gaps have mean 0 over the data's rows (the tower rule); a
        # mean that is not 0 is the fit's shift of the whole distribution
        gaps.append(tuple(g - g.mean(axis=2, keepdims=True)
                          for g in (rows_m - rows_c, cols_m - cols_c)))
    rows_m, cols_m = means[2]
    var = marginal.variance
    scale = 1.0 / var if var > 0 else 0.0
    inter = interaction_potentials(rows_m, cols_m) * scale
    # per row: the PDP and PFI halves' products, summed over outputs
    per_row = 0.5 * ((gaps[0][0] * gaps[1][0]).sum(axis=1)
                     + (gaps[0][1] * gaps[1][1]).sum(axis=1)) * scale
    raw = per_row.mean(axis=1)
    total = float(raw.sum())
    # a bound of the error of the product: by Cauchy-Schwarz, |mean eA eB| is at
    # most the mean square of either half's own error, which half the mean
    # squared gap between the two halves estimates (errors of the fits and the
    # draws, shared by the rows or not)
    noise = float(0.25 * sum(((a - b) ** 2).sum(axis=1).mean(axis=1).sum()
                             for a, b in zip(gaps[0], gaps[1])) * scale)
    dep = np.maximum(raw, 0.0)
    if noise > _NOISY:
        warnings.warn(
            f"The dependence estimate may be off by up to {noise:.0%} of the output "
            f"variance: {sample.shape[0]} rows, and samplers fitted on {n // 2} rows "
            "each, are too few to tell dependence from noise. Pass more rows or raise "
            "max_samples.", UserWarning, stacklevel=2)
    return Bunch(
        interaction=float(inter.sum()),
        dependence=max(total, 0.0),
        dependence_noise=noise,
        interaction_per_group=inter,
        dependence_per_group=dep,
        group_names=list(names),
        variance=float(var),
        n_samples=int(sample.shape[0]),
    )


def _background_means(stats, positions, sides):
    """Row and column means of every group's anchored matrix over some background rows.

    For each boolean mask of ``sides``, the sample rows that serve as
    background; every sample row is still an explained point. One pass over
    the matrices, groups taken in chunks that hold at most the working
    memory.
    """
    from ._config import working_memory_bytes

    N = stats.n_rows
    per_group = stats.n_outputs * N * N * 8
    step = max(1, int(working_memory_bytes() // max(per_group, 1)))
    out = [([], []) for _ in sides]
    for start in range(0, len(positions), step):
        G = stats.group_matrices(positions[start : start + step])  # (k, o, N, N)
        # G[k, o, n, m] = f(x^n on G_k, x^m off it) - f(x^m): the row mean over
        # background rows m is the PDP effect, the column mean over background
        # rows n the PFI effect (up to a constant for a part of the rows)
        for (rows, cols), side in zip(out, sides):
            rows.append(G[:, :, :, side].mean(axis=3))
            cols.append(G[:, :, side, :].mean(axis=2))
    return [(np.concatenate(r), np.concatenate(c)) for r, c in out]
