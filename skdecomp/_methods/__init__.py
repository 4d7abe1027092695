"""Attribution methods: the registry, exact weight functions and sampled estimators."""

# SPDX-License-Identifier: BSD-3-Clause

from ._registry import (
    ALIASES,
    EXACT_METHODS,
    METHOD_COLORS,
    METHOD_PARAMS,
    REGISTRY,
    SAMPLED_METHODS,
    SINGLE_GROUP_METHODS,
    MethodSpec,
    canonical,
    check_method_params,
    comparison_methods,
    default_methods,
    efficient_methods,
    get_method,
    lead_method,
    method_color,
    method_label,
    method_names,
    resolve_budget,
)
from ._dummy import dummy_groups, zero_dummy_groups
from ._sampled import sampled_attributions, shapley_kernel, single_group_attributions

__all__ = [
    "ALIASES",
    "EXACT_METHODS",
    "METHOD_COLORS",
    "METHOD_PARAMS",
    "REGISTRY",
    "SAMPLED_METHODS",
    "SINGLE_GROUP_METHODS",
    "MethodSpec",
    "canonical",
    "check_method_params",
    "comparison_methods",
    "default_methods",
    "dummy_groups",
    "efficient_methods",
    "get_method",
    "lead_method",
    "method_color",
    "method_label",
    "method_names",
    "resolve_budget",
    "sampled_attributions",
    "shapley_kernel",
    "single_group_attributions",
    "zero_dummy_groups",
]
