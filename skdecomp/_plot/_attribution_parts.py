"""Parts of the attribution plots: the arrays of Explanations, the beeswarm layout."""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping

import numpy as np

from .._methods import efficient_methods

__all__ = ["explanation_parts", "is_explanation", "swarm_offsets", "value_colors"]

# methods whose attributions add up to f(x) - E f
_EFFICIENT = tuple(efficient_methods())


def swarm_offsets(values, height, n_bins=60):
    """Deterministic beeswarm offsets: points in one value bin stack around 0.

    Points are binned along the value axis; in each bin they take the
    positions 0, +1, -1, +2, ... in the order of their values, scaled so that
    the fullest bin spans ``height``.
    """
    values = np.asarray(values, dtype=np.float64)
    offsets = np.zeros(values.size)
    finite = np.isfinite(values)
    if not finite.any():
        return offsets
    lo, hi = np.min(values[finite]), np.max(values[finite])
    bins = np.zeros(values.size, dtype=int)
    if hi > lo:
        scaled = np.where(finite, (values - lo) / (hi - lo), 0.0)
        bins = np.minimum((scaled * n_bins).astype(int), n_bins - 1)
    seen = np.zeros(n_bins, dtype=int)
    for i in np.argsort(np.where(finite, values, lo), kind="stable"):
        r = seen[bins[i]]
        seen[bins[i]] += 1
        offsets[i] = ((r + 1) // 2) * (1 if r % 2 else -1)
    top = np.max(np.abs(offsets))
    return offsets * (height / 2 / top) if top > 0 else offsets


def _numeric(column):
    """The column as floats (NaN where missing), or None for a categorical one."""
    import pandas as pd

    column = np.asarray(column)
    if column.dtype.kind in "biuf":
        return column.astype(np.float64)
    present = pd.isna(column)
    try:
        out = np.full(column.shape, np.nan)
        out[~present] = np.asarray(column[~present], dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return out


def value_colors(data, groups):
    """Feature values scaled to [0, 1] per group, and what the grey points are.

    Each one-column numeric group is scaled from its 5th to its 95th
    percentile (as shap does; min and max when these are equal) and clipped.
    Groups of several columns, categorical columns and missing values are
    NaN: drawn in the neutral colour. Returns the scaled values and, per
    group, None (coloured) or the reason it is grey.
    """
    n, K = data.shape
    scaled = np.full((n, K), np.nan)
    reasons = []
    for k in range(K):
        several = groups is not None and len(groups[k]) > 1
        values = None if several else _numeric(data[:, k])
        if several or values is None or not np.isfinite(values).any():
            if several or (values is not None and groups is None):
                # data holds NaN for a group of several columns
                reasons.append("several columns")
            else:
                reasons.append("categorical" if values is None else "missing")
            continue
        finite = values[np.isfinite(values)]
        lo, hi = np.percentile(finite, [5, 95])
        if hi <= lo:
            lo, hi = np.min(finite), np.max(finite)
        scaled[:, k] = 0.5 if hi <= lo else np.clip((values - lo) / (hi - lo), 0, 1)
        reasons.append("missing" if np.isnan(values).any() else None)
    return scaled, reasons


def explanation_parts(result, methods=None, output=None):
    """Attributions, names, values and base values of Explanation objects."""
    from .._explanation import Explanation, explanation_arrays

    if isinstance(result, Explanation):
        result = {result.method or "attribution": result}
    elif not isinstance(result, Mapping):
        result = {(e.method or f"explanation {i}"): e for i, e in enumerate(result)}
    # f(x) from efficient attributions, even of a method not shown
    efficient = next((result[m] for m in _EFFICIENT if m in result), None)
    if methods is not None:
        methods = [methods] if isinstance(methods, str) else list(methods)
        missing = [m for m in methods if m not in result]
        if missing:
            raise ValueError(f"methods {missing} are not in the result {list(result)}.")
        result = {m: result[m] for m in methods}
    if not result:
        raise ValueError("No attributions to plot.")
    attributions, errors = {}, {}
    first = None
    hierarchy = next((e.hierarchy for e in result.values()
                      if getattr(e, "hierarchy", None) is not None), None)
    for name, expl in result.items():
        if not isinstance(expl.feature_names, list):
            raise ValueError(
                f"the explanation {name!r} holds one group; keep the group axis, "
                "e.g. explanation[:, :] rather than explanation[:, 'bmi']."
            )
        # the stored arrays keep all three axes (rows, groups, outputs)
        arrays = explanation_arrays(expl)
        v, b = arrays["values"], arrays["base_values"]
        if v.shape[2] > 1 and output is None:
            raise ValueError(
                f"attributions have {v.shape[2]} outputs {expl.output_names}; "
                "choose one with output=<index>."
            )
        o = 0 if output is None else output
        attributions[str(name)] = np.asarray(v[:, :, o], dtype=np.float64)
        if arrays["standard_errors"] is not None:
            errors[str(name)] = arrays["standard_errors"][:, :, o]
        if first is None:
            first = (arrays, np.asarray(b[:, o], dtype=np.float64))
    shapes = {a.shape for a in attributions.values()}
    if len(shapes) > 1:
        raise ValueError(
            f"attribution arrays must share one shape, got {sorted(shapes)}."
        )
    arrays, base = first
    if 0 in arrays["values"].shape[:2]:
        raise ValueError(
            f"nothing to draw: the explanation has {arrays['values'].shape[0]} rows and "
            f"{arrays['values'].shape[1]} groups; explain at least one row of one group."
        )
    prediction = None
    if efficient is not None:
        eff = explanation_arrays(efficient)
        if eff["values"].shape[:2] == arrays["values"].shape[:2]:
            o = 0 if output is None else output
            prediction = eff["base_values"][:, o] + eff["values"][:, :, o].sum(axis=1)
    return {
        "attributions": attributions,
        "group_names": arrays["group_names"],
        "expected_value": float(base[0]) if np.all(base == base[0]) else base,
        "prediction": prediction,
        "data": np.asarray(arrays["data"]),
        "groups": arrays["groups"],
        "standard_errors": errors or None,
        "hierarchy": hierarchy,
    }


def is_explanation(result):
    from .._explanation import Explanation

    if isinstance(result, Explanation):
        return True
    items = result.values() if isinstance(result, Mapping) else (
        result if isinstance(result, (list, tuple)) else ()
    )
    items = list(items)
    return bool(items) and all(isinstance(e, Explanation) for e in items)
