"""Grouped functional decomposition: components F_U and their weighted sums."""

# SPDX-License-Identifier: BSD-3-Clause

from ._decomposition import EXACT_METHODS, METHOD_ALIASES, Decomposition, size_weights

__all__ = ["Decomposition", "EXACT_METHODS", "METHOD_ALIASES", "size_weights"]
