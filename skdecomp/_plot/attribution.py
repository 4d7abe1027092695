"""Grouped attributions: beeswarm, waterfall and bar plots."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._attribution_parts import (
    explanation_parts,
    is_explanation,
    swarm_offsets,
    value_colors,
)
from ._base import (
    FEATURE_CMAP,
    NEGATIVE_COLOR,
    NEUTRAL_COLOR,
    POSITIVE_COLOR,
    ROUND_OFF,
    add_note,
    as_attribution_dict,
    check_drawable,
    check_matplotlib_support,
    fit_labels,
    fitted_explainer,
    format_signed,
    format_value,
    group_names_for,
    method_color,
    panel_axes,
    round_off,
    squeeze_axes,
    style_axes,
)
from ._dendrogram import as_hierarchy, cut_for, draw_tree, leaf_order, node_totals

__all__ = ["AttributionDisplay"]

_KINDS = ("auto", "beeswarm", "waterfall", "bar")


def _of_output(values, output):
    """``values`` (outputs along the first axis) of one output, the first by default."""
    return np.atleast_1d(values)[0 if output is None else output]


class AttributionDisplay:
    """Grouped attributions: a beeswarm of many rows, a waterfall of one, bars.

    Three views, each sorted by the groups' mean absolute attribution:

    - ``"beeswarm"``: for many rows, one line of dots per group along the
      attribution axis, one dot per row, coloured by the group's value in
      the row (low to high, scaled to the group's range); groups of several
      columns, categorical columns and missing values are grey, as the
      legend under the plot says. One panel per method.
    - ``"waterfall"``: for one row and one method, the path from the base
      value E f to the prediction f(x), one bar per group, red when it
      raises the output and blue when it lowers it; the labels hold the
      group's value in the row (``"bmi = 0.062"``). A method whose
      attributions do not add up to ``f(x) - E f`` gets a grey last bar, the
      part it leaves unattributed.
    - ``"bar"``: the attributions of one row, or the mean absolute
      attribution over the rows, one bar per group and method. Sampled
      methods get error bars of 1.96 standard errors each side (about 95%
      intervals), as the axis label says; over several rows, of the mean
      standard error, which bounds that of the mean. With a hierarchy over
      the groups (hierarchical values, ``method="owen"``, carry theirs), the
      bars follow the order of its leaves and the tree is drawn to their
      right, joining the bars of every node; ``hierarchy_level=n`` merges
      the bars into the totals of the cut with n nodes
      (:meth:`Explanation.at_level <skdecomp.Explanation.at_level>`) and
      draws the tree above it.

    Every method has its colour (:func:`~skdecomp.plot.method_color`), the
    same in every Display. Long group names are wrapped, or shortened with
    a key under the plot.

    Build it with :meth:`from_explanation` (the
    :class:`~skdecomp.Explanation` objects of
    :meth:`Explainer.explain <skdecomp.Explainer.explain>`),
    :meth:`from_estimator` (which explains the rows) or :meth:`from_result`
    (attributions already computed, e.g. arrays or a
    :class:`~skdecomp.Decomposition`).

    Read more in the :ref:`User Guide <plotting>`.

    Parameters
    ----------
    attributions : dict of str to ndarray of shape (n_samples, n_groups)
        Attributions of each method.
    group_names : list of str
        Name of each group.
    expected_value : float, ndarray of shape (n_samples,) or None, default=None
        The base value E f (mean model output over the background), where a
        waterfall starts.
    prediction : ndarray of shape (n_samples,) or None, default=None
        Model output f(x) at each explained row, where a waterfall ends.
    data : ndarray of shape (n_samples, n_groups) or None, default=None
        Value of each row in each group (NaN for a group of several
        columns), as :attr:`Explanation.data <skdecomp.Explanation.data>`;
        colours the beeswarm and labels the waterfall.
    groups : list of list of str or None, default=None
        Columns of each group.
    standard_errors : dict of str to ndarray of shape (n_samples, n_groups) \
            or None, default=None
        Standard errors of the methods that have them (see
        :attr:`Explanation.standard_errors
        <skdecomp.Explanation.standard_errors>`); the bar and waterfall views draw them.
    hierarchy : Hierarchy or None, default=None
        A tree over the groups (:attr:`Explanation.hierarchy
        <skdecomp.Explanation.hierarchy>`), drawn beside the bars.

    Attributes
    ----------
    ax_ : matplotlib Axes or ndarray of Axes
        Axes with the plot; an array of Axes for a beeswarm of several
        methods (one panel per method).
    axes_ : ndarray of Axes
        All panels.
    figure_ : matplotlib Figure
        Figure holding the axes.
    artists_ : dict of str to matplotlib artist
        One artist per method: a ``BarContainer`` for bars and waterfalls
        (bars from bottom to top), a ``PathCollection`` for a beeswarm (the
        rows of each shown group in turn, groups from top to bottom).
    colorbar_ : matplotlib Colorbar or None
        The feature value colour bar of a beeswarm.
    error_bars_ : matplotlib ErrorbarContainer or None
        The 95% intervals (±1.96 standard errors) at the end of every
        group's step of a waterfall of a sampled method; None otherwise
        (the bar view draws its own on ``artists_``).
    order_ : ndarray of int
        Group indices shown, from top to bottom (with ``hierarchy_level``,
        indices of the cut's nodes, the players of ``hierarchy_``).
    hierarchy_ : Hierarchy or None
        The tree drawn beside the bars (above the cut with
        ``hierarchy_level``), or the hierarchy of the merged groups of the
        other views; None without a hierarchy.
    tree_ : matplotlib LineCollection or None
        The tree's lines: for every internal node of ``hierarchy_``, in
        order, a vertical line spanning its children, then one horizontal
        line from each child; None when no tree is drawn.
    tree_ax_ : matplotlib Axes or None
        The inset right of the bars holding ``tree_``.
    kind_ : str
        The view drawn.

    See Also
    --------
    DisagreementDisplay : How much the methods disagree.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skdecomp.plot import AttributionDisplay
    >>> phi = {"shapley": np.array([[0.5, -0.2]]), "arch": np.array([[0.3, -0.1]])}
    >>> disp = AttributionDisplay.from_result(phi, group_names=["a", "b"])
    >>> sorted(disp.artists_)
    ['arch', 'shapley']
    >>> disp = AttributionDisplay(
    ...     {"shapley": np.array([[0.5, -0.2]])}, ["a", "b"], expected_value=1.0,
    ...     data=np.array([[3.0, 0.25]])).plot(kind="waterfall")
    >>> [t.get_text() for t in disp.ax_.get_yticklabels()]
    ['b = 0.25', 'a = 3']
    """

    def __init__(
        self,
        attributions,
        group_names,
        *,
        expected_value=None,
        prediction=None,
        data=None,
        groups=None,
        standard_errors=None,
        hierarchy=None,
    ):
        self.attributions = attributions
        self.group_names = group_names
        self.expected_value = expected_value
        self.prediction = prediction
        self.data = data
        self.groups = groups
        self.standard_errors = standard_errors
        self.hierarchy = hierarchy

    @classmethod
    def from_explanation(
        cls,
        explanation,
        *,
        methods=None,
        output=None,
        kind="auto",
        max_groups=20,
        row=None,
        hierarchy=None,
        hierarchy_level=None,
        ax=None,
    ):
        """Plot :class:`~skdecomp.Explanation` objects.

        Parameters
        ----------
        explanation : Explanation, Explanations or list of Explanation
            One explanation (e.g. ``explainer.explain(X)["shapley"]``, or one
            row of it, ``explanation[0]``), or several of the same rows,
            keyed by method (the :class:`~skdecomp.Explanations` of
            :meth:`Explainer.explain <skdecomp.Explainer.explain>`). Their
            ``data`` colour the beeswarm and label the waterfall; their
            ``base_values`` start the waterfall. The prediction f(x) is
            known from Shapley values (they add up to ``f(x) - E f``).
        methods : str, list of str or None, default=None
            Methods shown; None shows all.
        output : int or None, default=None
            Output shown for multi-output explanations.
        kind : {"auto", "beeswarm", "waterfall", "bar"}, default="auto"
            "auto" draws a beeswarm of several rows, a waterfall of one row
            of one method, bars of one row of several methods.
        max_groups : int, default=20
            Show at most this many groups (the most important; a waterfall
            sums the others into one bar).
        row : int or None, default=None
            Row of a waterfall (None: the first) or of a bar plot (None: the
            mean absolute attribution over the rows).
        hierarchy : Hierarchy, list, ndarray, False or None, default=None
            Tree over the groups drawn beside bars (see :meth:`plot`); None
            takes the explanation's (method ``"owen"``).
        hierarchy_level : int or None, default=None
            Merge the groups into the nodes of the cut of the hierarchy with
            this many nodes (see :meth:`plot`).
        ax : matplotlib Axes or list of Axes, default=None
            Axes to draw on (split into one panel per method for a beeswarm
            of several methods); None creates a figure.

        Returns
        -------
        display : AttributionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_explanation")
        parts = explanation_parts(explanation, methods, output)
        disp = cls(
            parts["attributions"],
            parts["group_names"],
            expected_value=parts["expected_value"],
            prediction=parts["prediction"],
            data=parts["data"],
            groups=parts["groups"],
            standard_errors=parts["standard_errors"],
            hierarchy=parts["hierarchy"],
        )
        return disp.plot(kind=kind, max_groups=max_groups, row=row, hierarchy=hierarchy,
                         hierarchy_level=hierarchy_level, ax=ax)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        methods=("shapley",),
        groups=None,
        background=100,
        output=None,
        random_state=None,
        kind="auto",
        max_groups=20,
        row=None,
        hierarchy=None,
        hierarchy_level=None,
        ax=None,
    ):
        """Explain rows of X and plot the attributions.

        Parameters
        ----------
        estimator : Explainer or estimator
            A fitted :class:`~skdecomp.Explainer` (used as it is), or a
            fitted model, explained by a new Explainer with ``groups`` and
            ``background`` fitted on X.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain (and background source for a new Explainer).
        methods : str or list of str, default=("shapley",)
            Methods of :meth:`Explainer.explain <skdecomp.Explainer.explain>`.
        groups : None, list of lists, dict or grouper, default=None
            Groups of a new Explainer.
        background : int or array-like, default=100
            Background of a new Explainer.
        output : int or None, default=None
            Output to show for a multi-output model.
        random_state : int, RandomState instance or None, default=None
            Seed of a new Explainer.
        kind : {"auto", "beeswarm", "waterfall", "bar"}, default="auto"
            "auto" draws a beeswarm of several rows, a waterfall of one row
            of one method, bars of one row of several methods.
        max_groups : int, default=20
            Show at most this many groups (the most important).
        row : int or None, default=None
            Row of a waterfall (None: the first) or of a bar plot (None: the
            mean absolute attribution over the rows).
        hierarchy : Hierarchy, list, ndarray, False or None, default=None
            Tree over the groups drawn beside bars (see :meth:`plot`); None
            takes the explanation's (method ``"owen"``).
        hierarchy_level : int or None, default=None
            Merge the groups into the nodes of the cut of the hierarchy with
            this many nodes (see :meth:`plot`).
        ax : matplotlib Axes or list of Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : AttributionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        explainer = fitted_explainer(estimator, X, groups, background, random_state)
        methods = [methods] if isinstance(methods, str) else list(methods)
        parts = explanation_parts(
            explainer.explain(X, methods=methods), methods, output
        )
        game = explainer.game_
        pred = np.asarray(game.predict(game.check_X(X)), dtype=np.float64)
        o = 0 if output is None else output
        prediction = pred if pred.ndim == 1 else pred[:, o]
        disp = cls(
            parts["attributions"],
            [str(n) for n in explainer.get_feature_names_out()],
            expected_value=float(_of_output(explainer.expected_value_, output)),
            prediction=prediction,
            data=parts["data"],
            groups=parts["groups"],
            standard_errors=parts["standard_errors"],
            hierarchy=parts["hierarchy"],
        )
        return disp.plot(kind=kind, max_groups=max_groups, row=row, hierarchy=hierarchy,
                         hierarchy_level=hierarchy_level, ax=ax)

    @classmethod
    def from_result(
        cls,
        result,
        *,
        group_names=None,
        methods=None,
        output=None,
        kind="auto",
        max_groups=20,
        row=None,
        hierarchy=None,
        hierarchy_level=None,
        ax=None,
    ):
        """Plot attributions already computed.

        Parameters
        ----------
        result : dict, Explanations, Decomposition, ndarray or list of ndarray
            Method name -> attributions (e.g. the
            :class:`~skdecomp.Explanations` of
            :meth:`Explainer.explain <skdecomp.Explainer.explain>`, handled as
            by :meth:`from_explanation`), a :class:`~skdecomp.Decomposition`
            (attributions of ``methods`` from its components), one array or
            a list of arrays of shape (n_samples, n_groups) or (n_groups,).
        group_names : list of str or None, default=None
            Names of the groups; taken from Explanations or a Decomposition,
            else ``"group 0"``, ``"group 1"``, ...
        methods : list of str or None, default=None
            Methods to show (for a Decomposition: which to compute,
            default ``["shapley"]``); names of plain arrays.
        output : int or None, default=None
            Output to show for multi-output attributions.
        kind : {"auto", "beeswarm", "waterfall", "bar"}, default="auto"
            "auto" draws a beeswarm of several rows, a waterfall of one row
            of one method when the base value is known, else bars.
        max_groups : int, default=20
            Show at most this many groups (the most important).
        row : int or None, default=None
            Row of a waterfall (None: the first) or of a bar plot (None: the
            mean absolute attribution over the rows).
        hierarchy : Hierarchy, list, ndarray, False or None, default=None
            Tree over the groups drawn beside bars (see :meth:`plot`); None
            takes the explanation's (method ``"owen"``).
        hierarchy_level : int or None, default=None
            Merge the groups into the nodes of the cut of the hierarchy with
            this many nodes (see :meth:`plot`).
        ax : matplotlib Axes or list of Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : AttributionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        if is_explanation(result):
            parts = explanation_parts(result, methods, output)
            names = parts["group_names"] if group_names is None else group_names
            disp = cls(
                parts["attributions"],
                group_names_for(len(parts["group_names"]), names),
                expected_value=parts["expected_value"],
                prediction=parts["prediction"],
                data=parts["data"],
                groups=parts["groups"],
                standard_errors=parts["standard_errors"],
                hierarchy=parts["hierarchy"],
            )
            return disp.plot(kind=kind, max_groups=max_groups, row=row, hierarchy=hierarchy,
                             hierarchy_level=hierarchy_level, ax=ax)
        attributions = as_attribution_dict(result, method_names=methods, output=output)
        n_groups = next(iter(attributions.values())).shape[1]
        if group_names is None and hasattr(result, "group_names"):
            group_names = result.group_names
        expected_value = prediction = None
        if hasattr(result, "expected_value") and hasattr(result, "prediction"):
            expected_value = float(_of_output(result.expected_value, output))
            pred = np.asarray(result.prediction)
            prediction = pred if pred.ndim == 1 else _of_output(pred.T, output)
        disp = cls(
            attributions,
            group_names_for(n_groups, group_names),
            expected_value=expected_value,
            prediction=prediction,
        )
        return disp.plot(kind=kind, max_groups=max_groups, row=row, hierarchy=hierarchy,
                         hierarchy_level=hierarchy_level, ax=ax)

    from_decomposition = from_result

    # -- drawing ------------------------------------------------------------------
    def _value_label(self, k, row):
        """``"name = value"`` of group k in a row, or the name alone."""
        name = str(self.group_names[k])
        if self.data is None or row is None:
            return name
        several = self.groups is not None and len(self.groups[k]) > 1
        value = np.asarray(self.data)[row, k]
        try:
            missing = bool(np.isnan(value))
        except TypeError:
            missing = value is None
        if several or (missing and self.groups is None):
            return name
        return f"{name} = {format_value(value)}"

    def _base(self, row):
        base = self.expected_value
        if base is None:
            return None
        base = np.asarray(base, dtype=np.float64)
        return float(base) if base.ndim == 0 else float(base[row])

    def plot(
        self,
        *,
        kind="auto",
        max_groups=20,
        row=None,
        method=None,
        cmap=FEATURE_CMAP,
        hierarchy=None,
        hierarchy_level=None,
        ax=None,
    ):
        """Draw the attributions.

        Parameters
        ----------
        kind : {"auto", "beeswarm", "waterfall", "bar"}, default="auto"
            "auto" draws a beeswarm of several rows, a waterfall of one row
            of one method when the base value is known, else bars.
        max_groups : int, default=20
            Show at most this many groups, the largest mean ``|phi|`` first
            (a waterfall: the largest ``|phi|`` of the row, the others summed
            into one bar).
        row : int or None, default=None
            Row of a waterfall (None: the first) or of a bar plot (None: the
            only row, or the mean ``|phi|`` over several rows).
        method : str or None, default=None
            Method of a waterfall; None takes the first.
        cmap : str or Colormap, default="cool"
            Colour map of the feature values in a beeswarm, low to high.
        hierarchy : Hierarchy, list, dict, ndarray, False or None, default=None
            Tree over the groups: a :class:`~skdecomp._hierarchy.Hierarchy`,
            nested lists or dicts of group names or indices, or a scipy
            linkage matrix over the groups; None takes the display's
            ``hierarchy``, False draws none. Bars follow the order of its
            leaves, all groups shown (at most ``max_groups``: when there are
            more, the finest cut with at most that many nodes), and the tree
            is drawn to their right.
        hierarchy_level : int or None, default=None
            Merge the groups into the nodes of the cut with this many nodes
            (``hierarchy.cut_sizes()`` lists them): every view shows the
            totals of the cut's nodes, as :meth:`Explanation.at_level
            <skdecomp.Explanation.at_level>`, and bars the tree above it.
            Over several rows, bars show the mean absolute total.
        ax : matplotlib Axes or list of Axes, default=None
            Axes to draw on (a beeswarm of several methods splits it into
            one panel per method, or takes one Axes per method); None creates
            a figure.

        Returns
        -------
        display : AttributionDisplay
            The object, with ``ax_``, ``axes_``, ``figure_``, ``artists_``,
            ``colorbar_``, ``order_``, ``kind_``, ``hierarchy_`` and ``tree_``
            set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        if kind not in _KINDS:
            raise ValueError(
                f"kind must be one of {', '.join(map(repr, _KINDS))}, got {kind!r}."
            )
        if not len(self.attributions):
            raise ValueError(
                f"{type(self).__name__}.plot: no attributions to draw; give at "
                "least one method."
            )
        phis = {
            str(m): check_drawable(v, f"the attributions of {m!r}",
                                   f"{type(self).__name__}.plot")
            for m, v in self.attributions.items()
        }
        for known, label in ((self.expected_value, "expected_value"),
                             (self.prediction, "prediction")):
            if known is not None:
                check_drawable(known, f"the {label} values", f"{type(self).__name__}.plot")
        phis = {m: (v[None, :] if v.ndim == 1 else v) for m, v in phis.items()}
        n_samples, n_groups = next(iter(phis.values())).shape
        # round-off (relative to the size of the output) is drawn as 0
        sizes = [np.max(np.abs(v), initial=0.0) for v in phis.values()]
        for known in (self.expected_value, self.prediction):
            if known is not None:
                sizes.append(np.max(np.abs(np.asarray(known, dtype=np.float64))))
        scale = max(sizes)
        phis = {m: round_off(v, scale) for m, v in phis.items()}
        if kind == "auto":
            if n_samples > 1:
                kind = "beeswarm"
            elif len(phis) == 1 and self.expected_value is not None:
                kind = "waterfall"
            else:
                kind = "bar"
        if row is not None and not -n_samples <= row < n_samples:
            raise ValueError(f"row={row} is out of range for {n_samples} rows.")
        shown, tree = self._cut(phis, kind, hierarchy, hierarchy_level, max_groups)
        self.hierarchy_ = tree
        if shown is not self:
            phis = shown.attributions
        shown.kind_ = kind
        shown.colorbar_ = shown.error_bars_ = shown.tree_ = shown.tree_ax_ = None
        if kind == "waterfall":
            shown._waterfall(phis, row, method, max_groups, ax)
        elif kind == "bar":
            shown._bars(phis, row, max_groups, ax, tree)
        else:
            shown._beeswarm(phis, max_groups, cmap, ax)
        for name in ("kind_", "colorbar_", "error_bars_", "tree_", "tree_ax_", "ax_",
                     "axes_", "figure_", "artists_", "order_"):
            setattr(self, name, getattr(shown, name))
        return self

    def _cut(self, phis, kind, hierarchy, level, max_groups):
        """The display of the groups shown (merged at a cut), and the tree drawn."""
        if hierarchy is None:
            hierarchy = self.hierarchy
        if hierarchy is None or hierarchy is False:
            if level is not None:
                raise ValueError(
                    f"hierarchy_level={level!r} needs a hierarchy over the groups; "
                    "explain with method='owen' and Explainer(hierarchy=...), or pass "
                    "hierarchy= (a Hierarchy, nested lists of group names, or a "
                    "linkage matrix)."
                )
            return self, None
        h = as_hierarchy(hierarchy, [str(n) for n in self.group_names])
        nodes = cut_for(h, level, max_groups if kind == "bar" else h.n_players)
        if nodes is None:
            return self, h
        K = h.n_players
        names = [h.names[a] for a in nodes]
        errors = {m: node_totals(se, h, nodes)
                  for m, se in (self.standard_errors or {}).items() if se is not None}
        data = groups = None
        if self.data is not None:
            data = np.asarray(self.data)
            data = np.stack([data[:, h.leaves[a][0]] if h.leaves[a].size == 1
                             else np.full(data.shape[0], np.nan) for a in nodes], axis=1)
        members = self.groups or [[str(n)] for n in self.group_names]
        if len(members) == K:
            groups = [[c for k in h.leaves[a] for c in members[k]] for a in nodes]
        shown = type(self)(
            {m: node_totals(v, h, nodes) for m, v in phis.items()}, names,
            expected_value=self.expected_value, prediction=self.prediction, data=data,
            groups=groups, standard_errors=errors or None,
        )
        shown._n_players = K
        return shown, h.pruned(nodes)

    def _finish(self, fig, axes):
        self.axes_ = np.asarray(axes, dtype=object)
        self.ax_ = squeeze_axes(self.axes_)
        self.figure_ = fig

    def _group_ticks(self, ax, positions, labels):
        labels, key = fit_labels(labels, width=24)
        ax.set_yticks(positions, labels=labels)
        return key

    # -- bars -------------------------------------------------------------------
    def _bars(self, phis, row, max_groups, ax, tree=None):
        n_samples, n_groups = next(iter(phis.values())).shape
        summary = row is None and n_samples > 1
        if row is None:
            row = 0
        if summary:
            shown = {m: np.abs(v).mean(axis=0) for m, v in phis.items()}
        else:
            shown = {m: v[row] for m, v in phis.items()}
        errors = self._bar_errors(phis, row, summary)
        importance = np.mean([np.abs(v) for v in shown.values()], axis=0)
        if tree is None:
            order = np.argsort(-importance, kind="stable")[:max_groups]
        else:  # the hierarchy's leaves, all of them
            order = leaf_order(tree)
        self.order_ = order
        n_shown, n_methods = order.size, len(shown)
        labels = [
            str(self.group_names[k]) if summary else self._value_label(k, row)
            for k in order
        ]
        fig, axes = panel_axes(
            ax,
            1,
            figsize=(
                6.4 + min(0.06 * max(map(len, labels), default=0), 1.5),
                min(max(1.3 + 0.3 * n_shown * max(1, 0.6 * n_methods), 2.5), 14),
            ),
        )
        ax = axes[0]
        band = 0.8
        step = band / n_methods
        positions = np.arange(n_shown)[::-1]  # most important on top
        artists = {}
        for i, (m, values) in enumerate(shown.items()):
            offset = band / 2 - step * (i + 0.5)
            artists[m] = ax.barh(
                positions + offset,
                values[order],
                height=step * 0.92,
                color=method_color(m),
                label=m,
                xerr=None if m not in errors else 1.96 * errors[m][order],
                error_kw={"ecolor": "0.15", "elinewidth": 1.0, "capsize": 2.5},
            )
        if n_methods == 1:
            bars = next(iter(artists.values()))
            ax.bar_label(
                bars,
                labels=[
                    format_value(v) if summary else format_signed(v)
                    for v in next(iter(shown.values()))[order]
                ],
                padding=3,
                fontsize="small",
            )
            ax.margins(x=0.15)
        ax.axvline(0.0, color="0.5", linewidth=0.8, zorder=0)
        key = self._group_ticks(ax, positions, labels)
        ax.set_ylim(-0.6, n_shown - 0.4)
        style_axes(ax)
        bars = "\nerror bars: \u00b11.96 standard errors (95% intervals)" if errors else ""
        if summary:
            bars = bars.replace("standard errors (95%", "x mean standard error (>= 95%")
            ax.set_xlabel("mean |attribution| (change of the model output)" + bars)
            title = f"Mean |attribution| over {n_samples} rows"
        else:
            ax.set_xlabel("attribution (change of the model output)" + bars)
            title = "Attributions of one row"
            fx, base = self.prediction, self._base(row)
            if fx is not None and base is not None:
                title += f": f(x) = {np.asarray(fx)[row]:.3g}, E[f(X)] = {base:.3g}"
        if n_groups > n_shown:
            title += f" (top {n_shown} of {n_groups} groups)"
        if getattr(self, "_n_players", None):
            title += f" (hierarchy cut at {n_shown} of {self._n_players} groups)"
        if tree is not None:
            where = np.empty(n_shown)
            where[order] = positions
            self.tree_ax_, self.tree_ = draw_tree(ax, tree, where)
        ax.set_title(title, fontsize="medium")
        if n_methods > 1:
            # beside the bars (and the tree), never over them
            (ax if tree is None else self.tree_ax_).legend(
                *ax.get_legend_handles_labels(), title="method", loc="upper left",
                bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False,
            )
        add_note(fig, ax, key)
        self.artists_ = artists
        self._finish(fig, axes)

    def _bar_errors(self, phis, row, summary):
        """Standard errors of the shown bars, by method (the methods that have them)."""
        out = {}
        for m, se in (self.standard_errors or {}).items():
            if m not in phis or se is None:
                continue
            se = np.asarray(se, dtype=np.float64)
            se = se[None, :] if se.ndim == 1 else se
            if se.shape != phis[m].shape:
                raise ValueError(
                    f"the standard errors of {m!r} have shape {se.shape}, the "
                    f"attributions {phis[m].shape}; give one per attribution."
                )
            if np.any(se > 0):
                out[m] = se.mean(axis=0) if summary else se[row]
        return out

    # -- waterfall --------------------------------------------------------------
    def _waterfall(self, phis, row, method, max_groups, ax):
        n_samples, n_groups = next(iter(phis.values())).shape
        row = 0 if row is None else row % n_samples
        if method is None:
            method = next(iter(phis))
        if method not in phis:
            raise ValueError(f"method {method!r} is not among {list(phis)}.")
        phi = phis[method][row]
        base = self._base(row)
        if base is None:
            base = 0.0
        start_label = "E[f(X)]" if self.expected_value is not None else "0"
        order = np.argsort(-np.abs(phi), kind="stable")
        max_groups = max(int(max_groups), 2)
        if n_groups > max_groups:
            top, rest = order[: max_groups - 1], order[max_groups - 1:]
        else:
            top, rest = order, order[:0]
        self.order_ = top
        # steps from the bottom: the rest, then the groups, smallest first
        steps = []
        if rest.size:
            steps.append((f"{rest.size} other groups", float(phi[rest].sum()), None))
        steps += [(self._value_label(k, row), float(phi[k]), k) for k in top[::-1]]
        fx = None
        if self.prediction is not None:
            fx = float(np.asarray(self.prediction)[row])
        total = base + float(phi.sum())
        output_scale = max(abs(base), abs(total), abs(fx or 0.0), 1e-300)
        if fx is not None and abs(fx - total) > 1e-9 * output_scale:
            steps.append((f"not attributed by {method}", fx - total, "rest"))
        end = fx if fx is not None else total
        n_steps = len(steps)
        longest = max(len(s[0]) for s in steps)
        fig, axes = panel_axes(
            ax,
            1,
            figsize=(
                7.0 + min(0.06 * longest, 1.5),
                min(max(1.8 + 0.38 * n_steps, 3.0), 14),
            ),
        )
        ax = axes[0]
        lefts, widths, colors = [], [], []
        position = base
        for label, value, k in steps:
            lefts.append(position)
            widths.append(value)
            if k == "rest" or abs(value) <= ROUND_OFF * output_scale:
                colors.append(NEUTRAL_COLOR)
            else:
                colors.append(POSITIVE_COLOR if value > 0 else NEGATIVE_COLOR)
            position += value
        ys = np.arange(n_steps)
        bars = ax.barh(ys, widths, left=lefts, height=0.62, color=colors)
        ends = np.asarray(lefts) + np.asarray(widths)
        # sampled methods: 95% intervals at the end of every group's step
        se = self._bar_errors(phis, row, False).get(method)
        half = np.zeros(n_steps)
        if se is not None:
            for i, (_, _, k) in enumerate(steps):
                if isinstance(k, (int, np.integer)):
                    half[i] = 1.96 * se[k]
            shown = half > 0
            self.error_bars_ = ax.errorbar(
                ends[shown], ys[shown], xerr=half[shown], fmt="none", ecolor="0.15",
                elinewidth=1.0, capsize=2.5,
            )
        else:
            self.error_bars_ = None
        for y, left, width, stop in zip(ys, lefts, widths, ends):
            ha = "left" if width >= 0 else "right"
            ax.annotate(
                format_signed(width),
                (stop + (half[y] if width >= 0 else -half[y]), y),
                xytext=(3 if width >= 0 else -3, 0),
                textcoords="offset points",
                ha=ha,
                va="center",
                fontsize="small",
            )
        for y in ys[:-1]:
            ax.plot([ends[y], ends[y]], [y + 0.31, y + 0.69], color="0.55", lw=0.8)
        # where the path starts and ends
        lo_y, hi_y = -1.05, n_steps + 0.05
        ax.plot([base, base], [lo_y, -0.31], color="0.45", lw=0.9, ls="--")
        ax.plot([end, end], [n_steps - 0.69, hi_y], color="0.45", lw=0.9, ls="--")
        xs = np.concatenate([[base, end], ends, lefts, ends - half, ends + half])
        span = np.ptp(xs) or max(abs(base), 1.0)
        lo_x, hi_x = xs.min() - 0.18 * span, xs.max() + 0.18 * span
        ax.set_xlim(lo_x, hi_x)
        ax.set_ylim(lo_y, hi_y)
        end_label = "f(x)" if fx is not None else f"{start_label} + sum of attributions"
        box = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"}
        for x, y, text in [
            (base, -0.72, f"{start_label} = {base:.4g}"),
            (end, n_steps - 0.28, f"{end_label} = {end:.4g}"),
        ]:
            # the text reaches into the plot, never out of it
            ax.text(
                x, y, text, ha="right" if x > (lo_x + hi_x) / 2 else "left",
                va="center", fontsize="small", bbox=box,
            )
        key = self._group_ticks(ax, ys, [s[0] for s in steps])
        style_axes(ax)
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        ax.set_xlabel("model output" + (
            "\nerror bars: \u00b11.96 standard errors (95% intervals)"
            if self.error_bars_ is not None else ""))
        title = f"{method} attributions" + (f" of row {row}" if n_samples > 1 else "")
        ax.set_title(title, fontsize="medium", color=method_color(method))
        add_note(fig, ax, key)
        self.artists_ = {method: bars}
        self._finish(fig, axes)

    # -- beeswarm ---------------------------------------------------------------
    def _beeswarm(self, phis, max_groups, cmap, ax):
        import matplotlib.pyplot as plt
        from matplotlib.colors import Normalize
        from matplotlib.lines import Line2D

        n_samples, n_groups = next(iter(phis.values())).shape
        importance = np.mean([np.abs(v).mean(axis=0) for v in phis.values()], axis=0)
        order = np.argsort(-importance, kind="stable")[:max_groups]
        self.order_ = order
        n_shown, n_methods = order.size, len(phis)
        colored = self.data is not None
        if colored:
            scaled, reasons = value_colors(np.asarray(self.data), self.groups)
            colormap = plt.get_cmap(cmap).with_extremes(bad=NEUTRAL_COLOR)
        labels = [str(self.group_names[k]) for k in order]
        longest = max(map(len, labels), default=0)
        ncols = min(n_methods, 4)
        nrows = int(np.ceil(n_methods / ncols))
        fig, axes = panel_axes(
            ax,
            n_methods,
            ncols=ncols,
            sharey=True,
            figsize=(
                (5.4 if n_methods == 1 else 4.2) * ncols
                + min(0.06 * longest, 1.5)
                + 1.0 * colored,
                min(max(1.4 + 0.34 * n_shown, 2.8) * nrows, 16),
            ),
        )
        positions = np.arange(n_shown)[::-1]  # most important on top
        artists = {}
        size = 14 if n_samples <= 500 else 8
        for i, (panel, (m, values)) in enumerate(zip(axes, phis.items())):
            xs = np.concatenate([values[:, k] for k in order])
            ys = np.concatenate(
                [
                    p + swarm_offsets(values[:, k], 0.8)
                    for p, k in zip(positions, order)
                ]
            )
            common = dict(s=size, linewidths=0, rasterized=xs.size > 5000, zorder=3)
            if colored:
                cs = np.concatenate([scaled[:, k] for k in order])
                artists[m] = panel.scatter(
                    xs, ys, c=cs, cmap=colormap, norm=Normalize(0.0, 1.0),
                    plotnonfinite=True, alpha=0.9, **common,
                )
            else:
                artists[m] = panel.scatter(
                    xs, ys, color=method_color(m), alpha=0.8, **common
                )
            for p in positions:
                panel.axhline(p, color="0.9", linewidth=0.8, zorder=0)
            panel.axvline(0.0, color="0.5", linewidth=0.8, zorder=1)
            style_axes(panel)
            panel.spines["left"].set_visible(False)
            panel.tick_params(axis="y", length=0)
            panel.set_xlabel("attribution (change of the model output)")
            title = f"{m}, {n_samples} rows"
            if n_groups > n_shown:
                title += f", top {n_shown} of {n_groups} groups"
            panel.set_title(title, fontsize="medium", color=method_color(m))
            if i % ncols == 0:
                key = self._group_ticks(panel, positions, labels)
            else:
                panel.tick_params(axis="y", labelleft=False)
            panel.set_ylim(-0.6, n_shown - 0.4)
        notes, handles = list(key), None
        if colored:
            shown_reasons = {reasons[k] for k in order} - {None}
            if any(reasons[k] != "several columns" and reasons[k] != "categorical"
                   for k in order):
                from matplotlib.cm import ScalarMappable

                mappable = ScalarMappable(norm=Normalize(0.0, 1.0), cmap=colormap)
                self.colorbar_ = fig.colorbar(
                    mappable, ax=list(axes), ticks=[0.0, 1.0], aspect=30,
                    fraction=0.05, pad=0.02,
                )
                self.colorbar_.set_ticklabels(["low", "high"])
                self.colorbar_.set_label("feature value", labelpad=-8)
                self.colorbar_.outline.set_visible(False)
            if shown_reasons:
                words = {
                    "several columns": "a group of several columns",
                    "categorical": "a categorical column",
                    "missing": "a missing value",
                }
                what = [words[r] for r in words if r in shown_reasons]
                text = "grey: no value scale (" + ", ".join(what) + ")"
                handles = [
                    Line2D([], [], ls="", marker="o", color=NEUTRAL_COLOR, markersize=6)
                ]
                notes = [text]
                if key:
                    handles += [Line2D([], [], ls="") for _ in key]
                    notes += key
        if notes:
            add_note(fig, axes[-1], notes, handles=handles)
        self.artists_ = artists
        self._finish(fig, axes)
