"""Explanations of the chosen rows over one partition, as plain data."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd

from ._common import (
    INDEX_COLUMNS,
    INTERACTION_COLUMNS,
    REGION_ROWS,
    REGION_ROWS_TREE,
    ROUND_OFF,
    SAMPLED_EVALUATIONS,
    SOURCE_COLUMNS,
    SOURCE_EVALUATIONS,
    SOURCE_MIN_ROWS,
    SOURCE_ROWS,
    _clean,
    _duration,
    _label,
)


def _sampled_budget(K, n_rows, n_background):
    """Coalitions per explained row for a sampled method: a fixed number of evaluations."""
    budget = SAMPLED_EVALUATIONS // max(1, n_rows * n_background)
    return int(min(2 * K + 2048, max(4 * (K + 1), budget)))


def _direction(values, phi, categorical):
    """How a column's value moves its attribution, in plain words."""
    values = pd.Series(values).reset_index(drop=True)
    phi = pd.Series(np.asarray(phi, dtype=float))
    keep = values.notna().to_numpy() & np.isfinite(phi.to_numpy())
    values, phi = values[keep], phi[keep]
    if len(values) < 5 or phi.abs().max() == 0:
        return "no visible effect on these rows"
    if categorical:
        means = phi.groupby(values.astype(str).to_numpy()).mean()
        if len(means) < 2:
            return "one level on these rows"
        up, down = means.idxmax(), means.idxmin()
        return f"{up!r} raises the prediction most, {down!r} lowers it most"
    if values.nunique() < 2:
        return "one value on these rows"
    rho = float(pd.Series(values.to_numpy(dtype=float)).rank().corr(phi.rank()))
    if not np.isfinite(rho):
        return "no clear direction"
    if rho >= 0.5:
        return f"higher values raise the prediction (rank correlation {rho:+.2f})"
    if rho <= -0.5:
        return f"higher values lower the prediction (rank correlation {rho:+.2f})"
    return (f"no single direction (rank correlation {rho:+.2f}): the effect depends on "
            "other columns or is not monotone")


def _explain_partition(model, X_fit, rows, groups, methods, *, background, random_state,
                       n_jobs, notes, target=None, response_method="auto", verbose=0,
                       log=print, rate=None, what="the columns"):
    from .. import metrics
    from .._explainer import MAX_EXACT_GROUPS, Explainer
    from .._methods import (
        SAMPLED_METHODS,
        SINGLE_GROUP_METHODS,
        default_methods,
        lead_method,
    )
    from .._model import describe_response
    from .._partition import resolve_groups

    positions, names = resolve_groups(groups, X_fit.shape[1], list(X_fit.columns))
    K = len(positions)
    explainer = Explainer(
        model, method="occlusion", groups=groups, background=background, target=target,
        response_method=response_method, random_state=random_state, n_jobs=n_jobs,
        verbose=verbose,
    ).fit(X_fit)
    tree = explainer.algorithm_ == "tree"
    chosen = list(methods) if methods else None
    if chosen is None:
        wide = K > MAX_EXACT_GROUPS and not tree
        # beyond exact enumeration: the exact single-group methods and two
        # Shapley estimates
        chosen = default_methods("report_wide" if wide else "exact")
        if wide:
            note = (f"Beyond {MAX_EXACT_GROUPS} groups, exact Shapley values need a model "
                    "read on the tree path (this one is explained through model calls: "
                    f"{explainer.algorithm_}): occlusion and PDP/Arch are computed exactly, and Shapley "
                    "values are estimated by sampling (Kernel SHAP, permutation SHAP); "
                    "the difference between these two is sampling noise.")
            if note not in notes:
                notes.append(note)
    n_bg = len(explainer.background_)
    sampled = [m for m in chosen if m in SAMPLED_METHODS]
    n_samples = _sampled_budget(K, len(rows), n_bg) if sampled else None
    if sampled:
        explainer.set_params(n_samples=n_samples)
    exact = [m for m in chosen if m not in SAMPLED_METHODS]
    single = all(m in SINGLE_GROUP_METHODS for m in exact)
    per_row = (2 * K + 1 if single else 2 ** K) if exact else 0
    evaluations = len(rows) * n_bg * (per_row + len(sampled) * (n_samples or 0))
    if not tree and rate and evaluations / rate >= 5:
        log(f"explaining {len(rows)} rows over {what} ({K} groups) with "
            f"{', '.join(chosen)}: about {evaluations / 1e6:.2g} million model "
            f"evaluations, roughly {_duration(evaluations / rate)}")
    else:
        log(f"explaining {len(rows)} rows over {what} ({K} groups) with "
            f"{', '.join(chosen)}")
    res, importance_se = {}, {}
    for m, e in explainer.explain(rows, methods=chosen).items():
        a = np.asarray(e.values, dtype=float)
        res[m] = a[:, :, 0] if a.ndim == 3 else a
        if e.standard_errors is not None:
            se = np.asarray(e.standard_errors, dtype=float)
            se = se[:, :, 0] if se.ndim == 3 else se
            # the mean over the rows bounds the standard error of the mean |phi|
            importance_se[m] = se.mean(axis=0).tolist()
    sample = X_fit.iloc[:1000]
    output = explainer.game_.predict(explainer.game_.check_X(sample))[:, 0]
    spread = float(np.std(output))
    scale = spread or float(np.abs(output).mean()) or 1.0
    var = spread**2 or 1.0
    res = {m: _clean(a, scale) for m, a in res.items()}
    pair = metrics.disagreement(res, measure="l2")
    # summed over groups: the squared distance between two explanations of a row
    summed = np.asarray(metrics.disagreement(res, measure="l2", normalize="sum").pairwise)
    rms = np.sqrt(np.clip(summed / var, 0.0, None))
    rms[rms < np.sqrt(ROUND_OFF)] = 0.0
    E = len(chosen)
    mean_rms = float(np.sqrt(summed[np.triu_indices(E, 1)].mean() / var)) if E > 1 else 0.0
    if mean_rms < np.sqrt(ROUND_OFF):
        mean_rms = 0.0
    main = lead_method(chosen)
    importance = {m: _clean(np.mean(np.abs(a), axis=0), scale).tolist()
                  for m, a in res.items()}
    order = np.argsort(-np.asarray(importance[main]), kind="stable")
    group_columns = [[str(X_fit.columns[j]) for j in pos] for pos in positions]
    out = {
        "group_names": [str(n) for n in names],
        "group_labels": [_label(n, cols) for n, cols in zip(names, group_columns)],
        "groups": group_columns,
        "methods": chosen,
        "main_method": main,
        "order": [int(k) for k in order],
        "attributions": {m: a.tolist() for m, a in res.items()},
        "importance": importance,
        "importance_se": importance_se,
        "disagreement_l2": (np.asarray(pair.pairwise) / var).tolist(),
        "mean_disagreement_l2": float(pair.score) / var,
        "disagreement_rms": rms.tolist(),
        "mean_disagreement_rms": mean_rms,
        "disagreement_spearman": np.asarray(
            metrics.disagreement(res, measure="spearman").pairwise).tolist(),
        "output": explainer.output_names_[0] if explainer.n_outputs_ == 1 else None,
        "response_method": explainer.response_method_,
        "explained_output": describe_response(
            explainer.response_method_, explainer.output_names_, explainer.estimator_
        ),
        "algorithm": explainer.algorithm_,
        "n_samples": n_samples,
        "n_background": int(n_bg),
        "output_spread": spread,
        "output_mean": float(np.mean(output)),
        "n_rows": int(len(rows)),
    }
    prediction = explainer.game_.predict(explainer.game_.check_X(rows))[:, 0]
    base = np.ravel(explainer.expected_value_)[0]
    out["row_ids"] = [int(i) if isinstance(i, (int, np.integer)) else str(i)
                      for i in rows.index]
    out["prediction"] = prediction.tolist()
    out["expected_value"] = float(base)
    if all(len(p) == 1 for p in positions):
        phi = res[main]
        out["direction"] = [
            _direction(rows.iloc[:, pos[0]], phi[:, k],
                       not pd.api.types.is_numeric_dtype(rows.iloc[:, pos[0]]))
            for k, pos in enumerate(positions)
        ]
    return out


def _interactions(model, X_fit, rows, part, *, background, random_state, n_jobs, target,
                  response_method):
    """Pairwise interactions of the most important columns, as shares of the spread."""
    from .._explainer import Explainer
    from ..inspection import interaction_matrix

    imp = np.asarray(part["importance"][part["main_method"]])
    top = [k for k in part["order"][:INTERACTION_COLUMNS] if imp[k] > 0]
    if len(top) < 2:
        return None
    columns = [part["groups"][k][0] for k in top]
    groups = {c: [c] for c in columns}
    rest = [c for c in X_fit.columns if c not in groups]
    if rest:
        groups["other columns"] = rest
    explainer = Explainer(model, groups=groups, background=background, target=target,
                          response_method=response_method, random_state=random_state,
                          n_jobs=n_jobs).fit(X_fit)
    M = interaction_matrix(explainer, kind="full")[: len(columns), : len(columns)]
    var = part["output_spread"] ** 2 or 1.0
    share = np.sqrt(np.clip(M / var, 0.0, None))
    share[share < np.sqrt(ROUND_OFF)] = 0.0
    pairs = sorted(
        ((float(share[i, j]), columns[i], columns[j])
         for i in range(len(columns)) for j in range(i + 1, len(columns))),
        reverse=True,
    )
    common = dict(background=background, target=target, response_method=response_method,
                  random_state=random_state, n_jobs=n_jobs)
    return {
        "columns": columns,
        "strength": share.tolist(),
        "top_pairs": [{"columns": [a, b], "strength": s}
                      for s, a, b in pairs[:5] if s > 0],
        "index": _index_values(explainer, model, X_fit, rows, columns, common),
    }


def _index_values(explainer, model, X_fit, rows, columns, common):
    """k-SII of order 2 of the most important columns at the explained rows.

    The other columns form one group. On the tree path all the compared
    columns; through model calls the first ``INDEX_COLUMNS`` of them.
    """
    from .._explainer import Explainer

    if explainer.algorithm_ != "tree" and len(columns) > INDEX_COLUMNS:
        columns = columns[:INDEX_COLUMNS]
        groups = {c: [c] for c in columns}
        rest = [c for c in X_fit.columns if c not in groups]
        if rest:
            groups["other columns"] = rest
        explainer = Explainer(model, groups=groups, **common).fit(X_fit)
    res = explainer.interactions(rows, index="k-SII", max_order=2)
    return {
        "index": res.index,
        "groups": list(res.feature_names),
        "terms": [list(t) for t in res.terms],
        "values": res.values.tolist(),
        "base_values": res.base_values.tolist(),
    }


def _regions(model, X_fit, tree, *, background, random_state, n_jobs, target,
             response_method):
    """Regions of the rows where the model is additive over its columns (FDTree)."""
    from .._grouping import FDTree

    N = min(REGION_ROWS_TREE if tree else REGION_ROWS, len(X_fit))
    fd = FDTree(model, max_depth=2, min_samples_leaf=max(10, N // 10), max_samples=N,
                response_method=response_method, random_state=random_state,
                n_jobs=n_jobs).fit(X_fit)
    root = fd.loss_root_
    return {
        "n_rows": N,
        "n_regions": int(fd.n_regions_),
        "loss_root": float(root),
        "loss": float(fd.loss_),
        "share_left": float(fd.loss_ / root) if root > 0 else 0.0,
        "rules": [str(r) for r in fd.rules_],
        "sizes": [int(n) for n in fd.region_sizes_],
        "losses": [float(v) for v in fd.region_losses_],
        "text": fd.export_text(),
    }


def _named(columns, shown=3):
    """Column names for a sentence: the first few, quoted, and a count of the rest."""
    names = ", ".join(repr(str(c)) for c in columns[:shown])
    rest = len(columns) - shown
    return names + (f" and {rest} more" if rest > 0 else "")


def _source_rows(n_columns, n_rows, tree):
    """Rows for the sources of disagreement, within SOURCE_EVALUATIONS."""
    per_square = (2 if tree else 4) * n_columns
    N = int(np.sqrt(SOURCE_EVALUATIONS / per_square))
    return min(n_rows, SOURCE_ROWS, max(SOURCE_MIN_ROWS, N))


def _sources(model, X_fit, tree, *, background, random_state, n_jobs, target,
             response_method, log=print, rate=None):
    """How much of the disagreement comes from interactions and from dependence.

    Per column, as shares of the variance of the explained output, measured
    on a few rows (see :func:`~skdecomp.inspection.disagreement_sources`).
    Raises ValueError, with a plain reason, when the columns cannot be drawn
    given each other: text columns or missing values.
    """
    from ..inspection import disagreement_sources

    text = [c for c, t in X_fit.dtypes.items()
            if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))]
    if text:
        what = "non-numeric columns" if len(text) > 1 else "a non-numeric column"
        raise ValueError(
            f"the table has {what} ({_named(text)}), and drawing a column given the "
            "others needs numbers."
        )
    missing = [c for c in X_fit.columns if X_fit[c].isna().any()]
    if missing:
        what = "columns" if len(missing) > 1 else "column"
        verb = "have" if len(missing) > 1 else "has"
        raise ValueError(
            f"{what} {_named(missing)} {verb} missing values, and drawing a column "
            "given the others needs complete rows."
        )
    K = X_fit.shape[1]
    N = _source_rows(K, len(X_fit), tree)
    evaluations = (2 if tree else 4) * K * N * N
    estimate = ""
    if rate and evaluations / rate >= 5:
        estimate = (f": about {evaluations / 1e6:.2g} million model evaluations, "
                    f"roughly {_duration(evaluations / rate)}")
    log("measuring how much of the disagreement comes from interactions and how much "
        f"from dependence between columns, on {N} rows{estimate}")
    res = disagreement_sources(model, X_fit, max_samples=N,
                               response_method=response_method, target=target,
                               random_state=random_state)
    columns = [str(c) for c in X_fit.columns]
    out = {"n_rows": int(res.n_samples), "columns": columns}
    for key in ("interaction", "dependence"):
        per = _clean(np.maximum(getattr(res, f"{key}_per_group"), 0.0), 1.0)
        order = np.argsort(-per, kind="stable")
        out[key] = float(per.sum())
        out[f"{key}_per_column"] = per.tolist()
        out[f"top_{key}"] = [{"column": columns[k], "share": float(per[k])}
                             for k in order[:SOURCE_COLUMNS] if per[k] > 0]
    return out
