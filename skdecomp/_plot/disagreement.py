"""Pairwise disagreement among explainers, or among faithfulness metrics."""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping

import numpy as np

from .._methods import comparison_methods, efficient_methods
from ._base import (
    as_attribution_dict,
    add_note,
    check_drawable,
    check_matplotlib_support,
    ensure_layout,
    explain_rows,
    fitted_explainer,
    heatmap,
    is_bunch_of,
)

__all__ = ["DisagreementDisplay"]


_EFFICIENT = tuple(efficient_methods())
# the exact methods compared by default, from PDP/Arch (none of a group's
# interactions) to occlusion (all of them)
_COMPARED = tuple(comparison_methods())


def _pairwise(attributions, measure, top_k, normalize, standard_errors=None):
    """(n, n) mean disagreement between the methods (0 on the diagonal).

    With the noise floor of each pair, as a second (n, n) matrix or None.
    """
    from .. import metrics

    if len(attributions) == 1:
        return np.zeros((1, 1)), None
    result = metrics.disagreement(
        attributions, measure=measure, top_k=top_k, normalize=normalize,
        standard_errors=standard_errors,
    )
    return result.pairwise, result.pairwise_noise_floor


def _errors_of(result, names, output):
    """Name -> standard errors of the Explanations in ``result``, or None.

    Exact Explanations give zeros; any entry that is not an Explanation
    (a plain array) makes the errors unknown, None.
    """
    from .._explanation import Explanation
    from ._base import select_output

    if not isinstance(result, Mapping):
        return None
    by_name = {str(k): v for k, v in result.items()}
    errors = {}
    for name in names:
        expl = by_name.get(name)
        if not isinstance(expl, Explanation):
            return None
        se = expl.standard_errors
        se = np.zeros(np.shape(expl.values)) if se is None else se
        errors[name] = select_output(se, output, "standard errors")
    return errors


def _check_scale(scale):
    if scale is None or (isinstance(scale, str) and scale in ("spread", "variance")):
        return scale
    if isinstance(scale, str) or not np.isfinite(scale) or scale <= 0:
        raise ValueError(
            "scale must be 'spread', 'variance', None or a positive number, got "
            f"{scale!r}."
        )
    return float(scale)


def _prediction_variance(explainer, X, output):
    """Var f: the variance of the explained output of the model over the rows X."""
    game = explainer.game_
    pred = np.asarray(game.predict(game.check_X(X)), dtype=np.float64)
    if pred.ndim == 2:
        pred = pred[:, 0 if output is None else output]
    return float(np.var(pred))


def _variance_from_explanations(result, output):
    """Var f over the explained rows, from efficient attributions, or None.

    Shapley values add up to ``f(x) - E f``, so with the base values they
    give the prediction at every explained row.
    """
    from .._explanation import Explanation

    if not isinstance(result, Mapping):
        return None
    for name in _EFFICIENT:
        expl = result.get(name)
        if not isinstance(expl, Explanation) or expl.ndim < 2:
            continue
        values = np.asarray(expl.values, dtype=np.float64)
        base = np.asarray(expl.base_values, dtype=np.float64)
        if values.ndim == 3:
            o = 0 if output is None else output
            values, base = values[..., o], base[..., o]
        pred = base + values.sum(axis=1)
        return float(np.var(pred))
    return None


class DisagreementDisplay:
    """Heatmap of pairwise disagreement among explainers or among metrics.

    Between explainers, each cell is the mean disagreement of two
    attributions over the explained rows (:func:`skdecomp.metrics.disagreement`;
    see :ref:`why_disagree`). By default (``scale="spread"``) the ``"l2"``
    disagreement is shown as in the report: the root mean square distance
    between two explanations of a row (summed over groups), as a percentage
    of the spread (standard deviation) of the prediction; 10 means the two
    explanations of a row differ by 10% of how much the model's output
    varies on the data. ``scale="variance"`` divides the mean squared
    difference by the variance of the prediction instead, and
    ``scale=None`` shows the raw values. Between faithfulness metrics, each
    cell is one minus the share of explainer pairs the two metrics order
    alike (:func:`skdecomp.metrics.metric_disagreement`): 0 when they rank
    the explainers the same way.

    When the explanations have standard errors (sampled methods), the
    ``"l2"`` colour bar shows their noise floor
    (:func:`skdecomp.metrics.disagreement`): a dashed line at the floor of
    the mean disagreement and a band over the floors of the pairs, on the
    scale of the cells. A cell at or under its pair's floor is a
    disagreement the noise of the estimates alone would give.

    Values below round-off (at most ``1e-12`` times the scale of the values)
    are drawn as 0; when every value is 0 the map is one uniform colour and
    the title says the explainers agree.

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
    variance : float or None, default=None
        The variance of the prediction the ``"l2"`` matrix was divided by;
        None when the matrix holds raw values.
    spread : bool, default=False
        Whether the matrix holds ``100 * sqrt(l2 / variance)``, the
        percentage of the prediction spread.
    noise_floor : ndarray of shape (n, n) or None, default=None
        The noise floor of each pair, on the scale of ``matrix``; None
        when unknown (exact values, plain arrays, other measures).

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the heatmap.
    figure_ : matplotlib Figure
        Figure holding the axes.
    im_ : matplotlib AxesImage
        The heatmap.
    text_ : ndarray of matplotlib Text
        Value annotations, or None values when not annotated (and on the
        diagonal).
    colorbar_ : matplotlib Colorbar
        The colour bar.

    See Also
    --------
    AttributionDisplay : The attributions themselves.
    skdecomp.plot.method_color : The colour of each method (of the tick labels).

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skdecomp.plot import DisagreementDisplay
    >>> phi = {"arch": np.array([[1.0, 0.0]]), "occlusion": np.array([[1.0, 1.0]])}
    >>> disp = DisagreementDisplay.from_result(phi, scale=2.0)
    >>> disp.matrix
    array([[0.  , 0.25],
           [0.25, 0.  ]])
    >>> disp.colorbar_.ax.get_ylabel()
    'disagreement / variance of the prediction'
    """

    def __init__(self, matrix, names, *, kind="methods", measure="l2", variance=None,
                 spread=False, noise_floor=None):
        self.matrix = matrix
        self.names = names
        self.kind = kind
        self.measure = measure
        self.variance = variance
        self.spread = spread
        self.noise_floor = noise_floor

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        methods=_COMPARED,
        kind="methods",
        measure="l2",
        top_k=None,
        metrics=None,
        groups=None,
        background=100,
        output=None,
        n_samples=1024,
        random_state=None,
        normalize="mean",
        scale="spread",
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
        normalize : {"mean", "sum"}, default="mean"
            How ``"l2"`` combines the groups, as in
            :func:`skdecomp.metrics.disagreement`.
        scale : "spread", "variance", None or float, default="spread"
            How the ``"l2"`` disagreement is shown. ``"spread"``: as in the
            report, the root mean square distance between two explanations
            of a row (summed over groups, whatever ``normalize``) as a
            percentage of the standard deviation of the model's output over
            the rows of X; ``"variance"``: divided by that variance (Var f);
            None: raw values; a number: divided by that number (e.g. Var f
            over other data). The other measures are unitless and never
            divided.
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
        scale = _check_scale(scale)
        explainer = fitted_explainer(estimator, X, groups, background, random_state)
        if kind == "methods":
            methods = [methods] if isinstance(methods, str) else list(methods)
            variance = (
                _prediction_variance(explainer, X, output)
                if isinstance(scale, str) and measure == "l2" else None
            )
            # the Explanations, with the standard errors of sampled methods
            explained = explainer.explain(X, methods=methods)
            return cls._build(
                explained, methods, measure, top_k, output, normalize, scale, variance,
                ax
            )
        attributions = explain_rows(explainer, X, methods, output)
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
        cls,
        result,
        *,
        methods=None,
        measure="l2",
        top_k=None,
        output=None,
        normalize="mean",
        scale="spread",
        ax=None,
    ):
        """Plot the disagreement of results already computed.

        Parameters
        ----------
        result : dict, Explanations, Decomposition or list of ndarray
            Method name -> attributions (e.g. the
            :class:`~skdecomp.Explanations` of
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
        normalize : {"mean", "sum"}, default="mean"
            How ``"l2"`` combines the groups, as in
            :func:`skdecomp.metrics.disagreement`.
        scale : "spread", "variance", None or float, default="spread"
            How the ``"l2"`` disagreement is shown. ``"spread"``: as in the
            report, ``100 * sqrt(l2 / Var f)`` with l2 summed over groups
            (whatever ``normalize``), the percentage of the prediction spread;
            ``"variance"``: divided by Var f,
            the variance of the prediction over the explained rows, known
            from Explanations holding Shapley values (they add up to
            ``f(x) - E f``), or from a Decomposition; when it is not known
            (plain arrays, a ``pairwise`` Bunch) the values are shown raw
            and the colour bar says so. None: raw values. A number: that
            number, e.g. Var f computed with the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; None creates a figure.

        Returns
        -------
        display : DisagreementDisplay
            The display, with the plot drawn.
        """
        check_matplotlib_support(f"{cls.__name__}.from_result")
        scale = _check_scale(scale)
        return cls._build(
            result, methods, measure, top_k, output, normalize, scale, None, ax
        )

    @classmethod
    def _build(cls, result, methods, measure, top_k, output, normalize, scale, variance,
               ax):
        # from_result with the variance of the prediction, when already known
        from .._decomposition import Decomposition

        if isinstance(result, Decomposition) and methods is None:
            methods = list(_COMPARED)
        if is_bunch_of(result, "agreement", "metric_names"):
            matrix = 1.0 - np.asarray(result["agreement"], dtype=np.float64)
            disp = cls(
                matrix, list(result["metric_names"]), kind="metrics", measure="ranking"
            )
            return disp.plot(ax=ax)
        divide = measure == "l2"
        spread = divide and scale == "spread"
        if spread:
            normalize = "sum"
        if variance is not None:
            scale = variance if divide else scale
        floor = None
        if is_bunch_of(result, "pairwise", "names"):
            # drawn as given, divided by a given number
            spread = False
            matrix = np.asarray(result["pairwise"], dtype=np.float64)
            if divide and result.get("pairwise_noise_floor") is not None:
                floor = np.asarray(result["pairwise_noise_floor"], dtype=np.float64)
            variance = scale if divide and not isinstance(scale, str) else None
            names = list(result["names"])
        else:
            if isinstance(scale, str) and divide:
                if isinstance(result, Decomposition):
                    pred = np.asarray(result.prediction, dtype=np.float64)
                    if pred.ndim == 2:
                        pred = pred[:, 0 if output is None else output]
                    scale = float(np.var(pred))
                else:
                    scale = _variance_from_explanations(result, output)
            attributions = as_attribution_dict(
                result, method_names=methods, output=output
            )
            matrix, floor = _pairwise(
                attributions, measure, top_k, normalize,
                _errors_of(result, list(attributions), output),
            )
            variance = scale if divide and not isinstance(scale, str) else None
            names = list(attributions)
        if variance is not None:
            matrix = matrix / (variance if variance > 0 else 1.0)
            floor = None if floor is None else floor / (variance if variance > 0 else 1.0)
            if spread:
                matrix = 100.0 * np.sqrt(np.clip(matrix, 0.0, None))
                floor = None if floor is None else 100.0 * np.sqrt(floor)
        disp = cls(matrix, names, measure=measure, variance=variance,
                   spread=spread and variance is not None, noise_floor=floor)
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

        # NaN (an undefined entry) is drawn light grey as missing
        matrix = check_drawable(self.matrix, "the disagreement matrix entries",
                                f"{type(self).__name__}.plot", allow_nan=True)
        n = matrix.shape[0]
        names = [str(x) for x in self.names]
        longest = max((len(x) for x in names), default=1)
        if ax is None:
            size = min(3.0 + 0.6 * n, 10)
            margin = min(0.07 * longest, 1.6)
            fig, ax = plt.subplots(
                figsize=(size + 1.4 + margin, size + margin), layout="constrained"
            )
        else:
            fig = ensure_layout(ax.figure)
        methods = self.kind == "methods"
        if not methods:
            label = "1 - ranking agreement"
        elif self.measure == "l2" and self.variance is not None and self.spread:
            label = "% of the prediction spread (root mean square)"
        elif self.measure == "l2" and self.variance is not None:
            label = "disagreement / variance of the prediction"
        elif self.measure == "l2":
            label = "disagreement (l2, not normalised)"
        else:
            label = f"disagreement ({self.measure})"
        floors = self._floors() if methods else None
        if floors is not None and vmax is None:
            # the colour scale reaches the floors, also above every cell
            off = matrix[~np.eye(n, dtype=bool)]
            off = off[np.isfinite(off)]
            vmax = max(float(off.max()) if off.size else 0.0, float(floors.max()))
        self.im_, self.text_, self.colorbar_, info = heatmap(
            ax,
            matrix,
            names,
            names,
            cmap=cmap,
            vmin=0.0,
            vmax=vmax,
            annotate=annotate,
            colorbar_label=label,
            mask_diagonal=n > 1,
            method_labels=methods,
        )
        what = "explainers" if methods else "faithfulness metrics"
        title = f"Disagreement between {what}"
        if info["zero"]:
            title += "\nnone: every value is 0 up to round-off"
        ax.set_title(title, fontsize="medium")
        add_note(fig, ax, info["key"])
        if floors is not None:
            self._draw_floor(floors)
        self.ax_ = ax
        self.figure_ = fig
        return self

    def _floors(self):
        """The positive noise floors of the pairs, or None."""
        if self.noise_floor is None or self.measure != "l2":
            return None
        floor = np.asarray(self.noise_floor, dtype=np.float64)
        n = floor.shape[0]
        floors = floor[np.triu_indices(n, 1)]
        floors = floors[np.isfinite(floors)]
        return floors if floors.size and floors.max() > 0 else None

    def _draw_floor(self, floors):
        """Noise floor on the colour bar: mean (dashed), band over the pairs."""
        from matplotlib.legend_handler import HandlerTuple
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        from matplotlib.patheffects import withStroke

        cax = self.colorbar_.ax
        # the floor of the mean disagreement: the mean of the pairs' floors on
        # the l2 scale, for the spread 100 * sqrt(l2 / Var f) as well
        raw = (floors / 100.0) ** 2 if self.spread else floors
        mean = float(raw.mean())
        mean = 100.0 * np.sqrt(mean) if self.spread else mean
        lo, hi = float(floors.min()), float(floors.max())
        band = {"facecolor": (1.0, 1.0, 1.0, 0.35), "edgecolor": "0.15",
                "hatch": "////", "lw": 0}
        line = {"color": "black", "ls": "--", "lw": 1.6,
                "path_effects": [withStroke(linewidth=3.2, foreground="white")]}
        handle = Line2D([], [], **line)
        if hi > lo:
            cax.axhspan(lo, hi, **band)
            handle = (Patch(**band), handle)
        cax.axhline(mean, **line)
        cax.legend(
            [handle], ["noise floor"], handler_map={tuple: HandlerTuple(ndivide=1)},
            loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize="small",
            frameon=False, handlelength=2.0, handleheight=1.0, borderaxespad=0.3,
        )
