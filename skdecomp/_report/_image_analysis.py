"""The analysis of the image report: every photo's maps, their agreement and their scores.

Per photo: the network's prediction, AGREED's groups (starting from the
photo's colour tree), every method that works at any number of groups on
those groups, how far apart their maps are against their noise floor, each
map's symmetric relevance gain (SRG) and a hierarchical Owen map at a budget
of model evaluations. The results are plain JSON-ready data with the
verdict in sentences; the arrays the figures need (the photo, the label map,
the maps) are returned beside them. Nothing here draws or writes HTML.
"""

# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np

from .._methods._registry import REGISTRY, method_label, method_names, min_samples
from ._common import CLOSE, NOTICEABLE, _duration
from ._photos import check_classes, class_name

#: steps of the pixel-flipping curves behind SRG (``n_steps + 1`` evaluations
#: per curve and map)
SRG_STEPS = 16
#: an SRG within this distance of 0 is what a random map scores
RANDOM_SRG = 0.05
#: two maps whose SRG differ by less than this score about the same
SRG_TIE = 0.02
#: the methods disagree beyond their noise when their mean squared distance
#: is more than this many times what their sampling noise alone gives
NOISE_MARGIN = 2.0
#: images of the first timed batch
TIMED_BATCH = 8
#: the hierarchical map
HIERARCHICAL = "owen"


def image_methods():
    """The methods compared on a photo's groups, from the registry.

    Those that work at any number of groups: the exact methods that need
    only the single groups and their complements, and each sampled
    estimator with a budget, one per quantity estimated (Kernel SHAP, not
    also permutation SHAP, for Shapley values). Gradient methods need a
    network's gradients, which an ONNX session does not give.
    """
    chosen, estimated = [], set()
    for name in method_names(aliases=False):
        spec = REGISTRY[name]
        if spec.kind == "exact" and spec.single_group:
            chosen.append(name)
        elif spec.kind == "sampled" and spec.uses_budget:
            if spec.estimates is not None and spec.estimates in estimated:
                continue
            estimated.add(spec.estimates or name)
            chosen.append(name)
    return chosen


def sampled_budget(methods, n_groups):
    """The smallest ``n_samples`` every sampled method accepts for ``n_groups``."""
    return max([min_samples(m, n_groups) for m in methods
                if REGISTRY[m].kind == "sampled"] or [0])


def evaluations_bound(methods, n_groups, budget, n_steps=SRG_STEPS):
    """Model evaluations of one photo, at most, by step.

    AGREED spends 10 per region of the colour tree it starts from; the
    single-group methods ``2 K + 1`` together; the sampled methods their
    budget, once for those that share one design; the hierarchical map
    ``budget``; SRG ``2 (n_steps + 1)`` per map.
    """
    from .._methods._shared import n_designs

    n_samples = sampled_budget(methods, n_groups)
    sampled = n_designs([REGISTRY[m].name for m in methods
                         if REGISTRY[m].kind == "sampled"])
    steps = {
        "agreed": 10 * n_groups,
        "maps": 2 * n_groups + 1 + sampled * n_samples,
        "hierarchical": int(budget),
        "srg": 2 * (n_steps + 1) * (len(methods) + 1),
    }
    return steps


def time_evaluation(model, photo):
    """Seconds per model evaluation, from a first timed batch of the photo."""
    batch = np.repeat(photo[None], TIMED_BATCH, axis=0)
    model.predict(batch)  # the session's first run of a batch sets it up
    start = time.perf_counter()
    model.predict(batch)
    return (time.perf_counter() - start) / TIMED_BATCH


def _share(value, scale):
    """A distance as a share of the change the maps split, or None without one."""
    return None if scale is None else float(value) / scale


def _distance(res, methods, scale):
    """The mean distance of the maps of ``methods``, its noise floor, and if beyond it."""
    from .. import metrics

    l2 = metrics.disagreement({m: res[m] for m in methods}, measure="l2",
                              normalize="sum")
    known = l2.noise_floor is not None
    return l2, {
        "methods": list(methods),
        "distance": _share(np.sqrt(max(l2.score, 0.0)), scale),
        "noise_floor": _share(np.sqrt(max(l2.noise_floor, 0.0)), scale) if known else None,
        "beyond_noise": bool(known and l2.score > NOISE_MARGIN * l2.noise_floor),
    }


def _agreement(res, methods, change):
    """Distances between the maps (as the tabular report measures them) and noise.

    When one method is so far from the others that leaving it out halves the
    mean squared distance, the distance of the others is given too
    (``without_farthest``): RISE's values, the mean output of the masks that
    keep a group, differ from the others' by about a constant per group.
    """
    from .. import metrics

    scale = abs(change) if abs(change) > 1e-9 else None
    l2, overall = _distance(res, methods, scale)
    rank = metrics.disagreement({m: res[m] for m in methods}, measure="spearman")
    pairwise = np.sqrt(np.clip(np.asarray(l2.pairwise, dtype=float), 0.0, None))
    floor = l2.pairwise_noise_floor
    floor = None if floor is None else np.sqrt(np.clip(np.asarray(floor, float), 0, None))
    E = len(methods)
    pairs = sorted((pairwise[a, b], a, b) for a in range(E) for b in range(a + 1, E))

    def pair(t):
        d, a, b = t
        return {"methods": [methods[a], methods[b]], "distance": _share(d, scale)}

    squared = np.asarray(l2.pairwise, dtype=float)
    without = None
    if E >= 3:
        far = int(np.argmax(squared.sum(axis=1)))
        rest = [m for i, m in enumerate(methods) if i != far]
        rest_l2, rest_out = _distance(res, rest, scale)
        if rest_l2.score < 0.5 * l2.score:
            without = dict(rest_out, left_out=methods[far])
    return dict(
        overall,
        measure="root mean square over the pairs of methods of the distance between "
                "two maps (square root of the summed squared differences over the "
                "groups), as a share of the change the maps split",
        without_farthest=without,
        pairwise=(pairwise / scale).tolist() if scale else None,
        pairwise_noise_floor=(floor / scale).tolist() if scale and floor is not None
        else None,
        rank_correlation=1.0 - float(rank.score),
        pairwise_rank_correlation=(1.0 - np.asarray(rank.pairwise, float)).tolist(),
        closest=pair(pairs[0]),
        farthest=pair(pairs[-1]),
    )


def _srg(explainer, x, attributions, n_steps):
    from ..metrics import symmetric_relevance_gain

    s = symmetric_relevance_gain(explainer, x, attributions, n_steps=n_steps)
    return {"srg": float(s.srg[0]), "insertion_auc": float(s.insertion_auc[0]),
            "deletion_auc": float(s.deletion_auc[0])}


def explain_photo(model, photo, *, budget=500, random_state=0, n_steps=SRG_STEPS):
    """Every map of one photo, their agreement and their scores.

    Parameters
    ----------
    model : CountedImageModel
        The network, its explained output the probability of every class.
    photo : ndarray of uint8, shape (H, W, C)
    budget : int, default=500
        Model evaluations of the hierarchical (Owen) map, its AGREED included.
    random_state : int, default=0
    n_steps : int, default=SRG_STEPS

    Returns
    -------
    entry : dict
        JSON-ready numbers of the photo (no verdict yet).
    arrays : dict
        ``photo``, ``label_map``, ``attributions`` (method -> group values)
        and ``heatmap`` (the Owen map per pixel), for the figures.
    """
    from .. import AdaptiveGrouper, Explainer

    start, counted = time.perf_counter(), model.evaluations[0]
    x = photo[None]
    proba = np.asarray(model.predict(x), dtype=float)[0]
    top = np.argsort(-proba, kind="stable")[:3]
    k = int(top[0])
    grouper = AdaptiveGrouper(model, baseline="blur", target=k,
                              random_state=random_state).fit(x)
    agreed_evaluations = model.evaluations[0] - counted
    groups = grouper.groups_
    K = len(groups)
    methods = image_methods()
    n_samples = sampled_budget(methods, K)
    explainer = Explainer(model, groups=groups, baseline="blur", target=k,
                          n_samples=n_samples or None,
                          random_state=random_state).fit(x)
    res = explainer.explain(x, methods=methods)
    blurred = float(np.asarray(explainer.expected_value_).ravel()[0])
    change = float(proba[k]) - blurred
    scores = {m: _srg(explainer, x, res[m], n_steps) for m in methods}
    owen = Explainer(model, method=HIERARCHICAL, hierarchy=AdaptiveGrouper(),
                     baseline="blur", target=k, n_samples=int(budget),
                     random_state=random_state).fit(x)
    before = model.evaluations[0]
    heatmap = np.asarray(owen.explain(x, methods=[HIERARCHICAL])[HIERARCHICAL]
                         .to_image(), dtype=float)
    owen_evaluations = model.evaluations[0] - before
    owen_scores = _srg(owen, x, heatmap, n_steps)
    label_map = np.asarray(res[methods[0]].label_map)
    attributions = {m: np.asarray(res[m].values, dtype=float).reshape(-1)
                    for m in methods}
    entry = {
        "class": k,
        "class_name": class_name(model, k),
        "probability": float(proba[k]),
        "top": [{"class": int(c), "class_name": class_name(model, int(c)),
                 "probability": float(proba[c])} for c in top],
        "blurred_probability": blurred,
        "change": change,
        "agreed": {
            "n_initial_regions": len(grouper.initial_groups_),
            "n_groups": K,
            "stop_reason": str(grouper.stop_reason_),
            "evaluations": int(agreed_evaluations),
        },
        "methods": methods,
        "n_samples": int(n_samples),
        "maps": {m: dict(scores[m], label=method_label(m)) for m in methods},
        "agreement": _agreement(res, methods, change),
        "hierarchical": dict(owen_scores, method=HIERARCHICAL,
                             label=method_label(HIERARCHICAL), budget=int(budget),
                             evaluations=int(owen_evaluations)),
        "group_pixels": np.bincount(label_map.ravel(), minlength=K).tolist(),
        "attributions": {m: a.tolist() for m, a in attributions.items()},
        "evaluations": int(model.evaluations[0] - counted),
        "seconds": round(time.perf_counter() - start, 2),
    }
    arrays = {"photo": photo, "label_map": label_map, "attributions": attributions,
              "heatmap": heatmap.reshape(photo.shape[:2])}
    return entry, arrays


def analyse_photos(model, names, images, *, budget=500, random_state=0, log=print,
                   model_name="model", preprocess=None):
    """Explain every photo; the results for ``results.json`` and the figures' arrays.

    Parameters
    ----------
    model : CountedImageModel
    names : list of str
        File names of the photos.
    images : ndarray of uint8, shape (n, H, W, C)
    budget : int, default=500
        Model evaluations of each hierarchical map.
    random_state : int, default=0
    log : callable, default=print
        Gets one line per step (the estimate, then one per photo).
    model_name : str, default="model"
        How the page names the network.
    preprocess : object, default=None
        The preprocessing, as given, for the page.

    Returns
    -------
    results : dict
    arrays : list of dict
        Per photo, what :func:`explain_photo` returns for the figures.
    """
    n = len(images)
    first = np.asarray(model.predict(images[:1]), dtype=float)
    check_classes(model.class_names, first.shape[1])
    per_eval = time_evaluation(model, images[0])
    methods = image_methods()
    H, W = images.shape[1:3]
    # AGREED starts from at most 128 regions of the colour tree, one per pixel
    # of a smaller image; its groups are at most as many
    regions = min(128, H * W)
    steps = evaluations_bound(methods, regions, budget)
    per_photo = sum(steps.values())
    estimate = {
        "evaluations_per_photo": per_photo,
        "steps": steps,
        "seconds_per_evaluation": per_eval,
        "seconds": per_photo * per_eval * n,
    }
    log(f"estimate: at most {per_photo:,} model evaluations per photo (AGREED "
        f"{steps['agreed']:,}, the {len(methods)} group maps {steps['maps']:,}, the "
        f"{method_label(HIERARCHICAL)} map {steps['hierarchical']:,}, SRG "
        f"{steps['srg']:,}) at {1000 * per_eval:.1f} ms each, measured on a first batch "
        f"of {TIMED_BATCH}: up to {_duration(estimate['seconds'])} for {n} photo(s)")
    photos, arrays = [], []
    for i, (name, photo) in enumerate(zip(names, images), 1):
        entry, arr = explain_photo(model, photo, budget=budget, random_state=random_state)
        entry = dict({"file": str(name)}, **entry)
        entry["verdict"] = photo_verdict(entry)
        best = best_map(entry)
        log(f"photo {i}/{n} {name}: {entry['class_name']} "
            f"({entry['probability']:.0%}), {entry['agreed']['n_groups']} groups, "
            f"highest SRG {best['label']} ({best['srg']:.2f}), "
            f"{entry['evaluations']:,} evaluations in {entry['seconds']:.0f} s")
        photos.append(entry)
        arrays.append(arr)
    results = {
        "kind": "images",
        "model": str(model_name),
        "input_shape": [int(s) for s in images.shape[1:]],
        "preprocess": preprocess if isinstance(preprocess, str) else
        {"mean": preprocess[0], "std": preprocess[1]},
        "output": model.output if isinstance(model.output, str) else "callable",
        "class_names": model.class_names is not None,
        "baseline": "blur",
        "methods": methods,
        "budget": int(budget),
        "srg_steps": SRG_STEPS,
        "random_state": random_state,
        "estimate": estimate,
        "photos": photos,
    }
    results["verdict"] = overall_verdict(results)
    return results, arrays


# -- the verdict, from the results only -----------------------------------------------
def _pct(share):
    if 0 < abs(share) < 0.001:
        return "below 0.1%"
    return f"{100 * share:,.0f}%" if share >= 0.095 else f"{100 * share:.1f}%"


def all_maps(entry):
    """Every map of a photo with its SRG, best first: (method, label, srg)."""
    maps = [(m, v["label"], v["srg"]) for m, v in entry["maps"].items()]
    h = entry["hierarchical"]
    maps.append((h["method"], h["label"], h["srg"]))
    return sorted(maps, key=lambda t: -t[2])


def best_map(entry):
    """The map of the highest SRG."""
    m, label, srg = all_maps(entry)[0]
    return {"method": m, "label": label, "srg": srg}


def _distance_words(share):
    if share == 0:
        return "agree exactly"
    if share < CLOSE:
        return "agree closely"
    if share < NOTICEABLE:
        return "differ noticeably"
    return "disagree strongly"


def _noise(a):
    """How a distance compares with its noise floor, as the end of a sentence."""
    if a["noise_floor"] is None:
        return ""
    if a["beyond_noise"]:
        return (f", beyond their noise floor of {_pct(a['noise_floor'])} (what sampling "
                "noise alone would give)")
    return (f", within their noise floor of {_pct(a['noise_floor'])}: the sampled "
            "maps' noise explains the difference")


def photo_verdict(entry):
    """A photo's conclusion in plain sentences, from its numbers only."""
    out = []
    p, pb, change = entry["probability"], entry["blurred_probability"], entry["change"]
    out.append(
        f"The model says {entry['class_name']} with probability {_pct(p)}; on the "
        f"blurred photo, {_pct(pb)}. The maps split this "
        f"{'drop' if change >= 0 else 'rise'} of {100 * abs(change):.1f} points "
        "among the photo's regions."
    )
    maps = all_maps(entry)
    (_, l1, s1), (_, l2, s2) = maps[0], maps[1]
    if s1 < RANDOM_SRG:
        out.append(f"By SRG (higher is better), no map does better than a random one "
                   f"(about 0): the highest is {l1}'s ({s1:.2f}).")
    else:
        lead = (f"{l1} ({s1:.2f}) and {l2} ({s2:.2f}) score about the same"
                if s1 - s2 < SRG_TIE else f"{l1} scores highest ({s1:.2f}), then {l2} "
                f"({s2:.2f})")
        weak = [f"{label} ({s:.2f})" for _, label, s in maps if s < RANDOM_SRG]
        tail = ""
        if weak:
            tail = (f"; {', '.join(weak)} {'does' if len(weak) == 1 else 'do'} no "
                    "better than a random map (about 0)")
        out.append(f"By SRG (higher is better), {lead}{tail}.")
    a = entry["agreement"]
    n = len(entry["methods"])
    if a["distance"] is None:
        out.append("The blurred photo gets the same probability, so the group maps "
                   "have no change to split and their distances are not given.")
    else:
        words = _distance_words(a["distance"])
        c, f = a["closest"], a["farthest"]
        names = [method_label(m) for m in c["methods"]], [method_label(m)
                                                          for m in f["methods"]]
        pair_text = (f" Closest: {names[0][0]} and {names[0][1]} "
                     f"({_pct(c['distance'])}); farthest: {names[1][0]} and "
                     f"{names[1][1]} ({_pct(f['distance'])}).")
        out.append(f"The {n} group maps {words}: by {_pct(a['distance'])} of that "
                   f"change{_noise(a)}.{pair_text}")
        w = a["without_farthest"]
        if w is not None:
            out.append(
                f"Most of that distance is {method_label(w['left_out'])}'s: without it, "
                f"the other {len(w['methods'])} maps {_distance_words(w['distance'])}, "
                f"by {_pct(w['distance'])}{_noise(w)}.")
    rho = a["rank_correlation"]
    order = ("much the same order" if rho >= 0.8 else "a similar order" if rho >= 0.5
             else "different orders")
    out.append(f"Ranked by the size of their values, the regions come in {order} "
               f"(mean rank correlation {rho:.2f}; 1 is the same order).")
    g = entry["agreed"]
    if g["n_groups"] < g["n_initial_regions"]:
        out.append(f"AGREED merged the colour tree's {g['n_initial_regions']} regions "
                   f"into {g['n_groups']} groups whose interactions the methods "
                   "disagreed on.")
    else:
        out.append(f"AGREED kept the colour tree's {g['n_groups']} regions: no merge "
                   "paid its price.")
    return out


def overall_verdict(results):
    """Sentences over all photos: which map scores best, whether the methods agree."""
    photos = results["photos"]
    n = len(photos)
    if n == 0:
        return []
    best = [best_map(p)["label"] for p in photos]
    counts = {label: best.count(label) for label in dict.fromkeys(best)}
    top = max(counts, key=counts.get)
    mean = {}
    for p in photos:
        for _, label, s in all_maps(p):
            mean.setdefault(label, []).append(s)
    ranked = sorted(((float(np.mean(v)), label) for label, v in mean.items()),
                    reverse=True)
    out = [
        f"{top} has the highest SRG on {counts[top]} of {n} photo(s); over all photos "
        f"the mean SRG is highest for {ranked[0][1]} ({ranked[0][0]:.2f}) and lowest "
        f"for {ranked[-1][1]} ({ranked[-1][0]:.2f})."
    ]
    beyond = sum(bool(p["agreement"]["beyond_noise"]) for p in photos)
    known = sum(p["agreement"]["noise_floor"] is not None for p in photos)
    if known:
        out.append(
            f"The group maps disagree beyond their noise floor on {beyond} of {known} "
            "photo(s): "
            + ("what separates them there is not sampling noise."
               if beyond else "what separates them is the sampled maps' noise.")
        )
    return out
