"""Exact decomposition of tree ensembles from their fitted trees.

``_treemodel`` owns :class:`TreeModel`, the flat node arrays of all trees;
``_extract`` fills it from a fitted scikit-learn model (``_boosters`` from
XGBoost, LightGBM and CatBoost models); ``_kernels`` holds the Numba walks
over its arrays; ``_dispatch`` evaluates predictions, components,
attributions and anchored sums, choosing among the kernels from one table of
benchmarked thresholds; ``_indices`` reads interaction indices leaf by leaf
(its kernels in ``_index_kernels``); ``_matrices`` reads the full anchored
matrices of single groups from the leaves, in numpy; ``_pathdep`` evaluates
the path-dependent (cover-weighted) game of the trees, its kernels in
``_pathdep_kernels``. This subpackage imports nothing from the
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
from ._pathdep import (
    path_dependent_attributions,
    path_dependent_components,
    path_dependent_expected_value,
    path_dependent_interactions,
    path_dependent_values,
)
from ._matrices import tree_group_matrices
from ._extract import extract_tree_model
from ._select import select_algorithm
from ._treemodel import TreeModel, TreeUnsupportedError

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
    "tree_group_matrices",
    "path_dependent_expected_value",
    "path_dependent_values",
    "path_dependent_attributions",
    "path_dependent_components",
    "path_dependent_interactions",
]
