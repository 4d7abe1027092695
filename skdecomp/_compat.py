"""The one place where private scikit-learn helpers are imported, and fit helpers."""

# SPDX-License-Identifier: BSD-3-Clause

import functools

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import _check_feature_names_in

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "_check_feature_names_in",
    "_fit_context",
    "_get_output_config",
    "transactional_fit",
    "validate_params",
]


class Interval(_Interval):
    """scikit-learn's ``Interval`` constraint, refusing booleans.

    ``True`` is an ``Integral`` (and a ``Real``) to Python, so scikit-learn's
    ``Interval(Integral, 1, None)`` takes it as the number 1; a boolean is
    never meant as a count or a size, so here it fails the constraint and
    the parameter check names the parameter and the range.
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


def transactional_fit(fit):
    """Make ``fit`` all or nothing.

    A fit that raises leaves the estimator exactly as it was before the call
    (unfitted, or fitted as before); a fit that succeeds keeps no fitted
    attribute (name ending in ``_``) of an earlier fit that it did not set
    again.
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        before = dict(self.__dict__)
        for name in [k for k in before if k.endswith("_") and not k.startswith("__")]:
            del self.__dict__[name]
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    return wrapper


def check_nested_params(estimator, params):
    """Refuse ``name__param`` for a parameter that has no parameters of its own.

    scikit-learn's ``set_params`` would fail with an AttributeError on, say,
    ``groups__n_groups`` when ``groups`` is a list of columns.
    """
    for key in params:
        name, sep, _ = key.partition("__")
        if not sep:
            continue
        value = params[name] if name in params else getattr(estimator, name, None)
        if not hasattr(value, "set_params"):
            raise ValueError(
                f"set_params({key}=...): {name} is {type(value).__name__} "
                f"{value!r:.60}, which has no parameters of its own; set {name}= "
                "itself, or give an estimator there (e.g. groups=AdaptiveGrouper()) "
                "to tune its parameters."
            )


class NestedParamsMixin:
    """``set_params`` that names the problem of ``name__param`` on a plain value."""

    def set_params(self, **params):
        """Set the parameters of this estimator, and of a grouper in ``groups``.

        Parameters
        ----------
        **params : dict
            Estimator parameters; ``groups__<name>`` sets a parameter of the
            grouper given as ``groups``.

        Returns
        -------
        self : object
        """
        check_nested_params(self, params)
        return super().set_params(**params)
