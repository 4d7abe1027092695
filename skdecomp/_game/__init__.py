"""The coalition game: a model, explained rows and background rows over groups."""

# SPDX-License-Identifier: BSD-3-Clause

from ._anchored import AnchoredStatistics, agreement_score, column_pair_price
from ._game import CoalitionGame, coalition_values, run_blocks
from ._imputation import IMPUTERS, check_imputer, make_imputer
from .._table import Table, column_masks, common_dtypes

__all__ = [
    "AnchoredStatistics",
    "agreement_score",
    "CoalitionGame",
    "IMPUTERS",
    "Table",
    "check_imputer",
    "coalition_values",
    "column_pair_price",
    "column_masks",
    "common_dtypes",
    "make_imputer",
    "run_blocks",
]
