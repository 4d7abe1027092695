"""Every public function rejects invalid parameters with a clear message."""

from importlib import import_module
from inspect import signature

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.utils._param_validation import (
    InvalidParameterError,
    generate_invalid_param_val,
    make_constraint,
)

from skdecomp import Explainer

PUBLIC_FUNCTIONS = [
    "skdecomp.metrics.sensitivity_n",
    "skdecomp.metrics.infidelity",
    "skdecomp.metrics.insertion_error",
    "skdecomp.metrics.deletion_error",
    "skdecomp.metrics.shapley_weighted_faithfulness",
    "skdecomp.metrics.faithfulness_correlation",
    "skdecomp.metrics.disagreement",
    "skdecomp.metrics.metric_disagreement",
    "skdecomp.metrics.relevance_curves",
    "skdecomp.metrics.symmetric_relevance_gain",
    "skdecomp.inspection.permutation_importance",
    "skdecomp.inspection.partial_dependence",
    "skdecomp.inspection.importance",
    "skdecomp.inspection.h_statistic",
    "skdecomp.inspection.interaction_matrix",
    "skdecomp.inspection.cost_of_exclusion",
    "skdecomp.inspection.agreed_loss",
]


def _valid_required(name):
    """Valid values of the required (positional) parameters."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(12, 3))
    y = X[:, 0]
    if name in ("permutation_importance", "partial_dependence"):
        model = Ridge().fit(X, y)
        return {"permutation_importance": dict(estimator=model, X=X, y=y),
                "partial_dependence": dict(estimator=model, X=X, group=0)}[name]
    if name == "disagreement":
        return dict(attributions=[X, X])
    if name in ("relevance_curves", "symmetric_relevance_gain"):
        images = rng.uniform(size=(2, 4, 4, 3))
        explainer = Explainer(lambda A: A.reshape(len(A), -1).sum(axis=1),
                              baseline="zeros").fit(images)
        return dict(explainer=explainer, X=images)
    explainer = Explainer(lambda A: A[:, 0] * A[:, 1], background=X[:4]).fit(X)
    if name in ("importance",):
        return dict(explainer=explainer, X=X[:3])
    return dict(explainer=explainer, X=X[:5])


def _get(path):
    module, name = path.rsplit(".", 1)
    return getattr(import_module(module), name), name


@pytest.mark.parametrize("path", PUBLIC_FUNCTIONS)
def test_function_param_validation(path):
    func, name = _get(path)
    params = signature(func).parameters
    required = _valid_required(name)
    assert set(required) <= set(params)
    # the constraints dict is the first closure cell of validate_params' wrapper
    constraints = _constraints_of(func)
    assert set(constraints) == set(params), (
        f"{name}: parameters {set(params) ^ set(constraints)} lack constraints"
    )
    checked = 0
    for param, options in constraints.items():
        if options == "no_validation":
            continue
        cons = [make_constraint(c) for c in options]
        for constraint in cons:
            try:
                bad = generate_invalid_param_val(constraint)
            except NotImplementedError:
                continue
            # must also violate the other constraints of this parameter
            if any(c.is_satisfied_by(bad) for c in cons):
                continue
            kwargs = dict(required)
            kwargs[param] = bad
            with pytest.raises(
                InvalidParameterError, match=f"The '{param}' parameter of {name} must be"
            ):
                func(**kwargs)
            checked += 1
        # a value of the wrong type altogether
        if not any(c.is_satisfied_by(object()) for c in cons):
            kwargs = dict(required)
            kwargs[param] = object()
            with pytest.raises(InvalidParameterError, match=f"'{param}' parameter of {name}"):
                func(**kwargs)
            checked += 1
    assert checked > 0


def _constraints_of(func):
    for cell in func.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return value
    raise AssertionError(f"{func.__name__} is not decorated with validate_params")
