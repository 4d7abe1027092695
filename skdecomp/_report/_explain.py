"""Explanations of the chosen rows over one partition, as plain data."""

# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pandas as pd

from ._common import (
    INDEX_COLUMNS,
    INTERACTION_COLUMNS,
    REGION_EVALUATIONS,
    REGION_MIN_ROWS,
    REGION_ROWS,
    REGION_ROWS_TREE,
    REGION_TREE_NODES,
    ROUND_OFF,
    SAMPLED_EVALUATIONS,
    SOURCE_COLUMNS,
    SOURCE_EVALUATIONS,
    SOURCE_MIN_ROWS,
    SOURCE_ROWS,
    DataError,
    _clean,
    _duration,
    _label,
)


def _sampled_budget(K, n_rows, n_background):
    """Coalitions per explained row for a sampled method: a fixed number of evaluations.

    Never below the smallest budget any sampled method accepts (where its
    standard errors hold), nor above every coalition.
    """
    from .._methods import SAMPLED_METHODS
    from .._methods._registry import min_samples, n_coalitions

    low = max(min_samples(m, K) for m in SAMPLED_METHODS)
    budget = SAMPLED_EVALUATIONS // max(1, n_rows * n_background)
    return int(min(max(2 * K + 2048, low), max(4 * (K + 1), low, budget),
                   max(n_coalitions(K), 1)))


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
                       log=print, rate=None, what="the columns", imputer="marginal"):
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
        verbose=verbose, imputer=imputer,
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
    prediction = explainer.game_.predict(explainer.game_.check_X(rows))[:, 0]
    both = np.concatenate([output, prediction])
    level = float(np.max(np.abs(both)))
    with np.errstate(over="ignore", invalid="ignore"):
        overflow = not np.isfinite(level) or not np.isfinite(float(np.std(output)))
    if overflow:
        raise DataError(
            f"the model's output reaches {level:.3g} on the table's rows, so large "
            "that its variance overflows double precision: no spread, score or share "
            "of it can be computed. Rescale the target (other units, or its "
            "logarithm) and fit the model again."
        )
    # a model that predicts one value on these rows: its spread is round-off
    # (np.std of equal values need not be 0), and no share of it means anything
    constant = float(np.ptp(both)) <= ROUND_OFF * level
    spread = 0.0 if constant else float(np.std(output))
    scale = spread or level or 1.0
    var = spread**2 or 1.0
    res = {m: _clean(a, scale) for m, a in res.items()}
    E = len(chosen)
    if E > 1:
        pair = metrics.disagreement(res, measure="l2")
        # summed over groups: the squared distance between two explanations of a row
        summed = np.asarray(
            metrics.disagreement(res, measure="l2", normalize="sum").pairwise)
        rms = np.sqrt(np.clip(summed / var, 0.0, None))
        rms[rms < np.sqrt(ROUND_OFF)] = 0.0
        mean_rms = float(np.sqrt(summed[np.triu_indices(E, 1)].mean() / var))
        if mean_rms < np.sqrt(ROUND_OFF):
            mean_rms = 0.0
        l2 = (np.asarray(pair.pairwise) / var).tolist()
        mean_l2 = float(pair.score) / var
        spearman = np.asarray(
            metrics.disagreement(res, measure="spearman").pairwise).tolist()
    else:
        # one method: nothing to compare it with, so no disagreement to state
        l2 = rms = [[0.0]]
        spearman = [[0.0]]
        mean_l2 = mean_rms = None
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
        "disagreement_l2": l2,
        "mean_disagreement_l2": mean_l2,
        "disagreement_rms": np.asarray(rms).tolist(),
        "mean_disagreement_rms": mean_rms,
        "disagreement_spearman": spearman,
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
        "constant_output": bool(constant),
        "n_rows": int(len(rows)),
    }
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
                  response_method, imputer="marginal"):
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
                          n_jobs=n_jobs, imputer=imputer).fit(X_fit)
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
                  random_state=random_state, n_jobs=n_jobs, imputer=imputer)
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


def _region_path(model, X_fit, tree, response_method="auto"):
    """How the regions step reads the model: ``(rows, function)``.

    On the tree path of an ensemble of at most ``REGION_TREE_NODES`` nodes,
    the anchored matrices come from the leaves at little cost, on
    ``REGION_ROWS_TREE`` rows (``function`` is None: the model itself).
    Otherwise they take ``K * N**2`` model calls for K columns: a large
    forest costs more through its leaves than through calls, so
    ``function`` is then the explained output
    of the model as a plain function, and N is ``REGION_ROWS`` rows, fewer
    for a wide table so that ``K * N**2`` stays within
    ``REGION_EVALUATIONS`` (at least ``REGION_MIN_ROWS``).
    """
    from .._model import resolve_response
    from .._tree import select_algorithm

    n, K = X_fit.shape
    function = None
    if tree:
        response, _ = resolve_response(model, response_method, None, X_fit.iloc[:1])
        trees, _ = select_algorithm("auto", model, response, X_fit.iloc[:20])
        if trees is not None and trees.node_int.shape[0] <= REGION_TREE_NODES:
            return min(REGION_ROWS_TREE, n), None

        def function(Z):
            return response(Z)

    N = int(np.sqrt(REGION_EVALUATIONS / max(K, 1)))
    return min(n, REGION_ROWS, max(REGION_MIN_ROWS, N)), function


def _regions(model, X_fit, tree, *, background, random_state, n_jobs, target,
             response_method):
    """Regions of the rows where the model is additive over its columns (FDTree).

    The rows and the path are those of :func:`_region_path`; the tree is at
    most two levels deep, with at least a tenth of the rows (10 or more) in
    every region.
    """
    from .._grouping import FDTree

    N, function = _region_path(model, X_fit, tree, response_method)
    fd = FDTree(model if function is None else function, max_depth=2,
                min_samples_leaf=max(10, N // 10), max_samples=N,
                response_method=response_method if function is None else "predict",
                random_state=random_state, n_jobs=n_jobs).fit(X_fit)
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


def _encoded(model, X_fit):
    """The table as the model's last step sees it, and each table column's encoded columns.

    A pipeline's preprocessing steps (one-hot or ordinal codes, target
    encoding, imputers, scalers) are applied, so that text columns become the
    numbers the model reads; returns ``(final_model, Z, groups)`` with
    ``groups`` mapping each column of the table to its columns of ``Z``.
    Returns None when the model is not a pipeline of column-wise steps.
    """
    from sklearn.pipeline import Pipeline

    from .._tree._extract import _column_sources

    if not isinstance(model, Pipeline) or len(model.steps) < 2:
        return None
    pre = Pipeline(model.steps[:-1])
    try:
        source = _column_sources(pre, X_fit.shape[1])
        Z = np.asarray(pre.transform(X_fit), dtype=np.float64)
    except (ValueError, TypeError):
        return None
    groups = {str(c): [int(j) for j in np.flatnonzero(source == k)]
              for k, c in enumerate(X_fit.columns)}
    return model.steps[-1][1], Z, {c: g for c, g in groups.items() if g}


def _sources(model, X_fit, tree, *, background, random_state, n_jobs, target,
             response_method, log=print, rate=None, imputer="marginal"):
    """How far the explanation moves between the marginal and the conditional game.

    Per column, in units of the variance of the explained output, measured on
    a few rows (see :func:`~skdecomp.inspection.disagreement_sources`): the
    interaction part (the gap between PDP and occlusion under the marginal
    game) and the dependence part (the gap between the marginal and the
    conditional effects). Text columns are encoded as the model's pipeline
    encodes them, each column's encoded columns drawn as one group. Raises
    ValueError, with a plain reason, when the columns cannot be drawn given
    each other.
    """
    from ..inspection import disagreement_sources

    text = [c for c, t in X_fit.dtypes.items()
            if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))]
    columns = [str(c) for c in X_fit.columns]
    explained, data, groups = model, X_fit, None
    if text:
        encoded = _encoded(model, X_fit)
        if encoded is None:
            what = "non-numeric columns" if len(text) > 1 else "a non-numeric column"
            raise ValueError(
                f"the table has {what} ({_named(text)}) that the model does not encode "
                "in a pipeline of column-wise steps, and drawing a column given the "
                "others needs numbers."
            )
        explained, data, groups = encoded
        columns = list(groups)
    # rows with a missing value cannot be drawn given the others: the sources
    # are measured on the complete rows when enough of them remain
    incomplete = (np.isnan(data).any(axis=1) if groups is not None
                  else X_fit.isna().any(axis=1).to_numpy())
    n_complete = int((~incomplete).sum())
    if incomplete.any() and n_complete < SOURCE_MIN_ROWS:
        missing = ([c for c in columns if np.isnan(data[:, groups[c]]).any()]
                   if groups is not None else
                   [str(c) for c in X_fit.columns if X_fit[c].isna().any()])
        what = "columns" if len(missing) > 1 else "column"
        verb = "have" if len(missing) > 1 else "has"
        raise ValueError(
            f"{what} {_named(missing)} {verb} missing values in all but {n_complete} "
            f"rows, and drawing a column given the others needs at least "
            f"{SOURCE_MIN_ROWS} complete rows."
        )
    if incomplete.any():
        data = data[~incomplete] if groups is not None else data.loc[~incomplete]
    K = len(columns)
    N = _source_rows(K, n_complete, tree)
    evaluations = (2 if tree else 4) * K * N * N
    estimate = ""
    if rate and evaluations / rate >= 5:
        estimate = (f": about {evaluations / 1e6:.2g} million model evaluations, "
                    f"roughly {_duration(evaluations / rate)}")
    log("measuring how far the explanation would move if the absent columns were "
        f"drawn given the present ones, on {N} rows{estimate}")
    with warnings.catch_warnings():
        # the page states the bound of the estimate's error instead
        warnings.filterwarnings("ignore", message="The dependence estimate may be off")
        res = disagreement_sources(explained, data, groups=groups, max_samples=N,
                                   response_method=response_method, target=target,
                                   random_state=random_state)
    out = {"n_rows": int(res.n_samples), "columns": columns, "game": imputer,
           "variance": float(res.variance), "encoded": bool(text),
           "dependence_noise": float(res.dependence_noise),
           "complete_rows_only": bool(incomplete.any())}
    for key in ("interaction", "dependence"):
        # both are clipped at 0 per group by disagreement_sources
        per = _clean(np.asarray(getattr(res, f"{key}_per_group"), dtype=float), 1.0)
        order = np.argsort(-per, kind="stable")
        total = float(per.sum())
        out[key] = total
        out[f"{key}_per_column"] = per.tolist()
        # the parts of the whole, which add up to 1 over the columns
        out[f"{key}_parts"] = (per / total).tolist() if total > 0 else [0.0] * K
        out[f"top_{key}"] = [{"column": columns[k], "share": float(per[k] / total)}
                             for k in order[:SOURCE_COLUMNS] if per[k] > 0]
    return out


def _owen_columns(model, X_fit, rows, agreed, part, *, background, random_state, n_jobs,
                  target, response_method, imputer="marginal", log=print):
    """Each column's share of its AGREED group: the Owen values of the two levels.

    The AGREED groups are the blocks of a coalition structure over the
    columns; a column's Owen value shares every interaction along it, so the
    values of a group's columns add up to the group's grouped Shapley value.
    Returns None when the columns are too many for an exact value through
    model calls.
    """
    from .._config import MAX_EXACT_GROUPS
    from .._explainer import Explainer

    explainer = Explainer(model, method="owen", hierarchy=list(agreed.values()),
                          background=background, target=target,
                          response_method=response_method, random_state=random_state,
                          n_jobs=n_jobs, imputer=imputer).fit(X_fit)
    K = X_fit.shape[1]
    if explainer.algorithm_ != "tree" and K > MAX_EXACT_GROUPS:
        return None
    log("sharing each AGREED group among its columns (Owen values)")
    res = explainer.explain(rows, methods=["owen"])["owen"]
    values = np.asarray(res.values, dtype=float)
    values = values[:, :, 0] if values.ndim == 3 else values
    scale = part["output_spread"] or 1.0
    values = _clean(values, scale)
    columns = [str(c) for c in X_fit.columns]
    block_of = {c: name for name, cols in agreed.items() for c in cols}
    return {
        "columns": columns,
        "group": [block_of[c] for c in columns],
        "attributions": values.tolist(),
        "importance": np.mean(np.abs(values), axis=0).tolist(),
        "mean": values.mean(axis=0).tolist(),
    }
