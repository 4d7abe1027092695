"""Groupers: estimators that learn a partition of the input columns.

:class:`AdaptiveGrouper` implements AGREED (see the user guide, :ref:`agreed`),
for tables and for images; :class:`PairwiseGrouper`, :class:`RecursiveGrouper`
(RECURSIVE, Shapley Sets), :class:`IShapGrouper` (IGREEDY, iShap),
:class:`CorrelationGrouper` and :class:`FixedGrouper` are the baselines, and
:class:`PatchGrouper` and :class:`SuperpixelGrouper` the fixed partitions of
images. Every grouper sets ``groups_`` (column positions), ``labels_``, ``n_groups_``
and ``group_names_``, has ``group_features_`` (column names), and can be
passed to ``Explainer(groups=...)``.

The modules, lowest first: ``_base`` (shared plumbing), ``_merge`` (the greedy
merge loop and its merge tree), ``_columns``, ``_baselines``, ``_recursive``,
``_ishap``, ``_image`` (image groupers and per-image AGREED), ``_agreed`` and
``_regions`` (:class:`FDTree`, regions of the rows instead of groups of columns).
"""

# SPDX-License-Identifier: BSD-3-Clause

from ._agreed import AdaptiveGrouper
from ._baselines import CorrelationGrouper, FixedGrouper, PairwiseGrouper
from ._columns import column_transformer_groups
from ._image import PatchGrouper, SuperpixelGrouper
from ._ishap import IShapGrouper
from ._recursive import RecursiveGrouper
from ._regions import FDTree

__all__ = [
    "AdaptiveGrouper",
    "CorrelationGrouper",
    "FDTree",
    "FixedGrouper",
    "IShapGrouper",
    "PairwiseGrouper",
    "PatchGrouper",
    "RecursiveGrouper",
    "SuperpixelGrouper",
    "column_transformer_groups",
]
