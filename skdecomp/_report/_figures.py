"""The report's figures, as embedded PNG images."""

# SPDX-License-Identifier: BSD-3-Clause

import base64
import io

import numpy as np

from .._methods._registry import method_color, method_label
from ._common import INDEX_TERMS, TABLE_ROWS, _label
from ._story import between_games, between_methods


def _agreed_curve(plt, agreed):
    """Loss left after every merge, on the sample and on held-out rows."""
    merges = agreed["merges"]
    n = [merges[0]["n_groups"] + 1] + [h["n_groups"] for h in merges]
    fig, ax = plt.subplots(figsize=(7, 3.8))
    # the two curves often coincide: the held-out one is dashed with large open
    # markers, drawn below the solid in-sample one, so both stay visible
    curves = [("on the sample", agreed["initial_loss"], "loss_after",
               dict(marker="o", color="C0", linestyle="-", markersize=5, zorder=3))]
    if agreed.get("held_out_initial_loss"):
        curves.append(("on held-out rows", agreed["held_out_initial_loss"],
                       "held_out_loss_after",
                       dict(marker="s", color="C1", linestyle="--", markersize=9,
                            markerfacecolor="none", markeredgewidth=1.5, zorder=2)))
    for label, start, key, style in curves:
        values = [start] + [h[key] for h in merges]
        share = 100.0 * np.asarray(values, dtype=float) / (start or 1.0)
        ax.plot(n, share, label=label, **style)
    refused = [h["n_groups"] for h in merges if not h.get("accepted", True)]
    if refused:
        ax.axvspan(min(refused) - 0.5, min(refused) + 0.5, color="0.9", zorder=0,
                   label="merge refused")
    chosen = agreed.get("n_groups")
    if chosen is not None:
        ax.axvline(chosen, color="0.3", linestyle=":", linewidth=1.2,
                   label=f"chosen: {chosen} groups")
    ax.set_xlim(max(n) + 0.5, min(n) - 0.5)
    step = max(1, len(n) // 12)
    ax.set_xticks(n[::step])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("number of groups (merges go right)")
    ax.set_ylabel("interaction loss left, % of start")
    ax.set_title("What each AGREED merge buys", pad=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def _agreed_path(plt, agreed):
    """The interaction loss left against the largest group, along the merge path."""
    path = [p for p in agreed["path"] if p["remaining_share"] is not None]
    size = [p["largest_group"] for p in path]
    left = [100.0 * p["remaining_share"] for p in path]
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.plot(size, left, marker="o", color="C0", label="merge path")
    for p, x, y in zip(path, size, left):
        ax.annotate(str(p["n_groups"]), (x, y), textcoords="offset points",
                    xytext=(4, 4), fontsize=7, color="0.35")
    chosen = [p for p in path if p["chosen"]]
    if chosen:
        c = chosen[0]
        ax.plot([c["largest_group"]], [100.0 * c["remaining_share"]], ls="",
                marker="o", markersize=12, markerfacecolor="none",
                markeredgecolor="0.1", markeredgewidth=2,
                label=f"chosen: {c['n_groups']} groups")
    ax.set_ylim(bottom=-3)
    ax.set_xlabel("columns in the largest group")
    ax.set_ylabel("interaction loss left, % of start")
    ax.set_title("What coarser groups buy (numbers: groups)", pad=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def _heatmap(plt, values, labels, title, floor):
    """Annotated heatmap of percentages; the colour range starts at ``floor``.

    A matrix of round-off zeros is drawn in one colour, never stretched over
    the full colour range.
    """
    M = 100.0 * np.asarray(values, dtype=float)
    n = len(labels)
    fig, ax = plt.subplots(figsize=(max(4.5, 0.5 * n + 3.0), max(3.4, 0.42 * n + 1.6)))
    vmax = max(float(np.nanmax(M, initial=0.0)), floor)
    im = ax.imshow(M, vmin=0.0, vmax=vmax, cmap="viridis")
    for i in range(n):
        for j in range(n):
            v = M[i, j]
            if not np.isfinite(v):
                continue
            text = "0" if v == 0 else ("<0.1" if v < 0.1 else f"{v:.1f}")
            ax.text(j, i, text, ha="center", va="center", fontsize=7 if n > 6 else 8,
                    color="white" if v < 0.6 * vmax else "black")
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels(labels, rotation=35, ha="right", rotation_mode="anchor")
    ax.set_yticklabels(labels)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="% of the prediction spread")
    ax.set_title(title, pad=10)
    fig.tight_layout()
    return fig


def _drivers_figure(plt, part):
    """Mean absolute attribution of every method for the top groups."""
    top = part["order"][:TABLE_ROWS][::-1]
    methods = part["methods"]
    labels = [part["group_labels"][k] for k in top]
    fig, ax = plt.subplots(figsize=(8, 0.22 * len(top) * (1 + 0.2 * len(methods)) + 1.5))
    height = 0.8 / len(methods)
    y = np.arange(len(top))
    errors = part.get("importance_se") or {}
    for i, m in enumerate(methods):
        imp = np.asarray(part["importance"][m])[top]
        # sampled methods: the 95% interval of each mean |attribution|
        xerr = 1.96 * np.asarray(errors[m])[top] if m in errors else None
        ax.barh(y + ((len(methods) - 1) / 2 - i) * height, imp, height=height,
                label=method_label(m), color=method_color(m), xerr=xerr,
                error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "0.2"})
    xlabel = "mean |attribution| (units of the explained output)"
    if any(m in errors for m in methods):
        xlabel += "\nlines: 95% intervals of the sampled methods"
    return _finish_bars(fig, ax, labels, xlabel,
                        f"Mean |attribution| over {part['n_rows']} rows",
                        len(part["order"]))


def _sources_figure(plt, methods, games, columns):
    """Each column's part of the two disagreements, for the columns carrying most."""
    index = {c: k for k, c in enumerate(columns)}
    inter = np.zeros(len(columns))
    if methods and methods["parts"] is not None and methods.get("columns"):
        for c, v in zip(methods["columns"], methods["parts"]):
            if c in index:
                inter[index[c]] = v
    dep = np.asarray(games["parts"], dtype=float)
    top = np.argsort(-np.maximum(inter, dep), kind="stable")[:TABLE_ROWS][::-1]
    labels = [_label(c, [c], width=20) for c in np.asarray(columns)[top]]
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(top) + 1.5))
    y = np.arange(len(top))
    ax.barh(y + 0.2, 100.0 * inter[top], height=0.4, color="C0",
            label="between the methods\n(interactions)")
    if games["resolved"]:
        ax.barh(y - 0.2, 100.0 * dep[top], height=0.4, color="C1",
                label="between the games\n(dependence)")
    else:  # within the noise of its estimate: its parts would be noise
        ax.barh(y - 0.2, np.zeros(len(top)), height=0.4, color="C1",
                label="between the games:\nwithin the noise,\nnot drawn")
    return _finish_bars(fig, ax, labels,
                        "% of each disagreement (of its square; each colour adds up "
                        "to 100%)",
                        "Which columns carry each disagreement",
                        len(columns))


def _finish_bars(fig, ax, labels, xlabel, title, n):
    """Labels, title (with the top rows shown of n) and legend of a bar chart."""
    ax.set_yticks(np.arange(len(labels)))
    ax.set_yticklabels(labels)
    ax.set_xlabel(xlabel)
    shown = "" if n <= TABLE_ROWS else f" (top {TABLE_ROWS} of {n})"
    ax.set_title(f"{title}{shown}", pad=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def make_figures(results):
    """Figures embedded in the report (empty when matplotlib is missing).

    Parameters
    ----------
    results : dict
        What :func:`analyse` returns.

    Returns
    -------
    figures : dict
        By place in the report, a list of figures, each a dict with ``png``
        (the PNG image, base64) and ``alt`` (a description). No HTML: the
        page lays them out.
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    figures = {}
    for key, part in results["partitions"].items():
        if part.get("constant_output"):
            continue  # every attribution is 0: the page says so in words
        figures[f"drivers:{key}"] = [_png(_drivers_figure(plt, part),
                                          "Mean absolute attribution of every method")]
        # one method, or a constant output, has no distance to draw
        if len(part["methods"]) > 1 and not part.get("constant_output"):
            names = [method_label(m) for m in part["methods"]]
            figures[f"agreement:{key}"] = [_png(_heatmap(
                plt, part["disagreement_rms"], names,
                "How far apart the methods' explanations are", floor=5.0),
                "How far apart the methods' explanations are")]
    inter = results.get("interactions")
    if inter and inter["top_pairs"]:
        M = np.array(inter["strength"], dtype=float)
        np.fill_diagonal(M, np.nan)
        labels = [_label(c, [c], width=20) for c in inter["columns"]]
        figures["interactions"] = [_png(_heatmap(
            plt, M, labels, "Interaction strength of column pairs", floor=5.0),
            "Interaction strength of column pairs")]
    if inter and inter.get("index"):
        fig = _index_figure(inter["index"])
        if fig is not None:
            figures["interaction_terms"] = [_png(
                fig, "Strongest terms of the interaction index (k-SII), mean absolute "
                "value over the explained rows")]
    sources = results.get("sources")
    games = between_games(results)
    if sources and games and sum(games["parts"]) > 0:
        methods = between_methods(results)
        figures["sources"] = [_png(_sources_figure(plt, methods, games, sources["columns"]),
                                   "Each column's part of the disagreement between the "
                                   "methods and of that between the games")]
    agreed = results.get("agreed")
    if (agreed and agreed["initial_loss"]
            and len([p for p in agreed.get("path") or []
                     if p["remaining_share"] is not None]) > 1):
        figures["agreed_path"] = [_png(_agreed_path(plt, agreed),
                                       "Interaction loss left against the size of the "
                                       "largest group, along the AGREED merge path")]
    if agreed and agreed["merges"] and agreed["initial_loss"]:
        figures["agreed_curve"] = [_png(_agreed_curve(plt, agreed),
                                        "Interaction loss left after every AGREED merge")]
    return figures


def _index_figure(index):
    """The strongest terms of the interaction index, or None when all are round-off."""
    from .._explanation import InteractionExplanation
    from .._plot.interaction import InteractionDisplay

    values = np.asarray(index["values"], dtype=float)
    if values.shape[0] == 0 or values.shape[1] < 2:
        return None
    res = InteractionExplanation(
        values, [tuple(t) for t in index["terms"]],
        np.asarray(index["base_values"], dtype=float),
        [_label(g, [g], width=20) for g in index["groups"]], index["index"], 2)
    return InteractionDisplay.from_result(res, kind="terms", top=INDEX_TERMS).figure_


def _png(fig, alt):
    """A figure as a base64 PNG and its description; the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return {"png": base64.b64encode(buf.getvalue()).decode("ascii"), "alt": alt}
