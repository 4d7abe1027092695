"""The image report's HTML page, from a Jinja2 template with autoescaping.

It reads the results of
:func:`~skdecomp._report._image_analysis.analyse_photos` and the figures of
:func:`~skdecomp._report._image_figures.photo_figures` only, turns them into
plain strings (the context) and lays them out with ``templates/images.html``
in the tabular report's environment: autoescaping on, nothing marked safe,
so a file or class name reaches the page as text.
"""

# SPDX-License-Identifier: BSD-3-Clause

from .._methods._registry import REGISTRY, method_label
from ._common import CLOSE, NOTICEABLE, _duration
from ._page import _environment, _table


def _pct(share):
    if share is None:
        return "-"
    if 0 < abs(share) < 0.001:
        return "below 0.1%"
    return f"{100 * share:,.0f}%" if abs(share) >= 0.095 else f"{100 * share:.1f}%"


def _preprocess(p):
    if p == "none":
        return "none (the network scales its input itself)"

    def text(v):
        return ", ".join(f"{x:g}" for x in v) if isinstance(v, (list, tuple)) else f"{v:g}"

    return f"(pixel − mean) / std with mean {text(p['mean'])} and std {text(p['std'])}"


def _maps_table(entry):
    """Every map of a photo with its SRG and the AUCs behind it, best first."""
    rows = []
    h = entry["hierarchical"]
    maps = [(m, v, "AGREED's groups") for m, v in entry["maps"].items()]
    maps.append((h["method"], h, f"pixels ({h['budget']} evaluations)"))
    best = max(v["srg"] for _, v, _ in maps)
    for m, v, over in sorted(maps, key=lambda t: -t[1]["srg"]):
        rows.append([method_label(m) + (" (highest)" if v["srg"] == best else ""), over,
                     f"{v['srg']:.3f}", f"{v['insertion_auc']:.3f}",
                     f"{v['deletion_auc']:.3f}"])
    t = _table(["map", "over", "SRG", "insertion AUC", "deletion AUC"], rows)
    for row in t["rows"]:
        for cell in row[2:]:
            cell["num"] = True
    return t


def _distance_table(entry):
    """The distance of every pair of group maps, with its noise floor."""
    a = entry["agreement"]
    methods = entry["methods"]
    if a["pairwise"] is None:
        return None
    floor = a["pairwise_noise_floor"]
    rows = []
    for i, m in enumerate(methods):
        row = [method_label(m)]
        for j in range(len(methods)):
            if i == j:
                row.append("")
                continue
            text = _pct(a["pairwise"][i][j])
            if floor is not None and floor[i][j] > 0:
                text += f" (noise {_pct(floor[i][j])})"
            row.append(text)
        rows.append(row)
    t = _table([""] + [method_label(m) for m in methods], rows)
    for row in t["rows"]:
        for cell in row[1:]:
            cell["num"] = True
    return t


def _photo(i, entry, figures):
    a = entry["agreement"]
    top = ", ".join(f"{t['class_name']} {_pct(t['probability'])}" for t in entry["top"])
    sampled = [method_label(m) for m in entry["methods"]
               if REGISTRY[m].kind == "sampled"]
    return {
        "id": f"photo-{i}",
        "file": entry["file"],
        "heading": f"{entry['file']}: {entry['class_name']} ({_pct(entry['probability'])})",
        "top": top,
        "verdict": list(entry["verdict"]),
        "maps": _maps_table(entry),
        "distances": _distance_table(entry),
        "distance": _pct(a["distance"]),
        "noise_floor": _pct(a["noise_floor"]),
        "rank": f"{a['rank_correlation']:.2f}",
        "sampled": ", ".join(sampled),
        "n_samples": f"{entry['n_samples']:,}",
        "n_groups": entry["agreed"]["n_groups"],
        "evaluations": f"{entry['evaluations']:,}",
        "seconds": _duration(entry["seconds"]),
        "change": f"{100 * abs(entry['change']):.1f}",
        "blurred": _pct(entry["blurred_probability"]),
        "figures": {k: figures.get(f"{k}:{i}", []) for k in ("maps", "pixels")},
    }


def image_page_context(results, figures=None, title="skdecomp image report"):
    """Everything ``templates/images.html`` shows, as plain strings and lists.

    Parameters
    ----------
    results : dict
        What :func:`~skdecomp._report._image_analysis.analyse_photos` returns,
        with ``seconds`` (the wall time).
    figures : dict or None, default=None
        What :func:`~skdecomp._report._image_figures.photo_figures` returns.
    title : str, default="skdecomp image report"

    Returns
    -------
    context : dict
    """
    figures = figures or {}
    photos = [_photo(i, e, figures) for i, e in enumerate(results["photos"])]
    H, W, C = results["input_shape"]
    evaluations = sum(e["evaluations"] for e in results["photos"])
    est = results["estimate"]
    sections = [{"id": "verdict", "heading": "In short"},
                {"id": "srg", "heading": "What SRG is"}]
    sections += [{"id": p["id"], "heading": p["heading"], "photo": p} for p in photos]
    sections.append({"id": "method", "heading": "How the maps were made"})
    return {
        "title": str(title),
        "model": str(results["model"]),
        "size": f"{H}x{W}",
        "channels": "RGB" if C == 3 else "grey",
        "preprocess": _preprocess(results["preprocess"]),
        "output": ("the softmax probability" if results["output"] == "probability"
                   else "the network's output as it is"),
        "rise": "rise" in results["methods"],
        "class_names": bool(results["class_names"]),
        "n_photos": len(photos),
        "duration": _duration(results.get("seconds", 0.0)),
        "evaluations": f"{evaluations:,}",
        "estimate": f"{est['evaluations_per_photo']:,}",
        "per_eval": f"{1000 * est['seconds_per_evaluation']:.1f}",
        "methods": ", ".join(method_label(m) for m in results["methods"]),
        "hierarchical": method_label("owen"),
        "budget": f"{results['budget']:,}",
        "steps": results["srg_steps"],
        "close": f"{100 * CLOSE:.0f}%",
        "noticeable": f"{100 * NOTICEABLE:.0f}%",
        "verdict": list(results.get("verdict") or []),
        "sections": sections,
    }


def render_image_html(results, figures=None, title="skdecomp image report"):
    """The image report as one self-contained HTML page; every string is escaped.

    Parameters
    ----------
    results : dict
    figures : dict or None, default=None
    title : str, default="skdecomp image report"

    Returns
    -------
    page : str
    """
    template = _environment().get_template("images.html")
    return template.render(**image_page_context(results, figures, title))
