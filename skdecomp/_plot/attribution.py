"""Grouped attributions of one or several methods, side by side."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._base import (
    as_attribution_dict,
    check_matplotlib_support,
    explain_rows,
    fitted_explainer,
    group_names_for,
)

__all__ = ["AttributionDisplay"]


def _of_output(values, output):
    """``values`` (outputs along the first axis) of one output, the first by default."""
    return np.atleast_1d(values)[0 if output is None else output]


def _swarm_offsets(values, width, n_bins=40):
    """Deterministic beeswarm offsets: points in one value bin fan out around 0."""
    values = np.asarray(values, dtype=np.float64)
    offsets = np.zeros(values.size)
    if values.size == 0:
        return offsets
    lo, hi = np.nanmin(values), np.nanmax(values)
    if hi <= lo:
        bins = np.zeros(values.size, dtype=int)
    else:
        bins = np.minimum(((values - lo) / (hi - lo) * n_bins).astype(int), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    scale = width / max(1, counts.max())
    seen = np.zeros(n_bins, dtype=int)
    for i in np.argsort(values, kind="stable"):
        b = bins[i]
        r = seen[b]
        seen[b] += 1
        # 0, +1, -1, +2, -2, ...
        offsets[i] = ((r + 1) // 2) * (1 if r % 2 else -1) * scale
    return offsets


class AttributionDisplay:
    """Grouped attributions of one or several explainers, side by side.

    One explained row is drawn as grouped horizontal bars (one bar per
    method and group); many rows as a beeswarm summary, one strip per method
    and group. Groups are sorted by their mean absolute attribution.

    Build it with :meth:`from_estimator` (which explains the rows) or
    :meth:`from_result` (attributions already computed, e.g. the Bunch of
    :meth:`Explainer.explain <skdecomp.Explainer.explain>` or a
    :class:`~skdecomp.Decomposition`).

    Read more in the :ref:`User Guide <plotting>`.

    Parameters
    ----------
    attributions : dict of str to ndarray of shape (n_samples, n_groups)
        Attributions of each method.
    group_names : list of str
        Name of each group.
    expected_value : float or None, default=None
        Mean model output over the background, shown in the title.
    prediction : ndarray of shape (n_samples,) or None, default=None
        Model output at each explained row, shown in the title of a bar plot.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the plot.
    figure_ : matplotlib Figure
        Figure holding the axes.
    artists_ : dict of str to matplotlib artist
        One artist per method: a ``BarContainer`` for bars, a
        ``PathCollection`` for a beeswarm.
    order_ : ndarray of int
        Group indices from top to bottom.

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
    """

    def __init__(self, attributions, group_names, *, expected_value=None, prediction=None):
        self.attributions = attributions
        self.group_names = group_names
        self.expected_value = expected_value
        self.prediction = prediction

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
        kind : {"auto", "bar", "beeswarm"}, default="auto"
            "auto" draws bars for one row and a beeswarm for several.
        max_groups : int, default=20
            Show at most this many groups (the most important).
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : AttributionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        explainer = fitted_explainer(estimator, X, groups, background, random_state)
        attributions = explain_rows(explainer, X, methods, output)
        expected_value = float(_of_output(explainer.expected_value_, output))
        prediction = None
        if "shapley" in attributions:
            # efficiency: Shapley values sum to f(x) - E_B f
            prediction = expected_value + attributions["shapley"].sum(axis=1)
        disp = cls(
            attributions,
            list(explainer.get_feature_names_out()),
            expected_value=expected_value,
            prediction=prediction,
        )
        return disp.plot(kind=kind, max_groups=max_groups, ax=ax)

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
        ax=None,
    ):
        """Plot attributions already computed.

        Parameters
        ----------
        result : dict, Bunch, Decomposition, ndarray or list of ndarray
            Method name -> attributions (e.g. the Bunch of
            :meth:`Explainer.explain <skdecomp.Explainer.explain>`), a
            :class:`~skdecomp.Decomposition` (attributions of ``methods``
            from its components), one array or a list of arrays of shape
            (n_samples, n_groups) or (n_groups,).
        group_names : list of str or None, default=None
            Names of the groups; taken from a Decomposition, else
            ``"group 0"``, ``"group 1"``, ...
        methods : list of str or None, default=None
            Methods to show (for a Decomposition: which to compute,
            default ``["shapley"]``); names of plain arrays.
        output : int or None, default=None
            Output to show for multi-output attributions.
        kind : {"auto", "bar", "beeswarm"}, default="auto"
            "auto" draws bars for one row and a beeswarm for several.
        max_groups : int, default=20
            Show at most this many groups (the most important).
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : AttributionDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
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
        return disp.plot(kind=kind, max_groups=max_groups, ax=ax)

    from_decomposition = from_result

    def plot(self, *, kind="auto", max_groups=20, row=0, ax=None):
        """Draw the attributions.

        Parameters
        ----------
        kind : {"auto", "bar", "beeswarm"}, default="auto"
            "auto" draws bars when there is one row and a beeswarm otherwise.
        max_groups : int, default=20
            Show at most this many groups, the largest mean ``|phi|`` first.
        row : int, default=0
            Row drawn by a bar plot of several rows.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : AttributionDisplay
            The object, with ``ax_``, ``figure_``, ``artists_`` and ``order_`` set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        import matplotlib.pyplot as plt

        if kind not in ("auto", "bar", "beeswarm"):
            raise ValueError(f"kind must be 'auto', 'bar' or 'beeswarm', got {kind!r}.")
        phis = {
            m: np.asarray(v, dtype=np.float64) for m, v in self.attributions.items()
        }
        phis = {m: (v[None, :] if v.ndim == 1 else v) for m, v in phis.items()}
        n_samples, n_groups = next(iter(phis.values())).shape
        if kind == "auto":
            kind = "bar" if n_samples == 1 else "beeswarm"
        importance = np.mean([np.abs(v).mean(axis=0) for v in phis.values()], axis=0)
        order = np.argsort(-importance, kind="stable")[:max_groups]
        self.order_ = order
        n_shown = order.size
        n_methods = len(phis)

        if ax is None:
            height = 1.0 + 0.35 * n_shown * (
                1 if kind == "bar" else max(1, n_methods * 0.7)
            )
            fig, ax = plt.subplots(
                figsize=(6.4, min(max(height, 2.5), 14)), layout="constrained"
            )
        else:
            fig = ax.figure
        band = 0.8
        step = band / n_methods
        positions = np.arange(n_shown)[::-1]  # most important on top
        artists = {}
        for i, (method, values) in enumerate(phis.items()):
            offset = band / 2 - step * (i + 0.5)
            color = f"C{i % 10}"
            if kind == "bar":
                artists[method] = ax.barh(
                    positions + offset,
                    values[row, order],
                    height=step,
                    color=color,
                    label=method,
                )
            else:
                xs, ys = [], []
                for p, k in zip(positions, order):
                    xs.append(values[:, k])
                    ys.append(p + offset + _swarm_offsets(values[:, k], step * 0.45))
                artists[method] = ax.scatter(
                    np.concatenate(xs),
                    np.concatenate(ys),
                    s=8,
                    color=color,
                    alpha=0.7,
                    label=method,
                    linewidths=0,
                )
        ax.axvline(0.0, color="0.5", linewidth=0.8, zorder=0)
        ax.set_yticks(positions, labels=[self.group_names[k] for k in order])
        ax.set_ylim(-0.6, n_shown - 0.4)
        ax.set_xlabel("attribution (change of the model output)")
        ax.set_ylabel("group")
        if n_methods > 1:
            ax.legend(title="method", loc="best", fontsize="small")
        title = (
            "Grouped attributions" if kind == "beeswarm" else "Attributions of one row"
        )
        if kind == "bar" and self.prediction is not None and self.expected_value is not None:
            title += f": f(x) = {self.prediction[row]:.3g}, E f = {self.expected_value:.3g}"
        elif kind == "beeswarm":
            title += f" of {n_samples} rows"
        ax.set_title(title, fontsize="medium")
        self.ax_ = ax
        self.figure_ = fig
        self.artists_ = artists
        return self
