"""Column stores of explained and background rows that build hybrid rows.

Hybrid rows are built at the level of the raw input columns, so a pipeline
that one-hot encodes a column sees that column move as one.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd

__all__ = [
    "Table",
    "column_masks",
    "common_dtypes",
    "csv_header",
    "duplicate_columns_note",
    "renamed_duplicate_columns",
]


class Table:
    """Column store of a 2-D array or DataFrame that can build hybrid rows.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features) or DataFrame
    dtypes : list of dtypes or None
        For DataFrames, the dtypes seen at fit; categorical columns are
        re-coded to a common set of categories so codes can be mixed.
    """

    def __init__(self, X, dtypes=None):
        self.is_frame = isinstance(X, pd.DataFrame)
        self.n_rows = X.shape[0]
        if not self.is_frame:
            self.array = np.asarray(X)
            return
        self.columns = list(X.columns)
        self.dtypes = list(X.dtypes) if dtypes is None else list(dtypes)
        self.data = []
        for j, name in enumerate(self.columns):
            self.data.append(self._encode(X.iloc[:, j], self.dtypes[j]))

    @staticmethod
    def _encode(series, dtype):
        if isinstance(dtype, pd.CategoricalDtype):
            return pd.Categorical(series, dtype=dtype).codes.astype(np.int64)
        if isinstance(series.dtype, np.dtype):
            return series.to_numpy()
        return series.to_numpy(dtype=object)

    @staticmethod
    def decode(values, dtype):
        """Stored codes or values back as a column of ``dtype``."""
        if isinstance(dtype, pd.CategoricalDtype):
            return pd.Categorical.from_codes(values, dtype=dtype)
        if isinstance(dtype, np.dtype):
            return values
        return pd.array(values, dtype=dtype)

    def hybrids(self, background, rows, column_masks):
        """Hybrid rows (x_{G_S}, z_{-G_S}) for each pair and background row.

        Parameters
        ----------
        background : Table
        rows : ndarray of shape (n_pairs,)
            Row of ``self`` for each pair.
        column_masks : ndarray of shape (n_pairs, n_features), bool
            True where the column is taken from x.

        Returns
        -------
        data : ndarray or DataFrame with n_pairs * background.n_rows rows,
            ordered pair-major.
        """
        n_pairs = rows.shape[0]
        n_bg = background.n_rows
        if not self.is_frame:
            # one explained row (an image) for every pair: no copy per pair
            same = rows.size and (rows == rows[0]).all()
            x = self.array[rows[:1] if same else rows][:, None, :]
            z = background.array[None, :, :]
            out = np.where(column_masks[:, None, :], x, z)
            return out.reshape(n_pairs * n_bg, -1)
        cols = {}
        for j, name in enumerate(self.columns):
            xj = self.data[j][rows][:, None]
            zj = background.data[j][None, :]
            vals = np.where(column_masks[:, j][:, None], xj, zj).reshape(-1)
            cols[name] = self.decode(vals, self.dtypes[j])
        return pd.DataFrame(cols, copy=False)

    def rows(self, rows):
        """The rows ``rows`` in the input format, for direct model calls."""
        if not self.is_frame:
            return self.array[rows]
        return pd.DataFrame(
            {
                name: self.decode(self.data[j][rows], self.dtypes[j])
                for j, name in enumerate(self.columns)
            },
            copy=False,
        )


def common_dtypes(fit_dtypes, X):
    """Dtypes under which fit-time and new categorical columns share codes."""
    out = []
    for fit_dtype, new_dtype in zip(fit_dtypes, X.dtypes):
        if isinstance(fit_dtype, pd.CategoricalDtype) and fit_dtype != new_dtype:
            cats = list(fit_dtype.categories)
            if isinstance(new_dtype, pd.CategoricalDtype):
                extra = [c for c in new_dtype.categories if c not in set(cats)]
            else:
                seen = set(cats)
                extra = [c for c in pd.unique(X[X.columns[len(out)]].dropna()) if c not in seen]
            fit_dtype = pd.CategoricalDtype(cats + extra, ordered=fit_dtype.ordered)
        out.append(fit_dtype)
    return out


def column_masks(masks, labels):
    """Boolean (n_masks, n_features): column j is taken from x under mask S.

    ``masks`` is either a 1-D array of int64 bitmasks (at most 63 groups) or
    a boolean array of shape (n_masks, n_groups), one coalition per row.
    """
    masks = np.asarray(masks)
    if masks.ndim == 2 and masks.dtype == bool:
        return masks[:, labels]
    masks = masks.astype(np.int64, copy=False)
    # the bits of each mask, then one byte per column (not an int64 per column)
    n_groups = int(labels.max()) + 1 if labels.size else 0
    bits = ((masks[:, None] >> np.arange(n_groups)[None, :]) & 1).astype(bool)
    return bits[:, labels]


def csv_header(path, sep=",", encoding=None):
    """Column names as written in the first line of a CSV file.

    Read with the :mod:`csv` module, so repeated names stay repeated (pandas
    renames the second ``a`` to ``a.1``).

    Parameters
    ----------
    path : str or path-like
    sep : str, default=","
    encoding : str or None, default=None

    Returns
    -------
    header : list of str
        Empty for an empty file.
    """
    import csv

    with open(path, newline="", encoding=encoding) as f:
        return next(csv.reader(f, delimiter=sep), [])


def renamed_duplicate_columns(header, columns):
    """Columns that were renamed because the header repeats their name.

    ``pandas.read_csv`` keeps the first of repeated names and renames the
    others (``a``, ``a.1``, ``a.2``), so two columns that the file calls by
    one name reach the model under different names: the data check says so.

    Parameters
    ----------
    header : list of str
        The names as written in the file (see :func:`csv_header`).
    columns : list
        The column names after reading, in the same order.

    Returns
    -------
    renamed : dict
        Repeated name -> the names its columns were read under, first one
        included, e.g. ``{"a": ["a", "a.1"]}``; empty when no name repeats.

    Raises
    ------
    ValueError
        If ``header`` and ``columns`` are not of the same length.
    """
    header = [str(h) for h in header]
    columns = [str(c) for c in columns]
    if len(header) != len(columns):
        raise ValueError(
            f"the header has {len(header)} names but {len(columns)} columns were "
            "read; give the header of the file the columns were read from."
        )
    seen = {}
    for name, column in zip(header, columns):
        seen.setdefault(name, []).append(column)
    return {name: cols for name, cols in seen.items() if len(cols) > 1}


def duplicate_columns_note(renamed):
    """One data-check sentence for :func:`renamed_duplicate_columns`, or None."""
    if not renamed:
        return None
    parts = [
        f"{name!r} {len(cols)} times (read as {', '.join(repr(c) for c in cols)})"
        for name, cols in renamed.items()
    ]
    return (
        "The header repeats column names: " + "; ".join(parts) + ". They were "
        "renamed to be read; check that they hold different data, and rename "
        "or drop the copies in the file."
    )
