"""Groups of the output columns of a fitted ColumnTransformer, one per raw input column."""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

__all__ = ["column_transformer_groups"]


def column_transformer_groups(column_transformer):
    """Make one group per raw input column of a fitted ColumnTransformer.

    Output columns of a transformer that sees one input column (e.g. the
    one-hot block of a categorical column) form that column's group;
    transformers with one output per input column (scalers, passthrough)
    map each output to its input; outputs named ``<input>_<suffix>`` (e.g.
    one-hot encoders of several columns) go to the input they name; any
    other transformer's outputs form one group named after the transformer.

    Parameters
    ----------
    column_transformer : fitted ColumnTransformer
        The transformer (or a ``FrozenEstimator`` holding it) whose output
        columns are grouped.

    Returns
    -------
    groups : dict
        Raw column name -> list of output column positions, in output order.
    """
    if not hasattr(column_transformer, "output_indices_") and hasattr(
        column_transformer, "estimator"
    ):
        column_transformer = column_transformer.estimator  # FrozenEstimator
    if not hasattr(column_transformer, "output_indices_"):
        raise ValueError(
            f"{type(column_transformer).__name__} is not a fitted ColumnTransformer; "
            "fit it first (its output columns are needed)."
        )
    ct = column_transformer
    in_names = getattr(ct, "feature_names_in_", None)
    groups = {}
    for name, trans, cols in ct.transformers_:
        sl = ct.output_indices_[name]
        out = list(range(sl.start, sl.stop))
        if trans == "drop" or not out:
            continue
        cols = np.atleast_1d(cols)
        if cols.dtype == bool:
            cols = np.flatnonzero(cols)
        raw = [
            str(in_names[c]) if isinstance(c, (Integral, np.integer)) and in_names is not None
            else (f"x{c}" if isinstance(c, (Integral, np.integer)) else str(c))
            for c in cols
        ]
        if len(raw) == 1:
            groups.setdefault(raw[0], []).extend(out)
            continue
        if len(out) == len(raw) and (trans == "passthrough" or _one_to_one(trans, raw)):
            for r, o in zip(raw, out):
                groups.setdefault(r, []).append(o)
            continue
        try:
            out_names = [str(s) for s in trans.get_feature_names_out(raw)]
        except Exception:
            out_names = None
        if out_names is not None and len(out_names) == len(out):
            owners = []
            for s in out_names:
                hits = [r for r in raw if s == r or s.startswith(r + "_")]
                owners.append(max(hits, key=len) if hits else None)
            if all(o is not None for o in owners):
                for r, o in zip(owners, out):
                    groups.setdefault(r, []).append(o)
                continue
        groups.setdefault(name, []).extend(out)
    return groups


def _one_to_one(trans, raw):
    try:
        names = [str(s) for s in trans.get_feature_names_out(raw)]
    except Exception:
        return False
    return names == list(raw)
