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

from ._config import format_seconds
from ._methods._registry import SAMPLED_METHODS, SINGLE_GROUP_METHODS, default_methods
from ._methods._shared import n_designs

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
#: seconds per model evaluation (one row) of the models the command line fits:
#: a fixed part (the trees, the network) and a part per numeric and per text
#: column (the pipeline's encoders); gradient boosting that splits text
#: columns as categories takes HGB_CATEGORY_SECOND more; a given model is
#: timed instead
EVALUATION_SECONDS = {"hgb": (3e-6, 2e-7, 2e-7), "rf": (3e-6, 2e-7, 2e-7),
                      "linear": (5e-7, 5e-8, 6e-7), "mlp": (1.5e-6, 5e-8, 6e-7)}
HGB_CATEGORY_SECOND = 2e-5
#: seconds to fit: per row and column the model reads (a text column one-hot
#: encoded counts as ENCODED_LEVELS columns for linear and mlp), and a fixed part
FIT_COST = {"hgb": (3e-6, 0.4), "rf": (6e-5, 0.1), "linear": (5e-8, 0.05),
            "mlp": (1.2e-5, 0.1)}
ENCODED_LEVELS = 8
#: nodes of the fitted trees: gradient boosting of about 100 trees of 31
#: leaves, a forest of 100 trees whose nodes grow with the rows it is fitted on
HGB_NODES = 100 * 61
RF_NODES_PER_ROW = 35
#: seconds per unit of tree-path work, by step: the explanations (node x
#: group x explained and background row), the interactions (node x pair of
#: groups), the AGREED grouping (node x column, on AGREED_ROWS_TREE rows),
#: the sources and the regions (node)
TREE_SECOND = {"explain": 2e-9, "interactions": 1e-7, "agreed": 5.5e-6,
               "sources": 6.5e-5, "regions": 7e-5}
#: trees that split text columns as sets of categories are read by slower
#: kernels: the explanations, interactions and AGREED grouping cost this many
#: times more, and the sources SOURCE_CATEGORY_FACTOR times more (fits to
#: the runs of benchmarks/bench_plan.py)
CATEGORY_FACTOR = 6.0
SOURCE_CATEGORY_FACTOR = 3.0
#: the AGREED grouping of the path-dependent game costs this many times less
PATH_DEPENDENT_AGREED = 4.0
#: rows of the AGREED grouping, on the tree path and through model calls
AGREED_ROWS, AGREED_ROWS_TREE = 50, 200
#: the regions step (see skdecomp._report._explain._region_path)
REGION_ROWS, REGION_ROWS_TREE, REGION_MIN_ROWS = 100, 300, 40
REGION_EVALUATIONS = 250_000
REGION_TREE_NODES = 20_000
#: the sources of disagreement (see skdecomp._report._explain._source_rows)
SOURCE_ROWS, SOURCE_MIN_ROWS, SOURCE_EVALUATIONS = 100, 20, 100_000
#: the interaction index through model calls: 2**(INDEX_COLUMNS + 1) coalitions
#: of which about half are evaluated
INDEX_COLUMNS = 6
#: seconds per cell drawn by the conditional game's sampler
DRAW_SECOND = 1e-7
#: fixed cost of a step through model calls and on the tree path (the games,
#: reading the trees)
STEP_SECONDS, TREE_STEP_SECONDS = 0.1, 0.5
#: the rest: starting, reading, scoring, figures and the page, a fixed part
#: and seconds per cell of the table
OVERHEAD, OVERHEAD_CELL = 6.0, 2e-5
#: the games the report can explain
IMPUTERS = ("marginal", "path_dependent", "conditional")
#: the steps of the analysis, in the order it runs them
STEPS = ("fit", "columns", "interactions", "sources", "regions", "agreed",
         "agreed explanation", "other")


def step_of(message):
    """The step of the analysis a line of its log starts, or None.

    Parameters
    ----------
    message : str
        A line the analysis logs.

    Returns
    -------
    step : str or None
        One of :data:`STEPS`.
    """
    if message.startswith("fitting"):
        return "fit"
    if message.startswith("explaining"):
        return "agreed explanation" if "AGREED" in message else "columns"
    if message.startswith("measuring the interactions"):
        return "interactions"
    if message.startswith("measuring how"):
        return "sources"
    if message.startswith("looking for regions"):
        return "regions"
    if message.startswith("grouping"):
        return "agreed"
    return None


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
    steps : dict
        Estimated seconds of every step the analysis runs, by the names of
        :data:`STEPS` (``"other"``: starting, reading, scoring and writing);
        they add up to ``seconds``.
    imputer : str
        The game explained (one of :data:`IMPUTERS`).
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
    steps: dict = field(default_factory=dict)
    imputer: str = "marginal"

    def summary(self):
        """One line: evaluations, time and memory."""
        calls = ("no model evaluations (the trees are read directly)"
                 if not self.evaluations else
                 f"about {_count(self.evaluations)} model evaluations")
        return f"{calls}, roughly {format_seconds(self.seconds)} and {self.memory:,.0f} MB"

    def breakdown(self):
        """One line: the estimated time of every step."""
        return ", ".join(f"{name} {format_seconds(s)}" for name, s in self.steps.items())


def _count(n):
    return f"{n / 1e6:.3g} million" if n >= 1e6 else f"{int(n):,}"


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
    # sampled methods asked for together share one design
    return float(n_rows * n_bg * (per_row + n_designs(sampled) * n_samples)), 0.0


def _source_rows(K, n_rows, tree):
    N = int(np.sqrt(SOURCE_EVALUATIONS / ((2 if tree else 4) * max(K, 1))))
    return min(n_rows, SOURCE_ROWS, max(SOURCE_MIN_ROWS, N))


def _estimate(plan, *, n, d, kind, evaluation_second, tree, fitted, nodes,
              categorical, n_text=0, model_second=None, imputer="marginal",
              interacting=True, regions=True):
    """Fill in evaluations, seconds, steps and memory of ``plan`` (a new Plan).

    Every step the analysis runs has its estimate in ``steps``: model
    evaluations at ``evaluation_second`` each (``model_second`` for the
    model's last step alone, on encoded columns), tree-path work by the
    nodes of the trees (``nodes``), and a fixed part.
    """
    model_second = evaluation_second if model_second is None else model_second
    factor = CATEGORY_FACTOR if tree and categorical else 1.0
    d_model = d - len(plan.drop)
    n_test = int(round(0.25 * n)) if fitted else 0
    n_fit = n - n_test if fitted and n_test >= 10 and n - n_test >= 10 else n
    n_scored = n - n_fit if n_fit < n else n
    R = min(plan.n_rows, n_scored)
    B = min(plan.background, n_fit)
    groups = plan.groups
    conditional = imputer == "conditional"
    path_dependent = imputer == "path_dependent"
    # the sources compare the marginal and conditional games whatever the
    # game explained; the rest of the conditional game takes model calls
    source_tree = tree
    tree = tree and not conditional
    # the path-dependent game reads the trees' cover, not a background
    B_tree = 1 if path_dependent else B
    K = len(groups) if isinstance(groups, (list, dict)) else d_model
    # the conditional game draws one row of d_model cells per evaluation
    per_evaluation = evaluation_second + (DRAW_SECOND * d_model if conditional else 0.0)
    steps, counts = {}, {}

    def step(name, evaluations=0.0, tree_seconds=0.0):
        counts[name] = float(evaluations)
        steps[name] = ((TREE_STEP_SECONDS if tree else STEP_SECONDS)
                       + evaluations * per_evaluation + tree_seconds)

    if fitted:
        per_cell, fixed = FIT_COST.get(kind, FIT_COST["hgb"])
        columns = d_model + (ENCODED_LEVELS - 1) * n_text if kind in ("linear", "mlp") \
            else d_model
        steps["fit"] = fixed + per_cell * n_fit * columns
        counts["fit"] = 0.0

    def partition(K_part, name):
        evaluations, _ = _partition_evaluations(K_part, plan.methods, R, B, tree)
        work = nodes * K_part * (R + B_tree) * TREE_SECOND["explain"] if tree else 0.0
        step(name, evaluations, work * factor)

    partition(K, "columns")
    per_column = not isinstance(groups, (list, dict))
    if per_column and d_model > 1:
        G = min(INTERACTION_COLUMNS, d_model) + 1
        if tree:
            step("interactions", 0.0, nodes * G * G * TREE_SECOND["interactions"] * factor)
        else:
            k = min(INDEX_COLUMNS, G - 1) + 1
            step("interactions", B * B * (1 + G + G * (G - 1) / 2) + R * B * 2.0 ** (k - 1))
        # the sources read the model's last step on the encoded columns
        N = _source_rows(d_model, n_fit, source_tree)
        if source_tree:
            category = SOURCE_CATEGORY_FACTOR if categorical else 1.0
            step("sources", 0.0, nodes * TREE_SECOND["sources"] * category)
        else:
            step("sources", 0.0, 4 * d_model * N * N * model_second)
        if regions and interacting and imputer == "marginal":
            # FDTree's own model calls (see _region_path), without draws
            if tree and nodes <= REGION_TREE_NODES:
                step("regions", 0.0, nodes * TREE_SECOND["regions"])
            else:
                N = int(np.sqrt(REGION_EVALUATIONS / d_model))
                N = min(n_fit, REGION_ROWS, max(REGION_MIN_ROWS, N))
                step("regions", 0.0, d_model * N * N * evaluation_second)
    if groups == "auto" and d_model > 1:
        N = min(AGREED_ROWS_TREE if tree else AGREED_ROWS, n_fit)
        if tree:
            work = nodes * d_model * (N / AGREED_ROWS_TREE) ** 2
            # the path-dependent game's values, not N x N anchored sums
            work /= PATH_DEPENDENT_AGREED if path_dependent else 1.0
            step("agreed", 0.0, work * TREE_SECOND["agreed"] * factor)
        else:
            # anchored N x N statistics of every column, then of each merge
            step("agreed", 4 * d_model * N * N + d_model * d_model * N)
        # the AGREED groups are explained again (about half as many as columns)
        # unless no column interacts with another (a linear model)
        if interacting:
            partition(max(2, d_model // 2), "agreed explanation")
    steps["other"] = OVERHEAD + OVERHEAD_CELL * n * d
    counts["other"] = 0.0
    steps = {k: steps[k] for k in STEPS if k in steps}
    auto = groups == "auto" and d_model > 1
    N = min(BACKGROUND, n_fit)
    cells = (
        3 * n * d                                   # the table and its copies
        + min(R * B * max(d_model, 1), 2 ** 27)      # one chunk of hybrid rows
        + (4 * d_model * d_model + 2 * N * N * d_model if auto else 0)
    )
    return replace(plan, evaluations=sum(counts.values()), seconds=sum(steps.values()),
                   steps=steps, memory=8 * cells / 2**20 + 150)


def _evaluation_second(kind, X, drop):
    """Seconds per model evaluation of a fitted model of ``kind``, from the columns."""
    base, numeric, text = EVALUATION_SECONDS.get(kind, EVALUATION_SECONDS["hgb"])
    kept = [c for c in X.columns if c not in set(drop)]
    n_text = sum(not _is_number(X[c]) for c in kept)
    if kind == "hgb" and n_text:
        base += HGB_CATEGORY_SECOND
    return base + numeric * (len(kept) - n_text) + text * n_text


def _is_number(column):
    types = pd.api.types
    return types.is_numeric_dtype(column) or types.is_bool_dtype(column)


def _tree_nodes(model):
    """Nodes of a given tree model, or None when they cannot be counted cheaply."""
    from ._model import _final_model

    final = _final_model(model)
    estimators = getattr(final, "estimators_", None)
    if estimators is not None:
        trees = np.ravel(np.asarray(estimators, dtype=object))
        try:
            return int(sum(t.tree_.node_count for t in trees))
        except AttributeError:
            return None
    predictors = getattr(final, "_predictors", None)
    if predictors is not None:
        return int(sum(len(p.nodes) for per_iter in predictors for p in per_iter))
    tree = getattr(final, "tree_", None)
    return None if tree is None else int(tree.node_count)


def plan_report(X, y, *, model=None, estimator="hgb", groups=None, methods=None,
                n_rows=None, drop=None, budget=DEFAULT_BUDGET, max_memory=DEFAULT_MEMORY,
                rate=None, imputer="marginal"):
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
    imputer : {"marginal", "path_dependent", "conditional"}, default="marginal"
        The game explained. The conditional game is explained through model
        calls, even of tree models: each of its values averages as many
        drawn rows as there are background rows (one model evaluation and
        one drawn row each); the path-dependent one reads the trees alone,
        without background rows. Neither searches regions.

    Returns
    -------
    plan : Plan

    Raises
    ------
    PlanError
        When no plan fits, naming the options that would make one fit.
    """
    n, d = X.shape
    if imputer not in IMPUTERS:
        raise PlanError(f"imputer must be one of {', '.join(IMPUTERS)}, got {imputer!r}.")
    drop = list(drop or [])
    fitted = model is None
    kind = estimator if fitted else None
    tree = fitted and estimator in ("hgb", "rf")
    if not fitted and _is_tree_model(model):
        tree = True
    kept = [c for c in X.columns if c not in set(drop)]
    evaluation_second = None
    if fitted:
        n_test = int(round(0.25 * n))
        n_fit = n - n_test if n_test >= 10 and n - n_test >= 10 else n
        nodes = {"hgb": HGB_NODES, "rf": RF_NODES_PER_ROW * n_fit}.get(estimator, 0)
        # gradient boosting splits text columns natively, as sets of categories
        categorical = estimator == "hgb" and any(not _is_number(X[c]) for c in kept)
    else:
        rate = measured_rate(model, X) if rate is None else rate
        evaluation_second = 1.0 / (rate or 1e4)
        nodes = (_tree_nodes(model) or HGB_NODES) if tree else 0
        categorical = tree and _has_categories(model)
    # regions are searched for a regression or two classes, and like the AGREED
    # groups only when columns interact (never in a fitted linear model)
    regions = not _many_classes(y, model)
    interacting = not (fitted and estimator == "linear")
    plan = Plan(
        n_rows=DEFAULT_ROWS if n_rows is None else int(n_rows),
        background=BACKGROUND,
        methods=None if methods is None else list(methods),
        groups="auto" if groups is None else groups,
        drop=list(drop),
        imputer=imputer,
    )

    def estimate(p):
        second, model_second, n_text = evaluation_second, None, 0
        if fitted:
            second = _evaluation_second(estimator, X, p.drop)
            n_text = sum(not _is_number(X[c]) for c in X.columns if c not in set(p.drop))
            model_second = EVALUATION_SECONDS.get(estimator, EVALUATION_SECONDS["hgb"])[0]
            if estimator == "hgb" and n_text:
                model_second += HGB_CATEGORY_SECOND
        return _estimate(p, n=n, d=d, kind=kind, evaluation_second=second,
                         model_second=model_second, n_text=n_text, tree=tree,
                         fitted=fitted, nodes=nodes, categorical=categorical,
                         imputer=imputer, interacting=interacting, regions=regions)

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
    if methods is None and not (tree and imputer != "conditional"):
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
        over.append(f"more than the budget of {format_seconds(budget)}")
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


def _many_classes(y, model=None):
    """Whether the target has more than two classes (the report explains one)."""
    from ._report import is_classification

    try:
        classification = is_classification(y) if model is None else \
            is_classification(y, model)
    except Exception:  # the analysis checks the target with its own message
        return False
    return bool(classification) and pd.Series(y).nunique() > 2


def _has_categories(model):
    """Whether a given gradient-boosting model splits some column as categories."""
    from ._model import _final_model

    flags = getattr(_final_model(model), "is_categorical_", None)
    return flags is not None and bool(np.any(flags))


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
