"""Helpers shared by the Display classes.

matplotlib is imported lazily, inside functions, so that importing
skdecomp (or skdecomp.plot) never imports it.
"""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "check_matplotlib_support",
    "fitted_explainer",
    "explain_rows",
    "is_bunch_of",
    "panel_axes",
    "select_output",
    "as_attribution_dict",
]

_INSTALL_HINT = 'pip install "skdecomp[plot]"'


def check_matplotlib_support(caller_name):
    """Raise an ImportError naming the ``plot`` extra when matplotlib is missing.

    Parameters
    ----------
    caller_name : str
        Name of the function or method that needs matplotlib.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"{caller_name} requires matplotlib, which is not installed. Install "
            f"skdecomp with its plotting extra: {_INSTALL_HINT} (or pip install "
            "matplotlib)."
        ) from exc


def fitted_explainer(
    estimator,
    X,
    groups=None,
    background=100,
    random_state=None,
    *,
    explainer_params=None,
):
    """A fitted :class:`~skdecomp.Explainer` for a model or an explainer.

    A fitted Explainer is used as it is (``groups`` and ``background`` are
    then ignored); an unfitted one is fitted on X. Any other object is the
    fitted model to explain, wrapped in a new Explainer fitted on X.
    """
    from .._explainer import Explainer

    if isinstance(estimator, Explainer):
        try:
            check_is_fitted(estimator)
        except NotFittedError:
            estimator = estimator.fit(X)
        return estimator
    params = dict(explainer_params or {})
    return Explainer(
        estimator,
        groups=groups,
        background=background,
        random_state=random_state,
        **params,
    ).fit(X)


def explain_rows(explainer, X, methods, output=None):
    """Attributions of ``methods`` at the rows X, by a fitted Explainer.

    ``methods`` is one name or a sequence of names; the result is a dict
    method -> (n_samples, n_groups) array of ``output``, as
    :func:`as_attribution_dict` gives.
    """
    methods = [methods] if isinstance(methods, str) else list(methods)
    result = {m: e.values for m, e in explainer.explain(X, methods=methods).items()}
    return as_attribution_dict(result, method_names=methods, output=output)


def is_bunch_of(result, *keys):
    """Whether ``result`` is a dict-like result holding all of ``keys``."""
    return isinstance(result, Mapping) and all(key in result for key in keys)


def select_output(values, output, what="attributions"):
    """Drop the output axis of a multi-output array (the last one)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 3:
        if output is None:
            if values.shape[-1] != 1:
                raise ValueError(
                    f"{what} have {values.shape[-1]} outputs; choose one with "
                    "output=<index>."
                )
            output = 0
        values = values[..., output]
    return values


def as_attribution_dict(result, *, method_names=None, output=None):
    """Method name -> 2-D array (n_samples, n_groups) from the accepted results.

    ``method_names`` is None, one name or a sequence of names.
    """
    from .._decomposition import Decomposition
    from ..metrics import _as_rows

    if isinstance(method_names, str):
        method_names = [method_names]
    if isinstance(result, Decomposition):
        methods = ["shapley"] if method_names is None else list(method_names)
        return {m: select_output(result.attributions(m), output) for m in methods}
    if isinstance(result, Mapping):
        items = list(result.items())
        if method_names is not None:
            keys = [str(k) for k, _ in items]
            missing = [m for m in method_names if m not in keys]
            if missing:
                raise ValueError(f"methods {missing} are not in the result {keys}.")
            items = [(m, result[m]) for m in method_names]
    else:
        arrays = result if isinstance(result, (list, tuple)) else [result]
        names = (
            [f"explanation {i}" for i in range(len(arrays))]
            if method_names is None
            else list(method_names)
        )
        if isinstance(result, (list, tuple)) and len(names) != len(arrays):
            raise ValueError(
                f"{len(names)} method names for {len(arrays)} attribution arrays."
            )
        if not isinstance(result, (list, tuple)):
            names = names[:1]
        items = list(zip(names, arrays))
    out = {}
    for name, values in items:
        out[str(name)] = _as_rows(
            name,
            select_output(values, output),
            "expected (n_samples, n_groups) or (n_groups,).",
        )
    if not out:
        raise ValueError("No attributions to plot.")
    shapes = {v.shape for v in out.values()}
    if len(shapes) > 1:
        raise ValueError(
            f"attribution arrays must share one shape, got {sorted(shapes)}."
        )
    return out


def group_names_for(n_groups, group_names):
    if group_names is None:
        return [f"group {k}" for k in range(n_groups)]
    names = [str(g) for g in group_names]
    if len(names) != n_groups:
        raise ValueError(f"{len(names)} group names for {n_groups} groups.")
    return names


def panel_axes(ax, n_panels, *, figsize=None, sharey=False, ncols=None):
    """(figure, ndarray of axes) for ``n_panels`` panels.

    ``ax`` may be None (a new figure), one Axes (used for one panel, or
    split into a grid for several) or a sequence of ``n_panels`` Axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.gridspec import GridSpecFromSubplotSpec

    ncols = n_panels if ncols is None else ncols
    nrows = int(np.ceil(n_panels / ncols))
    if ax is None:
        fig, axes = plt.subplots(
            nrows,
            ncols,
            figsize=figsize,
            sharey=sharey,
            squeeze=False,
            layout="constrained",
        )
        axes = axes.ravel()
        for extra in axes[n_panels:]:
            extra.set_visible(False)
        return fig, axes[:n_panels]
    if isinstance(ax, (list, tuple, np.ndarray)):
        axes = np.asarray(ax, dtype=object).ravel()
        if axes.size != n_panels:
            raise ValueError(f"ax holds {axes.size} axes; {n_panels} are needed.")
        return axes[0].figure, axes
    if n_panels == 1:
        return ax.figure, np.asarray([ax], dtype=object)
    fig = ax.figure
    spec = GridSpecFromSubplotSpec(nrows, ncols, subplot_spec=ax.get_subplotspec())
    ax.set_axis_off()
    axes = []
    for i in range(n_panels):
        share = axes[0] if (sharey and axes) else None
        axes.append(fig.add_subplot(spec[i // ncols, i % ncols], sharey=share))
    return fig, np.asarray(axes, dtype=object)


def squeeze_axes(axes):
    """One Axes for one panel, else the ndarray of axes."""
    return axes[0] if len(axes) == 1 else axes


def heatmap(
    ax,
    matrix,
    row_names,
    col_names,
    *,
    cmap="viridis",
    vmin=None,
    vmax=None,
    annotate=True,
    fmt=".2g",
    colorbar=True,
    colorbar_label=None,
):
    """imshow with tick labels and optional value annotations."""
    import matplotlib.pyplot as plt

    matrix = np.asarray(matrix, dtype=np.float64)
    im = ax.imshow(
        matrix, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest"
    )
    ax.set_xticks(
        np.arange(len(col_names)),
        labels=col_names,
        rotation=45,
        ha="right",
        rotation_mode="anchor",
    )
    ax.set_yticks(np.arange(len(row_names)), labels=row_names)
    texts = np.empty(matrix.shape, dtype=object)
    if annotate:
        lo, hi = im.get_clim()
        mid = (lo + hi) / 2
        # rounding noise around 0 is written as 0
        scale = np.nanmax(np.abs(matrix)) if np.isfinite(matrix).any() else 0.0
        tiny = 1e-9 * scale
        for i in range(matrix.shape[0]):
            for j in range(matrix.shape[1]):
                value = matrix[i, j]
                color = "white" if (np.isfinite(value) and value < mid) else "black"
                if cmap not in ("viridis", "magma", "inferno", "plasma", "cividis"):
                    color = "black"
                shown = 0.0 if abs(value) <= tiny else value
                texts[i, j] = ax.text(
                    j,
                    i,
                    format(shown, fmt),
                    ha="center",
                    va="center",
                    color=color,
                    fontsize="small",
                )
    cbar = None
    if colorbar:
        cbar = plt.colorbar(im, ax=ax)
        if colorbar_label:
            cbar.set_label(colorbar_label)
    return im, texts, cbar
