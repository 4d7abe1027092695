"""Global grouped explanations and interaction statistics.

Grouped versions of scikit-learn's inspection tools (permutation importance,
partial dependence), global importances from a decomposition (see the user
guide, :ref:`explainers_as_weights`), and interaction statistics computed
from anchored N x N matrices (see :ref:`agreed`).

Anchored matrices. For rows x^1..x^N used both as explained points and as
background, group k has the N x N matrix

    G_k[n, m] = f(x^n_{G_k}, x^m_{-G_k}) - f(x^m),

whose diagonal is 0 (annihilation). The row mean is the local PDP effect of
group k at x^n and the column mean is minus its local PFI effect at x^m, so
one matrix per group gives PDP, PFI and their gap, the interaction potential
Psi_k = mean_n (row_n + col_n)**2 of the AGREED loss.

Rows X may be a numpy array, a pandas DataFrame or a polars DataFrame (text
columns included), or a polars LazyFrame, which is collected once per call
(collect it yourself to reuse it). A model fitted on polars rows is called
with polars rows of the same column types.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numbers
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.metrics import check_scoring
from sklearn.utils import Bunch, check_array, check_random_state, get_tags
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.random import sample_without_replacement
from sklearn.utils.validation import check_is_fitted

from ._compat import HasMethods, Interval, StrOptions, validate_params
from ._decomposition import Decomposition
from ._game import AnchoredStatistics, CoalitionGame
from ._conditional import (
    conditional_dependence,
    conditional_scores,
    fit_sampler,
    weighted_score,
)
from ._partition import _column_position, group_labels, resolve_groups
from ._model import LazyFrames, as_model, read_frame, resolve_response, to_pandas
from ._sources import disagreement_sources

__all__ = [
    "agreed_loss",
    "cost_of_exclusion",
    "disagreement_sources",
    "h_statistic",
    "importance",
    "interaction_matrix",
    "partial_dependence",
    "permutation_importance",
]

# -- anchored N x N statistics ------------------------------------------------------
def _anchored_statistics(explainer_or_response, X, groups=None):
    """Anchored statistics on the rows of X (B = D = X) and the group columns.

    Returns
    -------
    stats : AnchoredStatistics
    groups : list of ndarray of int
    names : list of str
    """
    src = explainer_or_response
    if hasattr(src, "decompose"):
        check_is_fitted(src)
        game = src.game_
        Xv = game.check_X(src.background_ if X is None else to_pandas(X))
    elif callable(src):
        if X is None:
            raise ValueError("X is required when a response function is given.")
        X, container = read_frame(X)
        feature_names = None
        if isinstance(X, pd.DataFrame):
            Xv = X
            feature_names = [str(c) for c in X.columns]
        else:
            Xv = np.asarray(X)
            if Xv.ndim != 2:
                raise ValueError(f"X must be 2-D, got shape {Xv.shape}.")
        positions, names = resolve_groups(groups, Xv.shape[1], feature_names)
        model = as_model(src)
        response, _ = resolve_response(model, "auto", None, Xv[:1] if not isinstance(
            Xv, pd.DataFrame) else Xv.iloc[:1], container=container)
        game = CoalitionGame(
            response, Xv, group_labels(positions, Xv.shape[1]), group_names=names
        )
    else:
        raise TypeError(
            "Expected a fitted Explainer or a response function f(X) -> "
            f"array, got {type(src).__name__}."
        )
    if Xv.shape[0] < 2:
        raise ValueError(
            f"Anchored statistics need at least 2 rows in X, got {Xv.shape[0]}."
        )
    stats = AnchoredStatistics(game, Xv, what="X")
    cols = [np.flatnonzero(game.labels == k) for k in range(game.n_groups)]
    return stats, cols, list(game.group_names)


def _anchored_effects(explainer_or_response, X=None, *, groups=None, masks=None):
    """Anchored main-effect matrices on the rows of X.

    ``G[k, n, m, o] = f(x^n_{G_S}, x^m_{-G_S})[o] - f(x^m)[o]`` for every
    coalition S (by default each single group k), with foreground =
    background = the rows of X and the diagonal set to exactly 0
    (annihilation). The row mean ``G[k].mean(axis=1)`` is the local PDP
    effect of S at x^n and the column mean ``G[k].mean(axis=0)`` is minus the
    local PFI effect at x^m; for a pair S = {i, j},
    ``G_S - G_i - G_j`` is the pairwise interaction matrix used by
    :func:`interaction_matrix`.

    Parameters
    ----------
    explainer_or_response : Explainer or callable
        A fitted Explainer (its model, response and groups), or a function
        ``f(X) -> array`` of shape (n,) or (n, n_outputs).
    X : array-like or DataFrame of shape (N, n_features) or None
        The rows x^1..x^N. None uses the explainer's background.
    groups : list of lists or dict, default=None
        Groups, when a response function is given (None: one per column).
    masks : array-like of int or None
        Coalitions as bitmasks; None gives every single group.

    Returns
    -------
    G : ndarray of shape (n_masks, N, N, n_outputs)
    f : ndarray of shape (N, n_outputs)
        f(x^m) at every row.
    """
    stats, cols, _ = _anchored_statistics(explainer_or_response, X, groups)
    if masks is None:
        masks = np.left_shift(np.int64(1), np.arange(len(cols), dtype=np.int64))
    G = stats.matrices(np.asarray(masks, dtype=np.int64))
    return G, stats.anchor_values


def _singles_and_pairs(stats, cols, pairwise):
    means = stats.group_stats(cols)
    out = Bunch(rows=means[0], cols=means[1], stats=means)
    if pairwise and len(cols) >= 2:
        pairs, pure, full, joint = stats.pair_strengths(cols, means[0], means[1])
        out.update(pairs=pairs, pure=pure, full=full, joint=joint)
    return out


def _pair_matrix(K, pairs, values):
    M = np.zeros((K, K))
    if pairs is not None and len(pairs):
        M[pairs[:, 0], pairs[:, 1]] = values
        M[pairs[:, 1], pairs[:, 0]] = values
    return M


def _pair_h2(st):
    """Friedman's pairwise H2 = E[F_jk**2] / E[PD_jk**2] (0 when PD_jk is 0)."""
    if "pairs" not in st:
        return np.zeros(0)
    safe = np.where(st.joint > 0, st.joint, 1.0)
    return np.where(st.joint > 0, st.pure / safe, 0.0)


_ANCHORED_CONSTRAINTS = {
    "explainer": [HasMethods(["decompose"])],
    "X": ["array-like", LazyFrames(), None],
}


@validate_params(
    {**_ANCHORED_CONSTRAINTS, "per_group": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def agreed_loss(explainer, X=None, *, per_group=False):
    """AGREED partition loss: the PDP-vs-PFI disagreement of the groups.

    ``L = sum_k E_x[(phi^PDP_k(x) - phi^PFI_k(x))**2] = sum_k Psi_k``
    (see :ref:`agreed`), with the rows of X as both explained points and
    background. Computed from the anchored matrices by the row/column-mean
    identity ``Psi_k = mean_n (G_k.mean(1)[n] + G_k.mean(0)[n])**2``
    with K N**2 model calls. It is 0 when the model is
    groupwise additive. With several outputs the squared gaps are summed
    over outputs.

    Parameters
    ----------
    explainer : Explainer
        A fitted :class:`~skdecomp.Explainer` (model and groups).
    X : array-like of shape (N, n_features) or None, default=None
        The rows; None uses the explainer's background.
    per_group : bool, default=False
        Return the potentials Psi_k, one per group, instead of their sum.

    Returns
    -------
    loss : float or ndarray of shape (n_groups,)
        The loss L, or the potentials Psi_k when ``per_group`` is True.

    References
    ----------
    "Tackling the XAI Disagreement Problem with Adaptive Feature Grouping".
    ICLR 2026.
    """
    stats, cols, _ = _anchored_statistics(explainer, X)
    psi = stats.potentials(cols)
    return psi if per_group else float(psi.sum())


@validate_params(
    {**_ANCHORED_CONSTRAINTS, "normalize": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def cost_of_exclusion(explainer, X=None, *, normalize=False):
    """Cost of exclusion: the part of the model no group explains alone.

    ``L_true = E_x[(f(x) - E f - sum_k phi^PDP_k(x))**2]
    = E_x[(sum_{|U| >= 2} F_U(x))**2]``, the "true" between-group
    interaction loss (Laberge et al., AISTATS 2024), with the rows of X as both
    explained points and background; the PDP effects are the row means of
    the anchored matrices. 0 iff the model is groupwise additive on X.

    Parameters
    ----------
    explainer : Explainer
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (N, n_features) or None, default=None
        The rows; None uses the explainer's background.
    normalize : bool, default=False
        Divide by the variance of f over X (PyFD's CoE / 100).

    Returns
    -------
    loss : float
        Summed over outputs.

    References
    ----------
    G. Laberge, Y. Pequignot, M. Marchand and F. Khomh. "Tackling the XAI
    Disagreement Problem with Regional Explanations". AISTATS 2024.
    """
    stats, cols, _ = _anchored_statistics(explainer, X)
    st = _singles_and_pairs(stats, cols, pairwise=False)
    f = stats.anchor_values
    centred = f - f.mean(axis=0)
    resid = centred.T - st.rows.sum(axis=0)  # (n_outputs, N)
    loss = float((resid**2).mean(axis=1).sum())
    if len(st.stats) == 4:
        # conditional values: less the squares of the gaps between halves of
        # the draws (their noise; f itself has none)
        loss -= float((st.stats[2].sum(axis=0) ** 2).mean(axis=1).sum())
    if normalize:
        var = float((centred**2).mean(axis=0).sum())
        return loss / var if var > 0 else 0.0
    return loss


@validate_params(
    {**_ANCHORED_CONSTRAINTS, "pairwise": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def h_statistic(explainer, X=None, *, pairwise=True):
    """Compute Friedman's H-statistics of groups from anchored matrices.

    With the rows of X as both explained points and background:

    - per group, ``H2_k = Psi_k / Var f``: the share of the variance of f
      that group k carries only through interactions with other groups
      (``f - PD_k - PD_{-k}``, Friedman & Popescu 2008);
    - per pair, ``H2_jk = E[F_jk**2] / E[PD_jk**2]``: the share of the joint
      partial dependence of groups j and k that is their pure pairwise
      interaction (PD centred).

    Parameters
    ----------
    explainer : Explainer
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (N, n_features) or None, default=None
        The rows; None uses the explainer's background.
    pairwise : bool, default=True
        Also compute the pairwise statistics (K (K - 1) / 2 more anchored
        matrices).

    Returns
    -------
    result : Bunch
        ``group`` (n_groups,) H2_k; ``pairwise`` (n_groups, n_groups) H2_jk
        with a zero diagonal, or None; ``potentials`` (n_groups,) Psi_k;
        ``variance`` Var f; ``group_names``. Outputs are summed.

    References
    ----------
    J. H. Friedman and B. E. Popescu. "Predictive learning via rule
    ensembles". The Annals of Applied Statistics, 2(3), 2008.
    """
    stats, cols, names = _anchored_statistics(explainer, X)
    st = _singles_and_pairs(stats, cols, pairwise=pairwise)
    psi = stats.potentials_from(st.stats)
    var = stats.variance
    group = psi / var if var > 0 else np.zeros_like(psi)
    pw = None
    if pairwise:
        pw = _pair_matrix(len(cols), st.get("pairs"), _pair_h2(st))
    return Bunch(
        group=group,
        pairwise=pw,
        potentials=psi,
        variance=var,
        group_names=names,
    )


@validate_params(
    {**_ANCHORED_CONSTRAINTS, "kind": [StrOptions({"h2", "pure", "full"})]},
    prefer_skip_nested_validation=True,
)
def interaction_matrix(explainer, X=None, *, kind="h2"):
    """Pairwise interaction strengths between groups.

    With the rows of X as both explained points and background and
    ``I_jk = G_{j u k} - G_j - G_k`` the anchored pair interaction matrix:

    - ``"pure"``: ``E[F_jk**2]``, the mean square of the pure pairwise
      component (row means of I_jk);
    - ``"full"``: ``E[(sum_{V contains j, k} F_V)**2]``, every component
      involving both groups (column means of I_jk);
    - ``"h2"``: Friedman's pairwise H2 (see :func:`h_statistic`).

    Parameters
    ----------
    explainer : Explainer
        A fitted :class:`~skdecomp.Explainer`.
    X : array-like of shape (N, n_features) or None, default=None
        The rows; None uses the explainer's background.
    kind : {"h2", "pure", "full"}, default="h2"
        The interaction strength, as listed above.

    Returns
    -------
    matrix : ndarray of shape (n_groups, n_groups)
        Symmetric, zero diagonal; outputs summed.
    """
    stats, cols, _ = _anchored_statistics(explainer, X)
    st = _singles_and_pairs(stats, cols, pairwise=True)
    if "pairs" not in st:
        return np.zeros((len(cols), len(cols)))
    vals = _pair_h2(st) if kind == "h2" else st[kind]
    return _pair_matrix(len(cols), st.pairs, vals)


# -- importances from a decomposition ------------------------------------------------
@validate_params(
    {
        "explainer": [HasMethods(["decompose"]), None],
        "X": ["array-like", LazyFrames(), None],
        "decomposition": [Decomposition, None],
        "squared": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def importance(explainer=None, X=None, *, decomposition=None, squared=False):
    """Global PDP, PFI and SHAP importances of groups from one decomposition.

    ``Phi^E_k = E_x[phi^E_k(x)**2]`` for the local PDP (pure), PFI (full) and
    interventional SHAP effects of group k (see :ref:`explainers_as_weights`;
    Laberge et al., AISTATS 2024). They coincide
    for a group without between-group interactions.

    Parameters
    ----------
    explainer : Explainer or None
        A fitted :class:`~skdecomp.Explainer`; not needed when
        ``decomposition`` is given.
    X : array-like of shape (n_samples, n_features) or None, default=None
        Rows to average over; None uses the explainer's background (B = D).
    decomposition : Decomposition or None, default=None
        A decomposition to use instead of decomposing X.
    squared : bool, default=False
        Return the mean squares; by default their square roots, in output
        units (as PyFD).

    Returns
    -------
    result : Bunch
        ``pdp``, ``pfi``, ``shap``: arrays of shape (n_groups,) or
        (n_groups, n_outputs); ``group_names``.
    """
    if decomposition is None:
        if explainer is None:
            raise ValueError("Pass a fitted explainer or a decomposition.")
        check_is_fitted(explainer)
        decomposition = explainer.decompose(explainer.background_ if X is None else X)

    def importance(method):
        value = (np.asarray(decomposition.attributions(method)) ** 2).mean(axis=0)
        return value if squared else np.sqrt(value)

    return Bunch(
        group_names=list(decomposition.group_names),
        pdp=importance("arch"),
        pfi=importance("occlusion"),
        shap=importance("shapley"),
    )


# -- permutation importance -------------------------------------------------------------
def _resolve_any_groups(groups, X):
    """Groups as (positions, names); groups need not cover every column."""
    n_features = X.shape[1]
    feature_names = None
    if hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
        if not all(isinstance(c, str) for c in X.columns):
            feature_names = None
    if groups is None:
        return resolve_groups(None, n_features, feature_names)
    if isinstance(groups, Mapping):
        items = [(str(k), v) for k, v in groups.items()]
    else:
        items = [(None, v) for v in groups]
    if not items:
        raise ValueError("groups is empty; give at least one group or None.")
    col_names = feature_names or [f"x{j}" for j in range(n_features)]
    positions, names = [], []
    for k, (name, cols) in enumerate(items):
        where = f"group {name!r}" if name is not None else f"group {k}"
        if isinstance(cols, (str, numbers.Integral)):
            cols = [cols]
        try:
            cols = list(cols)
        except TypeError:
            raise TypeError(
                f"{where}: expected a list of columns, got {cols!r}; give column "
                "positions or names."
            ) from None
        if not cols:
            raise ValueError(f"{where} is empty; every group needs a column.")
        pos = np.unique(
            [_column_position(c, n_features, feature_names, where) for c in cols]
        ).astype(np.int64)
        positions.append(pos)
        names.append(name if name is not None else ":".join(col_names[p] for p in pos))
    if len(set(names)) != len(names):
        raise ValueError(f"group names must be unique, got {names}.")
    return positions, names


def _group_permutation_scores(estimator, X, y, sample_weight, cols, random_state,
                              n_repeats, scorer, max_samples, container=None):
    """Scores with the columns ``cols`` permuted jointly, ``n_repeats`` times.

    Follows the random stream of scikit-learn's permutation importance, so a
    one-column group gives the same permutations.
    """
    random_state = check_random_state(random_state)
    if max_samples < X.shape[0]:
        rows = sample_without_replacement(
            X.shape[0], max_samples, random_state=random_state
        )
        X_perm = X.iloc[rows] if hasattr(X, "iloc") else X[rows]
        y = y[rows] if y is not None and not hasattr(y, "iloc") else (
            y.iloc[rows] if y is not None else None
        )
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[rows]
    else:
        X_perm = X.copy()
    scores = []
    shuffling_idx = np.arange(X_perm.shape[0])
    for _ in range(n_repeats):
        random_state.shuffle(shuffling_idx)
        if hasattr(X_perm, "iloc"):
            block = X_perm.iloc[shuffling_idx, cols]
            block.index = X_perm.index
            X_perm[list(X_perm.columns[cols])] = block
        else:
            X_perm[:, cols] = X_perm[shuffling_idx][:, cols]
        scores.append(
            weighted_score(scorer, estimator, X_perm, y, sample_weight, container)
        )
    if isinstance(scores[0], dict):
        return {k: np.array([s[k] for s in scores]) for k in scores[0]}
    return np.array(scores)


def _importances_bunch(baseline, permuted, names):
    importances = baseline - permuted
    return Bunch(
        importances_mean=np.mean(importances, axis=1),
        importances_std=np.std(importances, axis=1),
        importances=importances,
        group_names=names,
    )


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", LazyFrames()],
        "y": ["array-like", None],
        "groups": [list, tuple, dict, None],
        "scoring": [str, callable, list, tuple, dict, None],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "sample_weight": ["array-like", None],
        "max_samples": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="right"),
        ],
        "imputer": [StrOptions({"marginal", "conditional"}), HasMethods(["fit", "sample"])],
    },
    prefer_skip_nested_validation=True,
)
def permutation_importance(
    estimator,
    X,
    y,
    *,
    groups=None,
    scoring=None,
    n_repeats=5,
    n_jobs=None,
    random_state=None,
    sample_weight=None,
    max_samples=1.0,
    imputer="marginal",
):
    """Grouped permutation importance, marginal or conditional.

    The decrease of the score when the columns of a group are permuted
    jointly (the same row shuffle for every column of the group), so the
    group's joint distribution is kept and its link to the other columns
    and the target is broken (grouped PFI). The signature
    and random stream are those of
    :func:`sklearn.inspection.permutation_importance` plus ``groups``: with
    one column per group the results are identical.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator compatible with ``scoring`` (e.g. a Pipeline that
        takes raw DataFrame columns).
    X : ndarray or DataFrame of shape (n_samples, n_features)
        Data on which the importance is computed.
    y : array-like of shape (n_samples,) or None
        Targets (None for unsupervised scorers).
    groups : list of lists, dict or None, default=None
        Column positions or names of each group (a dict names the groups).
        Groups need not cover every column. None gives one group per column.
    scoring : str, callable, list, tuple, dict or None, default=None
        As in scikit-learn; several scorers give a dict of results.
    n_repeats : int, default=5
        Number of permutations of each group.
    n_jobs : int or None, default=None
        Joblib workers over groups.
    random_state : int, RandomState instance or None, default=None
        One int seed is drawn from it and every group uses a fresh
        ``RandomState(seed)``, as in scikit-learn.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights passed to the scorer.
    max_samples : int or float, default=1.0
        Rows drawn (without replacement) for each group's repeats.
    imputer : {"marginal", "conditional"} or sampler, default="marginal"
        ``"marginal"`` permutes the group's columns (PFI). ``"conditional"``
        replaces them in every row by a draw from a conditional sampler,
        fitted on X, given the row's other columns (conditional PFI, Strobl
        et al., BMC Bioinformatics 2008; see :ref:`imputation`): only what
        the group adds to the columns it depends on counts. X must be
        numeric. The sampler is a :class:`~skdecomp.GaussianCopulaSampler`,
        or pass your own (``fit(X)``, ``sample(X, known, n_draws,
        random_state)``), as for :class:`~skdecomp.Explainer`.

    Returns
    -------
    result : Bunch or dict of Bunch
        ``importances_mean`` and ``importances_std`` of shape (n_groups,),
        ``importances`` of shape (n_groups, n_repeats) and ``group_names``.
    """
    # polars rows are read as pandas; a model fitted on them is scored on polars rows
    X, container = read_frame(X)
    if not hasattr(X, "iloc"):
        X = check_array(X, ensure_all_finite="allow-nan", dtype=None)
    positions, names = _resolve_any_groups(groups, X)
    if y is not None:
        y_values = np.asarray(y)
        if y_values.dtype.kind in "fc" and np.isnan(y_values).any():
            n_bad = int(np.isnan(y_values).sum())
            raise ValueError(
                f"y holds NaN in {n_bad} of its {y_values.shape[0]} rows, so the "
                "score of those rows is undefined; drop the rows whose target is "
                "missing (from X and y) first."
            )
    random_state = check_random_state(random_state)
    random_seed = random_state.randint(np.iinfo(np.int32).max + 1)
    if not isinstance(max_samples, numbers.Integral):
        max_samples = int(max_samples * X.shape[0])
    elif max_samples > X.shape[0]:
        raise ValueError(
            f"max_samples={max_samples} is larger than the number of rows of X "
            f"({X.shape[0]}); give at most that many or a fraction in (0, 1]."
        )
    if max_samples < 1:
        raise ValueError("max_samples leaves no row; increase it.")
    fitted_sampler, X_num = fit_sampler(imputer, X, random_seed)
    scorer = check_scoring(estimator, scoring=scoring)
    baseline = weighted_score(scorer, estimator, X, y, sample_weight, container)
    if fitted_sampler is None:
        jobs = (
            delayed(_group_permutation_scores)(
                estimator, X, y, sample_weight, cols, random_seed, n_repeats,
                scorer, max_samples, container,
            )
            for cols in positions
        )
    else:
        jobs = (
            delayed(conditional_scores)(
                estimator, X, X_num, y, sample_weight, cols, random_seed, n_repeats,
                scorer, max_samples, fitted_sampler, container,
            )
            for cols in positions
        )
    scores = Parallel(n_jobs=n_jobs)(jobs)
    if isinstance(baseline, dict):
        return {
            name: _importances_bunch(
                baseline[name], np.array([s[name] for s in scores]), names
            )
            for name in baseline
        }
    return _importances_bunch(baseline, np.array(scores), names)


# -- partial dependence -----------------------------------------------------------------
def _column(X, j):
    return X.iloc[:, j].to_numpy() if hasattr(X, "iloc") else X[:, j]


def _column_values(X, j):
    # the column itself for a DataFrame (keeps a categorical dtype), else an array
    return X.iloc[:, j] if hasattr(X, "iloc") else X[:, j]


def _axis(values, grid_resolution, percentiles):
    """Grid axis of a column: missing values left out, category order kept."""
    from scipy.stats.mstats import mquantiles

    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        present = set(values.dropna().unique())
        axis = np.array([c for c in values.cat.categories if c in present], dtype=object)
        if axis.size == 0:
            raise ValueError(
                "A column of the group has only missing values; it has no grid. "
                "Leave it out of the group or pass grid= explicitly."
            )
        return axis
    values = np.asarray(values)
    values = values[~np.asarray(pd.isna(values), dtype=bool)]
    if values.size == 0:
        raise ValueError(
            "A column of the group has only missing values; it has no grid. "
            "Leave it out of the group or pass grid= explicitly."
        )
    try:
        uniques = np.unique(values)
    except TypeError:  # values of mixed types: in the order they appear
        return np.asarray(pd.unique(values), dtype=object)
    if uniques.shape[0] < grid_resolution or not np.issubdtype(uniques.dtype, np.number):
        return uniques
    lo, hi = mquantiles(values, prob=percentiles, axis=0)
    if np.allclose(lo, hi):  # most rows share one value: the observed values
        return uniques
    return np.linspace(lo, hi, num=grid_resolution, endpoint=True)


def _check_grid(points, X, cols, estimator):
    """Raise a ValueError for grid values a numeric column cannot hold."""
    numeric = [
        i for i, j in enumerate(cols)
        if (pd.api.types.is_numeric_dtype(X.dtypes.iloc[j]) if hasattr(X, "iloc")
            else np.issubdtype(X.dtype, np.number))
    ]
    if not numeric:
        return
    try:
        values = np.asarray(points[:, numeric], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "grid has non-numeric values for numeric columns of the group; give "
            "grid points of numbers like those columns."
        ) from exc
    if not np.all(np.isfinite(values)):
        try:
            allow_nan = get_tags(estimator).input_tags.allow_nan
        except Exception:  # pragma: no cover - non-sklearn objects
            allow_nan = False
        if not allow_nan:
            raise ValueError(
                f"grid contains NaN or infinity, which {type(estimator).__name__} "
                "cannot take; give finite grid points."
            )


def _assign(X_eval, X, cols, point):
    n = X.shape[0]
    if hasattr(X_eval, "iloc"):
        for j, value in zip(cols, point):
            name = X.columns[j]
            dtype = X.dtypes.iloc[j]
            if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
                X_eval[name] = np.full(n, value)
            else:
                X_eval[name] = pd.Series(
                    np.repeat(np.array([value], dtype=object), n), index=X.index
                ).astype(dtype)
    else:
        for j, value in zip(cols, point):
            X_eval[:, j] = value


@validate_params(
    {
        "estimator": [
            HasMethods(["predict"]),
            HasMethods(["predict_proba"]),
            HasMethods(["decision_function"]),
        ],
        "X": ["array-like", LazyFrames()],
        "group": ["array-like", Integral, str],
        "grid": ["array-like", None],
        "grid_resolution": [Interval(Integral, 2, None, closed="left")],
        "percentiles": [tuple],
        "kind": [StrOptions({"average", "individual", "both"})],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function", "log_odds",
                        "margin"})
        ],
        "sample_weight": ["array-like", None],
        "random_state": ["random_state"],
        "imputer": [StrOptions({"marginal", "conditional"}), HasMethods(["fit", "sample"])],
    },
    prefer_skip_nested_validation=True,
)
def partial_dependence(
    estimator,
    X,
    group,
    *,
    grid=None,
    grid_resolution=100,
    percentiles=(0.05, 0.95),
    kind="average",
    response_method="auto",
    sample_weight=None,
    random_state=None,
    imputer="marginal",
):
    """Joint partial dependence (PDP) and ICE of a group of columns, or its M-plot.

    For every grid point g, the columns of the group are set to g in every
    row of X and the model is evaluated (brute force): ``individual`` holds
    these ICE values and ``average`` their (weighted) mean, the PDP
    (Friedman, Annals of Statistics, 2001). For one or two columns the grid
    is the Cartesian product of per-column axes built as in
    ``sklearn.inspection.partial_dependence`` (the unique values when fewer
    than ``grid_resolution``, else ``grid_resolution`` points between the
    ``percentiles``, or the unique values when most rows share one;
    missing values are left out, and the levels of a pandas categorical
    column keep their category order); for a bigger group it is the
    observed joint values without missing ones of
    the group in X (at most ``grid_resolution`` of them, drawn with
    ``random_state`` when there are more).

    Parameters
    ----------
    estimator : estimator
        A fitted model with ``predict``, ``predict_proba`` or
        ``decision_function``.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows over which the ICE curves are averaged.
    group : int, str or array-like
        Column(s) of the group, as positions or names.
    grid : array-like of shape (n_points, n_group_columns) or None
        Explicit grid points; overrides the automatic grid.
    grid_resolution : int, default=100
        Number of points per axis of an automatic grid (or of observed joint
        values for a bigger group).
    percentiles : tuple of two floats, default=(0.05, 0.95)
        Lower and upper percentiles of a column that bound its grid axis.
    kind : {"average", "individual", "both"}, default="average"
        Return the PDP, the ICE values, or both.
    response_method : {"auto", "predict", "predict_proba", "decision_function", "log_odds", "margin"}, default="auto"
        As in :class:`~skdecomp.Explainer`: "auto" is the scale on which
        the model is a sum over trees or terms (``predict_proba`` for
        forests and decision trees, else the decision function or the
        log-odds of a classifier), where scikit-learn's
        ``partial_dependence`` takes ``predict_proba`` first for every
        classifier; for binary classifiers the positive class.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows in the average.
    random_state : int, RandomState instance or None, default=None
        Draws the observed joint values of a big group, and the conditional
        draws.
    imputer : {"marginal", "conditional"} or sampler, default="marginal"
        ``"marginal"``: the PDP above. ``"conditional"``: the conditional
        expectation ``E[f(X) | X_G = g]`` (the M-plot of Apley & Zhu, JRSS-B
        2020), the mean of the model over ``n_samples`` draws of the other
        columns given g from a conditional sampler fitted on X (see
        :ref:`imputation`): a :class:`~skdecomp.GaussianCopulaSampler`, or
        your own (``fit(X)``, ``sample(X, known, n_draws, random_state)``).
        It has no ICE curves (``kind="average"`` only) and no
        ``sample_weight``; X must be numeric.

    Returns
    -------
    result : Bunch
        ``grid`` (n_points, n_group_columns) the grid points; ``grid_values``
        the per-column axes of a Cartesian grid (None otherwise);
        ``average`` of shape (n_outputs, *grid_shape); ``individual`` of
        shape (n_outputs, n_samples, *grid_shape); ``columns`` the group's
        column positions. ``grid_shape`` is the axis lengths of a Cartesian
        grid, else (n_points,).
    """
    # polars rows are read as pandas; a model fitted on them is called with polars rows
    X, container = read_frame(X)
    if not hasattr(X, "iloc"):
        X = check_array(X, ensure_all_finite="allow-nan", dtype=None)
    if not (isinstance(percentiles, tuple) and len(percentiles) == 2
            and all(0 <= p <= 1 for p in percentiles) and percentiles[0] < percentiles[1]):
        raise ValueError(
            "percentiles must be a tuple (low, high) with 0 <= low < high <= 1, "
            f"got {percentiles!r}."
        )
    cols_in = [group] if isinstance(group, (str, numbers.Integral)) else list(group)
    if not cols_in:
        raise ValueError("group is empty; give at least one column.")
    feature_names = list(X.columns) if hasattr(X, "columns") else None
    cols = [_column_position(c, X.shape[1], feature_names, "group") for c in cols_in]
    if len(set(cols)) != len(cols):
        raise ValueError(f"group {cols_in!r} repeats a column.")
    n = X.shape[0]
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (n,):
            raise ValueError(
                f"sample_weight has shape {sample_weight.shape}; expected ({n},)."
            )
        if not np.all(np.isfinite(sample_weight)):
            raise ValueError(
                "sample_weight contains NaN or infinity; give one finite weight "
                "per row of X."
            )
        if sample_weight.sum() == 0:
            raise ValueError(
                "sample_weight sums to 0, so the average over rows is undefined; "
                "give at least one row a positive weight."
            )

    grid_values = None
    if grid is not None:
        points = np.asarray(grid, dtype=object if hasattr(X, "iloc") else None)
        if points.ndim == 1 and len(cols) == 1:
            points = points[:, None]
        if points.ndim != 2 or points.shape[1] != len(cols) or points.shape[0] == 0:
            raise ValueError(
                f"grid has shape {points.shape}; expected (n_points, {len(cols)})."
            )
        _check_grid(points, X, cols, estimator)
        shape = (points.shape[0],)
    elif len(cols) <= 2:
        grid_values = [
            _axis(_column_values(X, j), grid_resolution, percentiles) for j in cols
        ]
        mesh = np.meshgrid(*grid_values, indexing="ij")
        points = np.stack([m.ravel() for m in mesh], axis=1)
        shape = tuple(v.shape[0] for v in grid_values)
    else:
        sub = X.iloc[:, cols] if hasattr(X, "iloc") else pd.DataFrame(X[:, cols])
        uniq = sub.dropna().drop_duplicates().to_numpy()
        if uniq.shape[0] == 0:
            raise ValueError(
                "The group has no row without missing values, so it has no grid; "
                "pass grid= explicitly."
            )
        if uniq.shape[0] > grid_resolution:
            rng = check_random_state(random_state)
            keep = np.sort(rng.choice(uniq.shape[0], grid_resolution, replace=False))
            uniq = uniq[keep]
        points = uniq
        shape = (points.shape[0],)

    response, _ = resolve_response(
        estimator, response_method, None, X.iloc[:1] if hasattr(X, "iloc") else X[:1],
        container=container,
    )
    if not (isinstance(imputer, str) and imputer == "marginal"):
        if kind != "average":
            raise ValueError(
                f"kind={kind!r}: the conditional expectation has no ICE curves, "
                "only its average; use kind='average' or imputer='marginal'."
            )
        if sample_weight is not None:
            raise ValueError(
                "sample_weight weighs the rows of X in the PDP's average, but "
                "imputer='conditional' averages over draws; leave sample_weight=None "
                "or use imputer='marginal'."
            )
        rng = check_random_state(random_state)
        fitted, X_num = fit_sampler(imputer, X, rng)
        average = conditional_dependence(response, fitted, X, X_num, cols, points, rng)
        return Bunch(grid=points, grid_values=grid_values, columns=np.asarray(cols),
                     average=average.T.reshape(-1, *shape))
    if hasattr(X, "iloc"):
        X_eval = X.copy()
    elif np.issubdtype(X.dtype, np.number) and np.issubdtype(points.dtype, np.number):
        X_eval = X.astype(np.result_type(X.dtype, points.dtype))
    else:
        X_eval = X.astype(object)
    preds = []
    for point in points:
        _assign(X_eval, X, cols, point)
        preds.append(response(X_eval))
    preds = np.stack(preds, axis=0)  # (n_points, n_samples, n_outputs)
    average = np.average(preds, axis=1, weights=sample_weight).T.reshape(-1, *shape)
    result = Bunch(grid=points, grid_values=grid_values, columns=np.asarray(cols))
    if kind in ("average", "both"):
        result["average"] = average
    if kind in ("individual", "both"):
        result["individual"] = np.transpose(preds, (2, 1, 0)).reshape(-1, n, *shape)
    return result

