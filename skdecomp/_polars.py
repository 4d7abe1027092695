"""polars frames to pandas and back, column by column, without pyarrow.

polars' own ``to_pandas`` and ``from_pandas`` need pyarrow, which a polars
user may not have.
"""

# SPDX-License-Identifier: BSD-3-Clause

import pandas as pd

__all__ = ["pandas_to_polars", "polars_to_pandas"]


def polars_to_pandas(X):
    """A polars DataFrame as pandas, column by column, without pyarrow.

    The columns are those of polars' own ``to_pandas`` (which needs
    pyarrow): numbers through ``to_numpy`` (integers with nulls as floats
    with NaN), booleans as bool (object with None where null), text as
    pandas makes it of a list, ``Categorical`` and ``Enum`` as pandas
    categories (an Enum's ordered), dates as ``datetime64[ms]``.
    """
    columns = {}
    for name in X.columns:
        s = X.get_column(name)
        kind = type(s.dtype).__name__
        if kind in ("Categorical", "Enum"):
            enum = kind == "Enum"
            categories = (s.dtype.categories if enum else
                          s.drop_nulls().unique(maintain_order=True).cast(str))
            columns[name] = pd.Categorical(s.cast(str).to_list(), ordered=enum,
                                           categories=categories.to_list())
        elif kind == "Date":
            columns[name] = s.to_numpy().astype("datetime64[ms]")
        elif kind == "Datetime" and s.dtype.time_zone is not None:
            utc = s.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
            columns[name] = pd.Series(utc.to_numpy()).dt.tz_localize(
                "UTC").dt.tz_convert(s.dtype.time_zone)
        elif s.dtype.is_numeric() or kind in ("Datetime", "Duration", "Time") or (
                kind == "Boolean" and not s.null_count()):
            columns[name] = s.to_numpy()
        else:  # text, booleans with nulls, nested and object columns
            columns[name] = pd.Series(s.to_list(),
                                      dtype=None if kind == "String" else object)
    return pd.DataFrame(columns, columns=X.columns)


def pandas_to_polars(frame):
    """The pandas DataFrame ``frame`` as a polars DataFrame (polars imported here)."""
    import polars as pl

    return pl.DataFrame([
        pl.Series(str(c), frame[c].to_numpy(), nan_to_null=True)
        if pd.api.types.is_numeric_dtype(frame[c].dtype)
        or pd.api.types.is_bool_dtype(frame[c].dtype)
        or pd.api.types.is_datetime64_dtype(frame[c].dtype)
        else pl.Series(str(c), [None if v is None or v is pd.NA or v != v else v
                                for v in frame[c].astype(object).tolist()])
        for c in frame.columns
    ])
