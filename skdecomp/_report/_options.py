"""Checks of the options (groups, methods, their size), before any model work."""

# SPDX-License-Identifier: BSD-3-Clause

import json
from pathlib import Path

from ._common import IMPUTERS, DataError


def load_groups(spec, X):
    """``auto``, ``columns`` or a JSON file with a list or dict of column lists.

    A file is checked against the columns of ``X`` here, before any model work.

    Parameters
    ----------
    spec : str
        ``"auto"``, ``"columns"`` or the path of a JSON file.
    X : DataFrame
        The table whose columns the groups name.

    Returns
    -------
    groups : str, list or dict
        ``spec`` itself for ``auto`` and ``columns``, else the groups.
    """
    if spec in ("auto", "columns"):
        return spec
    path = Path(spec)
    if not path.is_file():
        raise DataError(
            f"--groups {spec}: no such file; use auto, columns or a JSON file of "
            "column groups."
        )
    try:
        groups = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"--groups {spec} could not be read ({exc}).") from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"{path.name} is not valid JSON ({exc}).") from exc
    shape = (
        f"{path.name} must hold a list of column lists, e.g. [[\"a\", \"b\"], [\"c\"]], "
        "or an object mapping group names to column lists, e.g. "
        "{\"size\": [\"a\", \"b\"], \"place\": [\"c\"]}"
    )
    if isinstance(groups, dict):
        items = list(groups.items())
    elif isinstance(groups, list):
        items = list(enumerate(groups))
    else:
        raise DataError(shape + ".")
    for key, cols in items:
        for col in cols if isinstance(cols, list) else [cols]:
            if isinstance(col, bool) or not isinstance(col, (str, int)):
                raise DataError(
                    f"{path.name}: group {key!r} holds {json.dumps(col)}, which is not a "
                    f"column name; {shape}."
                )
    from .._partition import resolve_groups

    try:
        resolve_groups(groups, X.shape[1], list(X.columns))
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path.name}: {exc}") from exc
    return groups


def check_methods(methods):
    """Refuse unknown explanation method names.

    Parameters
    ----------
    methods : list of str or None
        Names given with ``--methods``.

    Returns
    -------
    methods : list of str or None
        The same names.
    """
    if methods is None:
        return None
    from .._methods import EXACT_METHODS, SAMPLED_METHODS

    from .._methods import is_hierarchical

    # the hierarchical values need a hierarchy: the report gives them within
    # the AGREED groups by itself
    known = [m for m in list(EXACT_METHODS) + list(SAMPLED_METHODS)
             if not is_hierarchical(m)]
    hierarchical = [m for m in methods if is_hierarchical(m)]
    if hierarchical:
        raise DataError(
            f"--methods {hierarchical[0]} shares interactions along a hierarchy, which "
            "the report takes from AGREED: when AGREED merges columns, the report "
            "gives every column's Owen value within its group. Choose among "
            f"{known}."
        )
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise DataError(f"unknown methods {unknown} in --methods; choose among {known}.")
    return list(methods)


def check_exact_limit(methods, X, groups, tree=False):
    """Refuse exact methods over more groups than exact enumeration allows.

    Exact methods enumerate all 2**K coalitions of K groups, except on the
    tree path; this is found before any model work.

    Parameters
    ----------
    methods : list of str or None
        Names given with ``--methods``; None picks methods that fit.
    X : DataFrame
        The table.
    groups : str, list or dict
        What :func:`load_groups` returns.
    tree : bool, default=False
        Whether the model will be a tree model read on the tree path, which
        takes exact methods for any number of groups.
    """
    from .._config import MAX_EXACT_GROUPS
    from .._methods import EXACT_METHODS, SINGLE_GROUP_METHODS

    exact = [m for m in methods or () if m in EXACT_METHODS]
    if tree or not exact or all(m in SINGLE_GROUP_METHODS for m in exact):
        return
    n_groups = len(groups) if isinstance(groups, (list, dict)) else X.shape[1]
    limit = MAX_EXACT_GROUPS
    if n_groups > limit:
        raise DataError(
            f"--methods {exact} enumerate all 2**K coalitions and {n_groups} "
            f"{'groups' if isinstance(groups, (list, dict)) else 'columns'} are more "
            f"than they allow (at most {limit}); drop --methods to use the "
            "sampled methods, or give fewer groups with --groups."
        )


def _check_groups_arg(groups, X):
    if isinstance(groups, str):
        if groups not in ("auto", "columns"):
            raise DataError(
                f"groups must be 'auto', 'columns', a list or a dict of column lists, "
                f"got {groups!r}."
            )
        return
    from .._partition import resolve_groups

    try:
        resolve_groups(groups, X.shape[1], list(X.columns))
    except (TypeError, ValueError) as exc:
        raise DataError(f"groups: {exc}") from exc


def _without(groups, dropped):
    """Given groups without the dropped columns (empty groups removed)."""
    if not dropped:
        return groups
    if isinstance(groups, dict):
        kept = {k: [c for c in v if c not in dropped] for k, v in groups.items()}
        return {k: v for k, v in kept.items() if v}
    kept = [[c for c in g if c not in dropped] for g in groups]
    return [g for g in kept if g]


def check_imputer(imputer, model=None, estimator="hgb"):
    """The game of the report: one of :data:`IMPUTERS`; path-dependent needs trees."""
    if not isinstance(imputer, str) or imputer not in IMPUTERS:
        raise DataError(
            f"imputer must be one of {', '.join(IMPUTERS)}, got {imputer!r}."
        )
    if imputer == "path_dependent" and model is None and estimator not in ("hgb", "rf"):
        raise DataError(
            f"--imputer path_dependent reads the trees' training cover, and the "
            f"{estimator} model has no trees; use --estimator hgb or rf, or "
            "--imputer marginal or conditional."
        )
