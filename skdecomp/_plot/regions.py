"""The regions of an FDTree: their rules, attributions and partial dependence."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._base import check_matplotlib_support, panel_axes, style_axes, wrap_name

__all__ = ["RegionDisplay"]


def _region_color(r):
    import matplotlib

    return matplotlib.colormaps["tab10"](r % 10)


class RegionDisplay:
    """The regions of an :class:`~skdecomp.FDTree`, side by side.

    Left: one block of bars per region, titled by its rule and size, with
    the mean absolute attribution of every group over the region's rows
    (each row explained against its own region, :meth:`FDTree.explain
    <skdecomp.FDTree.explain>`). Right: the partial dependence of one group
    in every region (:func:`skdecomp.inspection.partial_dependence` over the
    region's rows), one line per region in the region's colour. Where the
    regional curves differ, the group interacts with the columns of the
    rules; within a region the bars of PDP, SHAP and PFI agree.

    Read more in the :ref:`User Guide <regions>`.

    Parameters
    ----------
    rules : list of str
        The rule of every region.
    sizes : array-like of int
        Rows of every region.
    importances : ndarray of shape (n_regions, n_groups)
        Mean absolute attribution of every group in every region.
    group_names : list of str
        Name of every group.
    grid : ndarray of shape (n_points,)
        Positions of the partial-dependence grid (the column's values, or
        the index of a joint value for a group of several columns).
    pdp : ndarray of shape (n_regions, n_points)
        Partial dependence of the group in every region.
    group : str
        Name of the group of the partial dependence.
    method : str, default="shapley"
        Attribution method of the bars.

    Attributes
    ----------
    ax_ : ndarray of Axes
        The bar panel and the partial-dependence panel.
    figure_ : matplotlib Figure
        Figure holding the axes.
    bars_ : list of BarContainer
        The bars of every region.
    lines_ : list of Line2D
        The partial-dependence line of every region.

    See Also
    --------
    skdecomp.FDTree : The regions.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skdecomp import FDTree
    >>> from skdecomp.plot import RegionDisplay
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
    >>> tree = FDTree(lambda X: X[:, 0] * np.sign(X[:, 1]) + X[:, 2],
    ...               max_samples=80, random_state=0).fit(X)
    >>> disp = RegionDisplay.from_estimator(tree, X, group="x0")
    >>> len(disp.lines_)
    2
    """

    def __init__(self, rules, sizes, importances, group_names, grid, pdp, group, *,
                 method="shapley"):
        self.rules = rules
        self.sizes = sizes
        self.importances = importances
        self.group_names = group_names
        self.grid = grid
        self.pdp = pdp
        self.group = group
        self.method = method

    @classmethod
    def from_estimator(cls, fdtree, X, *, group=None, method="shapley",
                       grid_resolution=30, output=0, ax=None):
        """Explain X region by region and plot the regions.

        Parameters
        ----------
        fdtree : FDTree
            A fitted :class:`~skdecomp.FDTree`.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain; each region's partial dependence is averaged
            over its rows of X.
        group : int, str or None, default=None
            The group of the partial dependence, by position or name; None
            takes the group of the column of the first split (the first
            group when the tree has one region).
        method : str, default="shapley"
            Attribution method of the bars (see :meth:`Explainer.explain
            <skdecomp.Explainer.explain>`).
        grid_resolution : int, default=30
            Grid points of the partial dependence.
        output : int, default=0
            Output drawn for multi-output models.
        ax : matplotlib Axes or list of two Axes, default=None
            Where to draw; None makes a new figure.

        Returns
        -------
        display : RegionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        from sklearn.utils.validation import check_is_fitted

        from ..inspection import partial_dependence

        if not hasattr(fdtree, "apply") or not hasattr(fdtree, "explain") or \
                not hasattr(type(fdtree), "export_text"):
            raise TypeError(
                f"{cls.__name__}.from_estimator draws the regions of a fitted FDTree, "
                f"got {type(fdtree).__name__}; fit FDTree(model, ...) on the data "
                "first (an Explainer has no regions)."
            )
        check_is_fitted(fdtree)
        if ax is not None and not (hasattr(ax, "figure") or (
                isinstance(ax, (list, tuple, np.ndarray))
                and all(hasattr(a, "figure") for a in np.ravel(ax)))):
            raise TypeError(
                f"ax must be a matplotlib Axes, a list of two Axes or None, got "
                f"{type(ax).__name__} {ax!r:.40}."
            )
        n_outputs = len(getattr(fdtree, "output_names_", None) or [0])
        if (not isinstance(output, (int, np.integer)) or isinstance(output, bool)
                or not -n_outputs <= output < n_outputs):
            raise ValueError(
                f"output={output!r} is not one of the model's {n_outputs} output(s); "
                f"give an int from 0 to {n_outputs - 1}."
            )
        names = [str(g) for g in fdtree.group_names_]
        if group is None:
            root = fdtree.nodes_[0]["feature"]
            k = next((i for i, g in enumerate(fdtree.groups_) if root in g), 0)
        elif isinstance(group, str):
            if group not in names:
                raise ValueError(f"group {group!r} is not among the groups {names}.")
            k = names.index(group)
        else:
            k = int(group)
            if not 0 <= k < len(names):
                raise ValueError(
                    f"group {group!r} is out of range: the tree has "
                    f"{len(names)} groups."
                )
        regions = fdtree.apply(X)
        expl = fdtree.explain(X, methods=[method])[method]
        values = np.asarray(expl.values)
        if values.ndim == 3:
            values = values[:, :, output]
        R = fdtree.n_regions_
        importances = np.zeros((R, len(names)))
        sizes = np.bincount(regions, minlength=R)
        for r in range(R):
            if sizes[r]:
                importances[r] = np.abs(values[regions == r]).mean(axis=0)
        cols = fdtree.groups_[k]
        take = (lambda rows: X.iloc[rows]) if hasattr(X, "iloc") else (
            lambda rows: np.asarray(X)[rows])
        first = partial_dependence(fdtree.estimator_, X, cols,
                                   grid_resolution=grid_resolution,
                                   response_method=fdtree.response_method_)
        grid = first.grid
        pdp = np.full((R, grid.shape[0]), np.nan)
        for r in range(R):
            rows = np.flatnonzero(regions == r)
            if rows.size:
                res = partial_dependence(fdtree.estimator_, take(rows), cols, grid=grid,
                                         response_method=fdtree.response_method_)
                pdp[r] = np.asarray(res.average)[output].reshape(-1)
        try:
            positions = np.asarray(grid, dtype=float)[:, 0] if len(cols) == 1 else None
        except (TypeError, ValueError):
            positions = None
        if positions is None:
            positions = np.arange(grid.shape[0], dtype=float)
        disp = cls(list(fdtree.rules_), sizes, importances, names, positions, pdp,
                   names[k], method=method)
        return disp.plot(ax=ax)

    @classmethod
    def from_result(cls, rules, sizes, importances, group_names, grid, pdp, group, *,
                    method="shapley", ax=None):
        """Plot regions already explained.

        Parameters
        ----------
        rules : list of str
            The rule of every region.
        sizes : array-like of int
            Rows of every region.
        importances : array-like of shape (n_regions, n_groups)
            Mean absolute attribution of every group in every region.
        group_names : list of str
            Name of every group.
        grid : array-like of shape (n_points,)
            Positions of the partial-dependence grid.
        pdp : array-like of shape (n_regions, n_points)
            Partial dependence of the group in every region.
        group : str
            Name of the group of the partial dependence.
        method : str, default="shapley"
            Attribution method of the bars.
        ax : matplotlib Axes or list of two Axes, default=None
            Where to draw; None makes a new figure.

        Returns
        -------
        display : RegionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        importances = np.asarray(importances, dtype=float)
        if importances.ndim != 2 or importances.shape != (len(rules), len(group_names)):
            raise ValueError(
                f"importances has shape {importances.shape}; it needs one row per "
                f"region ({len(rules)}) and one column per group ({len(group_names)})."
            )
        pdp = np.asarray(pdp, dtype=float)
        if pdp.shape != (len(rules), np.shape(grid)[0]):
            raise ValueError(
                f"pdp has shape {pdp.shape}; it needs one row per region "
                f"({len(rules)}) and one column per grid point ({np.shape(grid)[0]})."
            )
        return cls(list(rules), np.asarray(sizes), importances, list(group_names),
                   np.asarray(grid, dtype=float), pdp, str(group),
                   method=method).plot(ax=ax)

    def plot(self, *, ax=None):
        """Draw the regions.

        Parameters
        ----------
        ax : matplotlib Axes or list of two Axes, default=None
            Where to draw; None makes a new figure.

        Returns
        -------
        display : RegionDisplay
            The display, with ``ax_``, ``figure_``, ``bars_`` and ``lines_``.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        importances = np.asarray(self.importances, dtype=float)
        R, K = importances.shape
        figsize = (10, max(3.0, 0.9 + R * (0.32 * K + 0.6)))
        fig, axes = panel_axes(ax, 2, figsize=figsize)
        bar_ax, pd_ax = axes
        total = max(1, int(np.sum(self.sizes)))
        self.bars_ = []
        ticks, labels = [], []
        y = 0.0
        for r in range(R):
            pos = y - np.arange(K)
            self.bars_.append(bar_ax.barh(pos, importances[r], color=_region_color(r),
                                          height=0.8))
            ticks.extend(pos)
            labels.extend(self.group_names)
            share = 100 * self.sizes[r] / total
            title = f"region {r} ({share:.0f}%): {self.rules[r]}"
            title = "\n".join(wrap_name(title, 60))
            bar_ax.text(0.01, y + 0.7, title, transform=bar_ax.get_yaxis_transform(),
                        fontsize=8, va="bottom", ha="left", color=_region_color(r))
            y -= K + 1.5
        bar_ax.set_yticks(ticks, labels, fontsize=8)
        bar_ax.set_ylim(y + 0.8, 2.2)
        bar_ax.set_xlabel(f"mean |{self.method}| in the region")
        style_axes(bar_ax)
        self.lines_ = []
        for r in range(R):
            (line,) = pd_ax.plot(self.grid, np.asarray(self.pdp)[r],
                                 color=_region_color(r), label=f"region {r}")
            self.lines_.append(line)
        pd_ax.set_xlabel(self.group)
        pd_ax.set_ylabel(f"partial dependence of {self.group}")
        pd_ax.legend(fontsize=8, frameon=False)
        style_axes(pd_ax)
        self.ax_ = axes
        self.figure_ = fig
        return self
