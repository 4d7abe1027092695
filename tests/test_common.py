"""scikit-learn's estimator checks on every public estimator."""

import importlib.util

from sklearn.linear_model import LinearRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdecomp import (
    AdaptiveGrouper,
    CorrelationGrouper,
    Explainer,
    FDTree,
    FixedGrouper,
    IShapGrouper,
    PairwiseGrouper,
    PatchGrouper,
    RecursiveGrouper,
    SuperpixelGrouper,
)

# Instances are kept tiny: every check explains its own data.
ESTIMATORS = [
    Explainer(LinearRegression(), background=5),
    AdaptiveGrouper(LinearRegression(), max_samples=5),
    PairwiseGrouper(LinearRegression(), max_samples=5),
    RecursiveGrouper(LinearRegression(), max_samples=5),
    IShapGrouper(LinearRegression(), max_samples=5, test_samples=20),
    CorrelationGrouper(),
    FixedGrouper(),
    Explainer(LinearRegression(), groups=AdaptiveGrouper(max_samples=5), background=5),
    # image groupers see each row as a 1-pixel-high image (2-D data of any width)
    PatchGrouper(2, image_shape=(1, -1)),
    FDTree(LinearRegression(), max_samples=10, min_samples_leaf=2),
]
if importlib.util.find_spec("skimage") is not None:
    ESTIMATORS.append(SuperpixelGrouper("slic", image_shape=(1, -1), random_state=0))

# Reasons for checks that cannot pass, by estimator class name.
EXPECTED_FAILED_CHECKS = {}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
