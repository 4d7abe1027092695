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
    heatmap,
    is_bunch_of,
    panel_axes,
    squeeze_axes,
)

__all__ = ["InteractionDisplay"]

_KINDS = ("h2", "pure", "full", "arch_detect")
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

    def __init__(self, matrices, names, *, grouping=None, variance=None):
        self.matrices = matrices
        self.names = names
        self.grouping = grouping
        self.variance = variance

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
    def from_result(cls, result, *, names=None, grouping=None, variance=None, ax=None):
        """Plot interaction matrices already computed.

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
            output).
        names : list of str or None, default=None
            Unit names.
        grouping : list of lists, dict, fitted grouper or None, default=None
            Partition of the units that orders and boxes the heatmap.
        variance : float or None, default=None
            Variance of the model output (Var f): values of the measures in
            squared units of the output (all but ``"h2"``) at most ``1e-12``
            times it are round-off, drawn as 0. None uses 1, the scale of
            ``"h2"``; the Bunch of :func:`~skdecomp.inspection.h_statistic`
            gives its ``variance``.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several measures), one Axes per measure, or
            None for a new figure.

        Returns
        -------
        display : InteractionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
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

    def plot(self, *, annotate=None, cmap="viridis", ax=None):
        """Draw one heatmap per measure.

        Parameters
        ----------
        annotate : bool or None, default=None
            Write values in the cells; None does it for at most 12 units.
        cmap : str or Colormap, default="viridis"
            Colour map of the heatmaps.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several measures), one Axes per measure, or
            None for a new figure.

        Returns
        -------
        display : InteractionDisplay
            The object, with ``ax_``, ``axes_``, ``figure_``, ``images_``,
            ``boxes_`` and ``order_`` set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
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
            check_drawable(matrix, f"the interaction matrix {name!r}", f"{type(self).__name__}.plot",
                           allow_nan=True)
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
