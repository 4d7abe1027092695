"""The image report's figures: every photo with its maps, as embedded PNG images.

Drawn from the analysis' arrays (the photo, its label map and the maps)
with :class:`~skdecomp.plot.SaliencyDisplay`, which calls no model.
"""

# SPDX-License-Identifier: BSD-3-Clause

import base64
import io

from .._methods._registry import method_color, method_label


def _png(fig, alt):
    """A figure as a base64 PNG and its description; the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return {"png": base64.b64encode(buf.getvalue()).decode("ascii"), "alt": alt}


def _retitle(display, entry, methods, title):
    """Panel titles: the photo and its class, then each map with its label and SRG."""
    axes = display.axes_
    axes[0].set_title(title, fontsize="small")
    for ax, m in zip(axes[1:], methods):
        srg = (entry["hierarchical"] if m not in entry["maps"] else entry["maps"][m])["srg"]
        ax.set_title(f"{method_label(m)}\nSRG {srg:.2f}", fontsize="small",
                     color=method_color(m))


def _fewer_ticks(display, label=None):
    """At most four ticks on every colour bar, so that small numbers do not overlap."""
    bars = {id(b): b for b in [display.colorbar_, *display.colorbars_.values()]
            if b is not None}
    for bar in bars.values():
        bar.ax.locator_params(nbins=4)
        if label is not None:
            bar.set_label(label)


def photo_figures(results, arrays):
    """Per photo, its group maps and its pixel map (empty without matplotlib).

    Parameters
    ----------
    results : dict
        What :func:`~skdecomp._report._image_analysis.analyse_photos` returns.
    arrays : list of dict
        Its arrays, one per photo.

    Returns
    -------
    figures : dict
        ``"maps:i"`` and ``"pixels:i"`` (i from 0) -> a list of figures, each
        a dict with ``png`` (base64) and ``alt``.
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
    except ImportError:
        return {}
    from .._plot.saliency import SaliencyDisplay

    figures = {}
    for i, (entry, arr) in enumerate(zip(results["photos"], arrays)):
        methods = list(entry["methods"])
        photo = arr["photo"]
        image = photo[..., 0] if photo.shape[-1] == 1 else photo
        disp = SaliencyDisplay.from_result(image, arr["label_map"],
                                           {m: arr["attributions"][m] for m in methods})
        _retitle(disp, entry, methods,
                 f"{entry['file']}\n{entry['class_name']} "
                 f"({100 * entry['probability']:.0f}%), {entry['agreed']['n_groups']} "
                 "groups")
        _fewer_ticks(disp)
        disp.figure_.suptitle("Each method's map over AGREED's groups (red: for the "
                              "class, blue: against)", fontsize="medium")
        figures[f"maps:{i}"] = [_png(disp.figure_, f"{entry['file']}: the photo and "
                                     "each method's map over AGREED's groups")]
        h = entry["hierarchical"]
        disp = SaliencyDisplay.from_result(image, None, {h["method"]: arr["heatmap"]})
        _retitle(disp, entry, [h["method"]], f"{entry['file']}")
        _fewer_ticks(disp, "value per pixel")
        disp.figure_.suptitle(f"{h['label']} map per pixel, {h['budget']} evaluations",
                              fontsize="medium")
        figures[f"pixels:{i}"] = [_png(disp.figure_, f"{entry['file']}: the photo and "
                                       f"its {h['label']} map per pixel")]
    return figures
