"""Partial dependence and ICE of groups of columns."""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping

import numpy as np

from ._base import (
    NEUTRAL_COLOR,
    check_drawable,
    check_matplotlib_support,
    method_color,
    panel_axes,
    squeeze_axes,
    style_axes,
    wrap_name,
)

__all__ = ["PartialDependenceDisplay"]


def _group_list(groups):
    """(name, columns) pairs from one group, a list of groups or a dict."""
    if isinstance(groups, Mapping):
        return [
            (str(k), [v] if isinstance(v, (str, int, np.integer)) else list(v))
            for k, v in groups.items()
        ]
    if isinstance(groups, (str, int, np.integer)):
        groups = [groups]
    out = []
    for g in groups:
        cols = [g] if isinstance(g, (str, int, np.integer)) else list(g)
        out.append((None, cols))
    return out


def _position_of(column, feature_names):
    if isinstance(column, str):
        if column not in feature_names:
            raise ValueError(f"column {column!r} is not among {feature_names}.")
        return feature_names.index(column)
    return int(column)


def _missing(values):
    """Mask of the missing values (NaN, None) of a grid axis."""
    import pandas as pd

    return np.asarray(pd.isna(np.asarray(values, dtype=object)), dtype=bool)


def _positions(values):
    """Numeric axis positions of grid values, and tick labels for categories."""
    values = np.asarray(values)
    try:
        return values.astype(float), None
    except (TypeError, ValueError):
        return np.arange(values.size, dtype=float), [str(v) for v in values]


class PartialDependenceDisplay:
    """Partial dependence (PDP) and ICE curves of groups of columns.

    One panel per group. A group of one column gives a curve of the
    average prediction (and ICE lines, one per row); two columns give a
    heatmap of the joint partial dependence; a larger group gives ICE over
    the group's observed joint values, sorted by partial dependence
    (:func:`skdecomp.inspection.partial_dependence`).

    The grid of a column leaves its missing values out, and the categories
    of a pandas Categorical keep their order (an ordered categorical its
    order) rather than an alphabetical one. The average curve has the
    colour of ``"pdp"`` (:func:`~skdecomp.plot.method_color`), the ICE
    lines are grey.

    Read more in the :ref:`User Guide <plotting>`.

    Parameters
    ----------
    results : list of Bunch
        One result of :func:`skdecomp.inspection.partial_dependence` per
        group.
    group_names : list of str
        Name of each group.
    feature_names : list of str
        Names of all columns (axis labels).
    output : int, default=0
        Output drawn for multi-output models.

    Attributes
    ----------
    ax_ : matplotlib Axes or ndarray of Axes
        The Axes, or an array of Axes for several groups.
    axes_ : ndarray of Axes
        All panels, as an array.
    figure_ : matplotlib Figure
        Figure holding the axes.
    lines_ : dict of str to list of Line2D
        Average and ICE lines of each curve panel.
    contours_ : dict of str to QuadMesh
        Heatmap of each two-column panel.

    See Also
    --------
    skdecomp.inspection.partial_dependence : The computation.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.linear_model import LinearRegression
    >>> from skdecomp.plot import PartialDependenceDisplay
    >>> X = np.random.RandomState(0).normal(size=(30, 3))
    >>> model = LinearRegression().fit(X, X @ [1.0, 2.0, 0.0])
    >>> disp = PartialDependenceDisplay.from_estimator(model, X, [0, [1, 2]])
    >>> len(disp.axes_)
    2
    """

    def __init__(self, results, group_names, feature_names, *, output=0):
        self.results = results
        self.group_names = group_names
        self.feature_names = feature_names
        self.output = output

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        groups,
        *,
        kind="both",
        grid_resolution=50,
        n_ice=50,
        output=0,
        response_method="auto",
        random_state=None,
        ax=None,
    ):
        """Compute and plot the partial dependence of groups of columns.

        Parameters
        ----------
        estimator : estimator or Explainer
            A fitted model, or a fitted :class:`~skdecomp.Explainer` (its model).
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows over which the partial dependence is averaged.
        groups : int, str, list or dict
            One column, a list of groups (each a column or a list of
            columns), or a dict name -> columns. Columns are positions or
            names.
        kind : {"average", "individual", "both"}, default="both"
            Average curve, ICE lines, or both (curve panels; a two-column
            heatmap always shows the average).
        grid_resolution : int, default=50
            Number of grid points per column (or of observed joint values
            for a bigger group).
        n_ice : int, default=50
            Rows of X drawn for the ICE lines (the average uses all rows).
        output : int, default=0
            Output drawn for multi-output models.
        response_method : str, default="auto"
            Model method explained, as in
            :func:`skdecomp.inspection.partial_dependence`.
        random_state : int, RandomState instance or None, default=None
            Draws the ICE rows and the joint values of big groups.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several groups), one Axes per group, or None
            for a new figure.

        Returns
        -------
        display : PartialDependenceDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        from sklearn.utils import check_random_state

        from ..inspection import partial_dependence

        if hasattr(estimator, "estimator_") and hasattr(estimator, "decompose"):
            estimator = estimator.estimator_
        feature_names = (
            [str(c) for c in X.columns]
            if hasattr(X, "columns")
            else [f"x{j}" for j in range(np.asarray(X).shape[1])]
        )
        rng = check_random_state(random_state)
        results, names = [], []
        for name, cols in _group_list(groups):
            # the grid leaves out missing values and keeps the category order
            res = partial_dependence(
                estimator,
                X,
                [_position_of(c, feature_names) for c in cols],
                grid_resolution=grid_resolution,
                kind="both",
                response_method=response_method,
                random_state=rng,
            )
            n = res.individual.shape[1]
            if n > n_ice:
                keep = np.sort(rng.choice(n, n_ice, replace=False))
                res["individual"] = res.individual[:, keep]
            if kind == "average":
                res.pop("individual")
            results.append(res)
            names.append(name)
        names = [
            nm if nm is not None else ", ".join(feature_names[c] for c in r.columns)
            for nm, r in zip(names, results)
        ]
        disp = cls(results, names, feature_names, output=output)
        return disp.plot(kind=kind, ax=ax)

    @classmethod
    def from_result(
        cls,
        results,
        *,
        group_names=None,
        feature_names=None,
        output=0,
        kind="both",
        ax=None,
    ):
        """Plot results of :func:`skdecomp.inspection.partial_dependence`.

        Parameters
        ----------
        results : Bunch or list of Bunch
            One result per group (with ``average`` and/or ``individual``).
        group_names : list of str or None, default=None
            Name of each group; None joins the names of its columns.
        feature_names : list of str or None, default=None
            Names of all columns; None uses ``"x0"``, ``"x1"``, ...
        output : int, default=0
            Output drawn for multi-output models.
        kind : {"average", "individual", "both"}, default="both"
            Average curve, ICE lines, or both.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several groups), one Axes per group, or None
            for a new figure.

        Returns
        -------
        display : PartialDependenceDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        if isinstance(results, Mapping):
            results = [results]
        results = list(results)
        n_features = 1 + max(int(np.max(r["columns"])) for r in results)
        if feature_names is None:
            feature_names = [f"x{j}" for j in range(n_features)]
        if group_names is None:
            group_names = [
                ", ".join(feature_names[c] for c in r["columns"]) for r in results
            ]
        disp = cls(results, list(group_names), list(feature_names), output=output)
        return disp.plot(kind=kind, ax=ax)

    def plot(self, *, kind="both", cmap="viridis", ax=None):
        """Draw one panel per group.

        Parameters
        ----------
        kind : {"average", "individual", "both"}, default="both"
            Average curve, ICE lines, or both (curve panels only).
        cmap : str or Colormap, default="viridis"
            Colormap of two-column heatmaps.
        ax : matplotlib Axes or list of Axes, default=None
            One Axes (split for several groups), one Axes per group, or None
            for a new figure.

        Returns
        -------
        display : PartialDependenceDisplay
            The object, with ``ax_``, ``axes_``, ``figure_``, ``lines_`` and
            ``contours_`` set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator

        if kind not in ("average", "individual", "both"):
            raise ValueError(
                f"kind must be 'average', 'individual' or 'both', got {kind!r}."
            )
        n = len(self.results)
        if n == 0:
            raise ValueError(
                f"{type(self).__name__}.plot: no partial dependence to draw; give "
                "at least one group."
            )
        for res, name in zip(self.results, self.group_names):
            for key in ("average", "individual"):
                if res.get(key) is not None:
                    check_drawable(res[key], f"the {key} partial dependence of {name!r}",
                                   f"{type(self).__name__}.plot")
        ncols = min(n, 3)
        fig, axes = panel_axes(
            ax, n, ncols=ncols, figsize=(4.2 * ncols, 3.4 * int(np.ceil(n / ncols)))
        )
        self.lines_, self.contours_ = {}, {}
        o = self.output
        pd_color = method_color("pdp")
        for panel, res, name in zip(axes, self.results, self.group_names):
            cols = list(np.asarray(res["columns"]))
            avg = res.get("average")
            ice = res.get("individual")
            if avg is None and ice is not None:
                avg = ice.mean(axis=1)
            gv = res.get("grid_values")
            if gv is not None:
                # grid points of missing values have nothing to show
                keeps = [~_missing(v) for v in gv]
                gv = [np.asarray(v)[k] for v, k in zip(gv, keeps)]
                index = np.ix_(*keeps)
                avg = None if avg is None else avg[(slice(None), *index)]
                if ice is not None:
                    ice = ice[(slice(None), slice(None), *index)]
            if gv is not None and any(v.size == 0 for v in gv):
                panel.text(
                    0.5, 0.5,
                    "no grid: the grid holds only missing values\n(from_estimator "
                    "builds grids without them)",
                    ha="center", va="center", transform=panel.transAxes,
                    fontsize="small", color="0.3",
                )
                panel.set_xticks([])
                panel.set_yticks([])
                self.lines_[name] = []
            elif gv is not None and len(cols) == 2 and avg is not None:
                a, a_labels = _positions(gv[0])
                b, b_labels = _positions(gv[1])
                mesh = panel.pcolormesh(b, a, avg[o], cmap=cmap, shading="nearest")
                if a_labels is not None:
                    panel.set_yticks(a, labels=a_labels)
                else:
                    panel.yaxis.set_major_locator(MaxNLocator(nbins=5))
                if b_labels is not None:
                    panel.set_xticks(
                        b, labels=b_labels, rotation=45, ha="right",
                        rotation_mode="anchor",
                    )
                else:
                    panel.xaxis.set_major_locator(MaxNLocator(nbins=5))
                plt.colorbar(mesh, ax=panel, label="partial dependence")
                panel.set_xlabel(self.feature_names[cols[1]])
                panel.set_ylabel(self.feature_names[cols[0]])
                self.contours_[name] = mesh
            else:
                lines = []
                marker = None
                if gv is not None and len(cols) == 1:
                    x, x_labels = _positions(gv[0])
                    order = np.arange(x.size)
                    if x_labels is not None:
                        marker = "o"
                        panel.set_xticks(
                            x, labels=x_labels, rotation=45, ha="right",
                            rotation_mode="anchor",
                        )
                    else:
                        panel.xaxis.set_major_locator(MaxNLocator(nbins=5))
                    panel.set_xlabel(self.feature_names[cols[0]])
                else:
                    order = np.argsort(avg[o], kind="stable")
                    x = np.arange(order.size)
                    panel.set_xlabel("observed joint values, sorted by PD")
                if kind in ("individual", "both") and ice is not None:
                    lines += panel.plot(
                        x, ice[o][:, order].T, color=NEUTRAL_COLOR, alpha=0.35,
                        linewidth=0.7,
                    )
                    lines[0].set_label("ICE (one row)")
                if kind in ("average", "both"):
                    lines += panel.plot(
                        x, avg[o][order], color=pd_color, linewidth=2.5,
                        marker=marker, label="average (PD)",
                    )
                if lines:
                    panel.legend(fontsize="small")
                panel.set_ylabel("prediction")
                style_axes(panel)
                self.lines_[name] = lines
            panel.set_title(
                "PD of " + "\n".join(wrap_name(name, 40)), fontsize="medium"
            )
        self.axes_ = axes
        self.ax_ = squeeze_axes(axes)
        self.figure_ = fig
        return self
