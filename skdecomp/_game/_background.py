"""The background rows of an explainer: drawn from the data, or given."""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
import pandas as pd

from .._model import non_numeric_columns, to_pandas

__all__ = ["resolve_background"]


def _as_background_array(bg, dtype=None):
    """``np.asarray(bg)``, with a clear error for ragged rows."""
    try:
        return np.asarray(bg, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "background is not a table of rows (its rows differ in length, or "
            "hold sequences); give a 2-D array or DataFrame with the columns of X, "
            "or an int number of rows to sample from X."
        ) from exc


def resolve_background(background, X, rng):
    """The background rows of an explainer.

    Parameters
    ----------
    background : int or array-like
        The explainer's ``background``: a number of rows to draw from X, or
        the rows.
    X : ndarray or DataFrame
        The checked rows passed to ``fit``.
    rng : RandomState
        Draws the rows.

    Returns
    -------
    background : ndarray or DataFrame
        Rows with the columns (and types) of X.
    """
    bg = background
    if isinstance(bg, Integral) and not isinstance(bg, bool):
        n = X.shape[0]
        if bg >= n:
            idx = np.arange(n)
        else:
            idx = np.sort(rng.choice(n, size=bg, replace=False))
        return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]
    if isinstance(bg, (bool, np.bool_, dict, set)) or np.isscalar(bg):
        raise TypeError(
            f"background={bg!r} is not rows; give an int number of rows to "
            "sample from X, or the background rows as a 2-D array or "
            "DataFrame (a 1-D array for a single row)."
        )
    bg = to_pandas(bg)
    if isinstance(bg, pd.Series):
        bg = bg.to_frame().T
    if isinstance(X, pd.DataFrame):
        if isinstance(bg, pd.DataFrame):
            missing = [c for c in X.columns if c not in bg.columns]
            if missing or bg.shape[1] != X.shape[1]:
                raise ValueError(
                    f"background has columns {list(bg.columns)} but X has "
                    f"{list(X.columns)}; give background rows with the "
                    "columns of X."
                )
            bg = bg[X.columns]
        else:
            arr = _as_background_array(bg, dtype=object)
            if arr.ndim == 1:
                arr = arr[None, :]
            if arr.ndim != 2 or arr.shape[1] != X.shape[1]:
                raise ValueError(
                    f"background has shape {arr.shape}; it needs "
                    f"{X.shape[1]} columns like X."
                )
            bg = pd.DataFrame(arr, columns=X.columns)
        try:
            bg = bg.astype(dict(zip(X.columns, X.dtypes)))
        except (TypeError, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ValueError(
                "background cannot take the column types of X "
                f"({first}); give background rows with the same kind of "
                "values as X in every column (numbers where X has numbers), "
                "or an int number of rows to sample from X."
            ) from exc
    else:
        if isinstance(bg, pd.DataFrame):
            bg = bg.to_numpy()
        bg = _as_background_array(bg)
        if bg.ndim >= 3 and np.prod(bg.shape) == X.shape[1]:
            bg = bg.reshape(1, -1)  # one image
        elif bg.ndim >= 3 and np.prod(bg.shape[1:]) == X.shape[1]:
            bg = bg.reshape(bg.shape[0], -1)  # images, as rows
        if bg.ndim == 1:
            bg = bg[None, :]
        if bg.ndim != 2 or bg.shape[1] != X.shape[1]:
            raise ValueError(
                f"background has shape {bg.shape}; it needs "
                f"{X.shape[1]} columns like X."
            )
        if X.dtype.kind in "biuf" and non_numeric_columns(bg):
            raise ValueError(
                f"background has non-numeric values (dtype {bg.dtype}), but X "
                "is numeric; give background rows of numbers like X, or an "
                "int number of rows to sample from X."
            )
        if bg.dtype != X.dtype and X.dtype != object:
            bg = bg.astype(np.result_type(bg.dtype, X.dtype))
    if bg.shape[0] == 0:
        raise ValueError(
            "background has 0 rows; give at least one reference row or an "
            "int number of rows to sample from X."
        )
    return bg
