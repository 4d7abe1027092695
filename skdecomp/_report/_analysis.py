"""The analysis behind ``skdecomp report`` and ``skdecomp demo``, as plain data."""

# SPDX-License-Identifier: BSD-3-Clause

import time
import warnings

import numpy as np
import pandas as pd

from ._common import WIDE_COLUMNS, DataError, _clean, _duration, _share_of
from ._explain import (
    _explain_partition,
    _interactions,
    _owen_columns,
    _regions,
    _sources,
)
from ._models import check_estimator, check_value_sizes, make_model
from ._options import (
    _check_groups_arg,
    _without,
    check_exact_limit,
    check_imputer,
    check_methods,
)
from ._table import (
    _plain,
    _predictive_columns,
    check_drop,
    check_target,
    is_classification,
    prepare_table,
)
from ._verdict import _leak_check, _verdict


def _score(model, X_test, y_test, classification, held_out, fitted_here=False):
    """The model's score on rows it was not fitted on, with a sentence."""
    from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

    n = len(y_test)
    if held_out:
        where = f"on {n} held-out rows"
    elif fitted_here:
        where = (f"on the {n} rows it was fitted on (too few rows to hold some out, "
                 "so this is optimistic)")
    else:
        where = (f"on the {n} rows of the table (which may include the rows it was "
                 "trained on, so this can be optimistic)")
    if not classification:
        predicted = np.asarray(model.predict(X_test), dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            r2 = float(r2_score(y_test, predicted))
        if not np.isfinite(r2):
            # never a number to judge the fit by: say why there is none
            why = _undefined_r2(np.asarray(y_test, dtype=float), predicted)
            return {"metric": "r2", "r2": None, "undefined": why, "n_rows": n,
                    "held_out": held_out,
                    "text": f"R² is undefined {where}: {why}, so the fit cannot be "
                            "judged."}
        return {"metric": "r2", "r2": r2, "n_rows": n, "held_out": held_out,
                "text": f"R² = {r2:.3f} {where}: the model accounts for "
                        f"{_share_of(max(r2, 0.0))} of the target's variance there "
                        "(0 is no better than always predicting the mean, 1 is "
                        "perfect)."}
    acc = float(accuracy_score(y_test, model.predict(X_test)))
    counts = pd.Series(y_test).value_counts(normalize=True)
    out = {"metric": "accuracy", "accuracy": acc, "majority": float(counts.iloc[0]),
           "n_rows": n, "held_out": held_out}
    text = (f"Accuracy {acc:.1%} {where}; always answering the most common class "
            f"({_plain(counts.index[0])!r}) would give {counts.iloc[0]:.1%}.")
    classes = getattr(model, "classes_", None)
    try:
        if classes is not None and len(classes) == 2 and hasattr(model, "predict_proba"):
            auc = roc_auc_score(np.asarray(y_test) == classes[1],
                                model.predict_proba(X_test)[:, 1])
        elif classes is not None and hasattr(model, "predict_proba"):
            auc = roc_auc_score(y_test, model.predict_proba(X_test),
                                multi_class="ovr", labels=classes)
        else:
            auc = None
    except ValueError:  # a class missing from the held-out rows
        auc = None
    if auc is not None:
        out["roc_auc"] = float(auc)
        text += f" ROC AUC {auc:.3f} (0.5 is chance, 1 is perfect ranking)."
    out["text"] = text
    return out


def _undefined_r2(y, predicted):
    """Why R² is not a number: predictions that are not, or an overflow."""
    if not np.isfinite(predicted).all():
        return (f"the model's predictions are not finite numbers on "
                f"{int((~np.isfinite(predicted)).sum())} of the rows")
    with np.errstate(over="ignore", invalid="ignore"):
        big = float(max(np.max(np.abs(y)), np.max(np.abs(predicted))))
    return (f"the target and its predictions reach {big:.3g}, whose squares overflow "
            "double precision, so their variance is not a number")


#: a single column that predicts the target this well is flagged as possible leakage

def _agreed_history(grouper, X, scale):
    clipped = []

    def num(v, what="a loss"):
        if v is None:
            return None
        v = float(_clean(v, scale**2))
        if v < 0:
            # a held-out loss is an unbiased estimate of a square: below 0 it
            # is noise around a small true value, which reads as 0
            clipped.append(what)
            return 0.0
        return v

    out = {
        "initial_loss": num(grouper.initial_loss_),
        "final_loss": num(grouper.loss_),
        "held_out_initial_loss": num(grouper.held_out_initial_loss_),
        "n_groups": int(grouper.n_groups_),
        "n_columns": int(X.shape[1]),
        "largest_group": int(max(len(g) for g in grouper.groups_)),
        "stop_reason": str(grouper.stop_reason_),
        "remaining_share": max(0.0, float(_clean(grouper.remaining_share_, 1.0))),
        "useful_partition": bool(grouper.useful_partition_),
        "groups": [[str(X.columns[j]) for j in g] for g in grouper.groups_],
        "merges": [
            {
                "groups": [[int(j) for j in g] for g in h["groups"]],
                "names": [str(n) for n in h["names"]],
                "columns": [[str(X.columns[j]) for j in g] for g in h["groups"]],
                "loss_before": num(h["loss_before"]),
                "loss_after": num(h["loss_after"]),
                "held_out_loss_before": num(h["held_out_loss_before"]),
                "held_out_loss_after": num(h["held_out_loss_after"]),
                "held_out_error": num(h["held_out_error"]),
                "accepted": bool(h["accepted"]),
                "n_groups": int(h["n_groups"]),
            }
            for h in grouper.history_
        ],
        # every partition along the merges, past the stopping point too
        "path": [
            {
                "n_groups": int(p["n_groups"]),
                "merged": None if p["merged"] is None else [str(n) for n in p["merged"]],
                "largest_group": int(p["largest_group"]),
                "remaining_share": (None if p["remaining_share"] is None
                                    else max(0.0, float(_clean(p["remaining_share"], 1.0)))),
                "chosen": bool(p["chosen"]),
            }
            for p in getattr(grouper, "path_", [])
        ],
    }
    if clipped:
        out["clipped"] = (
            f"{len(clipped)} loss estimate(s) below 0 read as 0: a loss on held-out "
            "rows is an unbiased estimate of a mean square, and below 0 it is sampling "
            "noise around a true value near 0")
    return out


def _evaluation_rate(model, X, response_method):
    """Model evaluations per second on table rows, for time estimates."""
    from .._model import ResponseFunction, auto_response

    # enough rows that the per-row cost dominates the per-call overhead
    rows = X.sample(2000, replace=True, random_state=0)
    try:
        if response_method == "auto":
            response_method = auto_response(model)[0]
        response = ResponseFunction(model, response_method)
        best = np.inf
        for _ in range(2):  # the first call may pay for warming up
            start = time.perf_counter()
            response.model_output(rows)
            best = min(best, time.perf_counter() - start)
        return len(rows) / max(best, 1e-6)
    except Exception:  # the estimate is only for the log
        return None


def _without_imputer(common):
    return {k: v for k, v in common.items() if k != "imputer"}


def analyse(X, y, *, model=None, estimator="hgb", groups="auto", methods=None,
            n_rows=50, background=50, n_jobs=None, random_state=0, log=print,
            test_size=0.25, drop=None, verbose=0, started=None, imputer="marginal"):
    """Fit or take a model, score it, and explain it per column and over AGREED groups.

    Every option, the target and the groups are checked before any model is
    fitted or called. The data checks (identifier-like and constant columns,
    dates, tiny samples, one dominant column) go to ``checks``.

    Parameters
    ----------
    X : DataFrame
        The table, without the target.
    y : Series
        The target.
    model : estimator or None, default=None
        A fitted model; None fits the one ``estimator`` names on a training
        split and scores it on the held-out rows.
    estimator : {"hgb", "rf", "linear", "mlp"}, default="hgb"
        The model to fit when ``model`` is None (see :func:`make_model`).
    groups : {"auto", "columns"}, list or dict, default="auto"
        ``auto`` explains per column and over AGREED groups, ``columns`` per
        column only; a list or dict gives the groups.
    methods : list of str or None, default=None
        Explanation methods; None picks exact or sampled methods by size.
    n_rows : int, default=50
        Number of rows to explain (held-out rows when a model is fitted).
    background : int, default=50
        Number of background rows.
    n_jobs : int or None, default=None
        Parallel jobs for the model calls.
    random_state : int, default=0
        Seed of the split, the model and the sampling.
    log : callable, default=print
        Called with a line of progress.
    test_size : float, default=0.25
        Share of the rows held out to score a fitted model.
    drop : list of str or None, default=None
        Columns to leave out.
    verbose : int, default=0
        Show progress bars of the model calls when positive.
    started : float or None, default=None
        ``time.perf_counter()`` when the work began (reading the data);
        ``seconds`` counts from it. None counts from this call.
    imputer : {"marginal", "path_dependent", "conditional"}, default="marginal"
        The game every method explains (see :class:`~skdecomp.Explainer`):
        absent columns from background rows, through the trees' cover, or
        drawn given the present columns.

    Returns
    -------
    results : dict
        JSON-serialisable results.
    """
    started = time.perf_counter() if started is None else started
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise DataError(f"n_rows must be a positive integer, got {n_rows!r}.")
    if model is None:
        check_estimator(estimator)
    check_methods(methods)
    check_imputer(imputer, model, estimator)
    if not isinstance(X, pd.DataFrame):
        raise DataError("X must be a pandas DataFrame with named columns.")
    if not 0.0 < float(test_size) < 1.0:
        raise DataError(f"test_size must be between 0 and 1, got {test_size!r}.")
    drop = check_drop(drop, X, target=getattr(y, "name", None))
    check_target(y, model)
    _check_groups_arg(groups, X)
    tree = model is None and estimator in ("hgb", "rf")
    check_exact_limit(methods, X, groups, tree=tree)

    X, checks = prepare_table(X, fit=model is None, drop=drop)
    if model is None:
        check_value_sizes(X, estimator)
    if imputer == "conditional":
        text = [str(c) for c, t in X.dtypes.items()
                if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))]
        if text:
            raise DataError(
                f"--imputer conditional draws the absent columns given the present "
                f"ones, which needs numbers, and the table has text columns "
                f"({', '.join(repr(c) for c in text[:3])}"
                f"{' and more' if len(text) > 3 else ''}); use --imputer marginal (the "
                "report still measures how far the conditional game would move the "
                "explanation, with the text columns encoded), or encode them first."
            )
    checks += _predictive_columns(
        X, y, is_classification(y) if model is None else is_classification(y, model))
    dropped = set(drop) | {c for ch in checks if ch["kind"] == "constant" and model is None
                           for c in ch["columns"]}
    if isinstance(groups, (list, dict)):
        groups = _without(groups, dropped)
    notes = []
    y = pd.Series(y).reset_index(drop=True)
    X = X.reset_index(drop=True)
    response_method = "auto"
    estimator_fitted = model is None
    if model is None:
        from sklearn.model_selection import train_test_split

        classification = is_classification(y)
        model, note = make_model(estimator, X, y, random_state=random_state)
        notes.append(note)
        n_test = int(round(test_size * len(y)))
        held_out = n_test >= 10 and len(y) - n_test >= 10
        if held_out:
            counts = y.value_counts()
            stratify = y if classification and counts.min() >= 2 and \
                n_test >= len(counts) else None
            X_fit, X_test, y_fit, y_test = train_test_split(
                X, y, test_size=n_test, random_state=random_state, stratify=stratify)
        else:
            X_fit, X_test, y_fit, y_test = X, X, y, y
        t = time.perf_counter()
        log(f"fitting a {estimator} model on {len(X_fit)} rows, {X.shape[1]} columns"
            + (f"; {len(X_test)} rows held out to score it" if held_out else ""))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=UserWarning)
            try:
                from sklearn.exceptions import ConvergenceWarning

                warnings.simplefilter("ignore", category=ConvergenceWarning)
            except ImportError:  # pragma: no cover
                pass
            model.fit(X_fit, y_fit)
        log(f"fitted in {_duration(time.perf_counter() - t)}")
    else:
        try:
            model.predict(X.iloc[:2])
        except Exception as exc:
            raise DataError(
                f"the model cannot predict on the table's columns ({exc}); give "
                "the table it was trained on (same columns, same encoding)."
            ) from exc
        classification = is_classification(y, model)
        held_out = False
        X_fit, X_test, y_test = X, X, y
    score = _score(model, X_test, y_test, classification, held_out,
                   fitted_here=estimator_fitted)
    log(score["text"])
    target_class = None
    if classification and hasattr(model, "classes_") and len(model.classes_) > 2:
        # explain the most frequent class; one output keeps the report readable
        target_class = _plain(y.mode().iloc[0])
        notes.append(f"The target has {len(model.classes_)} classes; the report explains "
                     f"class {target_class!r}, the most frequent.")
    rows = X_test.iloc[: min(n_rows, len(X_test))]
    bg = min(background, len(X_fit))
    rate = _evaluation_rate(model, X_fit, response_method)
    common = dict(background=bg, random_state=random_state, n_jobs=n_jobs,
                  target=target_class, response_method=response_method, imputer=imputer)

    partitions, history = {}, None
    if isinstance(groups, (list, dict)):
        partitions["given"] = groups
    else:
        partitions["columns"] = None
    results = {}
    for key, part in list(partitions.items()):
        t = time.perf_counter()
        results[key] = _explain_partition(
            model, X_fit, rows, part, methods, notes=notes, verbose=verbose, log=log,
            rate=rate, what="the given groups" if key == "given" else
            "one group per column", **common)
        log(f"done in {_duration(time.perf_counter() - t)}")
    first = results.get("columns") or results.get("given")
    constant = bool(first.get("constant_output"))
    # a constant output has no spread: its size is the scale of round-off
    scale = first["output_spread"] or abs(first["output_mean"]) or 1.0
    interactions = regions = sources = None
    if "columns" in results:
        t = time.perf_counter()
        log("measuring the interactions between the most important columns")
        interactions = _interactions(model, X_fit, rows, results["columns"], **common)
        log(f"done in {_duration(time.perf_counter() - t)}")
        t = time.perf_counter()
        if constant:
            notes.append("Dependence between columns was not measured: the model "
                         "predicts a constant on these rows, so no explanation could "
                         "move under another game.")
        else:
            try:
                sources = _sources(model, X_fit,
                                   results["columns"]["algorithm"] == "tree",
                                   log=log, rate=rate, **common)
                log(f"done in {_duration(time.perf_counter() - t)}")
            except (ValueError, TypeError) as exc:
                notes.append(f"Dependence between columns was not measured: {exc}")
        if imputer != "marginal":
            notes.append("Regions of the rows are searched under the marginal game only; "
                         f"this report explains the {imputer.replace('_', '-')} game, so "
                         "none were searched.")
        elif interactions and interactions["top_pairs"] and target_class is None:
            t = time.perf_counter()
            log("looking for regions of the rows in which the columns do not interact")
            try:
                regions = _regions(model, X_fit, results["columns"]["algorithm"] == "tree",
                                   **_without_imputer(common))
            except (ValueError, TypeError) as exc:
                notes.append(f"No regions were searched: {exc}")
            log(f"done in {_duration(time.perf_counter() - t)}")
        leak = _leak_check(results["columns"], score)
        flagged = {c for ch in checks if ch["kind"] == "leak" for c in ch["columns"]}
        if leak and leak["columns"][0] not in flagged:
            checks.append(leak)
    if groups == "auto" and X.shape[1] > 1:
        from .._grouping import AdaptiveGrouper

        # the tree path reads the N x N sums from the leaves, so more rows
        # (more power to tell a real interaction from noise) cost little
        N = min(200 if first["algorithm"] == "tree" else 50, len(X_fit))
        t = time.perf_counter()
        estimate = ""
        low = 2 * X.shape[1] * N * N
        if rate and first["algorithm"] != "tree" and low / rate >= 5:
            estimate = (f": at least {low / 1e6:.2g} million model evaluations, roughly "
                        f"{_duration(low / rate)} or more with each merge")
        log(f"grouping interacting columns with AGREED on {N} rows{estimate}")
        grouper = AdaptiveGrouper(
            model, max_samples=N, n_groups=None, target=target_class,
            response_method=response_method, n_jobs=n_jobs, random_state=random_state,
            verbose=verbose, imputer=imputer,
        ).fit(X_fit)
        log(f"done in {_duration(time.perf_counter() - t)}: {grouper.n_groups_} groups")
        history = _agreed_history(grouper, X_fit, scale)
        history["no_interactions"] = not history["initial_loss"]
        # a wide table one merge away from its columns is not explained a second
        # time: the per-column explanation, with the two merged columns read
        # together, says the same at a fraction of the cost
        one_merge = history["n_groups"] == X.shape[1] - 1 and X.shape[1] > WIDE_COLUMNS
        if history["n_groups"] < X.shape[1] and not one_merge:
            agreed = {str(name): [str(X_fit.columns[j]) for j in cols]
                      for name, cols in zip(grouper.group_names_, grouper.groups_)}
            t = time.perf_counter()
            results["agreed"] = _explain_partition(
                model, X_fit, rows, agreed, methods, notes=notes, verbose=verbose,
                log=log, rate=rate, what="the AGREED groups", **common)
            log(f"done in {_duration(time.perf_counter() - t)}")
            try:
                owen = _owen_columns(model, X_fit, rows, agreed, first, log=log,
                                     **common)
            except (ValueError, TypeError) as exc:  # the explanation stays grouped
                notes.append(f"The columns' shares of the AGREED groups were not "
                             f"computed: {exc}")
                owen = None
            results["agreed"]["owen"] = owen
    out = {
        "n_rows": int(X.shape[0]),
        "columns": [str(c) for c in X.columns],
        "target": str(y.name),
        "task": "classification" if classification else "regression",
        "model": type(model).__name__ if not hasattr(model, "steps") else
        " > ".join(type(s).__name__ for _, s in model.steps),
        "n_fit_rows": int(len(X_fit)),
        "imputer": imputer,
        "score": score,
        "checks": checks,
        "dropped_columns": sorted(dropped),
        "partitions": results,
        "interactions": interactions,
        "regions": regions,
        "sources": sources,
        "agreed": history,
        "notes": list(dict.fromkeys(notes)),
    }
    out["verdict"] = _verdict(out)
    out["seconds"] = round(time.perf_counter() - started, 2)
    return out


# -- HTML ------------------------------------------------------------------------------
#: rows shown in a table; the rest are counted and left to results.json
