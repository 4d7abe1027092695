"""Display classes (scikit-learn's Display pattern). matplotlib is imported lazily."""

# SPDX-License-Identifier: BSD-3-Clause

from .attribution import AttributionDisplay
from .disagreement import DisagreementDisplay
from .grouping import GroupingDisplay
from .interaction import InteractionDisplay
from .partial_dependence import PartialDependenceDisplay
from .saliency import SaliencyDisplay

__all__ = [
    "AttributionDisplay",
    "DisagreementDisplay",
    "GroupingDisplay",
    "InteractionDisplay",
    "PartialDependenceDisplay",
    "SaliencyDisplay",
]
