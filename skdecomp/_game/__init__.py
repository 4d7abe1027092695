"""The coalition game: a model, explained rows and background rows over groups."""

# SPDX-License-Identifier: BSD-3-Clause

from ._game import coalition_values
from .._table import Table, column_masks, common_dtypes

__all__ = ["Table", "coalition_values", "column_masks", "common_dtypes"]
