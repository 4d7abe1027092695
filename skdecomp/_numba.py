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
import types
import warnings

import numba
import numpy as np
from numba import njit
from numba.core import caching as _caching
from numba.core import dispatcher as _dispatcher

__all__ = ["serial_and_parallel", "popcounts", "zeros_1d", "zeros_2d", "trues",
           "all_true"]


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


def serial_and_parallel(body):
    """Serial and ``parallel=True`` compilations of one kernel body.

    Numba's on-disk cache keys a function by module, qualified name, line and
    signature, not by its compile flags: two dispatchers built from the same
    Python function would share cache entries, and one could load the other's
    machine code. The parallel variant is therefore compiled from a copy of
    the function with its own qualified name.
    """
    twin = types.FunctionType(
        body.__code__, body.__globals__, body.__name__ + "_parallel",
        body.__defaults__, body.__closure__,
    )
    twin.__qualname__ = body.__qualname__ + "_parallel"
    return njit(body, cache=True), njit(twin, cache=True, parallel=True)



# np.zeros compiles one more implementation per shape and dtype than
# np.empty on the first call of a process, and in a parallel=True kernel
# np.zeros, np.ones, slice assignments and .all() each become a parallel loop
# of their own to compile. Kernels allocate zeros and test flags through
# these instead: plain loops, inlined, nothing extra to compile.
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
