"""The report's HTML page, from Jinja2 templates with autoescaping.

The page reads the results of :func:`~skdecomp._report.analyse` and the
figures of :func:`~skdecomp._report.make_figures` only. This module turns them
into plain strings and numbers (the context); the templates in ``templates/``
lay them out. Autoescaping is on for every template and no value is marked
safe, so no string of the user's table reaches the page unescaped.
"""

# SPDX-License-Identifier: BSD-3-Clause

import functools
import re

import numpy as np

from .._methods._registry import REGISTRY, canonical, method_label
from ._common import (
    CLOSE,
    NOTICEABLE,
    REGIONS_HELP,
    ROUND_OFF,
    TABLE_ROWS,
    IMPUTERS,
    _agreement_words,
    _duration,
)
from ._story import GAME_NAMES, between_games, between_methods, compare
from ._story import pct as _pct

#: merges listed in the AGREED table
MERGE_ROWS = 10
#: the page's sections, in order: (id, heading); a section is left out when
#: the results have nothing for it
SECTIONS = (
    ("data-checks", "Data checks"),
    ("verdict", "In short"),
    ("model", "The model"),
    ("drivers", "What drives the predictions"),
    ("agreement", "Do the explanation methods agree?"),
    ("sources", "Where the disagreement comes from"),
    ("interactions", "Which columns interact"),
    ("regions", "Regions where the columns do not interact"),
    ("agreed", "AGREED: groups of columns the methods agree on"),
)
_STOP_REASONS = {
    "held_out": "the next merge did not lower the interaction loss of held-out rows "
    "by more than its sampling error and the price of a coarser explanation",
    "rel_tol": "the interaction loss fell below the tolerance",
    "n_groups": "the requested number of groups was reached",
    "max_group_size": "every further merge would exceed the largest group size",
}
#: ``--drop COLUMN`` in a message, shown as code
_DROP = re.compile(r"(--drop [^\s;,]+?)(?=[.;,]?(?:\s|$))")


@functools.lru_cache(maxsize=1)
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(
        loader=PackageLoader("skdecomp._report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _num(v, fmt="{:.3g}"):
    """A number for a table; exact zeros (and round-off set to 0) show as 0."""
    return "0" if v == 0 else fmt.format(v)


def _table(header, rows, n_more=0, what="rows"):
    """A table as plain data: floats become right-aligned numbers."""
    return {
        "header": [str(h) for h in header],
        "rows": [
            [{"text": _num(v), "num": True} if isinstance(v, float)
             else {"text": str(v), "num": False} for v in row]
            for row in rows
        ],
        "more": n_more if n_more > 0 else 0,
        "what": what,
    }


def _segments(message):
    """A message as (text, is_code) pieces: ``--drop COLUMN`` is shown as code."""
    pieces = _DROP.split(message)
    return [{"text": p, "code": i % 2 == 1} for i, p in enumerate(pieces) if p]


def _method_list(methods):
    return ", ".join(method_label(m) for m in methods)


def _drivers_table(part):
    imp = part["importance"][part["main_method"]]
    total = sum(imp) or 1.0
    single = all(len(g) == 1 for g in part["groups"])
    header = ["", "column" if single else "group"]
    if not single:
        header.append("columns")
    header += [f"mean |{method_label(part['main_method'])}|", "share"]
    if "direction" in part:
        header.append("effect on the prediction")
    rows = []
    for rank, k in enumerate(part["order"][:TABLE_ROWS], 1):
        row = [str(rank), part["group_names"][k] if single else part["group_labels"][k]]
        if not single:
            row.append(", ".join(part["groups"][k]))
        row += [float(imp[k]), _pct(imp[k] / total)]
        if "direction" in part:
            row.append(part["direction"][k])
        rows.append(row)
    return _table(header, rows, len(part["order"]) - TABLE_ROWS,
                  "columns" if single else "groups")


def _methods_table(part):
    rows = [
        [part["group_labels"][k]]
        + [float(part["importance"][m][k]) for m in part["methods"]]
        for k in part["order"][:TABLE_ROWS]
    ]
    what = "columns" if all(len(g) == 1 for g in part["groups"]) else "groups"
    return _table([""] + [method_label(m) for m in part["methods"]], rows,
                  len(part["order"]) - TABLE_ROWS, what)


def _ties(part, methods=None, limit=4):
    """Sentences naming neighbours in a sampled method's ranking that sampling cannot order.

    Two groups next to each other in the ranking by mean |attribution| cannot
    be told apart when their difference is within 2 standard errors (that of
    each mean bounded by the mean standard error over the rows).
    """
    out = []
    errors = part.get("importance_se") or {}
    for m in part["methods"] if methods is None else methods:
        if m not in errors:
            continue
        imp, se = np.asarray(part["importance"][m]), np.asarray(errors[m])
        order = np.argsort(-imp, kind="stable")[:TABLE_ROWS]
        pairs = [
            (a, b) for a, b in zip(order[:-1], order[1:])
            if imp[a] > 0 and abs(imp[a] - imp[b]) <= 2 * np.hypot(se[a], se[b])
        ]
        names = part["group_labels"]
        for a, b in pairs[:limit]:
            out.append(
                f"{method_label(m)}: {names[a]} and {names[b]} cannot be told apart "
                "at this budget (their difference is within 2 standard errors)."
            )
        if len(pairs) > limit:
            out.append(f"{method_label(m)}: {len(pairs) - limit} more such pairs "
                       "further down its ranking.")
    return out


def _agreement(part, what):
    """The agreement of the methods over one partition, in words and numbers."""
    methods = part["methods"]
    rms = part["disagreement_rms"]
    pairs = sorted(
        (rms[a][b], method_label(methods[a]), method_label(methods[b]))
        for a in range(len(methods)) for b in range(a + 1, len(methods))
    )
    mean = part["mean_disagreement_rms"]
    if part.get("constant_output"):
        words = ("have nothing to disagree on: the model predicts a constant on these "
                 "rows")
    elif mean is None:
        words = (f"cannot be compared: only {_method_list(methods)} was run, and "
                 "there is no other explanation to compare it with")
    else:
        words = _agreement_words(mean)
    out = {
        "what": what,
        "methods": _method_list(methods),
        "single": mean is None or bool(part.get("constant_output")),
        "words": words,
        "close": f"{100 * CLOSE:.0f}%",
        "noticeable": f"{100 * NOTICEABLE:.0f}%",
        "closest": None,
        "farthest": None,
    }
    if len(pairs) > 1:
        out["closest"] = {"pair": f"{pairs[0][1]} and {pairs[0][2]}",
                          "value": _pct(pairs[0][0])}
        out["farthest"] = {"pair": f"{pairs[-1][1]} and {pairs[-1][2]}",
                           "value": _pct(pairs[-1][0])}
    out["above_spread"] = bool(pairs) and pairs[-1][0] > 1.0
    return out


def _diff(before, after):
    return None if before is None or after is None else before - after


def _share(value, total):
    """A loss decrease as a percentage of the initial loss; round-off shows as 0.

    A decrease below 0 is a loss that rose: it says so instead of printing a
    negative share.
    """
    if value is None or not total:
        return "-"
    share = 100.0 * value / total
    if share <= -0.05:
        return f"none (rose by {-share:.1f}%)"
    return "0%" if abs(share) < 0.05 else f"{share:.1f}%"


def _merged(columns):
    """One side of a merge: a column, or a group of columns in parentheses."""
    if isinstance(columns, str):
        return columns
    return columns[0] if len(columns) == 1 else f"({', '.join(columns)})"


def _agreed(a, agreed=None):
    """What AGREED merged and why it stopped, as plain data."""
    n_columns = a["n_columns"]
    out = {"state": "merged", "n_columns": n_columns, "merges": None}
    if a["merges"] and a["initial_loss"]:
        rows = [[" + ".join(_merged(g) for g in h.get("columns", h["names"])),
                 str(h["n_groups"]),
                 _share(h["loss_before"] - h["loss_after"], a["initial_loss"]),
                 _share(_diff(h["held_out_loss_before"], h["held_out_loss_after"]),
                        a.get("held_out_initial_loss")),
                 "yes" if h.get("accepted", True)
                 else "no: did not pay on held-out rows"]
                for h in a["merges"][:MERGE_ROWS]]
        out["merges"] = _table(["merged", "groups after", "loss removed",
                                "held-out loss removed", "kept"], rows,
                               len(a["merges"]) - MERGE_ROWS, "merges")
    out["path"] = _path_steps(a)
    chosen = [p for p in a.get("path") or [] if p["chosen"]]
    out["path_left"] = (_pct(chosen[0]["remaining_share"])
                        if chosen and chosen[0]["remaining_share"] is not None else None)
    if not a["initial_loss"]:
        return dict(out, state="no_interactions")
    if a["n_groups"] >= n_columns:
        return dict(out, state="no_merge")
    merged = [g for g in a["groups"] if len(g) > 1]
    out.update(
        n_groups=a["n_groups"],
        removed=_share(a["initial_loss"] - a["final_loss"], a["initial_loss"]),
        stop_reason=_STOP_REASONS.get(a["stop_reason"], a["stop_reason"]),
        merged=[", ".join(g) for g in merged[:TABLE_ROWS]],
        n_merged=len(merged),
        more_merged=max(0, len(merged) - TABLE_ROWS),
        n_alone=n_columns - sum(len(g) for g in merged),
        one_group=a["n_groups"] == 1,
        useless=not a.get("useful_partition", True) and a["n_groups"] > 1,
        remaining=f"{100 * a['remaining_share']:.0f}%",
        largest=(a["largest_group"] if a["n_groups"] > 1
                 and a["largest_group"] > max(2, n_columns // 2) else None),
        explained_again=agreed is not None,
    )
    return out


def _path_steps(a):
    """What the next coarser partitions of the AGREED path would buy, in words.

    For half and a tenth of the disagreement the chosen groups leave: the
    first partition further along the path that leaves at most that much,
    the merges that lead there and its largest group.
    """
    path = a.get("path") or []
    chosen = [t for t, p in enumerate(path) if p["chosen"]]
    if not chosen or path[chosen[0]]["remaining_share"] is None:
        return []
    t0 = chosen[0]
    left = path[t0]["remaining_share"]
    steps = []
    for target, words in ((0.5, "cut the disagreement left in half"),
                          (0.1, "cut it to a tenth")):
        if left <= ROUND_OFF:
            break
        hit = next((t for t in range(t0 + 1, len(path))
                    if path[t]["remaining_share"] is not None
                    and path[t]["remaining_share"] <= target * left), None)
        if hit is None:
            continue
        merges = [" + ".join(path[t]["merged"]) for t in range(t0 + 1, hit + 1)]
        shown = merges[:3]
        more = len(merges) - len(shown)
        steps.append({
            "words": words,
            "merges": shown,
            "more": more,
            "n_groups": path[hit]["n_groups"],
            "largest": path[hit]["largest_group"],
            "left": _pct(path[hit]["remaining_share"]),
        })
        if any(s["n_groups"] == path[hit]["n_groups"] for s in steps[:-1]):
            steps.pop()  # the same partition already answers the larger cut
    return steps


def _sources(results, agreed):
    """The two disagreements: between the methods, and between the games."""
    s = results["sources"]
    methods = between_methods(results) or {}
    games = between_games(results)

    def columns(top):
        return [{"column": c["column"], "share": _pct(c["share"])} for c in top]

    inter = methods.get("interaction")
    return {
        "n_rows": s["n_rows"],
        "state": compare(methods, games),
        "game": GAME_NAMES[games["game"]],
        "other": GAME_NAMES[games["other"]],
        "interaction": None if inter is None else _pct(inter),
        "interaction_on": methods.get("measured_on"),
        "farthest": bool(methods.get("farthest")) and methods["farthest"]["pair"],
        "dependence": _pct(games["distance"]),
        "dependence_noise": _pct(games["noise"]),
        "resolved": games["resolved"],
        "above_spread": games["above_spread"],
        "interaction_columns": columns(methods.get("top") or []),
        "dependence_columns": columns(games["top"]),
        "encoded": bool(s.get("encoded")),
        "complete_rows_only": bool(s.get("complete_rows_only")),
        "variance": _num(s.get("variance", 0.0)),
        "agreed": agreed,
    }


def page_context(results, figures=None, title="skdecomp report"):
    """Everything the templates show, as plain strings, numbers and lists.

    Parameters
    ----------
    results : dict
        What :func:`~skdecomp._report.analyse` returns.
    figures : dict or None, default=None
        What :func:`~skdecomp._report.make_figures` returns.
    title : str, default="skdecomp report"
        Title of the page.

    Returns
    -------
    context : dict
        The variables of ``templates/report.html``.
    """
    figures = figures or {}
    parts = results["partitions"]
    score = results.get("score")
    checks = results.get("checks", [])
    first = parts.get("columns") or parts.get("given")
    key = "columns" if "columns" in parts else "given"
    what = "one column at a time" if key == "columns" else "over the given groups"
    ctx = {
        "title": str(title),
        "target": str(results["target"]),
        "task": str(results["task"]),
        "model": str(results["model"]),
        "n_rows": int(results["n_rows"]),
        "n_fit_rows": int(results.get("n_fit_rows", results["n_rows"])),
        "n_columns": len(results["columns"]),
        "duration": _duration(results["seconds"]),
        "warnings": [_segments(c["message"]) for c in checks
                     if c["level"] == "warning"],
        "check_notes": [c["message"] for c in checks if c["level"] != "warning"],
        "verdict": list(results.get("verdict") or []),
        "score": score["text"] if score else None,
        "notes": list(results["notes"]),
        "first": None,
        "interactions": None,
        "regions": None,
        "sources": None,
        "agreed": None,
        "agreed_part": None,
        "figures": {k: list(v) for k, v in figures.items()},
        "sections": [],
    }
    if first:
        sampled = [method_label(m) for m in first["methods"]
                   if getattr(REGISTRY.get(canonical(m)), "kind", None) == "sampled"]
        game = results.get("imputer", "marginal")
        ctx["first"] = {
            "game": GAME_NAMES[game],
            "game_meaning": IMPUTERS[game],
            "path_dependent": game == "path_dependent",
            "key": key,
            "single": key == "columns",
            "constant": bool(first.get("constant_output")),
            "mean": _num(first["output_mean"], "{:.4g}"),
            "explained_output": first["explained_output"],
            "expected_value": _num(first["expected_value"]),
            "spread": _num(first["output_spread"]),
            "n_rows": first["n_rows"],
            "held_out": bool(score and score.get("held_out")),
            "n_background": first["n_background"],
            "main": method_label(first["main_method"]),
            "drivers": _drivers_table(first),
            "methods_table": _methods_table(first),
            "agreement": _agreement(first, what),
            "sampled": ", ".join(sampled),
            "main_ties": _ties(first, [first["main_method"]]),
            "ties": _ties(first, [m for m in first["methods"]
                                  if m != first["main_method"]]),
        }
    inter = results.get("interactions")
    if inter:
        ctx["interactions"] = {
            "n_columns": len(inter["columns"]),
            "pairs": [{"a": p["columns"][0], "b": p["columns"][1],
                       "strength": _pct(p["strength"])} for p in inter["top_pairs"]],
            "index": _index_pairs(inter.get("index"), first),
        }
    regions = results.get("regions")
    helps = bool(regions and regions["n_regions"] > 1
                 and regions["share_left"] <= REGIONS_HELP)
    if helps:
        ctx["regions"] = {
            "n_regions": regions["n_regions"],
            "n_rows": regions["n_rows"],
            "left": _pct(regions["share_left"]),
            "text": regions["text"],
            "rows": [{"rule": r, "share": _pct(n / max(1, sum(regions["sizes"]))),
                      "left": _pct(v / regions["loss_root"]) if regions["loss_root"] else "0%"}
                     for r, n, v in zip(regions["rules"], regions["sizes"],
                                        regions["losses"])],
        }
    a = results.get("agreed")
    agreed = parts.get("agreed")
    if a:
        ctx["agreed"] = _agreed(a, agreed)
    sources = results.get("sources")
    if sources:
        ctx["sources"] = _sources(results, bool(a))
    if agreed:
        ctx["agreed_part"] = {
            "agreement": _agreement(agreed, "over the AGREED groups"),
            "drivers": _drivers_table(agreed),
            "ties": _ties(agreed, [agreed["main_method"]]),
            "owen": _owen_table(agreed.get("owen")),
        }
    present = {
        "data-checks": True,
        "verdict": bool(ctx["verdict"]),
        "model": True,
        "drivers": bool(first),
        # one method has nothing to be compared with
        "agreement": bool(first) and len(first["methods"]) > 1,
        "sources": bool(sources),
        "interactions": bool(inter),
        "regions": helps,
        "agreed": bool(a),
    }
    ctx["sections"] = [{"id": i, "heading": h} for i, h in SECTIONS if present[i]]
    return ctx


def render_html(results, figures=None, title="skdecomp report"):
    """A self-contained HTML page; every string of the results is escaped.

    Parameters
    ----------
    results : dict
        What :func:`~skdecomp._report.analyse` returns.
    figures : dict or None, default=None
        What :func:`~skdecomp._report.make_figures` returns.
    title : str, default="skdecomp report"
        Title of the page.

    Returns
    -------
    page : str
        The HTML page.
    """
    template = _environment().get_template("report.html")
    return template.render(**page_context(results, figures, title))


def _index_pairs(index, first):
    """The strongest pairs of the interaction index, as shares of the spread."""
    if not index:
        return None
    values = np.abs(np.asarray(index["values"], dtype=float))
    if values.ndim != 2 or values.shape[1] < 2:
        return None
    spread = (first or {}).get("output_spread") or 1.0
    mean = values.mean(axis=0)
    order = np.array([len(t) for t in index["terms"]])
    names = [" × ".join(index["groups"][g] for g in t) for t in index["terms"]]
    pairs = [j for j in np.argsort(-mean, kind="stable")
             if order[j] == 2 and mean[j] > ROUND_OFF * spread][:5]
    total = mean[order >= 1].sum()
    return {
        "n_groups": len(index["groups"]),
        "n_rows": values.shape[0],
        "rest": "other columns" in index["groups"],
        "pair_share": _pct(mean[order == 2].sum() / total) if total > 0 else "0%",
        "terms": [{"name": names[j], "share": _pct(mean[j] / spread)} for j in pairs],
    }


def _owen_table(owen):
    """The columns of every merged AGREED group with their shares (Owen values)."""
    if not owen:
        return None
    by_group = {}
    for k, g in enumerate(owen["group"]):
        by_group.setdefault(g, []).append(k)
    rows = []
    for g, members in by_group.items():
        if len(members) < 2:
            continue
        for k in sorted(members, key=lambda k: -owen["importance"][k]):
            rows.append([g, owen["columns"][k], float(owen["mean"][k]),
                         float(owen["importance"][k])])
    if not rows:
        return None
    shown = rows[:TABLE_ROWS]
    return _table(["group", "column", "mean Owen value", "mean |Owen value|"], shown,
                  len(rows) - len(shown), "columns")
