"""Partitions of the input columns into groups."""

# SPDX-License-Identifier: BSD-3-Clause

import copy
from collections.abc import Mapping
from itertools import combinations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._compat import _check_feature_names_in
from ._result_checks import short_list

__all__ = [
    "ColumnGroups", "ColumnNames", "GroupNamesOutMixin", "check_grouper_spec", "fit_grouper", "group_labels",
    "resolve_groups", "subset_name",
]


def check_grouper_spec(groups):
    """Refuse a model passed as ``groups``; a grouper learns a partition."""
    from sklearn.base import is_classifier, is_regressor

    if hasattr(groups, "fit") and (is_classifier(groups) or is_regressor(groups)):
        raise TypeError(
            f"groups={type(groups).__name__}(...) is a model, not a grouper; "
            "pass the model as the explainer's estimator, and as groups a "
            "grouper (e.g. AdaptiveGrouper()), a list of column lists or a dict."
        )


class GroupNamesOutMixin:
    """``get_feature_names_out`` for transformers with one output per group."""

    def get_feature_names_out(self, input_features=None):
        """Get the group names, the column names of :meth:`transform`.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked against the names seen in fit; not otherwise used.

        Returns
        -------
        feature_names_out : ndarray of str objects
            Name of each group.
        """
        check_is_fitted(self)
        _check_feature_names_in(self, input_features)
        return self.group_names_.copy()

    @property
    def group_features_(self):
        """Column names of each group, in group order.

        The names are ``feature_names_in_`` when fit saw a DataFrame with
        string column names, else ``"x0"``, ``"x1"``, ...; ``groups_`` holds
        the column positions.

        Returns
        -------
        list of list of str
            One list of column names per group.
        """
        check_is_fitted(self)
        names = ColumnNames(self.n_features_in_, getattr(self, "feature_names_in_", None))
        return [[names[j] for j in g] for g in self.groups_]



def _default_names(n_features, feature_names):
    if feature_names is not None:
        return [str(name) for name in feature_names]
    return [f"x{j}" for j in range(n_features)]


class ColumnNames:
    """The names of ``n_features`` columns, each made when asked for.

    ``feature_names`` when given, else ``"x0"``, ``"x1"``, ...: a flattened
    photo has millions of columns, whose names as strings would take about
    60 bytes each, so they are built one at a time (``names[j]``) or all at
    once only when asked (:meth:`to_array`).
    """

    def __init__(self, n_features, feature_names=None):
        self.n_features = int(n_features)
        self.feature_names = feature_names

    def __len__(self):
        return self.n_features

    def __getitem__(self, j):
        if self.feature_names is not None:
            return str(self.feature_names[j])
        j = int(j)
        if not -self.n_features <= j < self.n_features:
            raise IndexError(f"column {j} out of range for {self.n_features} columns")
        return f"x{j % self.n_features}"

    def __iter__(self):
        return (self[j] for j in range(self.n_features))

    def to_array(self):
        """All the names, as an object array."""
        return np.asarray(_default_names(self.n_features, self.feature_names), dtype=object)


class ColumnGroups:
    """Column names of each group, from the groups' positions, made when asked for.

    ``groups[k]`` is the list of names of group k; :meth:`take` and
    :meth:`join` select and join groups without making any name.
    """

    def __init__(self, positions, names):
        self.positions = [np.asarray(p, dtype=np.int64) for p in positions]
        self.names = names

    def __len__(self):
        return len(self.positions)

    def __getitem__(self, k):
        return [self.names[j] for j in self.positions[k]]

    def __iter__(self):
        return (self[k] for k in range(len(self)))

    def take(self, ks):
        """Groups ``ks``, in that order."""
        return ColumnGroups([self.positions[k] for k in ks], self.names)

    def join(self, parts):
        """One group per list of groups in ``parts``: their columns, in that order."""
        return ColumnGroups(
            [np.concatenate([self.positions[k] for k in ks]) for ks in parts], self.names)


def _label_position(col, column_labels):
    """Position of the DataFrame column labelled ``col``, or None."""
    for j, label in enumerate(column_labels):
        if isinstance(label, (bool, np.bool_)) or type(label) is not type(col) and not (
            isinstance(label, (int, np.integer)) and isinstance(col, (int, np.integer))
        ):
            continue
        if label == col:
            return j
    return None


def _column_position(col, n_features, feature_names, where, column_labels=None):
    if isinstance(col, (bool, np.bool_)):
        raise TypeError(f"{where}: column {col!r} is a bool; give a position or a name.")
    if column_labels is not None and isinstance(col, (int, np.integer, str)):
        # a DataFrame whose column names are not all strings (e.g. integers):
        # a label of the frame names that column, as in ``frame[col]``
        pos = _label_position(col, column_labels)
        if pos is not None:
            return pos
        if isinstance(col, str) or not -n_features <= int(col) < n_features:
            raise ValueError(
                f"{where}: unknown column {col!r}; the DataFrame's columns are "
                f"{list(column_labels)} (or give positions 0 to {n_features - 1})."
            )
    if isinstance(col, (int, np.integer)):
        pos = int(col)
        if not -n_features <= pos < n_features:
            raise ValueError(
                f"{where}: column position {pos} is out of range for data "
                f"with {n_features} columns."
            )
        return pos % n_features
    if isinstance(col, str):
        if feature_names is None:
            raise ValueError(
                f"{where}: column name {col!r} given but X has no column "
                "names; pass a pandas DataFrame or use integer positions."
            )
        matches = np.flatnonzero(np.asarray(feature_names, dtype=object) == col)
        if matches.size == 0:
            raise ValueError(
                f"{where}: unknown column {col!r}; known columns are "
                f"{list(feature_names)}."
            )
        return int(matches[0])
    raise TypeError(
        f"{where}: column {col!r} must be an integer position or a column "
        f"name, got {type(col).__name__}."
    )


def resolve_groups(groups, n_features, feature_names=None, column_labels=None):
    """Turn a user specification of groups into positions and names.

    Parameters
    ----------
    groups : None, list of lists, or dict name -> list
        None gives one group per column. Columns are integer positions or,
        when ``feature_names`` is given, column names. A bare column in place
        of a list is a group of one column.
    n_features : int
    feature_names : array-like of str or None
    column_labels : list or None, default=None
        The column labels of a DataFrame whose labels are not all strings
        (such as integers), for which ``feature_names`` is None: a column
        given by one of these labels is that column.

    Returns
    -------
    positions : list of ndarray of int64
        Sorted column positions of each group, in group order.
    names : list of str
        Group names: the dict keys, or the column names of the group joined
        by ``":"``.
    """
    # made one at a time: an image has millions of columns
    col_names = ColumnNames(n_features, feature_names)
    if groups is None:
        return ([np.array([j], dtype=np.int64) for j in range(n_features)],
                list(col_names))

    if isinstance(groups, Mapping):
        items = [(str(name), cols) for name, cols in groups.items()]
    elif isinstance(groups, (list, tuple)):
        items = [(None, cols) for cols in groups]
    else:
        raise TypeError(
            "groups must be None, a list of column lists or a dict mapping "
            f"group names to column lists, got {type(groups).__name__}."
        )
    if len(items) == 0:
        raise ValueError("groups is empty; give at least one group or None.")

    positions, names = [], []
    owner = np.full(n_features, -1, dtype=np.int64)
    for k, (name, cols) in enumerate(items):
        where = f"group {name!r}" if name is not None else f"group {k}"
        if isinstance(cols, (str, int, np.integer)):
            cols = [cols]
        if (isinstance(cols, np.ndarray) and cols.ndim == 1 and cols.dtype.kind in "iu"
                and column_labels is None and cols.size):
            # positions as an array (image groups: thousands of pixels), at once
            bad = (cols < -n_features) | (cols >= n_features)
            if bad.any():
                _column_position(int(cols[bad][0]), n_features, feature_names, where)
            pos = (cols if cols.dtype == np.int64 and cols.min() >= 0
                   else cols.astype(np.int64) % n_features)
        else:
            try:
                cols = list(cols)
            except TypeError:
                raise TypeError(f"{where}: expected a list of columns, got {cols!r}.")
            if len(cols) == 0:
                raise ValueError(f"{where} is empty; every group needs a column.")
            pos = np.asarray(
                [_column_position(c, n_features, feature_names, where, column_labels)
                 for c in cols], dtype=np.int64)
        taken = owner[pos]
        clash = (taken >= 0) & (taken != k)
        if clash.any():
            p = int(pos[clash][0])
            raise ValueError(
                f"groups overlap: column {col_names[p]!r} is in group "
                f"{int(owner[p])} and group {k}; put each column in one group."
            )
        owner[pos] = k
        if pos.size > 1 and not np.all(pos[1:] > pos[:-1]):  # sorted groups kept as given
            pos = np.unique(pos)
        positions.append(pos)
        names.append(name if name is not None else ":".join(col_names[p] for p in pos))

    missing = [col_names[j] for j in np.flatnonzero(owner < 0)]
    if missing:
        raise ValueError(
            f"groups miss columns {short_list(missing)}; every column must be in exactly "
            "one group (add them, e.g. as groups of their own)."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"group names must be unique, got {names}.")
    return positions, names


def group_labels(positions, n_features):
    """Group index of every column."""
    labels = np.full(n_features, -1, dtype=np.int64)
    for k, pos in enumerate(positions):
        labels[pos] = k
    return labels


def subset_name(mask, names):
    """Readable label of a subset of groups given as a bitmask."""
    members = [names[k] for k in range(len(names)) if mask >> k & 1]
    return " & ".join(members) if members else "baseline"


def group_terms(n_groups, max_order):
    """Terms of at most ``max_order`` groups: tuples of group positions.

    The empty term first, then by size and lexicographically (the order of
    the terms of interaction indices).
    """
    terms = []
    for size in range(0, max_order + 1):
        terms.extend(combinations(range(n_groups), size))
    return terms


def fit_grouper(
    grouper, X, y, *, estimator, response_method, target, random_state, baseline=None,
    group_penalty=None, imputer="marginal",
):
    """Fit a clone of ``grouper`` for an explainer.

    The explainer's fitted model is passed on when the grouper has an
    ``estimator`` parameter left at None; its ``response_method`` and
    ``target`` are passed on when the grouper's are at their defaults, its
    ``random_state`` when the grouper's is None, its ``group_penalty`` when
    the grouper's is at its default, its baseline image (an array) when
    the grouper has a ``baseline`` parameter left at None, and its
    ``imputer`` when it is not the default and the grouper's is.
    """
    # a shallow copy: fitted parameters (e.g. a ColumnTransformer) stay fitted
    grouper = copy.copy(grouper)
    params = grouper.get_params(deep=False)
    updates = {}
    if "estimator" in params and params["estimator"] is None:
        updates["estimator"] = estimator
        if params.get("response_method", None) == "auto":
            updates["response_method"] = response_method
        if "target" in params and params["target"] is None:
            updates["target"] = target
    if "random_state" in params and params["random_state"] is None:
        updates["random_state"] = random_state
    default = getattr(type(grouper).__init__, "__kwdefaults__", None) or {}
    if (
        group_penalty is not None
        and "group_penalty" in params
        and params["group_penalty"] == default.get("group_penalty")
    ):
        updates["group_penalty"] = group_penalty
    if baseline is not None and "baseline" in params and params["baseline"] is None:
        updates["baseline"] = baseline
    if (
        "imputer" in params
        and not (isinstance(imputer, str) and imputer == "marginal")
        and isinstance(params["imputer"], str)
        and params["imputer"] == "marginal"
    ):
        updates["imputer"] = imputer
    grouper.set_params(**updates)
    grouper.fit(X, y)
    if not hasattr(grouper, "groups_"):
        raise TypeError(
            f"{type(grouper).__name__} has no groups_ after fit; pass a grouper "
            "such as AdaptiveGrouper, or a list of column lists."
        )
    return grouper
