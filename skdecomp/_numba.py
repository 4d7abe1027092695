"""Numba helpers shared by the kernels of every topic.

Kernels take arrays, allocate and return their output and never write into
their inputs. Coalitions of K groups are integer bitmasks: bit k of mask S is
set when group k is in S, and a table over all subsets has 2**K entries
indexed by mask. This module imports nothing from the package.
"""

# SPDX-License-Identifier: BSD-3-Clause

import os
import stat
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba
import numpy as np
from numba import njit
from numba.core import caching as _caching
from numba.core import dispatcher as _dispatcher

__all__ = ["popcounts", "zeros_1d", "zeros_2d", "trues",
           "all_true", "n_threads", "kernel_threads", "chunk_sums", "row_parts",
           "SERIAL"]


def _cache_probe():  # pragma: no cover - never called, only located
    """A function of this package whose on-disk cache Numba must place."""


def _can_cache():
    """Whether Numba finds a writable place for the kernels' cache."""
    try:
        _caching.FunctionCache(_cache_probe)
    except RuntimeError:
        return False
    return True


def _private_dir(path):
    """``path`` as a directory only the current user can write, or None.

    Numba's cache files are pickles: a directory that another user can write
    could make this process run their code, so an existing directory is used
    only if the current user owns it and nobody else may write to it.
    """
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return None
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return path


def _skip_caching_without_a_place():
    """Make ``cache=True`` compile without caching where no place is writable."""
    enable_caching = _dispatcher.Dispatcher.enable_caching
    if getattr(enable_caching, "_skdecomp_fallback", False):
        return

    def enable_caching_or_skip(self):
        try:
            enable_caching(self)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise

    enable_caching_or_skip._skdecomp_fallback = True
    _dispatcher.Dispatcher.enable_caching = enable_caching_or_skip


def configure_cache():
    """Give Numba's on-disk cache a writable place, or compile without it.

    Numba caches compiled kernels next to their source (``__pycache__``), in
    ``NUMBA_CACHE_DIR`` or in the user's cache directory under ``HOME``. A
    read-only install run by a user without a writable home has none of
    these, and every ``cache=True`` kernel would fail at import. This then
    points ``numba.config.CACHE_DIR`` at a private directory in the system's
    temporary directory (one per user, reused across processes); if even
    that cannot be written, kernels compile on every first call and a
    warning says so. Returns where the cache goes, or None without one.
    """
    if _can_cache():
        return _caching.FunctionCache(_cache_probe).cache_path
    name = "skdecomp-numba-cache"
    if hasattr(os, "getuid"):
        name += f"-{os.getuid()}"
    candidates = []
    try:
        candidates.append(os.path.join(tempfile.gettempdir(), name))
    except OSError:
        pass
    for path in candidates:
        path = _private_dir(path)
        if path is None:
            try:
                path = tempfile.mkdtemp(prefix=name + "-")
            except OSError:
                continue
        numba.config.CACHE_DIR = path
        if _can_cache():
            return path
    numba.config.CACHE_DIR = ""
    _skip_caching_without_a_place()
    warnings.warn(
        "Numba found no writable place for its cache (the install is read-only, "
        "HOME is not writable and neither is the temporary directory): skdecomp's "
        "kernels are compiled again in every process. Set NUMBA_CACHE_DIR to a "
        "writable directory to keep them.",
        RuntimeWarning,
        stacklevel=2,
    )
    return None


CACHE_DIR = configure_cache()


# np.zeros compiles one more implementation per shape and dtype than
# np.empty on the first call of a process, and so do np.ones and .all().
# Kernels allocate zeros and test flags through these instead: plain loops,
# inlined, nothing extra to compile.
@njit(cache=True, inline="always")
def zeros_1d(n, dtype):
    """``np.zeros(n, dtype)``."""
    out = np.empty(n, dtype=dtype)
    for i in range(n):
        out[i] = 0
    return out


@njit(cache=True, inline="always")
def zeros_2d(n, m, dtype):
    """``np.zeros((n, m), dtype)``."""
    out = np.empty((n, m), dtype=dtype)
    for i in range(n):
        for j in range(m):
            out[i, j] = 0
    return out


@njit(cache=True, inline="always")
def trues(n):
    """``np.ones(n, dtype=bool)``."""
    out = np.empty(n, dtype=np.bool_)
    for i in range(n):
        out[i] = True
    return out


@njit(cache=True, inline="always")
def all_true(flags):
    """``flags.all()`` of a 1-d boolean array."""
    ok = True
    for i in range(flags.shape[0]):
        ok = ok and flags[i]
    return ok


@njit(cache=True)
def popcounts(n_groups):
    """Number of set bits of every mask in ``range(2**n_groups)``."""
    n_masks = 1 << n_groups
    out = zeros_1d(n_masks, np.int64)
    for mask in range(1, n_masks):
        out[mask] = out[mask >> 1] + (mask & 1)
    return out


# -- threads over chunks ----------------------------------------------------------
# A kernel compiled with parallel=True compiles its whole body a second time,
# with Numba's parallel machinery: on the first call of a process that costs
# several seconds. Kernels whose work splits into chunks (trees ``t`` with
# ``t % n_chunks == c``) are compiled once, serially, with ``nogil=True``, and
# their chunks run on a pool of Python threads instead.
def n_threads(n_jobs):
    """Threads for ``n_jobs`` (None or 1: one; -1: every core; -2: all but one)."""
    if n_jobs is None:
        return 1
    n_cpu = os.cpu_count() or 1
    n = int(n_jobs) if n_jobs > 0 else n_cpu + 1 + int(n_jobs)
    return max(1, min(n, n_cpu))


class _Serial:
    """The map of a single thread (``SERIAL``)."""

    n_threads = 1

    @staticmethod
    def map(fn, items):
        return [fn(item) for item in items]


class _Pool:
    """The map of a thread pool, for kernels that release the GIL."""

    def __init__(self, pool, n):
        self._pool = pool
        self.n_threads = n

    def map(self, fn, items):
        items = list(items)
        if len(items) <= 1:
            return [fn(item) for item in items]
        return list(self._pool.map(fn, items))


SERIAL = _Serial()


@contextmanager
def kernel_threads(n_jobs):
    """Yield an object whose ``map(fn, items)`` runs on ``n_threads(n_jobs)`` threads."""
    n = n_threads(n_jobs)
    if n == 1:
        yield SERIAL
        return
    with ThreadPoolExecutor(max_workers=n) as pool:
        yield _Pool(pool, n)


def chunk_sums(call, n_chunks, threads):
    """Sum over chunks of the arrays that ``call(c)`` returns.

    ``call`` runs a nogil kernel on chunk ``c`` and returns its sums, an
    array of one shape for every chunk, and whether the chunk succeeded.
    Chunks run ``threads.n_threads`` at a time (see :func:`kernel_threads`)
    and their sums are added in chunk order, so the total is bit-identical
    for any number of threads. Returns the total, or None when a chunk
    failed.
    """
    n_slots = max(1, min(n_chunks, threads.n_threads))
    total = None
    for c0 in range(0, n_chunks, n_slots):
        for acc, ok in threads.map(call, range(c0, min(n_chunks, c0 + n_slots))):
            if not ok:
                return None
            if total is None:
                total = np.zeros_like(acc)
            total += acc
    return total


def row_parts(call, n_rows, threads, axis=0):
    """``call(r0, r1)`` on contiguous parts of the rows, one per thread, joined.

    For kernels whose every row is computed on its own: the result is the
    same for any number of parts. The parts are joined along ``axis``.
    """
    n = max(1, min(threads.n_threads, n_rows))
    bounds = [(i * n_rows // n, (i + 1) * n_rows // n) for i in range(n)]
    parts = threads.map(lambda b: call(*b), bounds)
    return parts[0] if n == 1 else np.concatenate(parts, axis=axis)
