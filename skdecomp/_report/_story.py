"""The two disagreements a report tells apart, as numbers on one scale.

* **Between the methods shown**, under the game the report explains: how far
  their explanations of a row are apart. Under any game, every method is the
  same within-column effect plus a differently weighted share of the
  interactions, so this disagreement comes from interactions only; occlusion
  and PDP/Arch, which give a column all or none of its interactions, are the
  two extremes, and the gap between them is the interaction measure.
* **Between the games**: how far the explanation would move if the absent
  columns were drawn given the present ones (conditional) instead of
  independently of them (marginal). This comes from dependence between the
  columns.

Both are distances between two explanations of a row (the square root of the
sum over columns of the squared differences), as a root mean square over
rows and a share of the spread (standard deviation) of the explained output:
the scale of the "Do the explanation methods agree?" section. Per column,
each distance is split into parts of its square, which add up to 100 %.
Everything here reads the results of ``analyse`` only; the page, the verdict
and the demo's printout all take their sentences' numbers from here.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from .._methods._registry import canonical, method_label
from ._common import CLOSE

#: the games, as the page names them
GAME_NAMES = {"marginal": "marginal", "path_dependent": "path-dependent",
              "conditional": "conditional"}


def _pair(part, a, b):
    methods = [canonical(m) for m in part["methods"]]
    if a in methods and b in methods:
        return methods.index(a), methods.index(b)
    return None


def _parts(per_column, columns, shown=3):
    """Parts of a whole that add up to 1, and the largest few by name."""
    per = np.clip(np.asarray(per_column, dtype=float), 0.0, None)
    total = per.sum()
    parts = per / total if total > 0 else np.zeros_like(per)
    order = np.argsort(-parts, kind="stable")
    top = [{"column": str(columns[k]), "share": float(parts[k])}
           for k in order[:shown] if parts[k] > 0]
    return parts.tolist(), top


def between_methods(results):
    """How far the methods shown are apart, and the interactions behind it.

    Returns None without a per-column (or given-groups) explanation. Keys:
    ``game``, ``mean`` (the root mean square over the pairs of methods),
    ``farthest`` (the pair and its distance), ``interaction`` (the distance
    between occlusion and PDP/Arch: the interactions, on the explained rows;
    from the sources step when the two are not both shown), ``parts`` and
    ``top`` (each column's part of its square), ``columns`` (of the parts).
    """
    parts_ = results["partitions"]
    part = parts_.get("columns") or parts_.get("given")
    if not part:
        return None
    methods = part["methods"]
    rms = part["disagreement_rms"]
    pairs = sorted(
        ((rms[a][b], a, b) for a in range(len(methods))
         for b in range(a + 1, len(methods))), reverse=True)
    out = {"game": results.get("imputer", "marginal"),
           # None for one method: no pair to measure
           "mean": (None if part["mean_disagreement_rms"] is None
                    else float(part["mean_disagreement_rms"])),
           "farthest": None, "interaction": None, "parts": None, "top": [],
           "columns": None, "measured_on": None}
    if pairs:
        d, a, b = pairs[0]
        out["farthest"] = {"pair": (method_label(methods[a]), method_label(methods[b])),
                           "value": float(d)}
    at = _pair(part, "occlusion", "arch")
    spread = part["output_spread"] or 1.0
    if at is not None:
        occ = np.asarray(part["attributions"][methods[at[0]]], dtype=float)
        arch = np.asarray(part["attributions"][methods[at[1]]], dtype=float)
        per = np.mean((occ - arch) ** 2, axis=0) / spread**2
        out["interaction"] = float(rms[at[0]][at[1]])
        out["parts"], out["top"] = _parts(per, part["group_names"])
        out["columns"] = list(part["group_names"])
        out["measured_on"] = "explained rows"
    else:
        s = results.get("sources")
        if s:
            out["interaction"] = float(np.sqrt(max(s["interaction"], 0.0)))
            out["parts"], out["top"] = _parts(s["interaction_per_column"], s["columns"])
            out["columns"] = list(s["columns"])
            out["measured_on"] = "sources rows"
    return out


def between_games(results):
    """How far the explanation would move under the other game, from dependence.

    Returns None without the sources step. Keys: ``game`` (the report's),
    ``other`` (the game compared with it), ``distance`` (the root mean
    square distance between the marginal and the conditional explanations,
    PDP and occlusion alike, as a share of the spread), ``parts``, ``top``,
    ``n_rows`` and ``above_spread`` (the distance exceeds the spread).
    """
    s = results.get("sources")
    if not s:
        return None
    game = results.get("imputer", "marginal")
    distance = float(np.sqrt(max(s["dependence"], 0.0)))
    parts, top = _parts(s["dependence_per_column"], s["columns"])
    noise = float(np.sqrt(max(s.get("dependence_noise", 0.0), 0.0)))
    return {"game": game, "other": "marginal" if game == "conditional" else "conditional",
            "distance": distance, "parts": parts, "top": top, "n_rows": s["n_rows"],
            "above_spread": distance > 1.0, "noise": noise,
            # below the bound of its error, the estimate cannot be told from 0
            "resolved": s["dependence"] > s.get("dependence_noise", 0.0)}


def compare(methods, games):
    """Which of the two disagreements is larger: a key for the page's words."""
    inter = (methods or {}).get("interaction") or 0.0
    dep = (games or {}).get("distance") or 0.0
    if games and not games["resolved"]:
        dep = 0.0
    if max(inter, dep) < CLOSE:
        return "neither"
    if dep >= 2.0 * inter:
        return "dependence"
    if inter >= 2.0 * dep:
        return "interactions"
    return "both"


def pct(fraction):
    """A fraction as a percentage with one decimal; 0 stays 0."""
    if not fraction or fraction < 0:  # a share below 0 is an estimate's noise
        return "0%"
    p = 100.0 * fraction
    return "<0.1%" if p < 0.1 else f"{p:.1f}%"


def names(top):
    return ", ".join(repr(t["column"]) for t in top)


def methods_sentence(results):
    """Why the methods shown differ, in one sentence that follows the numbers."""
    m = between_methods(results)
    if not m or m["farthest"] is None:
        return None
    game = GAME_NAMES.get(m["game"], m["game"])
    if m["mean"] < CLOSE or not m["interaction"]:
        return (f"Under the {game} game the methods differ only through interactions "
                "between columns, and these are small here, so the methods tell the "
                "same story.")
    text = (f"Under the {game} game the methods differ only through interactions "
            "between columns: occlusion and PDP/Arch, which give a column all or none "
            f"of its interactions, are {pct(m['interaction'])} of the prediction "
            "spread apart")
    if m["interaction"] > 1.0:
        text += (" (more than the predictions' own spread, as an interaction counts "
                 "once for every column it touches)")
    if m["top"]:
        text += f", most of it through {names(m['top'])}"
    inter = results.get("interactions")
    if inter and inter.get("top_pairs"):
        p = inter["top_pairs"][0]
        text += (f"; the strongest pair is {p['columns'][0]!r} and {p['columns'][1]!r} "
                 f"({pct(p['strength'])})")
    return text + "."


def games_sentence(results):
    """How far the explanation would move under the other game, in one sentence."""
    g = between_games(results)
    if not g:
        return None
    m = between_methods(results) or {}
    if g["other"] == "conditional":
        how = "Drawing the absent columns given the present ones (the conditional game)"
    else:
        how = ("Filling the absent columns from background rows, independently of the "
               "present ones (the marginal game),")
    if not g["resolved"]:
        return (f"{how} would move the explanation by {pct(g['distance'])} of the "
                f"prediction spread, within the noise of this estimate (up to "
                f"{pct(g['noise'])} on {g['n_rows']} rows): no dependence between the "
                "columns shows here.")
    if g["distance"] < CLOSE:
        return (f"{how} would barely move the explanation ({pct(g['distance'])} of the "
                "prediction spread): dependence between the columns does not matter "
                "here.")
    text = f"{how} would move the explanation by {pct(g['distance'])} of the prediction spread"
    if g["above_spread"]:
        text += (" (more than the predictions' own spread, as dependent columns get large "
                 "effects of opposite sign under one game that cancel in the prediction)")
    inter = m.get("interaction")
    if inter is not None and inter > 0:
        rel = ("more than" if g["distance"] > 1.25 * inter else
               "less than" if g["distance"] < 0.8 * inter else "about as much as")
        text += f", {rel} the methods differ from each other ({pct(inter)})"
    text += ": the columns are dependent"
    if g["top"]:
        text += f", most of all {names(g['top'])}"
    return text + "."
