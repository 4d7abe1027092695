"""Exact decomposition of tree ensembles from their fitted trees.

``_extract`` flattens a fitted model into a :class:`TreeModel` (``_boosters``
reads XGBoost, LightGBM and CatBoost models for it); ``_kernels``
holds the Numba walks over its arrays; ``_dispatch`` evaluates predictions,
components, attributions and anchored sums, choosing among the kernels from
one table of benchmarked thresholds. This subpackage imports nothing from the
package above ``_numba``, ``_config``, ``_compat``, ``_boosters``,
``_partition``, ``_model`` and ``_table``.
"""

# SPDX-License-Identifier: BSD-3-Clause

from ._dispatch import (
    MAX_TREE_GROUPS,
    anchored_sums_tree,
    explainer_attributions,
    numba_only,
    tree_attributions,
    tree_components,
    tree_predict,
)
from ._indices import MAX_LEAF_ORDER, tree_interactions
from ._extract import (
    TreeModel,
    TreeUnsupportedError,
    extract_tree_model,
    select_algorithm,
)

__all__ = [
    "TreeModel",
    "TreeUnsupportedError",
    "extract_tree_model",
    "select_algorithm",
    "tree_predict",
    "tree_components",
    "tree_attributions",
    "anchored_sums_tree",
    "explainer_attributions",
    "MAX_TREE_GROUPS",
    "numba_only",
    "tree_interactions",
    "MAX_LEAF_ORDER",
]
