"""Pairwise disagreement among explainers, or among faithfulness metrics."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._base import (
    as_attribution_dict,
    check_matplotlib_support,
    explain_rows,
    fitted_explainer,
    heatmap,
    is_bunch_of,
)

__all__ = ["DisagreementDisplay"]


def _pairwise(attributions, measure, top_k):
    """(n, n) mean disagreement between the methods (0 on the diagonal)."""
    from .. import metrics

    if len(attributions) == 1:
        return np.zeros((1, 1))
    return metrics.disagreement(attributions, measure=measure, top_k=top_k).pairwise


class DisagreementDisplay:
    """Heatmap of pairwise disagreement among explainers or among metrics.

    Between explainers, each cell is the mean disagreement of two
    attributions over the explained rows (:func:`skdecomp.metrics.disagreement`;
    see :ref:`why_disagree`). Between faithfulness metrics, each cell is one minus
    the share of explainer pairs the two metrics order alike
    (:func:`skdecomp.metrics.metric_disagreement`): 0 when they rank the
    explainers the same way.

    Read more in the :ref:`User Guide <plotting>`.

    Parameters
    ----------
    matrix : ndarray of shape (n, n)
        Symmetric disagreement matrix with a zero diagonal.
    names : list of str
        Names of the rows and columns (methods or metrics).
    kind : {"methods", "metrics"}, default="methods"
        What is compared; used in labels.
    measure : str, default="l2"
        Name of the measure; used in labels.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the heatmap.
    figure_ : matplotlib Figure
        Figure holding the axes.
    im_ : matplotlib AxesImage
        The heatmap.
    text_ : ndarray of matplotlib Text
        Value annotations, or None values when not annotated.
    colorbar_ : matplotlib Colorbar
        The colour bar.

    See Also
    --------
    AttributionDisplay : The attributions themselves.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skdecomp.plot import DisagreementDisplay
    >>> phi = {"arch": np.array([[1.0, 0.0]]), "occlusion": np.array([[1.0, 1.0]])}
    >>> disp = DisagreementDisplay.from_result(phi)
    >>> disp.matrix
    array([[0. , 0.5],
           [0.5, 0. ]])
    """

    def __init__(self, matrix, names, *, kind="methods", measure="l2"):
        self.matrix = matrix
        self.names = names
        self.kind = kind
        self.measure = measure

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        methods=("arch", "shapley", "banzhaf", "occlusion"),
        kind="methods",
        measure="l2",
        top_k=None,
        metrics=None,
        groups=None,
        background=100,
        output=None,
        n_samples=1024,
        random_state=None,
        ax=None,
    ):
        """Explain rows of X with several methods and plot their disagreement.

        Parameters
        ----------
        estimator : Explainer or estimator
            A fitted :class:`~skdecomp.Explainer`, or a fitted model explained
            by a new Explainer fitted on X.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.
        methods : list of str, default=("arch", "shapley", "banzhaf", "occlusion")
            Methods compared (or scored by the metrics).
        kind : {"methods", "metrics"}, default="methods"
            Compare the methods' attributions, or the faithfulness metrics'
            rankings of the methods (needs at least two methods).
        measure : str, default="l2"
            Measure of :func:`skdecomp.metrics.disagreement`.
        top_k : int or None, default=None
            The k of the top-k measures; None uses all groups.
        metrics : list of str or None, default=None
            Metrics compared when ``kind="metrics"``; None uses all.
        groups : None, list of lists, dict or grouper, default=None
            Groups of a new Explainer.
        background : int or array-like, default=100
            Background of a new Explainer.
        output : int or None, default=None
            Output compared for a multi-output model.
        n_samples : int, default=1024
            Coalitions per metric when ``kind="metrics"``.
        random_state : int, RandomState instance or None, default=None
            Seed of a new Explainer and of the metrics' coalitions.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : DisagreementDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        if kind not in ("methods", "metrics"):
            raise ValueError(f"kind must be 'methods' or 'metrics', got {kind!r}.")
        explainer = fitted_explainer(estimator, X, groups, background, random_state)
        attributions = explain_rows(explainer, X, methods, output)
        if kind == "methods":
            return cls.from_result(attributions, measure=measure, top_k=top_k, ax=ax)
        from .. import metrics as _metrics

        result = _metrics.metric_disagreement(
            explainer,
            X,
            attributions=attributions,
            metrics=metrics,
            n_samples=n_samples,
            random_state=random_state,
        )
        return cls.from_result(result, ax=ax)

    @classmethod
    def from_result(
        cls, result, *, methods=None, measure="l2", top_k=None, output=None, ax=None
    ):
        """Plot the disagreement of results already computed.

        Parameters
        ----------
        result : dict, Bunch, Decomposition or list of ndarray
            Method name -> attributions (e.g. the Bunch of
            :meth:`Explainer.explain <skdecomp.Explainer.explain>`); a
            :class:`~skdecomp.Decomposition` (attributions of ``methods``,
            default arch, shapley, banzhaf, occlusion); the Bunch returned by
            :func:`skdecomp.metrics.disagreement` (its ``pairwise`` matrix);
            or the Bunch of :func:`skdecomp.metrics.metric_disagreement`
            (one minus its ``agreement``).
        methods : list of str or None, default=None
            Methods to compare (names of plain arrays).
        measure : str, default="l2"
            Measure of :func:`skdecomp.metrics.disagreement`.
        top_k : int or None, default=None
            The k of the top-k measures; None uses all groups.
        output : int or None, default=None
            Output compared for multi-output attributions.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : DisagreementDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        from .._decomposition import Decomposition

        if isinstance(result, Decomposition) and methods is None:
            methods = ["arch", "shapley", "banzhaf", "occlusion"]
        if is_bunch_of(result, "agreement", "metric_names"):
            matrix = 1.0 - np.asarray(result["agreement"], dtype=np.float64)
            disp = cls(
                matrix, list(result["metric_names"]), kind="metrics", measure="ranking"
            )
            return disp.plot(ax=ax)
        if is_bunch_of(result, "pairwise", "names"):
            disp = cls(
                np.asarray(result["pairwise"], dtype=np.float64),
                list(result["names"]),
                measure=measure,
            )
            return disp.plot(ax=ax)
        attributions = as_attribution_dict(result, method_names=methods, output=output)
        matrix = _pairwise(attributions, measure, top_k)
        disp = cls(matrix, list(attributions), measure=measure)
        return disp.plot(ax=ax)

    from_decomposition = from_result

    def plot(self, *, annotate=True, cmap="viridis", vmax=None, ax=None):
        """Draw the heatmap.

        Parameters
        ----------
        annotate : bool, default=True
            Write the value in each cell.
        cmap : str or Colormap, default="viridis"
            Colour map of the heatmap.
        vmax : float or None, default=None
            Top of the colour scale (e.g. shared by several displays); None
            uses the largest value.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : DisagreementDisplay
            The object, with ``ax_``, ``figure_``, ``im_``, ``text_`` and
            ``colorbar_`` set.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        import matplotlib.pyplot as plt

        matrix = np.asarray(self.matrix, dtype=np.float64)
        n = matrix.shape[0]
        if ax is None:
            size = min(3.0 + 0.6 * n, 10)
            fig, ax = plt.subplots(figsize=(size + 1.2, size), layout="constrained")
        else:
            fig = ax.figure
        label = (
            f"disagreement ({self.measure})"
            if self.kind == "methods"
            else "1 - ranking agreement"
        )
        if vmax is None:
            top = float(np.nanmax(matrix)) if matrix.size else 0.0
            vmax = top if top > 0 else 1.0
        self.im_, self.text_, self.colorbar_ = heatmap(
            ax,
            matrix,
            list(self.names),
            list(self.names),
            cmap=cmap,
            vmin=0.0,
            vmax=vmax,
            annotate=annotate,
            colorbar_label=label,
        )
        what = "explainers" if self.kind == "methods" else "faithfulness metrics"
        ax.set_title(f"Disagreement between {what}", fontsize="medium")
        self.ax_ = ax
        self.figure_ = fig
        return self
