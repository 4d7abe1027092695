"""Reading the table, cleaning its columns and the data checks."""

# SPDX-License-Identifier: BSD-3-Clause

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .._table import csv_header, duplicate_columns_note, renamed_duplicate_columns
from ._common import HUGE_VALUE, MAX_CLASSES, MIN_ROWS, DataError


# -- inputs --------------------------------------------------------------------------
#: the four bytes that open and close every Parquet file
_PARQUET_MARKER = b"PAR1"


def _starts_with_parquet_marker(path):
    with open(path, "rb") as f:
        return f.read(4) == _PARQUET_MARKER


def _check_parquet_marker(path):
    """Raise a DataError unless the file opens and closes as a Parquet file."""
    size = path.stat().st_size
    if size == 0:
        raise DataError(
            f"{path} is empty (0 bytes); give a Parquet file with a table in it, "
            "or a CSV file."
        )
    with open(path, "rb") as f:
        head = f.read(512)
        f.seek(max(size - 4, 0))
        tail = f.read(4)
    if head[:4] == _PARQUET_MARKER and tail == _PARQUET_MARKER:
        return
    if head[:4] == _PARQUET_MARKER:
        raise DataError(
            f"{path} is cut off: it opens as a Parquet file but does not end as "
            "one; write it again, completely."
        )
    try:
        # the last bytes read may cut a character in two
        text = head[:-4].decode("utf-8") if len(head) == 512 else head.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.strip() and "\x00" not in text:
        raise DataError(
            f"{path} is not a Parquet file: it holds text (it begins "
            f"{text.strip().splitlines()[0][:40]!r}). If it is a CSV file, rename "
            "it to end in .csv."
        )
    raise DataError(
        f"{path} is not a Parquet file (it does not begin with the Parquet "
        "marker PAR1); give a Parquet or a CSV file."
    )


def load_table(path, target, parse_dates=True):
    """Read a CSV or Parquet file and split off the target column.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file, or a ``.parquet``/``.pq`` file.
    target : str
        Name of the target column.
    parse_dates : bool, default=True
        Read text columns holding only year-first dates (``2021-03-04``,
        ``2021/03/04``, optionally with a time) as dates.

    Returns
    -------
    X : DataFrame
        The other columns; text columns become categorical, or dates.
    y : Series
        The target column; year-first dates become days since 1970-01-01,
        as date columns do.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file; check the path of the data.")
    if not path.is_file():
        raise DataError(f"{path} is not a file; give a CSV or Parquet file.")
    suffix = path.suffix.lower()
    renamed = {}
    try:
        if suffix in (".parquet", ".pq"):
            _check_parquet_marker(path)
            try:
                df = pd.read_parquet(path)
            except ImportError as exc:
                raise DataError(
                    f"{path}: reading Parquet needs pyarrow; install it with "
                    "'pip install pyarrow' or give a CSV file."
                ) from exc
            except (ValueError, NotImplementedError, OSError) as exc:
                if isinstance(exc, OSError) and exc.errno is not None:
                    raise  # the file cannot be opened: said below
                # pyarrow's ArrowInvalid, or its OSError without errno: a damaged file
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise DataError(
                    f"{path} could not be read as a Parquet file ({first}); it may "
                    "be damaged or cut off: write it again, or give a CSV file."
                ) from exc
        else:
            if _starts_with_parquet_marker(path):
                raise DataError(
                    f"{path} is a Parquet file, not a CSV file; rename it to end "
                    "in .parquet."
                )
            df = pd.read_csv(path)
            renamed = _renamed_columns(path, df.columns)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty; give a table with a header row and data rows.")
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise DataError(f"{path} could not be read as a table ({exc}).")
    except OSError as exc:
        raise DataError(
            f"{path} could not be read ({exc.strerror or exc}); check that it is "
            "a readable CSV or Parquet file."
        ) from exc
    if df.shape[0] == 0:
        raise DataError(f"{path} has a header but no data rows.")
    if target not in df.columns:
        raise DataError(
            f"target column {target!r} is not in {path.name}; its columns are "
            f"{list(map(str, df.columns))}. Pass one of them with --target."
        )
    if target in renamed:
        # pandas renamed the repeats ("y.1"): which one is the target is a guess
        raise DataError(
            f"the header of {path.name} holds the target's name {target!r} "
            f"{len(renamed[target])} times; rename the columns so that one is the "
            "target, or drop the others."
        )
    if df.shape[0] < MIN_ROWS:
        raise DataError(
            f"{path.name} has only {df.shape[0]} data row(s); skdecomp needs at least "
            f"{MIN_ROWS} to fit and explain a model. Give a larger table."
        )
    y = df[target]
    n_missing = int(y.isna().sum())
    if n_missing == len(y):
        raise DataError(
            f"target column {target!r} has no values (all {len(y)} are missing); "
            "pick another column with --target."
        )
    if n_missing:
        raise DataError(
            f"target column {target!r} has {n_missing} missing values; "
            "drop those rows first."
        )
    if y.dtype == object or pd.api.types.is_string_dtype(y):
        # a target of year-first dates is a number, as date columns are
        dates = parse_dates_of(y) if parse_dates else None
        if dates is not None:
            y = days_since_epoch(dates).rename(target)
    X = df.drop(columns=[target])
    if X.shape[1] == 0:
        raise DataError(f"{path.name} has no columns besides the target {target!r}.")
    X.columns = [str(c) for c in X.columns]
    for col in X.columns:
        if X[col].dtype == object or pd.api.types.is_string_dtype(X[col]):
            dates = parse_dates_of(X[col]) if parse_dates else None
            X[col] = X[col].astype("category") if dates is None else dates
    # repeated header names that pandas renamed, for the data checks
    X.attrs["renamed_columns"] = {k: v for k, v in renamed.items() if k != target}
    return X, y


def _renamed_columns(path, columns):
    """Repeated names of a CSV header -> the names pandas read them under."""
    try:
        return renamed_duplicate_columns(csv_header(path), columns)
    except (OSError, UnicodeDecodeError, ValueError):
        return {}  # a header the csv module reads otherwise than pandas


def is_classification(y, model=None):
    """Whether to treat the target as classes.

    A given model decides by its type. Otherwise non-numeric or boolean
    targets are classes, and so are integer targets with at most 20 distinct
    values that each come back on average at least twice; everything else is
    a regression target.

    Parameters
    ----------
    y : array-like
        The target.
    model : estimator or None, default=None
        A fitted model, if one is given.

    Returns
    -------
    classification : bool
        Whether the target is treated as classes.
    """
    if model is not None:
        from sklearn.base import is_classifier

        return bool(is_classifier(model))
    y = pd.Series(y)
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return True
    values = y.to_numpy(dtype=float)
    integral = np.isfinite(values).all() and np.all(np.equal(np.mod(values, 1), 0))
    n_values = y.nunique()
    return bool(integral and n_values <= 20 and n_values <= len(y) // 2)


#: why a number of HUGE_VALUE or more cannot be analysed
_too_large = (f"numbers from {HUGE_VALUE:.0e} up overflow double precision once "
              "squared and summed")


def _plain(value):
    """A NumPy scalar as the Python value it holds, for messages."""
    return value.item() if isinstance(value, np.generic) else value


def check_target(y, model=None):
    """Refuse a target no model can be fitted to, before fitting.

    Parameters
    ----------
    y : Series
        The target column, without missing values.
    model : estimator or None, default=None
        A fitted model; then the target is not fitted and is not checked.

    Raises
    ------
    DataError
        For a constant target, a non-finite numeric target, or a
        classification target with more classes than the rows can support
        (more than :data:`MAX_CLASSES` or one per two rows).
    """
    if model is not None:
        return
    y = pd.Series(y)
    name, n = y.name, len(y)
    if y.nunique() < 2:
        raise DataError(
            f"target column {name!r} has the same value ({_plain(y.iloc[0])!r}) in all {n} "
            "rows, so there is nothing to predict or explain; pick a column that "
            "varies with --target."
        )
    if not is_classification(y):
        values = y.to_numpy(dtype=float)
        if not np.isfinite(values).all():
            raise DataError(
                f"target column {name!r} has {int((~np.isfinite(values)).sum())} "
                "infinite values; drop or fix those rows first."
            )
        big = float(np.abs(values).max())
        if big >= HUGE_VALUE:
            raise DataError(
                f"target column {name!r} holds values as large as {big:.3g}: "
                f"{_too_large}, so the model's R², the spread of its predictions and "
                "every share of it would not be numbers. Rescale the target (other "
                "units, or its logarithm) and run the report again."
            )
        return
    n_classes = int(y.nunique())
    limit = min(MAX_CLASSES, n // 2)
    if n_classes > limit:
        raise DataError(
            f"target column {name!r} holds classes (its values are not numbers) "
            f"with {n_classes} distinct values in "
            f"{n} rows; a classifier needs several rows per class (at most {limit} "
            "classes here). If it holds numbers stored as text, clean it into a "
            "numeric column; otherwise merge rare classes or pick another --target."
        )


# -- columns ---------------------------------------------------------------------------
#: text recognised as a date: year first (2021-03-04, 2021/03/04), optionally a time
DATE_PATTERN = re.compile(
    r"\d{4}[-/]\d{1,2}[-/]\d{1,2}"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
#: dates become this many days after this day
EPOCH = "1970-01-01"
#: fewer rows than this are flagged as a tiny sample
SMALL_SAMPLE = 100
#: a column named like this and unique per row is an identifier
ID_NAME = re.compile(r"(?:^|[_ .-])(?:id|index|idx|key|rownames?|row|unnamed: ?0)$",
                     re.IGNORECASE)


def parse_dates_of(values):
    """Text holding only year-first dates as ``datetime64``, else None.

    Parameters
    ----------
    values : Series
        A text column.

    Returns
    -------
    dates : Series or None
        The parsed dates (UTC times without a time zone when the text has
        one), or None when a value is not a year-first date.
    """
    text = values.dropna().astype(str).str.strip()
    if text.empty or not text.str.fullmatch(DATE_PATTERN).all():
        return None
    normalised = values.astype(object).where(values.isna(), values.astype(str).str.strip())
    normalised = normalised.str.replace("/", "-", n=2, regex=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dates = pd.to_datetime(normalised, format="ISO8601", utc=True)
    except (ValueError, TypeError, OverflowError):
        return None
    if dates.isna().sum() != values.isna().sum():
        return None
    return dates.dt.tz_localize(None)


def days_since_epoch(dates):
    """Dates (``datetime64``, with or without time zone) as float days since 1970-01-01."""
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_convert("UTC").dt.tz_localize(None)
    return (dates - pd.Timestamp(EPOCH)) / pd.Timedelta(days=1)


def _as_text_categories(values):
    """A non-numeric column as categories of strings (missing values kept)."""
    obj = values.astype(object)
    return obj.where(obj.isna(), obj.astype(str)).astype("category")


def _id_reason(name, values, n_rows):
    """Why a column looks like a row identifier, or None."""
    if n_rows < 20 or values.isna().any() or pd.api.types.is_bool_dtype(values):
        return None
    if pd.api.types.is_datetime64_any_dtype(values):
        return None
    if pd.api.types.is_numeric_dtype(values):
        a = values.to_numpy(dtype=float)
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            return None
        if np.unique(a).size != n_rows:
            return None
        d = np.diff(a)
        if (d > 0).all() or (d < 0).all():
            order = "increasing" if d[0] > 0 else "decreasing"
            return f"a different whole number in every row, in {order} order"
        if ID_NAME.search(name) or a.max() - a.min() < 2 * n_rows:
            return "a different whole number in every row"
        return None
    if values.nunique() == n_rows:
        return "a different value in every row"
    return None


def _show_value(value):
    text = str(_plain(value))
    return text if len(text) <= 30 else text[:27] + "..."


def prepare_table(X, *, fit=True, drop=None):
    """Check the columns and turn dates into numbers, before any model work.

    Parameters
    ----------
    X : DataFrame
        The table, without the target.
    fit : bool, default=True
        Whether a model will be fitted on it. Then constant columns are left
        out, dates become days since 1970-01-01 and text columns become
        categories; a given model gets the columns as they are.
    drop : list of str or None, default=None
        Columns to leave out.

    Returns
    -------
    X : DataFrame
        The columns the model sees.
    checks : list of dict
        One entry per finding: ``kind`` ("id", "constant", "dates",
        "infinite", "tiny", "duplicate_names"), ``level`` ("warning" or "note"), ``columns`` and a
        plain-words ``message``.
    """
    renamed = dict(X.attrs.get("renamed_columns") or {})
    X = X.drop(columns=list(drop or []))
    n, checks = X.shape[0], []
    note = duplicate_columns_note(renamed)
    if note:
        checks.append({"kind": "duplicate_names", "level": "warning",
                       "columns": [c for cols in renamed.values() for c in cols],
                       "message": note})
    if fit:
        constant = [c for c in X.columns if X[c].nunique(dropna=False) <= 1]
        if len(constant) == X.shape[1]:
            raise DataError(
                f"every column has the same value in all {n} rows "
                f"({', '.join(map(repr, constant[:5]))}"
                f"{' and more' if len(constant) > 5 else ''}), so no model can learn "
                "anything; give a table whose columns vary."
            )
    else:
        constant = [c for c in X.columns if X[c].nunique(dropna=False) <= 1]
    for c in constant:
        value = X[c].iloc[0]
        what = "is always missing" if pd.isna(value) else (
            f"has the same value ({_show_value(value)}) in every row")
        fate = ("it cannot change any prediction, so it is left out of the model and "
                "the explanations." if fit else "it cannot change any prediction, and "
                "its attributions are 0.")
        checks.append({"kind": "constant", "level": "warning", "columns": [c],
                       "message": f"Column {c!r} {what}: {fate}"})
    if fit:
        X = X.drop(columns=constant)
    for c in X.columns:
        why = _id_reason(c, X[c], n)
        if why:
            checks.append({
                "kind": "id", "level": "warning", "columns": [c],
                "message": f"Column {c!r} looks like a row identifier ({why}). A model "
                "can use it only by memorising rows or the order in which they were "
                "recorded, which does not carry over to new data. It is kept; leave it "
                f"out with --drop {c} if it is an identifier.",
            })
    if fit:
        X = X.copy()
        dates, durations = [], []
        for c in X.columns:
            if pd.api.types.is_datetime64_any_dtype(X[c]):
                X[c] = days_since_epoch(X[c])
                dates.append(c)
            elif pd.api.types.is_timedelta64_dtype(X[c]):
                X[c] = X[c] / pd.Timedelta(days=1)
                durations.append(c)
            elif not pd.api.types.is_numeric_dtype(X[c]):
                X[c] = _as_text_categories(X[c])
        if dates:
            checks.append({
                "kind": "dates", "level": "note", "columns": dates,
                "message": f"{_names(dates, 'Column', 'Columns')} "
                f"{'holds' if len(dates) == 1 else 'hold'} dates: the model sees the "
                f"number of days since {EPOCH}, so 'higher' means 'later'.",
            })
        if durations:
            checks.append({
                "kind": "dates", "level": "note", "columns": durations,
                "message": f"{_names(durations, 'Column', 'Columns')} "
                f"{'holds' if len(durations) == 1 else 'hold'} durations: the model "
                "sees them in days.",
            })
        # infinity is no measurement a model can fit: read it as missing
        infinite = {}
        for c in X.columns:
            if pd.api.types.is_float_dtype(X[c]):
                bad = np.isinf(X[c].to_numpy(dtype=float, na_value=np.nan))
                if bad.any():
                    infinite[c] = int(bad.sum())
                    X[c] = X[c].mask(bad)
        if infinite:
            counts = ", ".join(f"{c!r} ({k})" for c, k in list(infinite.items())[:6])
            checks.append({
                "kind": "infinite", "level": "warning", "columns": list(infinite),
                "message": f"Infinite values in {counts}{' and more' if len(infinite) > 6 else ''}: "
                "they are read as missing values, which the model's pipeline fills in.",
            })
    if n < SMALL_SAMPLE or n < 3 * X.shape[1]:
        checks.append({
            "kind": "tiny", "level": "warning", "columns": [],
            "message": f"Only {n} rows for {X.shape[1]} columns: the held-out score "
            "and the explanations rest on few rows and may change a lot with other "
            "data from the same source.",
        })
    return X, checks


def _names(columns, one="column", many="columns", limit=6):
    """'column 'a'' or 'columns 'a', 'b' and 3 more'."""
    shown = ", ".join(repr(str(c)) for c in columns[:limit])
    more = f" and {len(columns) - limit} more" if len(columns) > limit else ""
    return f"{one if len(columns) == 1 else many} {shown}{more}"


def check_drop(drop, X, target=None):
    """Refuse ``--drop`` columns that are not in the table, before any model work.

    Parameters
    ----------
    drop : list of str or None
        Columns to leave out.
    X : DataFrame
        The table, without the target.
    target : str or None, default=None
        Name of the target column, which ``--drop`` needs not name.

    Returns
    -------
    drop : list of str
        The same names.
    """
    drop = list(drop or [])
    if target is not None and str(target) in map(str, drop) \
            and str(target) not in map(str, X.columns):
        raise DataError(
            f"--drop names {str(target)!r}, the target column: the target is what "
            "the model predicts and is never one of its columns, so it needs no "
            f"--drop. Leave {str(target)!r} out of --drop."
        )
    unknown = [c for c in drop if c not in X.columns]
    if unknown:
        raise DataError(
            f"--drop names {_names(unknown)} not in the table; its columns are "
            f"{list(map(str, X.columns))[:20]}{' ...' if X.shape[1] > 20 else ''}."
        )
    if len(set(drop)) == X.shape[1]:
        raise DataError("--drop leaves no column to explain; keep at least one.")
    return drop


LEAK_ALONE = 0.98


def _predictive_columns(X, y, classification):
    """Warnings for numeric columns that alone predict the target almost perfectly."""
    from sklearn.metrics import roc_auc_score

    y = pd.Series(y).reset_index(drop=True)
    if classification:
        classes = sorted(y.unique(), key=str)
        if len(classes) != 2:
            return []
        target = (y == classes[1]).to_numpy()
    else:
        target = y.to_numpy(dtype=float)
    out = []
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            continue
        x = X[c].to_numpy(dtype=float)
        keep = np.isfinite(x)
        if keep.sum() < 20 or np.unique(x[keep]).size < 2:
            continue
        if classification:
            if np.unique(target[keep]).size < 2:
                continue
            auc = float(roc_auc_score(target[keep], x[keep]))
            strength, what = max(auc, 1.0 - auc), f"ROC AUC {max(auc, 1.0 - auc):.3f}"
        else:
            rho = float(pd.Series(x[keep]).rank().corr(pd.Series(target[keep]).rank()))
            strength, what = abs(rho), f"rank correlation {rho:+.3f}"
        if np.isfinite(strength) and strength >= LEAK_ALONE:
            out.append({
                "kind": "leak", "level": "warning", "columns": [str(c)],
                "message": f"Column {c!r} alone predicts the target almost perfectly "
                f"({what}). It may be a copy of the target or something known only "
                "after it (leakage); check how it was recorded before trusting the "
                "model.",
            })
    return out
