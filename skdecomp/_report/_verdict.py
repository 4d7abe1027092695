"""The report's conclusion in plain sentences, from the analysis results."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from .._methods._registry import method_label
from ._common import LEAK_RATIO, LEAK_SHARE, NOTICEABLE, _agreement_words
from ._story import games_sentence, methods_sentence, pct


def _leak_check(part, score):
    """A warning when one column's attributions dwarf all the others."""
    imp = np.asarray(part["importance"][part["main_method"]], dtype=float)
    total = imp.sum()
    if len(imp) < 2 or total <= 0:
        return None
    order = part["order"]
    top, second = imp[order[0]], imp[order[1]]
    share = top / total
    if share <= LEAK_SHARE or top <= LEAK_RATIO * second:
        return None
    name = part["group_names"][order[0]]
    ratio = "infinitely many" if second == 0 else f"{top / second:.0f}"
    text = (f"Column {name!r} carries {share:.0%} of all attributions, {ratio} times "
            f"more than the next column ({part['group_names'][order[1]]!r}). A column "
            "this dominant can be a copy of the target or something known only after "
            "it (leakage); check how it was recorded before trusting the model. If it "
            "is a genuine cause of the target, the model simply rests on it.")
    perfect = score and ((score.get("r2") or 0) > 0.99
                         or (score.get("accuracy") or 0) > 0.99)
    if perfect:
        text += " The near-perfect score points the same way."
    return {"kind": "leak", "level": "warning", "columns": [name], "message": text}


def _verdict(results):
    """The report's conclusion, in a few plain sentences."""
    out = []
    score = results.get("score")
    if score:
        r2 = score.get("r2")
        if score["metric"] == "r2" and (r2 is None or not np.isfinite(r2)):
            # an undefined score is never a good one
            why = score.get("undefined") or "it is not a number"
            out.append(f"The model's R² is undefined ({why}), so how well it fits "
                       "cannot be judged.")
        elif score["metric"] == "r2":
            quality = ("no better than predicting the mean" if score["r2"] <= 0.05 else
                       "weak" if score["r2"] < 0.3 else
                       "moderate" if score["r2"] < 0.7 else "good")
            out.append(f"The model's fit is {quality} (R² {score['r2']:.2f} on rows it "
                       "did not see)." if score["held_out"] else
                       f"The model's R² on the table is {score['r2']:.2f}.")
        else:
            gain = score["accuracy"] - score["majority"]
            quality = ("no better than always answering the most common class"
                       if gain <= 0.01 else "better than always answering the most "
                       f"common class by {100 * gain:.0f} percentage points")
            out.append(f"The model is {quality} (accuracy {score['accuracy']:.0%}).")
    cols = results["partitions"].get("columns") or results["partitions"].get("given")
    constant = bool(cols and cols.get("constant_output"))
    if constant:
        # no share of a variance that is round-off means anything
        out.append(constant_sentence(cols))
    elif cols:
        main = cols["main_method"]
        imp = np.asarray(cols["importance"][main])
        top = [k for k in cols["order"][:3] if imp[k] > 0]
        if top:
            share = imp[top].sum() / imp.sum()
            names = ", ".join(repr(cols["group_names"][k]) for k in top)
            out.append(f"Its predictions depend most on {names} ({share:.0%} of the "
                       f"mean absolute {method_label(main)} attributions).")
        else:
            out.append("No column changes its predictions on the explained rows.")
    if cols and cols["mean_disagreement_rms"] is None:
        out.append(one_method_sentence(cols))
    elif cols and not constant:
        what = "one column at a time" if "columns" in results["partitions"] else \
            "over the given groups"
        out.append(f"Explained {what}, the methods "
                   f"{_agreement_words(cols['mean_disagreement_rms'])}"
                   " (root mean square over the pairs of methods).")
    if not constant:
        for sentence in (methods_sentence(results), games_sentence(results)):
            if sentence:
                out.append(sentence)
    agreed = results["partitions"].get("agreed")
    a = results.get("agreed")
    if a:
        out.append(agreed_sentence(a, agreed))
    if cols and not constant and _noticeable(cols) and (
            not agreed or _noticeable(agreed)):
        out.append("Where the methods disagree, prefer the Shapley values: they share "
                   "each interaction evenly between its columns, while occlusion and "
                   "PDP/Arch give it all or nothing.")
    warnings_ = [c for c in results.get("checks", []) if c["level"] == "warning"]
    if warnings_:
        out.append(f"Read the {len(warnings_)} data warning"
                   f"{'s' if len(warnings_) > 1 else ''} at the top before trusting "
                   "any of this.")
    return out


def _noticeable(part):
    """Whether the methods of a partition disagree noticeably (never for one method)."""
    rms = part.get("mean_disagreement_rms")
    return rms is not None and rms >= NOTICEABLE


def constant_sentence(part):
    """The verdict on a model that predicts one value on the explained rows."""
    return (f"The model predicts the same value ({part['output_mean']:.4g}) on these "
            f"rows (the {part['n_rows']} explained rows and the training rows checked), "
            "up to round-off: no column changes its predictions, so there is no share "
            "of their variance to give to any column and nothing for the methods to "
            "disagree on.")


def one_method_sentence(part):
    """Why one method is compared with nothing."""
    return (f"Only one method ({method_label(part['main_method'])}) was run, so there "
            "is no other explanation to compare it with; give two or more to --methods "
            "(or leave it out for the default ones) to see whether the methods agree.")


def _next_steps(a):
    """The first partition past AGREED's choice that halves what it leaves, if any."""
    path = a.get("path") or []
    chosen = [t for t, p in enumerate(path) if p["chosen"]]
    if not chosen or path[chosen[0]]["remaining_share"] is None:
        return None
    left = path[chosen[0]]["remaining_share"]
    return next((p for p in path[chosen[0] + 1:]
                 if p["remaining_share"] is not None
                 and p["remaining_share"] <= 0.5 * left), None)


def agreed_sentence(a, agreed=None):
    """What AGREED did, in one sentence that follows the merge table and the trade-off."""
    n, k = a["n_columns"], a["n_groups"]
    step = _next_steps(a)
    coarser = ""
    if step is not None:
        coarser = (f"; coarser groups would make the methods agree more ({step['n_groups']} "
                   f"groups, the largest of {step['largest_group']} columns, leave "
                   f"{pct(step['remaining_share'])} of the interaction loss), at the "
                   "price of reading those columns together")
    if a.get("no_interactions"):
        return ("The model has no interactions between columns, so every method "
                "gives the same explanation and no grouping is needed.")
    if k == 1 and n > 1:
        return (f"AGREED ended with all {n} columns in one group: the columns interact "
                "so widely that only reading them all together makes the methods agree, "
                "which no longer tells any column apart. This is not a useful grouping: "
                "read the explanation one column at a time, knowing that the methods "
                "differ there.")
    if k >= n:
        first = (a.get("merges") or [None])[0]
        why = "no merge of columns paid for a coarser explanation on held-out rows"
        if first is not None and first.get("held_out_loss_before") is not None:
            before, after = first["held_out_loss_before"], first["held_out_loss_after"]
            base = a.get("held_out_initial_loss") or before
            gain = max(before - after, 0.0) / base if base else 0.0
            why = (f"its best merge ({' + '.join(first['names'])}) removed "
                   f"{pct(gain)} of the interaction loss on held-out rows, too little to "
                   "pay for a coarser explanation")
        return f"AGREED kept the columns apart: {why}{coarser}."
    if not a.get("useful_partition", True):
        return (f"No grouping of a readable size makes the methods agree: the "
                f"{k} groups AGREED kept leave {pct(a['remaining_share'])} of the "
                "interaction loss between groups on held-out rows, the interactions "
                f"being spread over many pairs of columns{coarser}. Read the explanation "
                "one column at a time, knowing that the methods differ there.")
    if agreed and agreed.get("mean_disagreement_rms") is None:
        return (f"AGREED chose {len(agreed['groups'])} groups of interacting columns; "
                "the explanation over them is below.")
    if agreed:
        return (f"Over the {len(agreed['groups'])} groups AGREED chose, the methods "
                f"{_agreement_words(agreed['mean_disagreement_rms'])}.")
    pair = next(g for g in a["groups"] if len(g) > 1)
    return (f"AGREED merged only {pair[0]!r} and {pair[1]!r}; read the explanation one "
            "column at a time, taking these two columns together.")
