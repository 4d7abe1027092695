"""The one place where private scikit-learn helpers are imported."""

# SPDX-License-Identifier: BSD-3-Clause

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    StrOptions,
    validate_params,
)
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import _check_feature_names_in

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "_check_feature_names_in",
    "_fit_context",
    "_get_output_config",
    "validate_params",
]
