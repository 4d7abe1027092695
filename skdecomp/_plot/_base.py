"""Helpers shared by the Display classes.

matplotlib is imported lazily, inside functions, so that importing
skdecomp (or skdecomp.plot) never imports it.
"""

# SPDX-License-Identifier: BSD-3-Clause

import re
import zlib
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._methods import METHOD_COLORS as _REGISTRY_COLORS

__all__ = [
    "check_drawable",
    "METHOD_COLORS",
    "method_color",
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


def check_drawable(values, what, caller, *, allow_nan=False):
    """Refuse empty or non-finite values before they are drawn.

    Matplotlib draws NaN as a gap and infinity off the axes, and scales
    colour bars and bar lengths from the rest, so a plot of them looks like
    numbers. ``allow_nan`` keeps NaN for displays that mark it as missing
    (heatmaps draw it light grey).

    Parameters
    ----------
    values : array-like
    what : str
        What the values are, for the message.
    caller : str
        ``Display.method``, for the message.
    allow_nan : bool, default=False

    Returns
    -------
    values : ndarray of float64

    Raises
    ------
    ValueError
        If ``values`` is empty, or holds NaN (unless allowed) or infinity.
    TypeError
        If ``values`` are not numbers.
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{caller}: {what} must be numbers, got {values!r:.80}.") from None
    if arr.size == 0:
        raise ValueError(
            f"{caller}: nothing to draw, {what} are empty (shape {arr.shape}). "
            "Explain at least one row of at least one group first."
        )
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        kind = "infinite" if allow_nan else "NaN or infinite"
        raise ValueError(
            f"{caller}: {int(bad.sum())} {kind} value(s) in {what} (first at "
            f"position {first}: {arr[first]}), which a plot would draw as if they "
            "were numbers. Drop those rows or fix the model's output there "
            "before plotting."
        )
    return arr


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
    from ..metrics._disagreement import _as_rows

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


def ensure_layout(fig):
    """Give a figure without a layout engine constrained layout.

    Labels, colour bars and legends then get room inside the figure instead
    of being clipped at its edges.
    """
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    return fig


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
        return ensure_layout(axes[0].figure), axes
    if n_panels == 1:
        return ensure_layout(ax.figure), np.asarray([ax], dtype=object)
    fig = ensure_layout(ax.figure)
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



# -- one visual language ----------------------------------------------------------
#: Fixed colour of every attribution method, used by every Display (and the
#: report), from the method registry. Aliases share the colour of their
#: method. Colour-blind safe (Okabe and Ito, then Tol's muted colours).
METHOD_COLORS = MappingProxyType(dict(_REGISTRY_COLORS))
# names outside the palette get one of these, fixed by the name
_OTHER_COLORS = ("#44AA99", "#117733", "#AA4499", "#DDCC77", "#661100", "#6699CC")

#: Colours of positive and negative attributions (the ends of "RdBu_r", the
#: colour map of the saliency maps).
POSITIVE_COLOR = "#B2182B"
NEGATIVE_COLOR = "#2166AC"
#: Colour of points without a value on a scale (groups of several columns,
#: categorical columns, missing values).
NEUTRAL_COLOR = "#A0A0A0"
#: Colour map of feature values, low to high.
FEATURE_CMAP = "cool"
#: Values smaller than this times the scale of the output are round-off.
ROUND_OFF = 1e-12


def method_color(name):
    """The colour of an attribution method in every plot of skdecomp.

    Each method of :meth:`Explainer.explain <skdecomp.Explainer.explain>`
    has a fixed colour (:data:`METHOD_COLORS`; an alias, e.g. ``"pfi"``,
    shares its method's colour), so a method looks the same in every
    Display and in the report. Other names get a colour fixed by the name.

    Parameters
    ----------
    name : str
        Name of the method, e.g. ``"shapley"``.

    Returns
    -------
    color : str
        The colour, as a hex string ``"#RRGGBB"``.

    Examples
    --------
    >>> from skdecomp.plot import method_color
    >>> method_color("shapley")
    '#0072B2'
    >>> method_color("pfi") == method_color("occlusion")
    True
    """
    key = str(name).strip().lower()
    if key in METHOD_COLORS:
        return METHOD_COLORS[key]
    return _OTHER_COLORS[zlib.crc32(key.encode("utf-8")) % len(_OTHER_COLORS)]


def round_off(values, scale=1.0):
    """``values`` with the round-off (``|x| <= 1e-12 * scale``) set to 0."""
    values = np.array(values, dtype=np.float64)
    scale = 1.0 if scale is None or not np.isfinite(scale) or scale <= 0 else scale
    values[np.abs(values) <= ROUND_OFF * scale] = 0.0
    return values


def format_value(value):
    """A short form of a number (``0.0617`` -> ``"0.062"``) or of a category."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not np.isfinite(v):
        return "missing" if np.isnan(v) else str(v)
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    if abs(v) >= 1e4 or abs(v) < 1e-3:
        return f"{v:.3g}"
    return f"{v:.3f}".rstrip("0").rstrip(".")


def format_signed(value):
    """A number with its sign, ``+0.12`` or ``-3.4``."""
    return f"{float(value):+.3g}"


_PIECES = re.compile(r"[^:+,;/ _-]+[:+,;/ _-]*|[:+,;/ _-]+")


def wrap_name(name, width):
    """Lines of at most ``width`` characters, broken after separators (``:`` ...)."""
    lines, line = [], ""
    for piece in _PIECES.findall(str(name)):
        while len(piece) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line)
            line = piece
        else:
            line += piece
    if line:
        lines.append(line)
    return [x.strip() for x in lines] or [""]


def fit_labels(names, *, width=20, max_lines=2):
    """Tick labels that fit: names, wrapped names, or shortened names with a key.

    A name longer than ``width`` characters is wrapped after its separators
    (``"age:bmi:s5:bp:\\ns1:s6:sex"``); one needing more than ``max_lines``
    lines is shortened to its start and a number, ``"age:bmi:… [1]"``, and
    the key ``"[1] age:bmi:..."`` (the full name) is returned to be shown
    with the plot.

    Returns
    -------
    labels : list of str
    key : list of str
        One line per shortened name.
    """
    labels, key = [], []
    for name in names:
        name = str(name)
        if len(name) <= width:
            labels.append(name)
            continue
        lines = wrap_name(name, width)
        if len(lines) <= max_lines:
            labels.append("\n".join(lines))
            continue
        tag = f"[{len(key) + 1}]"
        head = lines[0][: max(width - len(tag) - 2, 1)].rstrip(":+,;/ _-")
        labels.append(f"{head}\u2026 {tag}")
        key.append(f"{tag} {name}")
    return labels, key


def add_note(fig, ax, lines, *, handles=None, title=None):
    """A legend under the plot, e.g. the key of shortened labels.

    ``lines`` are wrapped to the width of the figure. In a figure with
    constrained layout the legend sits outside, under the axes, and the
    layout makes room for it; otherwise it hangs under ``ax``.
    """
    import textwrap

    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.patches import Patch

    if not lines:
        return None
    chars = max(int(fig.get_figwidth() * 12), 30)
    text = [textwrap.fill(line, chars, subsequent_indent="    ") for line in lines]
    if handles is None:
        handles = [Patch(visible=False) for _ in text]
        style = {"handlelength": 0, "handletextpad": 0}
    else:
        style = {}
    common = dict(fontsize="small", frameon=False, title=title, ncols=1, **style)
    if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        legend = fig.legend(handles, text, loc="outside lower center", **common)
    else:
        legend = ax.legend(
            handles, text, loc="upper center", bbox_to_anchor=(0.5, -0.12), **common
        )
        ax.add_artist(legend)
    for t in legend.get_texts():
        t.set_horizontalalignment("left")
    return legend


def style_axes(ax):
    """The common look of curve and bar panels: no top and right frame."""
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)


def color_ticklabels(labels, names):
    """Colour the tick labels of methods with their colours."""
    for label, name in zip(labels, names):
        label.set_color(method_color(name))


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
    scale=1.0,
    mask_diagonal=False,
    method_labels=False,
):
    """imshow with tick labels that fit and optional value annotations.

    Values at most ``1e-12 * scale`` in size are round-off: drawn and written
    as 0. When every value is 0, the colour scale is [0, 1], so the map is one
    uniform colour, and ``info["zero"]`` is True for the caller to say so.
    With ``mask_diagonal`` the diagonal (0 by definition) is drawn light grey
    and left unwritten. Long names are wrapped or shortened (see
    :func:`fit_labels`); ``info["key"]`` lists the shortened ones.

    Returns
    -------
    im, texts, colorbar, info
    """
    import matplotlib.pyplot as plt

    matrix = round_off(matrix, scale)
    n_rows, n_cols = matrix.shape
    mask = ~np.isfinite(matrix)
    if mask_diagonal and n_rows == n_cols:
        mask |= np.eye(n_rows, dtype=bool)
    shown = matrix[~mask]
    zero = shown.size == 0 or bool(np.all(shown == 0))
    if vmin is None:
        vmin = min(float(shown.min()), 0.0) if shown.size else 0.0
    if vmax is None:
        vmax = float(shown.max()) if shown.size else 1.0
    if zero or vmax <= vmin:
        vmax = vmin + 1.0
    colormap = plt.get_cmap(cmap).with_extremes(bad="0.93")
    im = ax.imshow(
        np.ma.masked_array(matrix, mask=mask),
        cmap=colormap,
        vmin=vmin,
        vmax=vmax,
        aspect="auto",
        interpolation="nearest",
    )
    row_labels, row_key = fit_labels(row_names, width=18)
    col_labels, col_key = fit_labels(col_names, width=18)
    key = list(dict.fromkeys(row_key + col_key))
    rotate = max((len(x) for x in col_labels), default=0) > 3
    ax.set_xticks(
        np.arange(n_cols),
        labels=col_labels,
        rotation=45 if rotate else 0,
        ha="right" if rotate else "center",
        rotation_mode="anchor",
    )
    ax.set_yticks(np.arange(n_rows), labels=row_labels)
    if method_labels:
        color_ticklabels(ax.get_xticklabels(), col_names)
        color_ticklabels(ax.get_yticklabels(), row_names)
    texts = np.empty(matrix.shape, dtype=object)
    if annotate:
        for i in range(n_rows):
            for j in range(n_cols):
                if mask[i, j]:
                    continue
                value = matrix[i, j]
                r, g, b, _ = colormap(im.norm(value))
                light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5
                texts[i, j] = ax.text(
                    j,
                    i,
                    format(value, fmt),
                    ha="center",
                    va="center",
                    color="black" if light else "white",
                    fontsize="small",
                )
    cbar = None
    if colorbar:
        cbar = plt.colorbar(im, ax=ax)
        if colorbar_label:
            # as long as the colour bar at most: wrapped to its height
            fig = ax.figure
            inches = ax.get_position().height * fig.get_figheight()
            chars = max(int(inches * 72 / 6.5), 12)
            cbar.set_label("\n".join(wrap_name(colorbar_label, chars)))
    return im, texts, cbar, {"zero": zero, "key": key}
