"""Conditional forms of the inspection tools: conditional PFI and the M-plot.

The columns of a group are drawn given the others from a conditional sampler
fitted on the data (see :ref:`imputation`), instead of being permuted (PFI)
or set to a grid value in every row (PDP).
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state
from sklearn.utils.random import sample_without_replacement

from ._game._imputation import ConditionalImputer, checked_draws, numeric_rows

__all__ = ["conditional_dependence", "conditional_scores", "fit_sampler", "weighted_score"]


def weighted_score(scorer, estimator, X, y, sample_weight, container=None):
    """The scorer's value, passing sample weights only when there are some.

    With a ``container`` (a :class:`~skdecomp._model.FrameContainer`), pandas
    rows are scored as the polars rows the model was fitted on.
    """
    if container is not None and isinstance(X, pd.DataFrame):
        X = container(X)
    if sample_weight is not None:
        return scorer(estimator, X, y, sample_weight=sample_weight)
    return scorer(estimator, X, y)


def conditional_scores(estimator, X, X_num, y, sample_weight, cols, random_state,
                              n_repeats, scorer, max_samples, sampler, container=None):
    """Scores with the columns ``cols`` drawn given the others, ``n_repeats`` times.

    Conditional permutation importance: draw ``r`` of every row replaces the
    group's columns by a draw from the sampler given the row's other columns,
    so the group's link to the target is broken but its dependence on the
    other columns is kept.
    """
    random_state = check_random_state(random_state)
    rows = np.arange(X.shape[0])
    if max_samples < X.shape[0]:
        rows = sample_without_replacement(
            X.shape[0], max_samples, random_state=random_state
        )
        y = None if y is None else (y.iloc[rows] if hasattr(y, "iloc") else y[rows])
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[rows]
    X_perm = X.iloc[rows].copy() if hasattr(X, "iloc") else X[rows].copy()
    known = np.ones((rows.size, X.shape[1]), dtype=bool)
    known[:, cols] = False
    draws = checked_draws(sampler, X_num[rows], known, n_repeats, random_state)
    scores = []
    for r in range(n_repeats):
        if hasattr(X_perm, "iloc"):
            for j in cols:
                name = X_perm.columns[j]
                values = draws[:, r, j]
                try:
                    values = values.astype(X_perm.dtypes.iloc[j])
                except (TypeError, ValueError):
                    pass
                X_perm[name] = values
        else:
            X_perm[:, cols] = draws[:, r, cols]
        scores.append(
            weighted_score(scorer, estimator, X_perm, y, sample_weight, container)
        )
    if isinstance(scores[0], dict):
        return {k: np.array([s[k] for s in scores]) for k in scores[0]}
    return np.array(scores)


def fit_sampler(imputer, X, random_state):
    """The conditional sampler fitted on X, or None for the marginal form.

    The sampler is checked and fitted by ``ConditionalImputer.fit``; draw
    from it with ``checked_draws``, as the conditional game does.
    """
    if isinstance(imputer, str) and imputer == "marginal":
        return None, None
    sampler = None if isinstance(imputer, str) else imputer
    X_num = numeric_rows(X, "X")
    return ConditionalImputer.fit(sampler, X_num, 1, random_state).sampler, X_num


def conditional_dependence(response, sampler, X, X_num, cols, points, rng):
    """E[f(X) | X_cols = point] for every grid point, (n_points, n_outputs)."""
    try:
        points = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "imputer='conditional' draws numbers, but the grid holds values that "
            "are not numbers; give a numeric grid or use imputer='marginal'."
        ) from None
    n, p = X_num.shape
    known = np.zeros((1, p), dtype=bool)
    known[0, cols] = True
    seed = rng.randint(np.iinfo(np.int32).max)
    out = []
    for point in points:
        row = X_num[:1].copy()
        row[0, cols] = point
        draws = checked_draws(sampler, row, known, n, seed)[0]
        if hasattr(X, "iloc"):
            frame = pd.DataFrame(draws, columns=X.columns, index=X.index)
            for j, name in enumerate(X.columns):
                try:
                    frame[name] = frame[name].astype(X.dtypes.iloc[j])
                except (TypeError, ValueError):
                    pass
            draws = frame
        out.append(np.asarray(response(draws), dtype=np.float64).mean(axis=0))
    return np.stack(out, axis=0)
