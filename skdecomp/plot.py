"""Plots of grouped explanations, in scikit-learn's Display pattern.

Every Display has ``from_estimator`` (compute, then draw), ``from_result``
(draw results already computed) and ``plot`` (returns the Display with
``ax_`` and ``figure_`` set); :class:`AttributionDisplay` also has
``from_explanation``, for :class:`~skdecomp.Explanation` objects. Every
method has one colour in every Display, :data:`METHOD_COLORS` (read it
with :func:`method_color`). A Display drawing on the Axes of a figure
without a layout engine gives that figure constrained layout, so that no
label is clipped. Plotting needs matplotlib, installed with the
``plot`` extra: ``pip install "skdecomp[plot]"``. Importing this module does
not import matplotlib.
"""

# SPDX-License-Identifier: BSD-3-Clause

from ._plot._base import METHOD_COLORS, method_color
from ._plot.attribution import AttributionDisplay
from ._plot.disagreement import DisagreementDisplay
from ._plot.grouping import GroupingDisplay
from ._plot.interaction import InteractionDisplay
from ._plot.partial_dependence import PartialDependenceDisplay
from ._plot.regions import RegionDisplay
from ._plot.saliency import SaliencyDisplay

__all__ = [
    "METHOD_COLORS",
    "method_color",
    "AttributionDisplay",
    "DisagreementDisplay",
    "GroupingDisplay",
    "InteractionDisplay",
    "PartialDependenceDisplay",
    "RegionDisplay",
    "SaliencyDisplay",
]
