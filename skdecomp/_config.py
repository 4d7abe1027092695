"""Limits and working memory, in one place.

Every chunk size of the package derives from scikit-learn's ``working_memory``
setting (:func:`sklearn.set_config`, :func:`sklearn.config_context`; 1024 MiB
by default), so one setting bounds the memory of model calls, anchored
statistics and sampled designs alike.
"""

# SPDX-License-Identifier: BSD-3-Clause

import re
from numbers import Integral

from sklearn import get_config

__all__ = [
    "MAX_EXACT_GROUPS",
    "MAX_MASK_GROUPS",
    "working_memory_bytes",
    "batch_rows",
    "kernel_block_cells",
    "cache_bytes",
    "parse_memory",
    "format_bytes",
    "format_seconds",
]

#: Largest number of groups for exact enumeration of all 2**K coalitions.
MAX_EXACT_GROUPS = 16

#: Largest number of groups encoded as int64 bitmasks by anchored statistics.
MAX_MASK_GROUPS = 62

# Share of the working memory taken by one batch of hybrid rows: 32 MiB of
# float64 cells (2**22 cells) at the default 1024 MiB.
_BATCH_SHARE = 32
# Fewest rows in one model call, so narrow data still gets large batches, as
# long as they take at most 1/_FLOOR_SHARE of the working memory: a wide row
# (a photo flattened: 12.6 million values at 2048x2048 RGB) is not sent 1024
# times over.
_MIN_BATCH_ROWS = 1024
_FLOOR_SHARE = 8


def working_memory_bytes():
    """Bytes of scikit-learn's ``working_memory`` setting."""
    return int(get_config()["working_memory"] * 2**20)


def batch_rows(n_columns, itemsize=8):
    """Rows of hybrid data per model call for data with ``n_columns`` columns.

    1/32 of the working memory of ``itemsize``-byte cells, and at least 1024
    rows while those take at most an eighth of it (narrow data gets large
    batches); a row wider than that goes alone.
    """
    row = max(1, int(n_columns)) * max(1, int(itemsize))
    memory = working_memory_bytes()
    floor = min(_MIN_BATCH_ROWS, memory // (_FLOOR_SHARE * row))
    return max(1, memory // (_BATCH_SHARE * row), floor)


def kernel_block_cells():
    """float64 cells of one kernel call's accumulators: 1/16 of the working memory."""
    return max(1, working_memory_bytes() // (16 * 8))


def cache_bytes():
    """Bytes of results kept between calls: 1/8 of the working memory."""
    return working_memory_bytes() // 8


def parse_memory(max_memory):
    """Bytes from None (the working memory), an int or a string such as ``"512MB"``."""
    if max_memory is None:
        return working_memory_bytes()
    if isinstance(max_memory, Integral) and not isinstance(max_memory, bool):
        return int(max_memory)
    units = {
        "": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
        "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    }
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(max_memory))
    if match is None or match.group(2).lower() not in units:
        raise ValueError(
            f"max_memory={max_memory!r} is not a size; give bytes as an int or a "
            "string such as '512MB' or '2GB'."
        )
    return int(float(match.group(1)) * units[match.group(2).lower()])


def format_bytes(n):
    """A size in bytes as text, e.g. ``"1.5 MB"``."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def format_seconds(seconds):
    """A duration as text, e.g. ``"40 s"`` or ``"12 min"``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
