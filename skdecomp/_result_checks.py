"""Checks of the input of the result objects (Explanation, Explanations and
InteractionExplanation), in one place: real values, names unique as strings,
documented shapes of base values, valid terms."""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import pandas as pd

#: The axes of an Explanation's values, for messages.
AXES = ("rows", "groups", "outputs")

__all__ = [
    "AXES",
    "check_base_values",
    "check_names",
    "check_standard_errors",
    "check_term",
    "pick_positions",
    "plural",
    "real_array",
]


def real_array(x, what):
    """``x`` as a float64 array; a clear TypeError for text, objects or complex."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{what} must be numbers, got the text {x!r}.")
    if isinstance(x, (pd.DataFrame, pd.Series)):
        x = x.to_numpy()
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(
            f"{what} is not a regular array ({exc}); give a rectangular array of numbers."
        ) from None
    kind = arr.dtype.kind
    if kind == "O":
        flat = arr.ravel().tolist()
        bad = [v for v in flat if isinstance(v, (bool, np.bool_))
               or not isinstance(v, (Real, np.floating, np.integer))][:1]
        if bad:
            bad = bad[0]
            raise TypeError(
                f"{what} must be real numbers, but holds {bad!r} "
                f"({type(bad).__name__}); convert them to floats first."
            )
        return arr.astype(np.float64)
    if kind == "c":
        raise TypeError(
            f"{what} are complex numbers; attributions are real: pass .real if the "
            "imaginary parts are zero."
        )
    if kind not in "iuf":
        label = {"b": "booleans", "U": "text", "S": "bytes", "M": "dates",
                 "m": "time spans"}.get(kind, f"of dtype {arr.dtype}")
        raise TypeError(f"{what} must be real numbers, got {label}; convert them to floats.")
    return arr.astype(np.float64)


def check_names(names, count, what, default):
    """``names`` as a list of ``count`` distinct strings (``default(k)`` for None)."""
    if names is None:
        return [default(k) for k in range(count)]
    if isinstance(names, (str, bytes)):
        raise TypeError(f"{what} must be a list of names, got the single string {names!r}.")
    try:
        names = list(names)
    except TypeError:
        raise TypeError(f"{what} must be a list of names, got {names!r}.") from None
    if len(names) != count:
        raise ValueError(f"{len(names)} {what} for {count} {plural(what)}; give one each.")
    for k, name in enumerate(names):
        if name is None or (isinstance(name, float) and np.isnan(name)):
            raise ValueError(f"{what}[{k}] is {name!r}; give every one a name.")
    text = [str(name) for name in names]
    seen = {}
    for k, name in enumerate(text):
        if name in seen:
            j = seen[name]
            same = names[j] == names[k]
            raise ValueError(
                f"{what} must be unique, but {names[j]!r} (position {j}) and "
                f"{names[k]!r} (position {k}) "
                + ("are the same" if same else "are the same as strings")
                + "; rename one of them."
            )
        seen[name] = k
    return text


def plural(what):
    return {"feature_names": "groups", "output_names": "outputs",
            "feature_names_in": "columns of raw_data"}.get(what, "entries")


def check_base_values(base_values, n, O, several):
    """Base values as an (n, O) array from the documented shapes, never guessed.

    A scalar is the same for every row and output; otherwise one value per
    row, (n,), for one output, or per row and output, (n, O) (or (1, O), the
    same for every row).
    """
    if base_values is None:
        return np.zeros((n, O))
    b = real_array(base_values, "base_values")
    if b.ndim == 0:
        return np.full((n, O), float(b))
    if b.ndim == 1 and b.shape[0] == n and O == 1:
        return b[:, None].copy()
    if b.ndim == 2 and b.shape[1] == O and b.shape[0] in (1, n):
        return np.broadcast_to(b, (n, O)).copy()
    expected = f"a scalar, ({n},) or ({n}, {O})" if O == 1 else f"a scalar or ({n}, {O})"
    hint = ""
    if b.ndim == 1 and b.shape[0] == O and several:
        hint = (f"; one value per output is given as shape (1, {O}), e.g. "
                "np.reshape(base_values, (1, -1))")
    raise ValueError(
        f"base_values have shape {b.shape}; expected {expected} for values of "
        f"{n} rows and {O} output{'s' if O > 1 else ''}{hint}."
    )


def check_standard_errors(standard_errors, shape):
    """Standard errors as a float array of the values' shape, finite and >= 0, or None."""
    if standard_errors is None:
        return None
    se = real_array(standard_errors, "standard_errors")
    if se.shape != tuple(shape):
        raise ValueError(
            f"standard_errors have shape {se.shape}; expected {tuple(shape)}, the "
            "shape of values (one standard error per value), or None for exact values."
        )
    bad = ~np.isfinite(se) | (se < 0)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"standard_errors must be finite and >= 0, but the one at {at} is "
            f"{se[at]!r}; give 0 for a value known exactly, or None for all."
        )
    return se


def check_term(term, n_groups):
    """A term as a sorted tuple of distinct group positions within range."""
    if isinstance(term, (str, bytes)) or not hasattr(term, "__iter__"):
        raise TypeError(f"a term is a tuple of group positions, got {term!r}.")
    out = []
    for g in term:
        if not isinstance(g, (Integral, np.integer)) or isinstance(g, (bool, np.bool_)):
            raise TypeError(f"the term {term!r} holds {g!r}; give group positions (ints).")
        if g < 0 or (n_groups is not None and g >= n_groups):
            raise ValueError(
                f"the term {tuple(term)!r} names group {int(g)}, but there are "
                f"{n_groups} groups (positions 0 to {n_groups - 1})."
            )
        out.append(int(g))
    if len(set(out)) != len(out) or out != sorted(out):
        raise ValueError(
            f"the term {tuple(term)!r} must list distinct groups in increasing order, "
            f"e.g. {tuple(sorted(set(out)))!r}."
        )
    return tuple(out)


def check_count(value, what):
    """A whole number of at least 1 (an int, or a float with no fraction), or None."""
    import numbers

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{what} must be a whole number of at least 1 or None, got "
            f"{type(value).__name__} {value!r}."
        )
    if not np.isfinite(value) or value != int(value) or value < 1:
        raise ValueError(
            f"{what} must be a whole number of at least 1 or None, got {value!r}; "
            "it counts the coalitions the estimate was made from."
        )
    return int(value)


def short_list(items, limit=8):
    """A list for a message: its first ``limit`` items and how many more.

    An error that names every missing column of a wide table (an image has
    150,528) would be megabytes long; the names shown are enough to act on.
    """
    items = list(items)
    shown = ", ".join(repr(i) if isinstance(i, str) else str(i) for i in items[:limit])
    if len(items) > limit:
        shown += f" and {len(items) - limit:,} more"
    return f"[{shown}]"


def pick_positions(n, key, names, axis):
    """Positions ``key`` selects on an axis of length n; whether it drops the axis."""
    if isinstance(key, (bool, np.bool_)):
        raise TypeError(
            f"cannot select {AXES[axis]} with a bool; give positions or a mask."
        )
    if isinstance(key, (Integral, np.integer)):
        pos = int(key)
        if not -n <= pos < n:
            raise IndexError(
                f"position {pos} is out of range for {n} {AXES[axis]}."
            )
        return np.array([pos % n]), True
    if isinstance(key, str):
        return np.array([_position_of(key, names, axis)]), True
    if isinstance(key, slice):
        return np.arange(n)[key], False
    arr = np.asarray(key)
    if arr.ndim != 1:
        raise IndexError(
            f"{AXES[axis]} are selected by one position, a name, a slice, a list or "
            f"a boolean mask; got an index of shape {arr.shape}."
        )
    if arr.dtype.kind == "b":
        if arr.size != n:
            raise IndexError(
                f"boolean mask of length {arr.size} for {n} {AXES[axis]}."
            )
        return np.flatnonzero(arr), False
    if arr.size == 0:
        return np.array([], dtype=np.int64), False
    if arr.dtype.kind in "iu":
        bad = arr[(arr < -n) | (arr >= n)]
        if bad.size:
            raise IndexError(
                f"position {int(bad[0])} is out of range for {n} {AXES[axis]}."
            )
        return arr.astype(np.int64) % n, False
    return np.array([_position_of(k, names, axis) for k in arr.tolist()]), False


def _position_of(name, names, axis):
    if names is None or axis == 0:
        raise TypeError(
            f"{AXES[axis]} are selected by position, got {name!r}; rows follow the "
            "order of the explained X."
        )
    matches = [k for k, known in enumerate(names) if known == str(name)]
    if not matches:
        raise KeyError(f"unknown {AXES[axis][:-1]} {name!r}; known: {list(names)}.")
    return matches[0]
