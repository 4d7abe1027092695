"""The command line's plan: model evaluations, time and memory before any model work.

``skdecomp report`` estimates, from the table's shape, the model and the
methods, how many model evaluations, how much time and how much memory the
report takes, and fits that into a budget by changing only what the user
left to it (rows explained, AGREED grouping, sampled methods, a column screen
for wide tables), or refuses with the option that would make it fit.

The estimates are rough (within a small factor): the point is to tell a
report of seconds from one of hours before the hours start.
"""

# SPDX-License-Identifier: BSD-3-Clause

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ._methods._registry import SAMPLED_METHODS, SINGLE_GROUP_METHODS, default_methods

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MEMORY",
    "Plan",
    "PlanError",
    "check_model_object",
    "plan_report",
    "screen_columns",
]

#: seconds the report may take unless --budget says otherwise
DEFAULT_BUDGET = 300.0
#: megabytes the report may hold at once unless --max-memory says otherwise
DEFAULT_MEMORY = 2048.0
#: the mirror of the report's choices (see skdecomp._report)
MAX_EXACT_GROUPS = 16
EXACT_DEFAULT = tuple(default_methods("exact"))
WIDE_DEFAULT = tuple(default_methods("report_wide"))
#: the sampled methods of the wide default, which a plan falls back to
SAMPLED_DEFAULT = tuple(m for m in WIDE_DEFAULT if m in SAMPLED_METHODS)
SINGLE_GROUP = SINGLE_GROUP_METHODS
SAMPLED = SAMPLED_METHODS
SAMPLED_EVALUATIONS = 1_500_000
INTERACTION_COLUMNS = 10
DEFAULT_ROWS = 50
BACKGROUND = 50
#: above this many columns, AGREED and a per-column report are screened first
SCREEN_COLUMNS = 100
#: the narrowest first screen of a wide table (else one column per row)
MIN_SCREEN = 20
#: table cells a model call goes through per second (hybrid rows included),
#: for the models the command line fits; a given model is timed instead
CELLS_PER_SECOND = {"hgb": 2e7, "rf": 5e6, "linear": 2.5e7, "mlp": 1e7}
#: seconds to fit, per row and column, and per column (binning, encoders)
FIT_COST = {"hgb": (2e-7, 5e-3), "rf": (2e-6, 1e-4), "linear": (5e-8, 1e-5),
            "mlp": (5e-6, 1e-4)}
#: seconds per unit of tree-path work (rows x rows x columns and column pairs)
TREE_SECOND = 3e-7
#: fixed cost: reading, figures and the page
OVERHEAD = 8.0


class PlanError(ValueError):
    """The report cannot fit its budget, or the model file holds no model."""


def check_model_object(model, name="the model file"):
    """Refuse anything but a fitted estimator with predictions to explain.

    Parameters
    ----------
    model : object
        What the model file held.
    name : str, default="the model file"
        The file, for messages.

    Raises
    ------
    PlanError
        Naming what the file holds and how to save a fitted model instead.
    """
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    save = "save the fitted model itself with skops.io.dump(model, 'model.skops')"
    if isinstance(model, type):
        raise PlanError(f"{name} holds the class {model.__name__}, not a fitted "
                        f"model; fit it, then {save}.")
    methods = ("predict", "predict_proba", "decision_function")
    if not isinstance(model, BaseEstimator) and not any(
        callable(getattr(model, m, None)) for m in methods
    ):
        what = type(model).__name__
        if isinstance(model, np.ndarray):
            what = f"a NumPy array of shape {model.shape}"
        elif isinstance(model, dict):
            what = f"a dict with keys {list(model)[:5]}"
        elif isinstance(model, (list, tuple)):
            what = f"a {type(model).__name__} of {len(model)} items"
        raise PlanError(f"{name} holds {what}, not a fitted model; {save}.")
    if not any(callable(getattr(model, m, None)) for m in methods):
        if callable(getattr(model, "transform", None)):
            raise PlanError(
                f"{name} holds a transformer ({type(model).__name__}), which makes "
                "features but no predictions to explain; save the whole Pipeline that "
                "ends in the model, e.g. skops.io.dump(make_pipeline(transformer, "
                "model).fit(X, y), 'model.skops'), and pass the raw table."
            )
        raise PlanError(
            f"{name} holds a {type(model).__name__}, which has no predict, "
            f"predict_proba or decision_function; {save}."
        )
    try:
        check_is_fitted(model)
    except NotFittedError:
        raise PlanError(
            f"{name} holds an unfitted {type(model).__name__}; fit it, then {save}, "
            "or leave out --model to let the command line fit one (--estimator)."
        ) from None
    except TypeError:  # not a scikit-learn estimator: its methods will tell
        pass


def screen_columns(X, y, k):
    """The ``k`` columns most related to the target, by a cheap screen.

    The absolute Pearson correlation of each column (categories and text by
    their codes, missing values at the column mean) with the target (classes
    by their codes), computed in one pass over the table; ties keep the
    table's order. It only decides which columns a wide table is explained
    over; the report says which were screened out.

    Parameters
    ----------
    X : DataFrame
    y : Series
    k : int

    Returns
    -------
    columns : list
        The kept column names, in the table's order.
    """
    if X.shape[1] <= k:
        return list(X.columns)
    codes = {}
    for c in X.columns:
        col = X[c]
        if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
            values = pd.to_numeric(col, errors="coerce").astype("float64")
        elif pd.api.types.is_datetime64_any_dtype(col):
            values = col.astype("int64").astype("float64").where(col.notna())
        else:
            values = pd.Series(pd.factorize(col)[0], index=col.index, dtype="float64")
            values[values < 0] = np.nan
        codes[c] = values.to_numpy()
    A = np.column_stack(list(codes.values()))
    with np.errstate(invalid="ignore", divide="ignore"):
        A = np.where(np.isnan(A), np.nanmean(A, axis=0), A)
        A = np.nan_to_num(A - A.mean(axis=0))
        t = y if pd.api.types.is_numeric_dtype(y) else pd.Series(pd.factorize(y)[0])
        t = np.nan_to_num(np.asarray(t, dtype=np.float64))
        t = t - t.mean()
        score = np.abs(A.T @ t) / (np.linalg.norm(A, axis=0) * np.linalg.norm(t))
    score = np.nan_to_num(score)
    keep = np.sort(np.argsort(-score, kind="stable")[:k])
    return [X.columns[j] for j in keep]


def measured_rate(model, X, n=2000):
    """Model evaluations per second of a given model on rows of X, or None."""
    rows = X.sample(n, replace=True, random_state=0) if len(X) else X
    for method in ("predict", "predict_proba", "decision_function"):
        function = getattr(model, method, None)
        if callable(function):
            break
    else:
        return None
    best = math.inf
    try:
        for _ in range(2):  # the first call may pay for warming up
            start = time.perf_counter()
            function(rows)
            best = min(best, time.perf_counter() - start)
    except Exception:  # the model's own error comes later, with its message
        return None
    return len(rows) / max(best, 1e-6)


@dataclass
class Plan:
    """What the report will do and what it costs.

    Attributes
    ----------
    n_rows : int
        Rows to explain.
    background : int
        Background rows.
    methods : list of str or None
        Methods; None lets the report choose by size.
    groups : str, list or dict
        ``"auto"``, ``"columns"`` or the groups.
    drop : list
        Columns left out (those given with --drop, then the screened ones).
    evaluations : float
        Model evaluations.
    seconds : float
        Estimated wall time.
    memory : float
        Estimated peak memory, in megabytes.
    changes : list of str
        What was changed to fit the budget, in plain words.
    """

    n_rows: int
    background: int
    methods: list
    groups: object
    drop: list
    evaluations: float = 0.0
    seconds: float = 0.0
    memory: float = 0.0
    changes: list = field(default_factory=list)

    def summary(self):
        """One line: evaluations, time and memory."""
        return (f"about {_count(self.evaluations)} model evaluations, roughly "
                f"{_duration(self.seconds)} and {self.memory:,.0f} MB")


def _count(n):
    return f"{n / 1e6:.3g} million" if n >= 1e6 else f"{int(n):,}"


def _duration(seconds):
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _partition_evaluations(K, methods, n_rows, n_bg, tree):
    if tree:
        return 0.0, K * n_rows * n_bg
    chosen = list(methods) if methods else list(
        EXACT_DEFAULT if K <= MAX_EXACT_GROUPS else WIDE_DEFAULT)
    sampled = [m for m in chosen if m in SAMPLED]
    exact = [m for m in chosen if m not in SAMPLED]
    single = all(m in SINGLE_GROUP for m in exact)
    per_row = (2 * K + 1 if single else 2.0 ** min(K, 60)) if exact else 0
    n_samples = 0
    if sampled:
        budget = SAMPLED_EVALUATIONS // max(1, n_rows * n_bg)
        n_samples = min(2 * K + 2048, max(4 * (K + 1), budget))
        n_samples = min(n_samples, 2.0 ** min(K, 60))  # never more than every coalition
    return float(n_rows * n_bg * (per_row + len(sampled) * n_samples)), 0.0


def _estimate(plan, *, n, d, kind, rate_cells, tree, fitted):
    """Fill in evaluations, seconds and memory of ``plan`` (a new Plan)."""
    d_model = d - len(plan.drop)
    n_test = int(round(0.25 * n)) if fitted else 0
    n_fit = n - n_test if fitted and n_test >= 10 and n - n_test >= 10 else n
    n_scored = n - n_fit if n_fit < n else n
    R = min(plan.n_rows, n_scored)
    B = min(plan.background, n_fit)
    groups = plan.groups
    K = len(groups) if isinstance(groups, (list, dict)) else d_model
    evaluations, tree_work = _partition_evaluations(K, plan.methods, R, B, tree)
    if not isinstance(groups, (list, dict)):
        G = min(INTERACTION_COLUMNS, d_model) + 1
        evaluations += 0 if tree else B * B * (1 + G + G * (G - 1) / 2)
        tree_work += G * G * B * B if tree else 0
    if groups == "auto" and d_model > 1:
        N = min(200 if tree else BACKGROUND, n_fit)
        # anchored N x N statistics of every column, then of each merge
        if tree:
            tree_work += 2 * d_model * N * N
        else:
            evaluations += 4 * d_model * N * N
        # the merge loop: pairs of groups, each with its N x N statistics on the
        # tree path (a rough fit to the runs of benchmarks/bench_plan.py)
        tree_work += d_model * d_model * (N * N if tree else 1)
        more, extra_tree = _partition_evaluations(
            max(2, d_model // 2), plan.methods, R, B, tree)
        evaluations += more
        tree_work += extra_tree
    seconds = OVERHEAD + evaluations * d_model / rate_cells + TREE_SECOND * tree_work
    if fitted:
        per_cell, per_column = FIT_COST.get(kind, FIT_COST["hgb"])
        seconds += per_cell * n_fit * d_model + per_column * d_model
    auto = groups == "auto" and d_model > 1
    N = min(BACKGROUND, n_fit)
    cells = (
        3 * n * d                                   # the table and its copies
        + min(R * B * max(d_model, 1), 2 ** 27)      # one chunk of hybrid rows
        + (4 * d_model * d_model + 2 * N * N * d_model if auto else 0)
    )
    return replace(plan, evaluations=evaluations, seconds=seconds,
                   memory=8 * cells / 2**20 + 150)


def plan_report(X, y, *, model=None, estimator="hgb", groups=None, methods=None,
                n_rows=None, drop=None, budget=DEFAULT_BUDGET, max_memory=DEFAULT_MEMORY,
                rate=None):
    """Plan ``skdecomp report`` within a budget of time and memory.

    Options the user gave (not None) are kept; the others are changed, in
    this order, until the estimate fits: a column screen of tables wider
    than ``SCREEN_COLUMNS`` to at most ``SCREEN_COLUMNS`` columns and one per
    row (at least ``MIN_SCREEN``; the screened columns are dropped, or for a
    given model pooled into one group), fewer rows explained (20), per-column
    explanations without AGREED grouping, sampled methods, a narrower screen
    (50, then 20 columns), a smaller background (20).

    Parameters
    ----------
    X : DataFrame
        The table, without the target.
    y : Series
        The target.
    model : estimator or None, default=None
        A given fitted model; None when the report fits ``estimator``.
    estimator : {"hgb", "rf", "linear", "mlp"}, default="hgb"
    groups : {"auto", "columns"}, list, dict or None, default=None
        None lets the plan choose (``"auto"`` if it fits).
    methods : list of str or None, default=None
    n_rows : int or None, default=None
        None lets the plan choose (at most 50).
    drop : list or None, default=None
        Columns the user leaves out.
    budget : float or None, default=DEFAULT_BUDGET
        Seconds the report may take; None for no limit.
    max_memory : float or None, default=DEFAULT_MEMORY
        Megabytes the report may hold; None for no limit.
    rate : float or None, default=None
        Evaluations per second of ``model`` on the table; None times it.

    Returns
    -------
    plan : Plan

    Raises
    ------
    PlanError
        When no plan fits, naming the options that would make one fit.
    """
    n, d = X.shape
    drop = list(drop or [])
    fitted = model is None
    kind = estimator if fitted else None
    tree = fitted and estimator in ("hgb", "rf")
    if not fitted and _is_tree_model(model):
        tree = True
    d_model = d - len(drop)
    if fitted:
        rate_cells = CELLS_PER_SECOND.get(estimator, 1e7)
    else:
        rate = measured_rate(model, X) if rate is None else rate
        rate_cells = (rate or 1e4) * max(d, 1)
    kept = [c for c in X.columns if c not in set(drop)]
    plan = Plan(
        n_rows=DEFAULT_ROWS if n_rows is None else int(n_rows),
        background=BACKGROUND,
        methods=None if methods is None else list(methods),
        groups="auto" if groups is None else groups,
        drop=list(drop),
    )

    def estimate(p):
        return _estimate(p, n=n, d=d, kind=kind, rate_cells=rate_cells, tree=tree,
                         fitted=fitted)

    def fits(p):
        return ((budget is None or p.seconds <= budget)
                and (max_memory is None or p.memory <= max_memory))

    order = {}
    screened = None
    if not isinstance(groups, (list, dict)):
        order = screen_columns(X[kept], y, min(SCREEN_COLUMNS, len(kept)))

    def screen(p, k, why):
        nonlocal screened
        if isinstance(groups, (list, dict)) or len(kept) <= k:
            return None
        top = screen_columns(X[order], y, k) if len(order) > k else list(order)
        rest = [c for c in kept if c not in set(top)]
        screened = top
        change = (f"{why}: explained over the {k} columns most correlated with the "
                  f"target, of {len(kept)}")
        if fitted:
            return replace(p, drop=list(drop) + rest, changes=p.changes + [
                change + " (the others are left out; --groups or --drop choose "
                "others)"])
        pooled = {str(c): [c] for c in top}
        pooled["other columns"] = rest
        return replace(p, groups=pooled, changes=p.changes + [
            change + " (the others form one group, 'other columns')"])

    plan = estimate(plan)
    if len(kept) > SCREEN_COLUMNS:
        # a wide table: at most SCREEN_COLUMNS columns, and no more than one per row
        width = min(SCREEN_COLUMNS, max(MIN_SCREEN, n))
        screened_plan = screen(plan, width, f"the table has {len(kept)} columns "
                               f"and {n} rows")
        if screened_plan is not None:
            plan = estimate(screened_plan)
    steps = []
    if n_rows is None:
        steps.append(lambda p: replace(p, n_rows=20, changes=p.changes + [
            "20 rows explained instead of 50 (--n-rows sets it)"]))
    if groups is None:
        steps.append(lambda p: replace(p, groups="columns", changes=p.changes + [
            "no AGREED grouping, one group per column (--groups auto asks for it)"])
            if p.groups == "auto" else None)
    if methods is None and not tree:
        steps.append(lambda p: replace(p, methods=list(SAMPLED_DEFAULT), changes=p.changes + [
            "sampled Shapley values only (Kernel SHAP, permutation SHAP; --methods "
            "sets them)"]))
    for k in (50, 20):
        steps.append(lambda p, k=k: screen(p, k, "to fit the budget"))
    steps.append(lambda p: replace(p, background=20, changes=p.changes + [
        "20 background rows instead of 50"]))
    for step in steps:
        if fits(plan):
            break
        changed = step(plan)
        if changed is not None:
            plan = estimate(changed)
    if not fits(plan):
        raise PlanError(_refusal(plan, budget, max_memory, n_rows, groups, methods))
    return plan


def _refusal(plan, budget, max_memory, n_rows, groups, methods):
    over = []
    if budget is not None and plan.seconds > budget:
        over.append(f"more than the budget of {_duration(budget)}")
    if max_memory is not None and plan.memory > max_memory:
        over.append(f"more than the memory limit of {max_memory:,.0f} MB")
    options = []
    if budget is not None and plan.seconds > budget:
        options.append(f"--budget {math.ceil(plan.seconds / 60) * 60:.0f} to allow it")
    if max_memory is not None and plan.memory > max_memory:
        options.append(f"--max-memory {math.ceil(plan.memory / 256) * 256:.0f}")
    if n_rows is not None and n_rows > 10:
        options.append("fewer --n-rows")
    if methods is not None:
        options.append("--methods kernel_shap (sampled)")
    if isinstance(groups, (list, dict)) or groups == "auto":
        options.append("--groups columns" if groups == "auto" else "fewer groups")
    options.append("--drop to leave out columns")
    tried = (f" (even with {len(plan.changes)} reduction"
             f"{'s' if len(plan.changes) > 1 else ''} of what was left to the plan)"
             if plan.changes else "")
    return (f"the report would take {plan.summary()}, {' and '.join(over)}{tried}. "
            f"Use {', or '.join(options)}.")


def _is_tree_model(model):
    """Whether a given model is likely read on the tree path (no model calls)."""
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.tree import BaseDecisionTree

    from ._boosters import booster_library
    from ._model import _final_model

    final = _final_model(model)
    trees = (BaseDecisionTree, RandomForestClassifier, RandomForestRegressor,
             ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
             GradientBoostingRegressor, HistGradientBoostingClassifier,
             HistGradientBoostingRegressor)
    return isinstance(final, trees) or booster_library(final) is not None
