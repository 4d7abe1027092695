"""The AGREED grouping curve and merge tree."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._base import (
    as_attribution_dict,
    add_note,
    check_drawable,
    check_matplotlib_support,
    fit_labels,
    panel_axes,
    squeeze_axes,
    style_axes,
    wrap_name,
)

__all__ = ["GroupingDisplay"]


def _adaptive_grouper(estimator):
    """The fitted AdaptiveGrouper held by an object, or None."""
    if hasattr(estimator, "history_") and hasattr(estimator, "initial_groups_"):
        return estimator
    inner = getattr(estimator, "grouper_", None)
    if inner is not None and hasattr(inner, "history_"):
        return inner
    return None


def _model_of(estimator):
    for attr in ("estimator_", "estimator"):
        model = getattr(estimator, attr, None)
        if model is not None:
            return model
    return estimator


def _merged_pairs(partitions):
    """The two groups merged between consecutive partitions, as column sets."""
    pairs = []
    for before, after in zip(partitions[:-1], partitions[1:]):
        gone = {frozenset(g) for g in before} - {frozenset(g) for g in after}
        pairs.append(tuple(sorted(gone, key=min)))
    return pairs


def _curves_along(
    grouper, model, X, points, *, methods, metrics, background, random_state, max_groups
):
    """Disagreement and unfaithfulness at each number of groups along the history."""
    from .. import metrics as _metrics
    from .._explainer import MAX_EXACT_GROUPS, Explainer

    methods = list(methods)
    metric_names = [] if metrics is None else list(metrics)
    curves = {}
    if len(methods) >= 2:
        curves["disagreement"] = np.full(len(points), np.nan)
    for m in metric_names:
        curves[m] = np.full(len(points), np.nan)
    limit = min(MAX_EXACT_GROUPS, max_groups)
    for i, k in enumerate(points):
        if k > limit:
            continue
        explainer = Explainer(
            model,
            groups=grouper.cut(int(k)),
            background=background,
            random_state=random_state,
        ).fit(X)
        dec = explainer.decompose(X)
        phis = as_attribution_dict(dec, method_names=methods, output=0)
        if len(methods) >= 2:
            curves["disagreement"][i] = _metrics.disagreement(phis, measure="l2").score
        for m in metric_names:
            fn = getattr(_metrics, m)
            curves[m][i] = np.mean(
                [
                    fn(
                        None,
                        X,
                        attributions=phi,
                        decomposition=dec,
                        random_state=random_state,
                    ).score
                    for phi in phis.values()
                ]
            )
    return curves


class GroupingDisplay:
    """The AGREED loss against the number of groups, and the merge tree.

    Along the merge history of :class:`~skdecomp.AdaptiveGrouper`, the
    "curve" view draws the AGREED loss (see :ref:`agreed`) at each number of
    groups with every merge numbered (the key beside the curve names the
    groups merged), and below it any other curves given
    (e.g. the disagreement between explainers, or unfaithfulness scores),
    each divided by its largest value. The "dendrogram" view draws the
    merges as a tree whose height is the merge step.

    Read more in the :ref:`User Guide <plotting>`.

    Parameters
    ----------
    n_groups : ndarray of shape (n_points,)
        Number of groups at each point: the initial partition, then after
        each merge.
    loss : ndarray of shape (n_points,)
        AGREED loss at each point.
    merge_labels : list of str
        Label of each merge (``n_points - 1`` of them).
    curves : dict of str to ndarray of shape (n_points,) or None, default=None
        Other quantities along the history (NaN where not computed).
    initial_groups : list of list of int or None, default=None
        Column positions of the initial groups (leaves of the tree).
    initial_names : list of str or None, default=None
        Names of the initial groups.
    history : list of dict or None, default=None
        The merge history (``AdaptiveGrouper.history_``), for the tree.

    Attributes
    ----------
    path : list of dict or None
        The grouper's merge path (``AdaptiveGrouper.path_``), which
        :meth:`from_result` sets and the trade-off view
        (``kind="tradeoff"``) draws.
    ax_ : matplotlib Axes or ndarray of Axes
        The Axes, or an array of Axes when there are several panels.
    axes_ : ndarray of Axes
        All panels, as an array.
    figure_ : matplotlib Figure
        Figure holding the axes.
    lines_ : dict of str to Line2D
        The loss line (key ``"loss"``), the dashed segment of merges that
        held-out stopping refused (key ``"refused"``, when there are some),
        and one line per other curve.
    annotations_ : list of matplotlib Text
        Number of each merge on the loss curve (1 for the first).
    merge_key_ : matplotlib Legend or None
        The key right of the loss curve: each merge number and the two
        groups it merges (full names, wrapped).
    tree_lines_ : list of Line2D
        Segments of the dendrogram (empty for the curve view).
    chosen_ : matplotlib Line2D or None
        The trade-off view: the marker of the grouper's own partition.

    See Also
    --------
    InteractionDisplay : Pairwise interactions ordered by a grouping.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skdecomp.plot import GroupingDisplay
    >>> history = [
    ...     {"groups": ([0], [1]), "names": ("a", "b"), "loss_before": 2.0,
    ...      "loss_after": 1.0, "n_groups": 2},
    ...     {"groups": ([0, 1], [2]), "names": ("a:b", "c"), "loss_before": 1.0,
    ...      "loss_after": 0.0, "n_groups": 1},
    ... ]
    >>> disp = GroupingDisplay.from_result(history)
    >>> disp.n_groups.tolist()
    [3, 2, 1]
    """

    def __init__(
        self,
        n_groups,
        loss,
        merge_labels,
        *,
        curves=None,
        initial_groups=None,
        initial_names=None,
        history=None,
    ):
        self.n_groups = n_groups
        self.loss = loss
        self.merge_labels = merge_labels
        self.curves = curves
        self.initial_groups = initial_groups
        self.initial_names = initial_names
        self.history = history
        # the merge path past the stop (AdaptiveGrouper.path_), when known
        self.path = None
        # the merge tree, set by from_result when a grouper is given
        self._merged = None

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        n_groups=1,
        methods=None,
        metrics=None,
        max_samples=100,
        background=50,
        max_groups=10,
        random_state=None,
        kind="curve",
        ax=None,
    ):
        """Run AGREED on a model (or use a fitted grouper) and plot its history.

        Parameters
        ----------
        estimator : AdaptiveGrouper, Explainer, grouper or estimator
            A fitted :class:`~skdecomp.AdaptiveGrouper`, used as it is;
            another fitted grouper, drawn along its ``path_`` as by
            :meth:`from_result`; an Explainer fitted with a grouper, drawn
            through that grouper (an Explainer with fixed groups raises a
            ValueError); otherwise a
            fitted model, grouped by a new ``AdaptiveGrouper(estimator,
            max_samples=max_samples, n_groups=n_groups)`` fitted on X.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data for the grouper; also the rows explained for ``methods``
            and ``metrics`` (keep it small: every curve point needs an exact
            decomposition of these rows).
        n_groups : int, default=1
            Number of groups a new grouper merges down to.
        methods : list of str or None, default=None
            Exact methods (at least two) whose mean L2 disagreement
            (:func:`skdecomp.metrics.disagreement`) is drawn as a curve.
        metrics : list of str or None, default=None
            Names of faithfulness metrics of :mod:`skdecomp.metrics`; each
            curve is the metric's unfaithfulness averaged over ``methods``
            (``["shapley"]`` when None).
        max_samples : int, default=100
            Rows of a new grouper's anchored matrices.
        background : int, default=50
            Background rows of the explainers behind the curves.
        max_groups : int, default=10
            Curves are computed only for partitions of at most this many
            groups (each needs ``2**n_groups`` coalitions per row).
        random_state : int, RandomState instance or None, default=None
            Seed of a new grouper and of the explainers behind the curves.
        kind : {"curve", "dendrogram", "both", "tradeoff"}, default="curve"
            Draw the loss curve, the merge tree, both, or the trade-off of
            the grouper's merge path (``path_``, past its stopping point):
            the disagreement left against the size of the largest group.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split when there are several panels), one per panel,
            or None for a new figure.

        Returns
        -------
        display : GroupingDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        grouper = _adaptive_grouper(estimator)
        from .._explainer import Explainer
        from .._grouping._base import _BaseGrouper

        if grouper is None and isinstance(estimator, Explainer):
            # an Explainer is drawn through the grouper it was fitted with
            held = getattr(estimator, "grouper_", None)
            if held is None and not hasattr(estimator, "groups_"):
                raise ValueError(
                    "This Explainer is not fitted; fit it first, with a grouper "
                    "such as groups=AdaptiveGrouper(), whose merges "
                    "GroupingDisplay.from_estimator draws."
                )
            if held is None:
                raise ValueError(
                    f"The Explainer was fitted without a grouper (groups="
                    f"{estimator.groups!r}), so it has no merges for GroupingDisplay."
                    "from_estimator to draw. Fit it with groups=AdaptiveGrouper() (or "
                    "another grouper that keeps a merge path, such as "
                    "PairwiseGrouper), or pass its model, explainer.estimator_, to "
                    "group it with a new AdaptiveGrouper."
                )
            estimator = held
        if grouper is None and isinstance(estimator, _BaseGrouper):
            # another grouper: its own merge path, as it was fitted
            name = type(estimator).__name__
            if not hasattr(estimator, "path_"):
                raise ValueError(
                    f"{name} is not fitted, or keeps no merge path; fit it first and "
                    "pass it to GroupingDisplay.from_result, or pass the model to "
                    "from_estimator for a new AdaptiveGrouper."
                )
            if methods is not None or metrics is not None:
                raise ValueError(
                    f"methods= and metrics= draw curves along an AdaptiveGrouper's "
                    f"merges; a fitted {name} is drawn with GroupingDisplay.from_result."
                )
            return cls.from_result(estimator, kind=kind, ax=ax)
        if grouper is None:
            from .._grouping import AdaptiveGrouper

            model = estimator
            grouper = AdaptiveGrouper(
                model,
                max_samples=max_samples,
                n_groups=n_groups,
                rel_tol=0.0,
                random_state=random_state,
            ).fit(X)
        else:
            model = _model_of(grouper)
        curves = None
        if methods is not None or metrics is not None:
            methods = (
                ["shapley"]
                if methods is None
                else ([methods] if isinstance(methods, str) else list(methods))
            )
            n_initial = len(grouper.initial_groups_)
            points = n_initial - np.arange(len(grouper.history_) + 1)
            curves = _curves_along(
                grouper,
                model,
                X,
                points,
                methods=methods,
                metrics=metrics,
                background=background,
                random_state=random_state,
                max_groups=max_groups,
            )
        return cls.from_result(grouper, curves=curves, kind=kind, ax=ax)

    @classmethod
    def from_result(
        cls, result, *, curves=None, initial_loss=None, kind="curve", ax=None
    ):
        """Plot a merge history already computed.

        Parameters
        ----------
        result : grouper or list of dict
            A fitted :class:`~skdecomp.AdaptiveGrouper` (or another grouper
            of the model with a ``path_``, drawn along it), or its ``history_``
            (entries with ``"groups"``, ``"names"``, ``"loss_before"``,
            ``"loss_after"`` and ``"n_groups"``).
        curves : dict of str to array-like or None, default=None
            Other quantities, one value per point (initial partition, then
            after each merge); NaN where unknown.
        initial_loss : float or None, default=None
            Loss of the initial partition; by default the grouper's
            ``initial_loss_`` or the first entry's ``loss_before``.
        kind : {"curve", "dendrogram", "both", "tradeoff"}, default="curve"
            Draw the loss curve, the merge tree, both, or the trade-off of
            the grouper's merge path (``path_``, past its stopping point):
            the disagreement left against the size of the largest group.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split when there are several panels), one per panel,
            or None for a new figure.

        Returns
        -------
        display : GroupingDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        initial_groups = initial_names = None
        grouper = _adaptive_grouper(result)
        if grouper is None and hasattr(result, "path_") and hasattr(result, "cut"):
            # a grouper with a merge path only (PairwiseGrouper): its merges
            grouper, path = result, result.path_
            if path and path[0]["loss"] is None:
                raise ValueError(
                    f"{type(result).__name__} uses no model, so its merge path has "
                    "no loss to draw; draw the path of a grouper of the model "
                    "(AdaptiveGrouper, PairwiseGrouper), or read the merges from "
                    "its path_."
                )
            history = [
                {"names": p["merged"], "loss_before": q["loss"], "loss_after": p["loss"],
                 "n_groups": p["n_groups"]}
                for q, p in zip(path[:-1], path[1:])
            ]
            initial_groups = [[j] for j in range(path[0]["n_groups"])]
            if initial_loss is None:
                initial_loss = path[0]["loss"]
        elif grouper is not None:
            history = list(grouper.history_)
            initial_groups = [list(g) for g in grouper.initial_groups_]
            initial_names = list(getattr(grouper, "initial_group_names_", [])) or None
            if initial_loss is None:
                initial_loss = grouper.initial_loss_
        else:
            history = list(result)
        if not history and initial_loss is None:
            raise ValueError("The merge history is empty; nothing to plot.")
        if initial_loss is None:
            initial_loss = history[0]["loss_before"]
        if history:
            n0 = history[0]["n_groups"] + 1
        else:
            n0 = len(initial_groups) if initial_groups is not None else 1
        n_groups = np.array([n0] + [h["n_groups"] for h in history], dtype=int)
        loss = np.array(
            [initial_loss] + [h["loss_after"] for h in history], dtype=float
        )
        labels = []
        for h in history:
            names = h.get("names") or tuple("+".join(map(str, g)) for g in h["groups"])
            labels.append(f"{names[0]} + {names[1]}")
        if curves is not None:
            curves = {str(k): np.asarray(v, dtype=float) for k, v in curves.items()}
            bad = {k: v.shape for k, v in curves.items() if v.shape != loss.shape}
            if bad:
                raise ValueError(
                    f"curves need one value per point ({loss.size}); got shapes {bad}."
                )
        disp = cls(
            n_groups,
            loss,
            labels,
            curves=curves,
            initial_groups=initial_groups,
            initial_names=initial_names,
            history=history,
        )
        if grouper is not None:
            # the merge tree from the grouper's partitions along its history
            disp._merged = _merged_pairs([grouper.cut(int(k)) for k in n_groups])
            disp.path = getattr(grouper, "path_", None)
        return disp.plot(kind=kind, ax=ax)

    from_grouper = from_result

    # -- drawing --------------------------------------------------------------
    def _tree(self):
        """Leaf keys, names and the internal nodes (key, left, right, height)."""
        history = self.history or []
        leaves = []
        names = {}
        if self.initial_groups is not None:
            for k, g in enumerate(self.initial_groups):
                key = frozenset(int(c) for c in g)
                leaves.append(key)
                if self.initial_names is not None:
                    names[key] = str(self.initial_names[k])
        merged = getattr(self, "_merged", None)
        if merged is None:
            merged = [
                tuple(frozenset(int(c) for c in g) for g in h["groups"]) for h in history
            ]
        made = set()
        nodes = []
        for step, (h, (a, b)) in enumerate(zip(history, merged), start=1):
            for key, name in zip((a, b), h.get("names") or (None, None)):
                if key not in made and key not in leaves:
                    leaves.append(key)
                if key not in names and name is not None:
                    names[key] = str(name)
            nodes.append((a | b, a, b, step))
            made.add(a | b)
        for key in leaves:
            names.setdefault(key, "+".join(str(c) for c in sorted(key)))
        return leaves, names, nodes

    def _draw_tree(self, ax):
        leaves, names, nodes = self._tree()
        children = {key: (a, b) for key, a, b, _ in nodes}
        height = {key: h for key, _, _, h in nodes}
        inner = {a for _, a, b, _ in nodes} | {b for _, a, b, _ in nodes}
        roots = [k for k in list(children) + leaves if k not in inner]
        roots = sorted(set(roots), key=min)
        xs = {}
        order = []

        def place(root):
            # depth first, with a stack: merge paths can be thousands deep
            stack = [(root, False)]
            while stack:
                key, done = stack.pop()
                if key not in children:
                    xs[key] = float(len(order))
                    order.append(key)
                    continue
                a, b = sorted(children[key], key=min)
                if done:
                    xs[key] = (xs[a] + xs[b]) / 2
                else:
                    stack.extend([(key, True), (b, False), (a, False)])

        for r in roots:
            place(r)
        lines = []
        for key, (a, b) in children.items():
            y = height[key]
            ya, yb = height.get(a, 0), height.get(b, 0)
            lines += ax.plot(
                [xs[a], xs[a], xs[b], xs[b]],
                [ya, y, y, yb],
                color="0.15",
                linewidth=1.2,
            )
        labels, key = fit_labels([names[k] for k in order], width=16)
        ax.set_xticks(
            [xs[k] for k in order],
            labels=labels,
            rotation=60,
            ha="right",
            rotation_mode="anchor",
            fontsize="small",
        )
        ax.set_xlim(-0.6, max(len(order) - 0.4, 0.6))
        ax.set_ylim(0, max(height.values(), default=1) + 0.5)
        ax.set_ylabel("merge step")
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole
        ax.set_title("Merge tree", fontsize="medium")
        style_axes(ax)
        add_note(ax.figure, ax, key)
        return lines

    def plot(self, *, kind="curve", annotate=True, ax=None):
        """Draw the grouping curve, the merge tree, or both.

        Parameters
        ----------
        kind : {"curve", "dendrogram", "both", "tradeoff"}, default="curve"
            Draw the loss curve, the merge tree, both, or the trade-off of
            the merge path (``path``): the disagreement left against the
            size of the largest group.
        annotate : bool, default=True
            Number every merge on the loss curve and name it in a key.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split when there are several panels), one per panel,
            or None for a new figure.

        Returns
        -------
        display : GroupingDisplay
            The object, with ``ax_``, ``axes_``, ``figure_``, ``lines_``,
            ``annotations_``, ``merge_key_`` and ``tree_lines_`` set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        from matplotlib.lines import Line2D
        from matplotlib.ticker import MaxNLocator

        if kind not in ("curve", "dendrogram", "both", "tradeoff"):
            raise ValueError(
                "kind must be 'curve', 'dendrogram', 'both' or 'tradeoff', got "
                f"{kind!r}."
            )
        if kind == "tradeoff":
            return self._plot_tradeoff(ax)
        if len(np.atleast_1d(self.n_groups)) == 0:
            raise ValueError(
                f"{type(self).__name__}.plot: the grouping has no steps to draw."
            )
        check_drawable(self.loss, "the loss values", f"{type(self).__name__}.plot", allow_nan=True)
        has_curves = bool(self.curves)
        n_curve = 0 if kind == "dendrogram" else (2 if has_curves else 1)
        n_panels = n_curve + (kind != "curve")
        n_merges = len(self.merge_labels)
        # the key of the merges sits right of the loss curve
        key_width = 0.0
        if n_curve and annotate and n_merges:
            longest = max(len(str(x)) for x in self.merge_labels)
            key_width = min(1.0 + 0.065 * longest, 3.6)
        figsize = (6.4 * (1 + (kind == "both")) + key_width, 4.2)
        if kind == "both" and n_curve == 2:
            figsize = (11 + key_width, 4.2)
        if kind == "curve" and n_curve == 2:
            figsize = (6.4 + key_width, 7.0)
        fig, axes = panel_axes(
            ax, n_panels, figsize=figsize, ncols=1 if kind == "curve" else n_panels
        )
        self.lines_, self.annotations_, self.tree_lines_ = {}, [], []
        self.merge_key_ = None
        n_groups = np.asarray(self.n_groups)
        if n_curve:
            lax = axes[0]
            # merges refused by held-out stopping (the last ones) are dashed
            accepted = [h.get("accepted", True) for h in (self.history or [])]
            n_kept = len(self.merge_labels)
            if len(accepted) == n_kept and False in accepted:
                n_kept = accepted.index(False)
            (self.lines_["loss"],) = lax.plot(
                n_groups[: n_kept + 1], self.loss[: n_kept + 1], marker="o",
                color="0.15", label="AGREED loss",
            )
            if n_kept < len(self.merge_labels):
                (self.lines_["refused"],) = lax.plot(
                    n_groups[n_kept:], self.loss[n_kept:], marker="o", ls="--",
                    color="0.5", markerfacecolor="white", label="refused merge",
                )
            if annotate and n_merges:
                # each merge is numbered on the curve and named in the key
                for step, (k, value) in enumerate(
                    zip(n_groups[1:], self.loss[1:]), start=1
                ):
                    self.annotations_.append(
                        lax.annotate(
                            str(step),
                            (k, value),
                            textcoords="offset points",
                            xytext=(4, 4),
                            fontsize="x-small",
                            color="0.3",
                        )
                    )
                lines = []
                for step, label in enumerate(self.merge_labels, start=1):
                    if step > n_kept:
                        label = f"{label} (refused)"
                    wrapped = wrap_name(label, 34)
                    lines.append(
                        f"{step:>2}  " + "\n     ".join(wrapped)
                    )
                handles = [Line2D([], [], ls="") for _ in lines]
                self.merge_key_ = lax.legend(
                    handles,
                    lines,
                    title="merges",
                    loc="upper left",
                    bbox_to_anchor=(1.02, 1.0),
                    fontsize="x-small",
                    title_fontsize="small",
                    frameon=False,
                    handlelength=0,
                    handletextpad=0,
                    borderaxespad=0,
                )
            lax.margins(x=0.06, y=0.1)
            lax.set_xlabel("number of groups")
            lax.set_ylabel("AGREED loss")
            lax.set_title("Loss as groups merge", fontsize="medium")
            style_axes(lax)
            if n_groups.size > 1:
                lax.set_xlim(n_groups.max() + 0.5, n_groups.min() - 0.5)
            lax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if n_curve == 2:
                cax = axes[1]
                styles = [("-", "s"), ("--", "^"), (":", "D"), ("-.", "v")]
                for i, (name, values) in enumerate(self.curves.items()):
                    top = (
                        np.nanmax(np.abs(values)) if np.isfinite(values).any() else 1.0
                    )
                    top = top if top > 0 else 1.0
                    ls, marker = styles[i % len(styles)]
                    (self.lines_[name],) = cax.plot(
                        n_groups,
                        values / top,
                        marker=marker,
                        linestyle=ls,
                        color="0.35",
                        label=name,
                    )
                cax.set_xlabel("number of groups")
                cax.set_ylabel("relative to its largest value")
                cax.set_title("Disagreement and unfaithfulness", fontsize="medium")
                cax.legend(fontsize="small")
                style_axes(cax)
                if n_groups.size > 1:
                    cax.set_xlim(n_groups.max() + 0.5, n_groups.min() - 0.5)
                cax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if kind != "curve":
            self.tree_lines_ = self._draw_tree(axes[-1])
        self.axes_ = axes
        self.ax_ = squeeze_axes(axes)
        self.figure_ = fig
        return self

    def _plot_tradeoff(self, ax):
        """The disagreement left against the largest group, along the path."""
        path = self.path
        if not path:
            raise ValueError(
                "kind='tradeoff' draws the merge path of a fitted AdaptiveGrouper "
                "or PairwiseGrouper (its path_); pass the grouper to "
                "GroupingDisplay.from_result or from_estimator."
            )
        size = np.array([p["largest_group"] for p in path], dtype=float)
        left = np.array([np.nan if p["remaining_share"] is None
                         else p["remaining_share"] for p in path], dtype=float)
        check_drawable(left[np.isfinite(left)], "the disagreement left",
                       f"{type(self).__name__}.plot")
        fig, axes = panel_axes(ax, 1, figsize=(6.4, 4.2), ncols=1)
        tax = axes[0]
        held = path[0]["held_out_loss"] is not None
        (line,) = tax.plot(size, 100 * left, marker="o", color="0.15",
                           drawstyle="default", label="merge path")
        self.lines_ = {"path": line}
        self.annotations_ = []
        chosen = [t for t, p in enumerate(path) if p["chosen"]]
        self.chosen_ = None
        if chosen:
            t = chosen[0]
            (self.chosen_,) = tax.plot(
                [size[t]], [100 * left[t]], marker="o", markersize=11, ls="",
                markerfacecolor="none", markeredgecolor="#d62728",
                markeredgewidth=2, label=f"chosen: {path[t]['n_groups']} groups",
            )
        # the number of groups beside every point
        for p, x, y in zip(path, size, left):
            if np.isfinite(y):
                self.annotations_.append(tax.annotate(
                    str(p["n_groups"]), (x, 100 * y), textcoords="offset points",
                    xytext=(4, 4), fontsize="x-small", color="0.35",
                ))
        tax.set_xlabel("columns in the largest group")
        tax.set_ylabel("disagreement left (% of the initial"
                       + (", held-out rows)" if held else ")"))
        tax.set_title("What coarser groups buy (numbers: groups)", fontsize="medium")
        tax.set_ylim(bottom=min(0.0, np.nanmin(100 * left)) - 3)
        tax.margins(x=0.06)
        tax.legend(fontsize="small", frameon=False)
        style_axes(tax)
        from matplotlib.ticker import MaxNLocator

        tax.xaxis.set_major_locator(MaxNLocator(integer=True))
        self.merge_key_ = None
        self.tree_lines_ = []
        self.axes_ = axes
        self.ax_ = squeeze_axes(axes)
        self.figure_ = fig
        return self
