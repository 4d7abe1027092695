"""skdecomp: grouped functional decomposition and agreeing explanations for scikit-learn models."""

# SPDX-License-Identifier: BSD-3-Clause

# first: gives Numba's cache a writable place before any kernel is decorated
from . import _numba  # noqa: F401
from ._decomposition import Decomposition
from ._explainer import MAX_EXACT_GROUPS, Explainer
from ._explanation import Explanation, Explanations, InteractionExplanation
from ._game import CoalitionGame
from ._game._samplers import GaussianCopulaSampler, KNeighborsSampler
from ._image import ImageModel
from ._grouping import (
    AdaptiveGrouper,
    CorrelationGrouper,
    FDTree,
    FixedGrouper,
    IShapGrouper,
    PairwiseGrouper,
    PatchGrouper,
    RecursiveGrouper,
    SuperpixelGrouper,
    column_transformer_groups,
)
from . import inspection, metrics

__version__ = "0.1.0.dev0"

__all__ = [
    "MAX_EXACT_GROUPS",
    "AdaptiveGrouper",
    "CoalitionGame",
    "CorrelationGrouper",
    "Decomposition",
    "Explainer",
    "Explanation",
    "Explanations",
    "FDTree",
    "GaussianCopulaSampler",
    "ImageModel",
    "InteractionExplanation",
    "KNeighborsSampler",
    "FixedGrouper",
    "IShapGrouper",
    "PairwiseGrouper",
    "PatchGrouper",
    "RecursiveGrouper",
    "SuperpixelGrouper",
    "__version__",
    "inspection",
    "metrics",
    "column_transformer_groups",
]


def __getattr__(name):
    # skdecomp.plot is imported on first use; it never imports matplotlib itself
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
