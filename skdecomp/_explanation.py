"""Attributions as tables: the Explanation of rows over groups (and outputs)."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._explanation_images import ImageLayoutsMixin
from ._image import label_map_from_groups
from ._methods import get_method, is_hierarchical, resolve_budget
from ._model import describe_response
from ._partition import ColumnGroups, ColumnNames
from ._result_checks import (
    AXES,
    check_base_values,
    check_count,
    check_names,
    check_standard_errors,
    pick_positions,
    real_array,
)

__all__ = [
    "Explanation", "Explanations", "InteractionExplanation", "explanation_arrays",
    "explanations_of",
]

def _group_data(X, groups):
    """Group-level values of the rows X: the column of a one-column group, else NaN.

    Float when every one-column group holds numbers, else an object array.
    """
    frame = isinstance(X, pd.DataFrame)
    arr = None if frame else np.asarray(X)
    columns = {
        k: X.iloc[:, int(g[0])] if frame else arr[:, int(g[0])]
        for k, g in enumerate(groups)
        if len(g) == 1
    }
    numeric = all(pd.api.types.is_numeric_dtype(c) for c in columns.values())
    data = np.full(
        (X.shape[0], len(groups)), np.nan, dtype=np.float64 if numeric else object
    )
    for k, c in columns.items():
        if isinstance(c, pd.Series):
            c = (
                c.to_numpy(dtype=np.float64, na_value=np.nan)
                if numeric
                else c.to_numpy(dtype=object)
            )
        data[:, k] = c
    return data


def _shap_clustering(hierarchy):
    """A hierarchy as the linkage matrix shap's plots take, or None for one group.

    Every internal node becomes merges of its children at the node's height
    (1 above its players, one more per level: the number of levels below
    it); a node of m > 2 children becomes m - 1 merges at that one height,
    so the cophenetic distance of two groups is the height of their lowest
    common node whatever the number of children. The merges are sorted by
    height (stably), so that the matrix is a valid scipy linkage
    (``scipy.cluster.hierarchy.is_valid_linkage``) whose distances never
    decrease (``is_monotonic``), as ``shap.plots.bar`` expects of a
    partition tree.

    Parameters
    ----------
    hierarchy : Hierarchy
        A rooted tree over the groups.

    Returns
    -------
    linkage : ndarray of shape (n_groups - 1, 4) or None
        ``[cluster, cluster, height, number of groups]`` per merge, clusters
        numbered as scipy numbers them; None for a single group, which has
        no merge.
    """
    K = int(hierarchy.n_players)
    if K < 2:
        return None
    # a node stands for the cluster of its last merge: ("player", k) or ("merge", i)
    rep = {k: ("player", k) for k in range(K)}
    height = {k: 0.0 for k in range(K)}
    size = {k: 1 for k in range(K)}
    merges = []  # (height, left, right, size), in the order they are made
    for a, children in enumerate(hierarchy.children, start=K):
        height[a] = max(height[c] for c in children) + 1.0
        size[a] = sum(size[c] for c in children)
        cur, cur_size = rep[children[0]], size[children[0]]
        for c in children[1:]:
            cur_size += size[c]
            merges.append((height[a], cur, rep[c], cur_size))
            cur = ("merge", len(merges) - 1)
        rep[a] = cur
    if len(merges) != K - 1:  # pragma: no cover - a rooted tree over K players
        raise ValueError(
            f"the hierarchy over {K} groups has {len(merges)} merges, not {K - 1}; "
            "it must be one rooted tree over all the groups."
        )
    # children are made before their parent: lower, or as high and earlier
    order = sorted(range(len(merges)), key=lambda i: (merges[i][0], i))
    cluster = {i: K + t for t, i in enumerate(order)}

    def number(ref):
        return ref[1] if ref[0] == "player" else cluster[ref[1]]

    Z = np.empty((K - 1, 4), dtype=np.float64)
    for t, i in enumerate(order):
        h, left, right, n = merges[i]
        Z[t] = [number(left), number(right), h, n]
    return Z


def _read_only(a):
    a = np.array(a, dtype=np.int64)
    a.flags.writeable = False
    return a


def _check_label_map(label_map, n_groups):
    """A label map of pixel groups 0..n_groups-1 as a read-only int64 array."""
    if label_map is None:
        return None
    lm = np.asarray(label_map)
    if lm.ndim != 2 or lm.size == 0:
        raise ValueError(
            f"label_map has shape {lm.shape}; expected (H, W), the group of "
            "every pixel of the explained images."
        )
    if not (np.issubdtype(lm.dtype, np.integer) or lm.dtype == bool):
        raise ValueError(
            f"label_map holds values of dtype {lm.dtype}; give integer group ids."
        )
    present = np.unique(lm)
    if present.size != n_groups or present[0] != 0 or present[-1] != n_groups - 1:
        raise ValueError(
            f"label_map must hold every group id 0..{n_groups - 1} of the "
            f"{n_groups} groups of values, each on at least one pixel; it holds "
            f"{present.size} distinct ids from {present[0]} to {present[-1]}."
        )
    return _read_only(lm)


def _take_rows(raw, rows):
    if raw is None:
        return None
    return raw.iloc[rows] if isinstance(raw, pd.DataFrame) else np.asarray(raw)[rows]


class Explanation(ImageLayoutsMixin):
    """Attributions of explained rows over groups, with what they explain.

    Holds the attributions ``values`` of rows over groups (and model outputs),
    the expected value they start from, the explained rows and the names of
    groups, columns and outputs. Usually obtained from
    :meth:`Explainer.explain <skdecomp.Explainer.explain>` or
    :meth:`from_explainer`, rather than built directly.

    It behaves like its array of values where an array is expected
    (``np.asarray(explanation)``), and like a ``shap.Explanation`` for
    selection: ``explanation[rows]``, ``explanation[:, groups]`` and
    ``explanation[:, :, outputs]`` (positions, slices, lists, boolean masks,
    or group and output names) return an Explanation; a single position or
    name drops its axis, so ``explanation[0]`` is one row and
    ``explanation[..., 1]`` one output.

    Parameters
    ----------
    values : array-like of shape (n_rows, n_groups) or (n_rows, n_groups, n_outputs)
        Attribution of each row to each group (and output).
    base_values : float or array-like of shape (n_rows,) or (n_rows, n_outputs), \
            default=None
        Value the attributions start from, for each row (and output); the
        mean model output over the background, E_B f, for an explainer.
        A scalar is the same for every row and output; one value per output
        is given as shape (1, n_outputs). None gives 0.
    data : array-like of shape (n_rows, n_groups), default=None
        Value of each row in each group. None gives NaN.
    feature_names : list of str, default=None
        Name of each group. None gives ``"g0"``, ``"g1"``, ...
    groups : list of list of str, default=None
        Column names of each group.
    raw_data : ndarray or DataFrame of shape (n_rows, n_features), default=None
        The explained rows.
    feature_names_in : array-like of str, default=None
        Name of each column of ``raw_data``.
    output_names : list of str, default=None
        Name of each output. None gives ``["y"]`` for 2-D values and
        ``"y0"``, ``"y1"``, ... for 3-D ones.
    method : str, default=None
        Attribution method, such as ``"shapley"``.
    output : str, default=None
        Plain-words description of the explained output and its scale.
    n_samples : int, default=None
        Budget of a sampled method: coalitions evaluated per explained row
        and background row. None for exact methods.
    standard_errors : array-like of the shape of ``values``, default=None
        Standard error of each value, finite and >= 0: the spread of a
        sampled estimate over the random draws of its coalitions. None for
        exact values.
    hierarchy : Hierarchy or None, default=None
        The hierarchy over the groups of hierarchical (Owen, Winter) values;
        :meth:`at_level` gives the totals of its cuts.
    label_map : array-like of int of shape (H, W), default=None
        For explanations of images: the group (0..n_groups-1) of every
        pixel, every group holding at least one pixel; :meth:`to_image`
        maps the values to the pixels. An :class:`~skdecomp.Explainer`
        fitted on images sets it.

    Attributes
    ----------
    values : ndarray
        Attributions, of shape (n_rows, n_groups) for one output or
        (n_rows, n_groups, n_outputs); an axis selected by a single position
        or name is dropped.
    base_values : ndarray or float
        E_B f for each row, of shape (n_rows,) or (n_rows, n_outputs). For
        the ``"shapley"`` method (and the methods that estimate it),
        ``base_values + values.sum(axis=1)`` is the model output f(x).
    data : ndarray of shape (n_rows, n_groups)
        Value of each row in each group at the group level: the value of the
        column for a group of one column, NaN for a group of several columns
        (their values are in ``raw_data``). Float when every one-column group
        holds numbers, else an object array.
    raw_data : ndarray or DataFrame of shape (n_rows, n_features)
        The explained rows as the model takes them, all columns.
    feature_names : list of str
        Name of each group.
    groups : list of list of str
        Column names of each group (see ``feature_names_in``).
    feature_names_in : ndarray of str
        Name of each column of ``raw_data``: the DataFrame's column names,
        else ``"x0"``, ``"x1"``, ...
    output_names : list of str
        Names of the outputs the values come from, also when the output
        axis is dropped.
    method : str
        Attribution method.
    output : str
        Plain-words description of the explained output and its scale, as
        in the HTML report's "Explained output".
    n_samples : int or None
        Budget of a sampled method (coalitions per explained row and
        background row); None for exact methods.
    standard_errors : ndarray or None
        Standard error of each value, of the shape of ``values``: for
        ``kernel_shap``, ``permutation_shap``, ``lime`` and ``rise``, how far
        the estimate may be from the value the method would give with every
        coalition (the exact Shapley value for the first two); ``values +-
        1.96 * standard_errors`` covers it about 95% of the time once the
        budget holds a few dozen draws. 0 for dummy groups and when every
        coalition was evaluated; None for exact methods and
        ``integrated_gradients``, whose quadrature is deterministic. See
        :ref:`standard errors <standard_errors>`.
    difference_standard_errors : dict
        Other method -> standard errors of ``values`` less that method's
        values, for the sampled methods that :meth:`Explainer.explain
        <skdecomp.Explainer.explain>` estimated from one design of coalitions
        with this one (their errors are correlated, so the error of their
        difference is not that of independent estimates). Empty otherwise,
        and on a selection of the explanation.
    shape : tuple of int
        Shape of ``values``.
    ndim : int
        Number of axes of ``values``.
    label_map : ndarray of int64 of shape (H, W) or None
        Read-only. The group of every pixel for explanations of images,
        None for tables; kept by selections of rows and outputs, dropped
        by a selection of some groups, mapped to the nodes by
        :meth:`at_level`.

    See Also
    --------
    Explainer.explain : Explanations of several methods from one set of model calls.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import LinearRegression
    >>> from skdecomp import Explainer, Explanation
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = LinearRegression().fit(X, y)
    >>> explainer = Explainer(model, groups={"body": ["age", "sex", "bmi", "bp"],
    ...     "blood": ["s1", "s2", "s3", "s4", "s5", "s6"]}, background=50,
    ...     random_state=0).fit(X)
    >>> explanation = Explanation.from_explainer(explainer, X.iloc[:3])
    >>> explanation.shape
    (3, 2)
    >>> explanation[:, "blood"].shape
    (3,)
    >>> list(explanation.to_frame().columns)
    ['body', 'blood']
    """

    def __init__(
        self,
        values,
        base_values=None,
        data=None,
        *,
        feature_names=None,
        groups=None,
        raw_data=None,
        feature_names_in=None,
        output_names=None,
        method=None,
        output=None,
        n_samples=None,
        standard_errors=None,
        hierarchy=None,
        label_map=None,
    ):
        values = real_array(values, "values")
        se = check_standard_errors(standard_errors, values.shape)
        if values.ndim not in (2, 3):
            raise ValueError(
                f"values have shape {values.shape}; expected (n_rows, n_groups) or "
                "(n_rows, n_groups, n_outputs)."
            )
        several = values.ndim == 3
        v = values if several else values[:, :, None]
        n, K, O = v.shape
        b = check_base_values(base_values, n, O, several)
        if data is None:
            d = np.full((n, K), np.nan)
        else:
            d = np.asarray(data)
            if d.shape != (n, K):
                raise ValueError(
                    f"data have shape {d.shape}; expected ({n}, {K}), one value "
                    "per row and group."
                )
        names = check_names(feature_names, K, "feature_names", lambda k: f"g{k}")
        if groups is not None:
            if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
                raise TypeError(f"groups must be a list of column lists, got {groups!r}.")
            if len(groups) != K:
                raise ValueError(f"{len(groups)} groups for {K} groups of values.")
            groups = groups if isinstance(groups, ColumnGroups) else [  # names made lazily
                check_names(g, len(g), f"groups[{k}]", str)
                if not isinstance(g, (str, bytes)) else check_names([g], 1, "groups", str)
                for k, g in enumerate(groups)
            ]
        output_names = check_names(
            output_names, O, "output_names",
            (lambda o: f"y{o}") if several else (lambda o: "y"),
        )
        if raw_data is not None and not isinstance(raw_data, pd.DataFrame):
            raw_data = np.asarray(raw_data)
            if raw_data.ndim != 2:
                raise ValueError(
                    f"raw_data has shape {raw_data.shape}; expected (n_rows, n_features)."
                )
        if raw_data is not None and raw_data.shape[0] != n:
            raise ValueError(f"raw_data has {raw_data.shape[0]} rows, values {n}.")
        if feature_names_in is None and raw_data is not None:
            width = raw_data.shape[1]
            feature_names_in = (
                list(raw_data.columns)
                if isinstance(raw_data, pd.DataFrame)
                else ColumnNames(width)  # "x0", "x1", ... made when asked for
            )
        if feature_names_in is not None and not isinstance(feature_names_in, ColumnNames):
            width = raw_data.shape[1] if raw_data is not None else len(feature_names_in)
            feature_names_in = np.asarray(check_names(
                feature_names_in, width, "feature_names_in", str), dtype=object)
        frame = isinstance(raw_data, pd.DataFrame)
        index = raw_data.index if frame else pd.RangeIndex(n)
        self._set(v, b, d, names, groups, raw_data, index, output_names,
                  (True, True, several))
        self._names_in = feature_names_in
        self.method = method
        self.output = output
        self.n_samples = check_count(n_samples, "n_samples")
        self._se = None if se is None else (se if several else se[:, :, None])
        self.difference_standard_errors = {}
        # description of each output alone, for selections of one output
        self._output_each = None
        if hierarchy is not None and getattr(hierarchy, "n_players", K) != K:
            raise ValueError(
                f"hierarchy has {hierarchy.n_players} players for {K} groups of values."
            )
        self.hierarchy = hierarchy
        self._label_map = _check_label_map(label_map, K)

    def _set(self, v, b, d, names, groups, raw, index, outputs, keep):
        self._v, self._b, self._d = v, b, d
        self._names, self._groups, self._raw = names, groups, raw
        self._index, self._outputs, self._keep = index, outputs, keep

    @classmethod
    def from_explainer(cls, explainer, X, *, method=None):
        """Explain the rows of X with a fitted explainer.

        Parameters
        ----------
        explainer : Explainer
            A fitted :class:`~skdecomp.Explainer`.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.
        method : str, default=None
            Attribution method; None uses the explainer's ``method_``, so
            ``values`` equal ``explainer.transform(X)``.

        Returns
        -------
        explanation : Explanation
            The attributions of ``method`` at the rows of X.
        """
        method = explainer.method_ if method is None else method
        return explainer.explain(X, methods=[method])[method]

    # -- the shown view ---------------------------------------------------------
    def _first(self, *axes):
        """Index tuple taking position 0 on the dropped axes among ``axes``."""
        return tuple(slice(None) if self._keep[a] else 0 for a in axes)

    @property
    def values(self):
        """Attributions, without the dropped axes."""
        return self._v[self._first(0, 1, 2)]

    @property
    def standard_errors(self):
        """Standard error of each value, without the dropped axes; None if exact."""
        return None if self._se is None else self._se[self._first(0, 1, 2)]

    @property
    def base_values(self):
        """E_B f for each row (and output), without the dropped axes."""
        b = self._b[self._first(0, 2)]
        return float(b) if b.ndim == 0 else b

    @property
    def data(self):
        """Value of each row in each group, NaN for groups of several columns."""
        d = self._d[self._first(0, 1)]
        return d.item() if d.ndim == 0 else d

    @property
    def raw_data(self):
        """The explained rows, all columns."""
        raw = self._raw
        if raw is None or self._keep[0]:
            return raw
        return raw.iloc[0] if isinstance(raw, pd.DataFrame) else raw[0]

    @property
    def feature_names_in(self):
        """Name of each column of ``raw_data`` (made on first access for arrays)."""
        if isinstance(self._names_in, ColumnNames):
            self._names_in = self._names_in.to_array()
        return self._names_in

    @property
    def feature_names(self):
        """Name of each group (a str when the group axis is dropped)."""
        return list(self._names) if self._keep[1] else self._names[0]

    @property
    def groups(self):
        """Column names of each group (one list when the group axis is dropped)."""
        if self._groups is None:
            return None
        if not self._keep[1]:
            return list(self._groups[0])
        return [list(g) for g in self._groups]

    @property
    def output_names(self):
        """Names of the outputs the values come from."""
        return list(self._outputs)

    @property
    def shape(self):
        """Shape of ``values``."""
        return self.values.shape

    @property
    def ndim(self):
        """Number of axes of ``values``."""
        return sum(self._keep)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of an Explanation of one row, group and output.")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        values = self.values
        if copy:
            return np.array(values, dtype=dtype, copy=True)
        return np.asarray(values, dtype=dtype)

    def __repr__(self):
        parts = [f"shape={self.shape}"]
        if self.method is not None:
            parts.insert(0, f"method={self.method!r}")
        if self.n_samples is not None:
            parts.insert(1, f"n_samples={self.n_samples}")
        if self._se is not None and self._se.size:
            # at_level's node totals carry sums of standard errors: bounds
            kind = "bound" if getattr(self, "_se_bound", False) else "error"
            parts.append(f"max_standard_{kind}={float(self._se.max()):.3g}")
        if self.output is not None:
            parts.append(f"output={self.output!r}")
        return f"Explanation({', '.join(parts)})"

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        shown = [a for a in range(3) if self._keep[a]]
        n_ellipsis = sum(k is Ellipsis for k in key)
        if n_ellipsis > 1:
            raise IndexError("an index can only have a single ellipsis ('...').")
        if n_ellipsis:
            at = next(i for i, k in enumerate(key) if k is Ellipsis)
            fill = (slice(None),) * max(len(shown) - len(key) + 1, 0)
            key = key[:at] + fill + key[at + 1:]
        if len(key) > len(shown):
            raise IndexError(
                f"too many indices: this Explanation has {len(shown)} axes "
                f"({', '.join(AXES[a] for a in shown)})."
            )
        v, b, d, se = self._v, self._b, self._d, self._se
        names, groups, raw = self._names, self._groups, self._raw
        index, outputs, keep = self._index, self._outputs, list(self._keep)
        output, each = self.output, self._output_each
        for axis, k in zip(shown, key):
            labels = (None, names, outputs)[axis]
            pos, drop = pick_positions(v.shape[axis], k, labels, axis)
            keep[axis] = not drop
            if se is not None:
                se = se[(slice(None),) * axis + (pos,)]
            if axis == 0:
                v, b, d = v[pos], b[pos], d[pos]
                raw, index = _take_rows(raw, pos), index[pos]
            elif axis == 1:
                v, d = v[:, pos], d[:, pos]
                names = [names[p] for p in pos]
                groups = None if groups is None else (
                    groups.take(pos) if isinstance(groups, ColumnGroups)
                    else [groups[p] for p in pos])
            else:
                v, b = v[:, :, pos], b[:, pos]
                outputs = [outputs[p] for p in pos]
                if each is not None:
                    each = [each[p] for p in pos]
                    output = each[0] if len(each) == 1 else output
        new = object.__new__(type(self))
        new._set(v, b, d, names, groups, raw, index, outputs, tuple(keep))
        new._names_in = self._names_in
        new.method, new.output, new._output_each = self.method, output, each
        new.n_samples, new._se = self.n_samples, se
        new._se_bound = getattr(self, "_se_bound", False)
        # a hierarchy describes all the groups: a selection of some drops it
        whole = keep[1] and len(names) == len(self._names) and names == self._names
        new.hierarchy = self.hierarchy if whole else None
        new._label_map = self.label_map if whole else None
        return new

    def at_level(self, n_groups):
        """The totals of the nodes of a cut of the hierarchy, as an Explanation.

        The value of an internal node of the hierarchy is the sum of the
        values of its players. For hierarchical (Owen, Winter) values, the
        totals of a cut's nodes are the hierarchical values of the tree
        pruned at the cut (the cut's nodes as players, the levels above
        kept); for the top level, the grouped Shapley values of the blocks.

        Parameters
        ----------
        n_groups : int
            Number of nodes of the cut: 1 (the root), the number of
            top-level blocks, ..., the number of players. ``hierarchy.
            cut_sizes()`` lists them.

        Returns
        -------
        explanation : Explanation
            One group per node of the cut, named after it, with its columns;
            ``hierarchy`` is the pruned tree. The ``standard_errors`` of a
            sampled value's nodes are the sums of their players' standard
            errors: upper bounds, since the players' errors share draws
            (shown as ``max_standard_bound`` in the repr), not standard
            errors of the totals.
        """
        h = self.hierarchy
        if h is None and self.method is not None and is_hierarchical(self.method):
            # __getitem__ keeps the hierarchy only for a selection of every group
            raise ValueError(
                f"this {self.method!r} explanation has no hierarchy: selecting some of "
                "its groups (e.g. explanation[:, [0, 2]]) drops it, as the hierarchy "
                "describes all the groups. Call at_level before selecting: "
                "explanation.at_level(n)[:, ...] (selecting rows or outputs keeps it). "
                "An Explanation built by hand has one only when given hierarchy=."
            )
        if h is None:
            raise ValueError(
                "this explanation has no hierarchy; explain with method='owen' and "
                "Explainer(hierarchy=...)."
            )
        nodes = h.cut(n_groups)
        v = np.stack([self._v[:, h.leaves[a]].sum(axis=1) for a in nodes], axis=1)
        se = None
        if self._se is not None:  # draws shared by the players: a bound
            se = np.stack([self._se[:, h.leaves[a]].sum(axis=1) for a in nodes], axis=1)
        d = np.stack([self._d[:, h.leaves[a][0]] if h.leaves[a].size == 1
                      else np.full(self._d.shape[0], np.nan) for a in nodes], axis=1)
        groups = self._groups
        if isinstance(groups, ColumnGroups):
            groups = groups.join([h.leaves[a] for a in nodes])
        elif groups is not None:
            groups = [[c for k in h.leaves[a] for c in groups[k]] for a in nodes]
        new = object.__new__(type(self))
        new._set(v, self._b, d, [h.names[a] for a in nodes], groups, self._raw,
                 self._index, self._outputs, (self._keep[0], True, self._keep[2]))
        new._names_in = self._names_in
        new.method, new.output, new._output_each = self.method, self.output, self._output_each
        new.n_samples, new._se = self.n_samples, se
        new._se_bound = se is not None and any(h.leaves[a].size > 1 for a in nodes)
        new.hierarchy = h.pruned(nodes)
        new._label_map = None
        if self.label_map is not None:  # the pixels of a node are its players'
            node_of = np.empty(len(self._names), dtype=np.int64)
            for j, a in enumerate(nodes):
                node_of[h.leaves[a]] = j
            new._label_map = _read_only(node_of[self.label_map])
        return new

    @property
    def label_map(self):
        """Group of every pixel (H, W) for explanations of images, else None."""
        return getattr(self, "_label_map", None)  # None in older pickles

    # -- conversions ------------------------------------------------------------
    def to_frame(self, standard_errors=False):
        """The values as a DataFrame of rows by groups.

        Parameters
        ----------
        standard_errors : bool, default=False
            Give the standard errors instead of the values, in the same
            layout (see ``standard_errors``).

        Returns
        -------
        frame : DataFrame of shape (n_rows, n_groups) or (n_rows, n_outputs * n_groups)
            One row per explained row (indexed like the explained DataFrame,
            else 0, 1, ...) and one column per group. With an output axis,
            the columns are a MultiIndex (output, group), so
            ``frame[output_name]`` is the table of one output. A dropped
            row or group axis gives one row or one column.
        """
        v = self._v
        if standard_errors:
            if self._se is None:
                raise ValueError(
                    f"the {self.method or 'given'} values are exact and have no "
                    "standard errors; call to_frame() for the values."
                )
            v = self._se
        n, K, O = v.shape
        if self._keep[2]:
            flat = v.transpose(0, 2, 1).reshape(n, O * K)
            columns = pd.MultiIndex.from_product(
                [self._outputs, self._names], names=["output", "group"]
            )
        else:
            flat = v[:, :, 0]
            columns = pd.Index(self._names, dtype=object)
        return pd.DataFrame(flat, index=self._index.copy(), columns=columns)

    def to_shap(self):
        """The explanation of one output as a ``shap.Explanation``.

        Groups play the part of shap's features: ``feature_names`` are the
        group names and ``data`` the group-level values (NaN for groups of
        several columns), so ``shap.plots.waterfall(e[0])`` and
        ``shap.plots.beeswarm(e)`` work on ``e = explanation.to_shap()``.

        An explanation of images becomes shap's image layout instead, which
        ``shap.plots.image`` draws: ``values`` per pixel and channel (rows,
        H, W, C), each group's value spread evenly over its pixels and
        channels, and ``data`` the explained images.

        The hierarchy of Owen and Winter values (and of their cuts,
        :meth:`at_level`) becomes shap's ``clustering``: one scipy linkage
        matrix per row, as shap keeps it, whose distances never decrease; a
        node of more than two children is several merges at one height. So
        ``shap.plots.bar(e)`` draws the bars in the hierarchy's order. Its
        merges sit at the height of their node (1 for a node of groups, one
        more per level above), above shap's default ``clustering_cutoff``
        of 0.5: pass ``clustering_cutoff`` above the hierarchy's depth to
        draw the whole tree beside the bars. A cut of one node has no
        merge, hence no ``clustering``. shap's beeswarm fails when all
        rows carry the same matrix, so the root of row r is r units in the
        last place higher (``np.spacing``): ``shap.plots.beeswarm(e)`` then
        draws without the tree, and ``shap.plots.bar(e)`` still draws it.

        Returns
        -------
        explanation : shap.Explanation
            With ``values``, ``base_values``, ``data`` and ``feature_names``,
            and ``clustering`` for a hierarchy of two or more groups.

        Raises
        ------
        ValueError
            If the values have several outputs.
        ImportError
            If shap is not installed.
        """
        expl = self
        if self._keep[2]:
            if len(self._outputs) != 1:
                raise ValueError(
                    f"to_shap takes one output at a time, but this explanation has "
                    f"{len(self._outputs)} outputs {self._outputs}; explain one with "
                    "Explainer(..., target=<class or output>), or select one, e.g. "
                    f"explanation[..., 0] or explanation[:, :, {self._outputs[0]!r}]."
                )
            expl = self[..., 0]
        try:
            import shap
        except ImportError as exc:
            raise ImportError(
                "to_shap needs the shap package; install it with `pip install shap`."
            ) from exc
        if self.label_map is not None:  # shap's layout of images, one output
            return self._to_shap_image(shap)
        values = np.array(expl.values, dtype=np.float64)
        # the hierarchy is shap's clustering (shap.plots.bar draws it), which
        # shap keeps per row: one linkage matrix per row of a 2-D explanation
        linkage = None if self.hierarchy is None else _shap_clustering(self.hierarchy)
        extra = {}
        if linkage is not None and values.ndim == 2:
            clustering = np.repeat(linkage[None], values.shape[0], axis=0)
            # shap's beeswarm fails on a clustering that all rows share (shap
            # issue #2279): row r's root sits r units in the last place higher,
            # far below the 1e-8 under which shap's bar still reads one tree
            clustering[:, -1, 2] += (np.arange(values.shape[0])
                                     * np.spacing(linkage[-1, 2]))
            extra["clustering"] = clustering
        elif linkage is not None and values.ndim == 1:
            extra["clustering"] = linkage
        return shap.Explanation(
            values=values,
            base_values=expl.base_values,
            data=expl.data,
            feature_names=expl.feature_names,
            **extra,
        )


def explanation_arrays(explanation):
    """The arrays an :class:`Explanation` holds, with all their axes, for plotting.

    A selection of one row, group or output drops that axis from
    ``values``; the Displays need the arrays whole.

    Returns
    -------
    arrays : dict
        ``values`` (rows, groups, outputs), ``base_values`` (rows, outputs),
        ``data`` (rows, groups), ``group_names`` (list), ``groups``
        (list of column lists, or None) and ``standard_errors`` (as
        ``values``, or None).
    """
    e = explanation
    return {
        "values": e._v,
        "standard_errors": e._se,
        "base_values": e._b,
        "data": e._d,
        "group_names": list(e._names),
        "groups": None if e._groups is None else [list(g) for g in e._groups],
    }


class Explanations(Bunch):
    """Explanations of the same rows by several methods, keyed by method name.

    A dict (a :class:`~sklearn.utils.Bunch`: ``result["shapley"]`` or
    ``result.shapley``) of :class:`Explanation`, as returned by
    :meth:`Explainer.explain <skdecomp.Explainer.explain>`.

    Parameters
    ----------
    *args : mapping, optional
        Method name -> :class:`Explanation`, like ``dict(...)``.
    **kwargs : Explanation
        One explanation per method name.

    Raises
    ------
    TypeError
        If a value is not an :class:`Explanation` (wrap an array of values
        in ``Explanation(values)``) or a key is not a string.
    ValueError
        If the explanations are not of the same number of rows.
    """

    def __init__(self, *args, **kwargs):
        if len(args) > 1:
            raise TypeError(f"Explanations takes at most one mapping, got {len(args)} arguments.")
        items = {}
        if args:
            first = args[0]
            if not hasattr(first, "keys"):
                raise TypeError(
                    "Explanations holds Explanation objects keyed by method name, got "
                    f"{type(first).__name__}; build it as Explanations(shapley="
                    "Explanation(values)) or from a dict of Explanation."
                )
            items.update(first)
        items.update(kwargs)
        super().__init__()
        for key, value in items.items():
            self[key] = value

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"Explanations are keyed by method name (a str), got {key!r}.")
        if not isinstance(value, Explanation):
            raise TypeError(
                f"Explanations[{key!r}] must be an Explanation, got "
                f"{type(value).__name__}; wrap an array of attributions in "
                "Explanation(values)."
            )
        rows = value._v.shape[0]
        for other_key, other in self.items():
            if other_key != key and other._v.shape[0] != rows:
                raise ValueError(
                    f"Explanations[{key!r}] has {rows} rows but "
                    f"Explanations[{other_key!r}] has {other._v.shape[0]}; the "
                    "explanations of one collection are of the same rows."
                )
        super().__setitem__(key, value)

    def __setattr__(self, key, value):
        self[key] = value

    def update(self, *args, **kwargs):
        """Add or replace explanations, checked like ``result[key] = value``.

        Parameters
        ----------
        *args : mapping, optional
            Method name -> :class:`Explanation`.
        **kwargs : Explanation
            One explanation per method name.
        """
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key, default=None):
        """Return ``self[key]``, first setting it to ``default`` if absent.

        Parameters
        ----------
        key : str
            Method name.
        default : Explanation, default=None
            Set, after the checks of ``result[key] = value``, when ``key``
            is absent.

        Returns
        -------
        explanation : Explanation
            The explanation of ``key``.
        """
        if key not in self:
            self[key] = default
        return self[key]

    def to_frame(self):
        """The values of every method side by side.

        Returns
        -------
        frame : DataFrame
            One row per explained row; the columns are a MultiIndex whose
            first level is the method, followed by the levels of
            :meth:`Explanation.to_frame` (output and group, or group).
        """
        if not len(self):
            raise ValueError(
                "These Explanations hold no method, so there is nothing to put in a "
                "frame; explain some rows first (Explainer.explain)."
            )
        frames = {m: e.to_frame() for m, e in self.items()}
        levels = {m: f.columns.nlevels for m, f in frames.items()}
        if len(set(levels.values())) > 1:
            one = [m for m, k in levels.items() if k == 1]
            several = [m for m, k in levels.items() if k > 1]
            raise ValueError(
                f"These Explanations mix one output ({', '.join(map(repr, one))}) and "
                f"several outputs ({', '.join(map(repr, several))}), whose columns "
                "cannot be put side by side; select one output of each (e.g. "
                "explanation[..., 0]) or keep them in separate frames."
            )
        inner = next(iter(frames.values())).columns.names
        return pd.concat(frames, axis=1, names=["method", *inner])


def _budget(explainer, method):
    """Coalitions per row of a sampled coalition method, None otherwise."""
    if get_method(method).kind != "sampled" or method == "integrated_gradients":
        return None
    return resolve_budget(method, explainer.n_samples, explainer.n_groups_, check=False)


def _pairs_of(standard_errors, method):
    """The errors of differences with ``method``, as ((method, other), se)."""
    for key, se in (standard_errors or {}).items():
        if isinstance(key, tuple) and method in key:
            yield (method, key[1] if key[0] == method else key[0]), se


def explanations_of(explainer, X, attributions, standard_errors=None):
    """Explanations of the rows X from a fitted explainer's attributions.

    Parameters
    ----------
    explainer : Explainer
        The fitted explainer.
    X : ndarray or DataFrame of shape (n_samples, n_features)
        The explained rows, checked, in the model's input form.
    attributions : dict
        Method name -> values, (n_samples, n_groups) or
        (n_samples, n_groups, n_outputs).
    standard_errors : dict, default=None
        Method name -> standard errors of the sampled methods, as the values.

    Returns
    -------
    explanations : Explanations
    """
    n = X.shape[0]
    n_out = explainer.n_outputs_
    base = np.broadcast_to(
        np.asarray(explainer.expected_value_, dtype=np.float64).reshape(1, n_out),
        (n, n_out),
    )
    base = base[:, 0] if n_out == 1 else base
    data = _group_data(X, explainer.groups_)
    names = [str(g) for g in explainer.group_names_]
    # the column names, made when asked for (millions of columns on a photo)
    names_in = ColumnNames(X.shape[1], getattr(explainer, "feature_names_in_", None))
    groups = ColumnGroups(explainer.groups_, names_in)
    method, outputs, model = (
        explainer.response_method_, list(explainer.output_names_), explainer.estimator_
    )
    output = describe_response(method, outputs, model)
    each = [describe_response(method, [o], model) for o in outputs]
    # explanations of images carry the group of every pixel (to_image)
    image_shape = getattr(getattr(explainer, "game_", None), "image_shape", None)
    label_map = (None if image_shape is None
                 else label_map_from_groups(explainer.groups_, image_shape))
    result = Explanations()
    for m, values in attributions.items():
        result[m] = Explanation(
            values, base, data, feature_names=names, groups=groups, raw_data=X,
            feature_names_in=names_in, output_names=outputs, method=m, output=output,
            n_samples=_budget(explainer, m),
            standard_errors=(standard_errors or {}).get(m),
            hierarchy=getattr(explainer, "hierarchy_", None) if is_hierarchical(m) else None,
            label_map=label_map,
        )
        result[m].difference_standard_errors = {
            other: np.asarray(se) for (a, other), se in _pairs_of(standard_errors, m)
        }
        result[m]._output_each = each
    return result


# the interaction index values live in their own module, named here as before
from ._interaction_explanation import InteractionExplanation  # noqa: E402
