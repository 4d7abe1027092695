"""Attribution methods: the registry, exact weight functions and sampled estimators."""

# SPDX-License-Identifier: BSD-3-Clause

from ._registry import (
    ALIASES,
    EXACT_METHODS,
    METHOD_PARAMS,
    REGISTRY,
    SAMPLED_METHODS,
    SINGLE_GROUP_METHODS,
    MethodSpec,
    canonical,
    check_method_params,
    get_method,
    resolve_budget,
)
from ._dummy import dummy_groups, zero_dummy_groups
from ._sampled import sampled_attributions, shapley_kernel, single_group_attributions

__all__ = [
    "ALIASES",
    "EXACT_METHODS",
    "METHOD_PARAMS",
    "REGISTRY",
    "SAMPLED_METHODS",
    "SINGLE_GROUP_METHODS",
    "MethodSpec",
    "canonical",
    "check_method_params",
    "dummy_groups",
    "get_method",
    "resolve_budget",
    "sampled_attributions",
    "shapley_kernel",
    "single_group_attributions",
    "zero_dummy_groups",
]
