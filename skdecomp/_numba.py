"""Numba helpers shared by the kernels of every topic.

Kernels take arrays, allocate and return their output and never write into
their inputs. Coalitions of K groups are integer bitmasks: bit k of mask S is
set when group k is in S, and a table over all subsets has 2**K entries
indexed by mask. This module imports nothing from the package.
"""

# SPDX-License-Identifier: BSD-3-Clause

import types

import numpy as np
from numba import njit

__all__ = ["serial_and_parallel", "popcounts", "zeros_1d", "zeros_2d"]


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
# np.empty on the first call of a process; kernels on the paths a first call
# takes allocate zeros through these instead (inlined, nothing extra to compile).
@njit(cache=True, inline="always")
def zeros_1d(n, dtype):
    """``np.zeros(n, dtype)``."""
    out = np.empty(n, dtype=dtype)
    out[:] = 0
    return out


@njit(cache=True, inline="always")
def zeros_2d(n, m, dtype):
    """``np.zeros((n, m), dtype)``."""
    out = np.empty((n, m), dtype=dtype)
    out[:, :] = 0
    return out


@njit(cache=True)
def popcounts(n_groups):
    """Number of set bits of every mask in ``range(2**n_groups)``."""
    n_masks = 1 << n_groups
    out = zeros_1d(n_masks, np.int64)
    for mask in range(1, n_masks):
        out[mask] = out[mask >> 1] + (mask & 1)
    return out
