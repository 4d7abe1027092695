"""Heatmap of pairwise interaction strengths between groups."""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping

import numpy as np
from sklearn.utils import check_random_state

from ._base import (
    add_note,
    check_drawable,
    check_matplotlib_support,
    fitted_explainer,
    group_names_for,
    fit_labels,
    format_value,
    heatmap,
    is_bunch_of,
    panel_axes,
    round_off,
    squeeze_axes,
    style_axes,
)

__all__ = ["InteractionDisplay"]

_KINDS = ("h2", "pure", "full", "arch_detect")
_RESULT_KINDS = ("matrix", "terms")
# bars of terms of 1, 2, 3, ... groups (colour-blind safe, Okabe and Ito)
_ORDER_COLORS = ("#999999", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00")
_DEFAULT_TOP = 10
# measures that are shares of Var f (the others are in squared units of f)
_RELATIVE = ("h2",)


def _take_rows(X, max_samples, random_state):
    n = X.shape[0]
    if max_samples is None or n <= max_samples:
        return X
    rng = check_random_state(random_state)
    idx = np.sort(rng.choice(n, max_samples, replace=False))
    return X.iloc[idx] if hasattr(X, "iloc") else np.asarray(X)[idx]


def _compute(explainer, X, kind, output):
    if kind == "arch_detect":
        from ..interactions import arch_detect

        strengths = np.asarray(arch_detect(explainer, X))
        if strengths.ndim == 4:
            strengths = strengths[..., 0 if output is None else output]
        return strengths.mean(axis=0)
    from ..inspection import interaction_matrix

    return np.asarray(interaction_matrix(explainer, X, kind=kind))


def _grouping_blocks(grouping, names):
    """Partition of the units as lists of unit indices."""
    if grouping is None:
        return None
    if hasattr(grouping, "groups_"):
        grouping = grouping.groups_
    if isinstance(grouping, Mapping):
        grouping = list(grouping.values())
    blocks = []
    for block in grouping:
        block = [block] if isinstance(block, (str, int, np.integer)) else list(block)
        blocks.append([names.index(u) if isinstance(u, str) else int(u) for u in block])
    flat = sorted(u for b in blocks for u in b)
    if flat != list(range(len(names))):
        raise ValueError(
            f"grouping must be a partition of the {len(names)} groups of the "
            f"interaction matrix, got {grouping!r}."
        )
    return blocks


def _terms_table(result, top):
    """The ``top`` strongest terms of an InteractionExplanation, checked."""
    if not (hasattr(result, "summary") and hasattr(result, "terms")
            and hasattr(result, "feature_names")):
        raise TypeError(
            "kind='terms' draws an InteractionExplanation (the result of "
            f"Explainer.interactions), got {type(result).__name__}."
        )
    if top is None:
        top = _DEFAULT_TOP
    if not isinstance(top, (int, np.integer)) or isinstance(top, bool) or top < 1:
        raise ValueError(f"top must be a positive int or None, got {top!r}.")
    values = np.asarray(result.values, dtype=np.float64)
    if values.ndim == 3:
        if values.shape[2] != 1:
            raise ValueError(
                f"The InteractionExplanation has {values.shape[2]} outputs; explain "
                "one output (target=...) to plot its terms."
            )
        values = values[..., 0]
    if values.shape[0] == 0:
        raise ValueError("The InteractionExplanation has no rows; explain rows of X first.")
    terms = [tuple(t) for t in result.terms]
    named = [j for j, t in enumerate(terms) if len(t) > 0]
    if not named:
        raise ValueError(
            "The InteractionExplanation has no term of one group or more to plot."
        )
    bad = [result.term_names[j] for j in named if not np.all(np.isfinite(values[:, j]))]
    if bad:
        raise ValueError(
            f"{len(bad)} terms have values that are not finite (NaN or inf), e.g. "
            f"{bad[:3]}; check the model output on the rows explained."
        )
    table = result.summary(top=int(top))
    lookup = dict(zip(result.term_names, terms))
    table = table.assign(groups=[lookup[name] for name in table.index])
    table.attrs["index"] = str(getattr(result, "index", "value"))
    table.attrs["n_rows"] = int(values.shape[0])
    # the scale of round-off: the strongest term, or the base value if larger
    base = np.abs(np.asarray(result.base_values, dtype=np.float64))
    base = float(base.mean()) if base.size and np.all(np.isfinite(base)) else 0.0
    table.attrs["scale"] = max(float(np.abs(values[:, named]).mean(axis=0).max()), base)
    return table


def _term_axes(ax, width_ratios, figsize):
    """(figure, [dot-matrix Axes, bar Axes]) for the terms view."""
    import matplotlib.pyplot as plt
    from matplotlib.gridspec import GridSpecFromSubplotSpec

    from ._base import ensure_layout

    if ax is None:
        fig, axes = plt.subplots(
            1, 2, figsize=figsize, sharey=True, layout="constrained",
            gridspec_kw={"width_ratios": width_ratios, "wspace": 0.0},
        )
        return fig, np.asarray(axes, dtype=object)
    if isinstance(ax, (list, tuple, np.ndarray)):
        axes = np.asarray(ax, dtype=object).ravel()
        if axes.size != 2:
            raise ValueError(
                f"ax holds {axes.size} axes; kind='terms' needs one Axes (split in "
                "two) or two: the dot matrix and the bars."
            )
        return ensure_layout(axes[0].figure), axes
    fig = ensure_layout(ax.figure)
    spec = GridSpecFromSubplotSpec(
        1, 2, subplot_spec=ax.get_subplotspec(), width_ratios=width_ratios, wspace=0.0
    )
    ax.set_axis_off()
    left = fig.add_subplot(spec[0])
    right = fig.add_subplot(spec[1], sharey=left)
    return fig, np.asarray([left, right], dtype=object)


class InteractionDisplay:
    """Heatmap of pairwise interaction strengths, ordered by a grouping.

    Each cell is the strength of the interaction between two groups (or
    columns). Given a ``grouping`` of these units (e.g. the groups found by
    :class:`~skdecomp.AdaptiveGrouper` over columns), rows and columns are
    reordered so that each block is contiguous and boxed: a good grouping
    keeps the strong interactions inside the boxes.

    Values below round-off (at most ``1e-12`` times the scale of the
    measure: 1 for ``"h2"``, a share of Var f; Var f for the others, in
    squared units of the output) are drawn as 0. A matrix of round-off only
    is one uniform colour, and the title says there is no interaction.

    Given the strongest terms of an :class:`~skdecomp.InteractionExplanation`
    (``from_result(result, kind="terms")``), it draws one horizontal bar per
    term instead: its mean absolute value over the rows, with the signed
    mean marked (and its 95% interval for an estimate), beside a dot matrix of the groups in the term (the columns
    are the groups that appear in the terms drawn).

    Read more in the :ref:`User Guide <plotting>`.

    Parameters
    ----------
    matrices : dict of str to ndarray of shape (n_units, n_units)
        One symmetric matrix per interaction measure.
    names : list of str
        Name of each unit (group or column).
    grouping : list of list of int or None, default=None
        Partition of the units, as unit indices.
    variance : float or None, default=None
        Variance of the model output (Var f), the scale of the measures in
        squared units of the output (all but ``"h2"``); None uses 1.
    terms : DataFrame or None, default=None
        The terms of ``plot(kind="terms")``, strongest first: one row per
        term, indexed by its name, with its ``groups`` (tuple of group
        positions, into ``names``), ``order``, ``mean_abs``, ``mean`` and,
        for an estimate, ``se_mean`` (drawn as error bars), as
        :meth:`InteractionExplanation.summary
        <skdecomp.InteractionExplanation.summary>` gives them plus
        ``groups``; ``attrs["index"]`` names the index. Values at most
        ``1e-12`` times ``attrs["scale"]`` (the larger of the strongest term
        and the mean absolute base value; without it, the strongest term
        drawn) are round-off, drawn as 0.

    Attributes
    ----------
    ax_ : matplotlib Axes or ndarray of Axes
        The Axes, or an array of Axes when several measures are drawn.
    axes_ : ndarray of Axes
        All panels.
    figure_ : matplotlib Figure
        Figure holding the axes.
    images_ : dict of str to AxesImage
        The heatmap of each measure.
    boxes_ : list of matplotlib Rectangle
        Outlines of the grouping blocks.
    order_ : ndarray of int
        Unit indices in the order drawn.
    bars_ : matplotlib BarContainer
        ``kind="terms"``: the bars, one per term, strongest at the top.
    means_ : matplotlib Line2D
        ``kind="terms"``: the markers of the signed means.
    errorbars_ : matplotlib ErrorbarContainer or None
        ``kind="terms"`` of an estimate: the 95% intervals of the signed
        means (``1.96 * se_mean`` either side); None for exact values.
    dots_ : matplotlib PathCollection
        ``kind="terms"``: the dots of the groups in each term.
    columns_ : ndarray of int
        ``kind="terms"``: the group positions of the dot-matrix columns.

    See Also
    --------
    GroupingDisplay : The AGREED merge history.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skdecomp.plot import InteractionDisplay
    >>> H = np.array([[0, 0.1, 0.9], [0.1, 0, 0], [0.9, 0, 0]])
    >>> disp = InteractionDisplay.from_result(H, names=["a", "b", "c"],
    ...                                       grouping=[[0, 2], [1]])
    >>> disp.order_
    array([0, 2, 1])
    """

    def __init__(self, matrices, names, *, grouping=None, variance=None, terms=None):
        self.matrices = matrices
        self.names = names
        self.grouping = grouping
        self.variance = variance
        self.terms = terms

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        kind="h2",
        grouping=None,
        groups=None,
        max_samples=100,
        background=100,
        output=None,
        random_state=None,
        ax=None,
    ):
        """Measure pairwise interactions of a model and plot them.

        Parameters
        ----------
        estimator : Explainer or estimator
            A fitted :class:`~skdecomp.Explainer` whose groups are the units,
            or a fitted model explained by a new Explainer (with ``groups``;
            None gives one unit per column).
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data; at most ``max_samples`` rows are used.
        kind : str or list of str, default="h2"
            Measures, one panel each: ``"h2"``, ``"pure"`` or ``"full"`` of
            :func:`skdecomp.inspection.interaction_matrix` (rows of X as
            points and background), or ``"arch_detect"`` (mean over rows of
            :func:`skdecomp.interactions.arch_detect`).
        grouping : list of lists, dict, fitted grouper or None, default=None
            Partition of the units that orders and boxes the heatmap. A
            fitted grouper's ``groups_`` (column positions) applies when the
            units are the columns.
        groups : None, list of lists or dict, default=None
            Units of a new Explainer.
        max_samples : int or None, default=100
            Rows of X used (drawn with ``random_state``); cost grows as its
            square.
        background : int or array-like, default=100
            Background of a new Explainer (used by ``"arch_detect"``).
        output : int or None, default=None
            Output for ``"arch_detect"`` on a multi-output model.
        random_state : int, RandomState instance or None, default=None
            Draws the rows of X used, and seeds a new Explainer.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several measures), one Axes per measure, or
            None for a new figure.

        Returns
        -------
        display : InteractionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        kinds = [kind] if isinstance(kind, str) else list(kind)
        bad = [k for k in kinds if k not in _KINDS]
        if bad:
            raise ValueError(f"Unknown kind {bad}; choose among {list(_KINDS)}.")
        explainer = fitted_explainer(estimator, X, groups, background, random_state)
        rows = _take_rows(X, max_samples, random_state)
        matrices = {k: _compute(explainer, rows, k, output) for k in kinds}
        names = [str(n) for n in explainer.get_feature_names_out()]
        variance = None
        if any(k not in _RELATIVE for k in kinds):
            game = explainer.game_
            pred = np.asarray(game.predict(game.check_X(rows)), dtype=np.float64)
            # interaction_matrix sums the outputs; arch_detect takes one
            if pred.ndim == 2 and output is not None:
                pred = pred[:, output]
            variance = float(np.sum(np.var(pred, axis=0)))
        disp = cls(
            matrices,
            names,
            grouping=_grouping_blocks(grouping, names),
            variance=variance,
        )
        return disp.plot(ax=ax)

    @classmethod
    def from_result(
        cls,
        result,
        *,
        kind="matrix",
        top=None,
        names=None,
        grouping=None,
        variance=None,
        ax=None,
    ):
        """Plot interaction matrices or the strongest interaction terms.

        ``kind="matrix"`` draws a heatmap of pairwise strengths;
        ``kind="terms"`` draws the strongest terms of an
        :class:`~skdecomp.InteractionExplanation`, of any order, as
        horizontal bars of their mean absolute value over the rows (the
        ``mean_abs`` of its ``summary()``) with the signed mean marked, next
        to a dot matrix of the groups in each term.

        Parameters
        ----------
        result : ndarray, dict of ndarray or Bunch
            One (n_units, n_units) matrix (e.g. from
            :func:`skdecomp.inspection.interaction_matrix`), a dict measure
            name -> matrix, the Bunch of :func:`skdecomp.inspection.h_statistic`
            (its ``pairwise`` matrix and ``group_names``), or per-row
            strengths of shape (n_samples, n_units, n_units) from
            :func:`skdecomp.interactions.arch_detect` (averaged over rows),
            or an :class:`~skdecomp.InteractionExplanation` of order 2 or
            more (the mean absolute value of each pair over its rows, one
            output). ``kind="terms"`` takes an InteractionExplanation of
            one output only, of any order, with any subset of terms.
        kind : {"matrix", "terms"}, default="matrix"
            The heatmap of pairs, or the bars of the strongest terms.
        top : int or None, default=None
            Number of terms drawn by ``kind="terms"``, strongest first; None
            draws the 10 strongest (or all, if fewer).
        names : list of str or None, default=None
            Unit names (group names of the dot matrix for ``kind="terms"``).
        grouping : list of lists, dict, fitted grouper or None, default=None
            Partition of the units that orders and boxes the heatmap
            (``kind="matrix"`` only).
        variance : float or None, default=None
            Variance of the model output (Var f): values of the measures in
            squared units of the output (all but ``"h2"``) at most ``1e-12``
            times it are round-off, drawn as 0. None uses 1, the scale of
            ``"h2"``; the Bunch of :func:`~skdecomp.inspection.h_statistic`
            gives its ``variance`` (``kind="matrix"`` only).
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several measures, or in two for the terms),
            one Axes per measure (the dot matrix and the bars for the
            terms), or None for a new figure.

        Returns
        -------
        display : InteractionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        if kind not in _RESULT_KINDS:
            raise ValueError(
                f"kind must be one of {list(_RESULT_KINDS)}, got {kind!r}."
            )
        if top is not None and kind != "terms":
            raise ValueError(
                "top sets the number of bars of kind='terms'; the heatmap "
                "(kind='matrix') shows every pair. Pass kind='terms' or drop top."
            )
        if kind == "terms":
            if grouping is not None or variance is not None:
                raise ValueError(
                    "grouping and variance apply to the heatmap (kind='matrix'); "
                    "the terms are ranked by strength, and their round-off is "
                    "judged against the strongest term. Drop them or use "
                    "kind='matrix'."
                )
            terms = _terms_table(result, top)
            if names is None:
                names = list(result.feature_names)
            names = group_names_for(len(result.feature_names), names)
            disp = cls(None, names, terms=terms)
            return disp.plot(kind="terms", ax=ax)
        if hasattr(result, "matrix") and hasattr(result, "term_names"):
            pairs = np.abs(result.matrix(order=2))
            if pairs.ndim == 4:
                raise ValueError(
                    "The InteractionExplanation has several outputs; explain one "
                    "output (target=...) to plot it."
                )
            pairs = pairs.mean(axis=0)
            np.fill_diagonal(pairs, 0.0)
            if names is None:
                names = list(result.feature_names)
            result = {f"|{result.index}|": pairs}
        if is_bunch_of(result, "pairwise", "potentials"):
            if names is None:
                names = result.get("group_names")
            if variance is None and result.get("variance") is not None:
                variance = float(np.sum(result["variance"]))
            result = {"h2": result["pairwise"]}
        if not isinstance(result, Mapping):
            result = {"interaction": result}
        matrices = {}
        for key, value in result.items():
            value = np.asarray(value, dtype=np.float64)
            if value.ndim == 3:
                value = value.mean(axis=0)
            if value.ndim != 2 or value.shape[0] != value.shape[1]:
                raise ValueError(
                    f"interaction matrix {key!r} has shape {value.shape}; expected "
                    "a square matrix."
                )
            matrices[str(key)] = value
        n = next(iter(matrices.values())).shape[0]
        names = group_names_for(n, names)
        disp = cls(
            matrices,
            names,
            grouping=_grouping_blocks(grouping, names),
            variance=variance,
        )
        return disp.plot(ax=ax)

    def plot(self, *, kind="matrix", annotate=None, cmap="viridis", ax=None):
        """Draw one heatmap per measure, or the bars of the terms.

        Parameters
        ----------
        kind : {"matrix", "terms"}, default="matrix"
            Heatmaps of ``matrices``, or the bars of ``terms``.
        annotate : bool or None, default=None
            Write values in the cells (or at the ends of the bars); None does
            it for at most 12 units (at most 30 terms).
        cmap : str or Colormap, default="viridis"
            Colour map of the heatmaps.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several measures, or in two for the terms),
            one Axes per measure (the dot matrix and the bars for the
            terms), or None for a new figure.

        Returns
        -------
        display : InteractionDisplay
            The object, with ``ax_``, ``axes_``, ``figure_`` and, for the
            heatmaps, ``images_``, ``boxes_`` and ``order_``, for the terms
            ``bars_``, ``means_``, ``dots_`` and ``columns_`` set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        if kind not in _RESULT_KINDS:
            raise ValueError(
                f"kind must be one of {list(_RESULT_KINDS)}, got {kind!r}."
            )
        if kind == "terms":
            if self.terms is None:
                raise ValueError(
                    "This display holds no terms; build it with "
                    "InteractionDisplay.from_result(interactions, kind='terms')."
                )
            return self._plot_terms(annotate=annotate, ax=ax)
        if self.matrices is None:
            raise ValueError(
                "This display holds no matrices; plot it with kind='terms'."
            )
        from matplotlib.patches import Rectangle

        names = list(self.names)
        n = len(names)
        blocks = self.grouping
        if blocks is None:
            order = np.arange(n)
        else:
            blocks = [sorted(b) for b in blocks]
            blocks.sort(key=min)
            order = np.array([u for b in blocks for u in b], dtype=int)
        annotate = n <= 12 if annotate is None else annotate
        if not len(self.matrices):
            raise ValueError(
                f"{type(self).__name__}.plot: no interaction matrices to draw."
            )
        for name, matrix in self.matrices.items():
            # NaN (an undefined entry) is drawn light grey as missing
            values = check_drawable(matrix, f"the interaction matrix {name!r}",
                                    f"{type(self).__name__}.plot", allow_nan=True)
            off = ~np.eye(values.shape[0], dtype=bool) if values.ndim == 2 else None
            if off is not None and values.shape[0] > 1 and np.isnan(values[off]).all():
                raise ValueError(
                    f"{type(self).__name__}.plot: the interaction matrix {name!r} is "
                    "NaN everywhere off its diagonal, so there is no interaction to "
                    "draw; compute it on rows where it is defined (see the function "
                    "that made it) before plotting."
                )
        n_panels = len(self.matrices)
        longest = max((len(x) for x in names), default=1)
        margin = min(0.07 * longest, 1.6)
        size = min(2.5 + 0.45 * n, 9)
        fig, axes = panel_axes(
            ax, n_panels, figsize=(n_panels * (size + 1.5) + margin, size + margin)
        )
        self.images_, self.boxes_ = {}, []
        shown = [names[u] for u in order]
        variance = self.variance
        key = []
        for panel, (name, matrix) in zip(axes, self.matrices.items()):
            matrix = np.asarray(matrix, dtype=np.float64)[np.ix_(order, order)]
            scale = 1.0 if name in _RELATIVE or variance is None else variance
            im, _, _, info = heatmap(
                panel,
                matrix,
                shown,
                shown,
                cmap=cmap,
                vmin=0.0,
                annotate=annotate,
                colorbar_label=name,
                scale=scale,
                mask_diagonal=True,
            )
            key += [k for k in info["key"] if k not in key]
            self.images_[name] = im
            if blocks is not None:
                start = 0
                for block in blocks:
                    size_b = len(block)
                    rect = Rectangle(
                        (start - 0.5, start - 0.5),
                        size_b,
                        size_b,
                        fill=False,
                        edgecolor="red",
                        linewidth=1.5,
                    )
                    panel.add_patch(rect)
                    self.boxes_.append(rect)
                    start += size_b
            title = f"Pairwise interaction ({name})"
            if info["zero"]:
                title += "\nno interaction: every value is 0 up to round-off"
            panel.set_title(title, fontsize="medium")
        add_note(fig, axes[-1], key)
        self.order_ = order
        self.axes_ = axes
        self.ax_ = squeeze_axes(axes)
        self.figure_ = fig
        return self

    def _plot_terms(self, *, annotate, ax):
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        table = self.terms
        names = list(self.names)
        groups = [tuple(int(g) for g in t) for t in table["groups"]]
        n = len(groups)
        columns = sorted({g for t in groups for g in t})
        orders = [len(t) for t in groups]
        mean_abs = np.asarray(table["mean_abs"], dtype=np.float64)
        mean = np.asarray(table["mean"], dtype=np.float64)
        # round-off relative to the strongest term or the base value,
        # whichever is larger
        scale = table.attrs.get("scale", float(mean_abs.max()) if n else 1.0)
        mean_abs, mean = round_off(mean_abs, scale), round_off(mean, scale)
        # an estimate: 95% intervals of the signed means
        err = (1.96 * np.asarray(table["se_mean"], dtype=np.float64)
               if "se_mean" in table.columns else None)
        zero = n == 0 or bool(np.all(mean_abs == 0))
        annotate = n <= 30 if annotate is None else annotate

        # one line per label: wrapped labels collide when rotated
        labels, key = fit_labels([names[g] for g in columns], width=20, max_lines=1)
        longest = max((len(lab) for lab in labels), default=1)
        dots_width = 0.5 + 0.26 * max(len(columns), 1)
        fig, axes = _term_axes(
            ax,
            width_ratios=[dots_width, 5.0],
            figsize=(dots_width + 5.5, 1.3 + 0.3 * n + min(0.07 * longest, 1.4)),
        )
        dots_ax, bar_ax = axes
        y = np.arange(n)

        # alternate light bands so that a row reads across both panels
        for panel in axes:
            for i in range(0, n, 2):
                panel.axhspan(i - 0.5, i + 0.5, color="0.96", zorder=0, lw=0)

        # the dot matrix: one column per group, a filled dot per member
        col_of = {g: c for c, g in enumerate(columns)}
        gx, gy = np.meshgrid(np.arange(len(columns)), y)
        dots_ax.scatter(gx.ravel(), gy.ravel(), s=22, color="0.85", zorder=1, lw=0)
        mx = [col_of[g] for t in groups for g in t]
        my = [i for i, t in enumerate(groups) for _ in t]
        for i, t in enumerate(groups):
            if len(t) > 1:
                cs = [col_of[g] for g in t]
                dots_ax.plot([min(cs), max(cs)], [i, i], color="0.2", lw=1.5, zorder=2)
        dots = dots_ax.scatter(mx, my, s=30, color="0.2", zorder=3, lw=0)
        dots_ax.set_xlim(-0.6, len(columns) - 0.4)
        rotate = max((len(x) for x in labels), default=0) > 2
        dots_ax.set_xticks(
            np.arange(len(columns)),
            labels=labels,
            rotation=60 if rotate else 0,
            ha="right" if rotate else "center",
            rotation_mode="anchor",
        )
        dots_ax.tick_params(axis="y", left=False, labelleft=False)
        dots_ax.tick_params(axis="x", length=0)
        for spine in dots_ax.spines.values():
            spine.set_visible(False)
        dots_ax.set_xlabel("groups in the term")

        # the bars: mean |value|, coloured by order, the signed mean marked
        colors = [_ORDER_COLORS[(o - 1) % len(_ORDER_COLORS)] for o in orders]
        bars = bar_ax.barh(y, mean_abs, height=0.7, color=colors, zorder=2)
        (means,) = bar_ax.plot(
            mean, y, linestyle="none", marker="D", markersize=5, color="black", zorder=3
        )
        self.errorbars_ = None if err is None else bar_ax.errorbar(
            mean, y, xerr=err, fmt="none", ecolor="black", elinewidth=1.0,
            capsize=3, zorder=3,
        )
        bar_ax.axvline(0.0, color="0.3", lw=0.8, zorder=1)
        style_axes(bar_ax)
        bar_ax.spines["left"].set_visible(False)
        bar_ax.tick_params(axis="y", left=False, labelleft=False)
        bar_ax.set_ylim(n - 0.5, -0.5)
        spread = np.zeros(n) if err is None else err
        lo = min(float((mean - spread).min()) if n else 0.0, 0.0)
        hi = float(np.maximum(mean_abs, mean + spread).max()) if n and not zero else 1.0
        pad = 0.18 * (hi - lo) if annotate else 0.05 * (hi - lo)
        bar_ax.set_xlim(lo - 0.05 * (hi - lo) if lo < 0 else 0.0, hi + pad)
        if annotate:
            for i, v in enumerate(mean_abs):
                bar_ax.text(v + 0.01 * (hi - lo), i, format_value(float(f"{v:.3g}")),
                            va="center", ha="left", fontsize="small", zorder=4)
        index = table.attrs.get("index", "value")
        n_rows = table.attrs.get("n_rows")
        over = f" over {n_rows} rows" if n_rows else " over the rows"
        interval = "" if err is None else " \u00b1 1.96 standard errors"
        bar_ax.set_xlabel(f"mean |{index}|{over} (bar); signed mean (\u25c6){interval}")
        shown = sorted(set(orders))
        handles = [Patch(color=_ORDER_COLORS[(o - 1) % len(_ORDER_COLORS)])
                   for o in shown]
        handles.append(Line2D([], [], linestyle="none", marker="D", markersize=5,
                              color="black"))
        legend_labels = [f"{o} group" + ("s" if o > 1 else "") for o in shown]
        legend_labels.append("signed mean" + ("" if err is None else " \u00b1 1.96 se"))
        bar_ax.legend(handles, legend_labels, loc="lower right", fontsize="small",
                      frameon=False)
        title = f"Strongest {n} interaction terms ({index})"
        if zero:
            title += "\nno interaction: every value is 0 up to round-off"
        bar_ax.set_title(title, fontsize="medium")
        add_note(fig, bar_ax, key)

        self.bars_ = bars
        self.means_ = means
        self.dots_ = dots
        self.columns_ = np.asarray(columns, dtype=int)
        self.axes_ = np.asarray(axes, dtype=object)
        self.ax_ = bar_ax
        self.figure_ = fig
        return self
