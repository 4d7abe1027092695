"""AGREED against fixed partitions on real photos: disagreement, infidelity, SRG at equal K_eff.

The image experiment of the AGREED paper on real photos with a pretrained
CNN: EfficientNet-Lite0 on ONNX Runtime, one thread
(``load_pretrained_cnn("onnx", n_threads=1)``), on the six labelled sample
photos at 224x224 (``load_sample_photos``: cat, espresso, rocket, motorcycle,
palace, daisy), each explained for its ImageNet label (the softmax
probability) against its blurred self (``baseline="blur"``). ``--photos``
takes any of the ten (also astronaut, galaxies, retina, tissue): an
unlabelled photo is explained for the class the network predicts on it.

**Partitions** of every photo:

* ``AGREED/tree``: ``AdaptiveGrouper(cnn, baseline="blur", target=k)``, its
  defaults (the start of ``initial_groups=None`` on photos: the photo's
  colour tree, ``skdecomp._image.colour_tree``, cut into
  ``max_evaluations // 10`` = 128 regions), at its default stop and at the
  partition along its ``path_`` whose ``K_eff`` is closest to 30;
* ``AGREED/16``: ``AdaptiveGrouper(cnn, initial_groups=PatchGrouper(16),
  baseline="blur", target=k)`` at its default stop (from 196 patches of 16
  pixels: the fine resolution), and the partition further along its
  ``path_`` whose effective number of groups is closest to 60;
* ``AGREED/32``: the same from ``PatchGrouper(32)`` (49 patches of 32 pixels:
  the coarse resolution), at its default and at ``K_eff`` closest to 20;
* ``AGREED/slic200``, ``AGREED/slic50`` (with ``--from-superpixels``): the
  same from the SLIC partitions below (n = 200 and 50) as initial groups:
  AGREED's merges applied to superpixels instead of squares;
* ``TREE``: the colour tree AGREED/tree starts from, without a model:
  ``colour_tree(photo).cut(n)``, n = 200, 100, 50, 25 (label maps turned
  into groups as SLIC's are);
* ``SQUARE``: ``PatchGrouper(s)``, s = 16, 23, 32, 45 pixels (196, 100, 49,
  25 groups; the last row and column shrink when s does not divide 224);
* ``SLIC``: ``SuperpixelGrouper("slic", segmentation_params={"n_segments":
  n, "compactness": 10})``, n = 200, 100, 50, 25 (Lab colour; 10 is
  scikit-image's usual compactness for Lab, the grouper's default 0.1 gives
  ragged segments on photos);
* ``QUICKSHIFT``: ``SuperpixelGrouper("quickshift", segmentation_params=
  {"kernel_size", "max_dist", "ratio": 0.25, "sigma"})`` at (3, 6, 1),
  (3, 10, 2), (4, 16, 2), (5, 24, 3): effective numbers of groups of about
  110, 60, 30 and 18 on these photos (quickshift leaves small fragments, so
  it has 1.3 to 1.8 times as many groups as ``K_eff``).

The partitions past AGREED's stop come from ``AdaptiveGrouper.cut(n)``:
``cut_label_map(n)`` stops at the default partition.

**Explanations** of every partition (``Explainer(cnn, groups=<its column
groups>, baseline="blur", target=k, random_state=0)``): ``occlusion`` and
``arch`` (exact, K + 1 evaluations each), ``kernel_shap`` (``n_samples =
8 K`` by default, its least budget), ``lime`` (``3 (K + 1)``), ``rise``
(``5 (K + 1)``) and ``integrated_gradients`` (32 Gauss-Legendre steps on the
gradients of the *torch* module, ``load_pretrained_cnn("torch",
n_threads=1)``, computed once per photo per pixel and summed over each
partition's groups, which is what the explainer does with those groups).
RISE's score of a group, ``E_M[v(M) | group kept]``, is the mean output of
the masks that keep it: it differs from every other map by a constant
``c = E_M[v(M)]`` per group, which alone would make its l2 disagreement
grow as ``K c**2``. It is centred and scaled to the decomposition's scale,
``(rise_k - c) / (1 - p)``, whose expectation gives an interaction the
weight ``p**(|U| - 1)`` as LIME does (p = 0.5): c is estimated on the same
masks as the score of a dummy group (one pixel, equal in the photo and in
the baseline of RISE's explainer, which is the blurred photo with that pixel
put back; the rest of the pixel's group is unchanged). Its standard errors
are RISE's over ``1 - p``; they leave out that c comes from the same masks,
which makes them somewhat too large (the floor conservative) when the
masks' outputs vary less than their mean.

**Metrics** of the six maps, divided by ``(f(x) - f(b))**2`` so that photos
compare:

* ``D``: ``skdecomp.metrics.disagreement(maps, measure="l2",
  normalize="sum")``, the mean over the 15 pairs of the summed squared
  difference over groups; ``floor`` its noise floor from the standard
  errors (0 for the exact maps and IG); ``excess = D - floor``, the
  disagreement beyond the sampling noise.
* ``INFD``: infidelity (Yeh et al., 2019) with each group removed (set to
  the baseline) with probability 0.5, ``E_S[(sum_{k in S} phi_k - (f(x) -
  f(x with S removed)))**2]`` over ``--infd-samples`` coalitions drawn
  once per partition and shared by the six maps; the mean over the maps,
  its noise floor (the formula of ``skdecomp.metrics.infidelity``) and the
  excess. ``skdecomp.metrics.infidelity`` itself holds coalitions as 62-bit
  masks and refuses more than 62 groups, so the benchmark evaluates the
  same coalitions itself and checks the result against it once, on the
  first photo's 49 patches of 32 pixels (same masks, same formula: the
  largest relative difference is printed).
  ``se`` is the standard error of the mean over the drawn coalitions.
* ``SRG``: the symmetric relevance gain (Blücher et al., TMLR 2024; higher
  is better) of each map, ``skdecomp.metrics.symmetric_relevance_gain(
  explainer, photo[None], attributions=<its (1, K) group values>,
  n_steps=16)``: each group's value spread evenly over its pixels, pixels
  removed and inserted in that order, the blurred photo as imputer (the
  partition's explainer, ``imputer=None``); the mean over the six maps, on
  the probability's scale (not divided). 192 evaluations per partition,
  counted apart from ``evals``.

Every partition is described by its number of groups ``K``, the mean group
size in pixels, the effective number of groups ``K_eff = exp(-sum_k p_k
log p_k)`` of the area shares ``p_k`` and the largest group's share.

**Comparison at equal K_eff**: for every photo and resolution, AGREED's
default partition against each fixed family's curve of ``excess``,
``INFD`` excess and ``SRG`` interpolated linearly in ``log K_eff`` at AGREED's
``K_eff`` (the nearest end of the curve when it is outside, marked ``*``).
The summary gives the share of photos on which AGREED is lower (on which
its SRG is not lower), and AGREED's model evaluations (``model_calls_``,
with its path past the stop), seconds and evaluations per second per photo.
Last, AGREED/tree's default against every other family (TREE first, the
other AGREED families' default and path cuts too) at its ``K_eff``: the
photos on which its excess disagreement is lower and its mean SRG not
lower, each with a two-sided sign test (``scipy.stats.binomtest``, p =
1/2), and the median differences. Evaluations are counted by a wrapper
around ``ImageModel.forward``; seconds are wall seconds.

``--figure PATH``: excess disagreement, INFD excess and mean SRG against
``K_eff``, one line per family (AGREED: its default and its path cuts),
medians over the photos.

``--quick``: three photos (cat, espresso, rocket), two sizes per fixed
family (16 and 32 px, n = 200 and 50, the finest and the third quickshift),
AGREED at its defaults only, ``rise`` at ``4 (K + 1)`` and 96 INFD
coalitions (5.4 minutes and 27,400 evaluations per photo, on one thread of
two cores shared with two other runs). Without AGREED/tree, TREE and SRG,
the full run took 35 minutes on one thread of two shared cores (167,000
evaluations; with ``--from-superpixels``, 36 minutes, 208,000); they add
six partitions per photo (about 40,000 evaluations and 8 to 10 minutes per
photo in all, estimated).

``--instances A:B`` takes the photo instances of ``bench_image_srg.py``
(``_photos.photo_instances``: the ten photos, then their crops, e.g.
``palace@q1``), explained for the predicted class; ``--agreed tree`` runs
AGREED's default start only; ``--json`` is written after every photo (a
stopped run resumes) and ``--merge`` adds earlier runs' photos to the tables:
``--quick --agreed tree --instances 6:30 --merge
results/agreed_families_quick.json`` extends the six labelled photos to 30.

Run: python benchmarks/bench_image_agreed.py [--quick] [--from-superpixels] [--figure PATH]
     [--photos cat daisy] [--kernel-shap 8] [--lime 3] [--rise 5]
     [--infd-samples 128] [--json PATH] [--instances A:B] [--agreed tree]
     [--merge JSON ...]
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import itertools
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper, SuperpixelGrouper
from skdecomp._image import colour_tree
from skdecomp.datasets import load_pretrained_cnn, load_sample_photos
from skdecomp.metrics import disagreement, infidelity, symmetric_relevance_gain

PHOTOS = ("cat", "espresso", "rocket", "motorcycle", "palace", "daisy")
QUICK_PHOTOS = ("cat", "espresso", "rocket")
METHODS = ("occlusion", "arch", "kernel_shap", "lime", "rise", "integrated_gradients")
P = 0.5  # LIME's and RISE's keep probability, INFD's removal probability
IG_STEPS = 32
SIZE = 224
FIXED = ("TREE", "SQUARE", "SLIC", "QUICKSHIFT")
SRG_STEPS = 16

SQUARE = {"full": (16, 23, 32, 45), "quick": (16, 32)}
SLIC = {"full": (200, 100, 50, 25), "quick": (200, 50)}
TREE = {"full": (200, 100, 50, 25), "quick": (200, 50)}  # cuts of the colour tree
_QS = {
    "k3 d6": {"kernel_size": 3, "max_dist": 6, "ratio": 0.25, "sigma": 1},
    "k3 d10": {"kernel_size": 3, "max_dist": 10, "ratio": 0.25, "sigma": 2},
    "k4 d16": {"kernel_size": 4, "max_dist": 16, "ratio": 0.25, "sigma": 2},
    "k5 d24": {"kernel_size": 5, "max_dist": 24, "ratio": 0.25, "sigma": 3},
}
QUICKSHIFT = {"full": tuple(_QS), "quick": ("k3 d6", "k4 d16")}
# AGREED: initial groups (patch size, or "tree": its default, the colour tree's
# cut) -> K_eff targets of the partitions cut past the stop
AGREED = {"full": {16: (60,), 32: (20,), "tree": (30,)},
          "quick": {16: (), 32: (), "tree": ()}}
# --from-superpixels: AGREED from SLIC superpixels (n_segments) as well
AGREED_SLIC = {"full": {"slic200": (60,), "slic50": (20,)},
               "quick": {"slic200": (), "slic50": ()}}


def initial_grouper(key):
    """AGREED's initial groups: patches (an int, pixels), SLIC ("slicN") or None ("tree")."""
    if key == "tree":
        return None  # the default: the cut of the photo's colour tree
    if isinstance(key, int):
        return PatchGrouper(key)
    return SuperpixelGrouper("slic", segmentation_params={
        "n_segments": int(key[4:]), "compactness": 10})


def resolution_name(key):
    if key == "tree":
        return "colour tree"
    return f"{key} px patches" if str(key).isdigit() else f"SLIC n={key[4:]}"


class Counter:
    """Counts the images an ImageModel gives its runtime.

    Wraps the instance's ``forward``, which the explainers' bound copies
    share (as in ``bench_image_models.py``).
    """

    def __init__(self, cnn):
        self.n = 0
        forward = cnn.forward

        def counted(x):
            self.n += int(x.shape[0])
            return forward(x)

        cnn.forward = counted


# -- partitions -------------------------------------------------------------------
def describe(label_map):
    """K, mean group size (pixels), K_eff and the largest group's area share."""
    area = np.bincount(label_map.ravel())
    p = area[area > 0] / area.sum()
    return {
        "K": int(p.size),
        "mean_pixels": float(label_map.size / p.size),
        "K_eff": float(np.exp(-np.sum(p * np.log(p)))),
        "largest_share": float(p.max()),
    }


def columns_of(label_map):
    """Column groups (all 3 channels of every pixel) of a label map 0..K-1."""
    lab = label_map.ravel()
    order = np.argsort(lab, kind="stable")
    bounds = np.searchsorted(lab[order], np.arange(lab.max() + 2))
    return [(3 * order[a:b][:, None] + np.arange(3)).ravel().tolist()
            for a, b in itertools.pairwise(bounds)]


def label_map_of(groups):
    """Label map of column groups (as ``AdaptiveGrouper.cut`` gives them)."""
    lm = np.full(SIZE * SIZE, -1, dtype=np.int64)
    for g, cols in enumerate(groups):
        lm[np.asarray(cols) // 3] = g
    assert lm.min() == 0
    return lm.reshape(SIZE, SIZE)


def fixed_partitions(image, mode):
    """(family, size label, label map) of the TREE, SQUARE, SLIC and QUICKSHIFT partitions."""
    out = []
    tree = colour_tree(image)
    for n in TREE[mode]:
        out.append(("TREE", f"n={n}", tree.cut(n)))
    for s in SQUARE[mode]:
        out.append(("SQUARE", f"{s} px", PatchGrouper(s).fit(image[None]).label_map_))
    for n in SLIC[mode]:
        g = SuperpixelGrouper("slic", segmentation_params={"n_segments": n, "compactness": 10})
        out.append(("SLIC", f"n={n}", g.fit(image[None]).label_map_))
    for name in QUICKSHIFT[mode]:
        g = SuperpixelGrouper("quickshift", segmentation_params=_QS[name], random_state=0)
        out.append(("QUICKSHIFT", name, g.fit(image[None]).label_map_))
    return out


def agreed_partitions(cnn, counter, image, label, patch, targets):
    """AGREED from ``patch`` (see ``initial_grouper``): its default partition and cuts along path_."""
    grouper = AdaptiveGrouper(cnn, initial_groups=initial_grouper(patch), baseline="blur",
                              target=label)
    before, start = counter.n, time.perf_counter()
    grouper.fit(image[None])
    seconds = time.perf_counter() - start
    fit = {"evaluations": counter.n - before, "model_calls": int(grouper.model_calls_),
           "seconds": seconds, "n_groups": int(grouper.n_groups_),
           "stop": grouper.stop_reason_, "useful": bool(grouper.useful_partition_),
           "path_end": int(grouper.path_[-1]["n_groups"]),
           "n_initial": len(grouper.initial_groups_)}
    family = f"AGREED/{patch}"
    out = [(family, "default", grouper.label_map_)]
    past = [e for e in grouper.path_ if e["n_groups"] < grouper.n_groups_]
    used = set()
    for target in targets:
        if not past:
            break
        entry = min(past, key=lambda e: abs(np.log(e["effective_n_groups"] / target)))
        n = entry["n_groups"]
        if n in used:
            continue
        used.add(n)
        # cut_label_map(n) ends at the default partition; cut(n) follows path_
        out.append((family, f"path~{target}", label_map_of(grouper.cut(n))))
    return out, fit


# -- explanations -------------------------------------------------------------------
def explained_class(cnn, image, label):
    """The photo's ImageNet label, or the class the network predicts (unlabelled photos)."""
    label = int(label)
    if label >= 0:
        return label, False
    return int(np.argmax(cnn.predict(image[None])[0])), True


def integrated_gradients_pixels(torch_cnn, image, label):
    """Integrated Gradients of every pixel (torch gradients), shape (H, W)."""
    explainer = Explainer(torch_cnn, groups=PatchGrouper(1), baseline="blur", target=label,
                          method="integrated_gradients",
                          method_params={"n_steps": IG_STEPS}).fit(image[None])
    values = explainer.explain(image[None], methods=["integrated_gradients"])
    return values["integrated_gradients"].values.reshape(SIZE, SIZE)


def centred_rise(cnn, image, label, label_map, baseline, n_samples, seed):
    """RISE minus its constant E_M[v(M)], over 1 - p: values and standard errors.

    One pixel is made a dummy group (equal in the photo and in the
    baseline); RISE gives a dummy the mean E_M[v(M)] of its own masks.
    """
    area = np.bincount(label_map.ravel())
    flat = label_map.ravel()
    pixel = int(np.flatnonzero(area[flat] > 1)[0])  # a pixel whose group keeps others
    split = flat + 1
    split[pixel] = 0
    base = baseline.copy()
    base.reshape(-1, 3)[pixel] = image.reshape(-1, 3)[pixel]
    explainer = Explainer(cnn, groups=columns_of(split.reshape(label_map.shape)),
                          baseline=base, target=label, method="rise",
                          n_samples=n_samples, random_state=seed).fit(image[None])
    e = explainer.explain(image[None], methods=["rise"])["rise"]
    v, se = e.values[0], e.standard_errors[0]
    return (v[1:] - v[0]) / (1 - P), se[1:] / (1 - P), float(v[0])


def explain(cnn, image, label, label_map, ig_pixels, budgets, seed):
    """The six maps of one partition: {method: (values (K,), standard errors or None)}."""
    groups = columns_of(label_map)
    K = len(groups)
    explainer = Explainer(cnn, groups=groups, baseline="blur", target=label,
                          random_state=seed).fit(image[None])
    X = image[None]
    maps = {}
    for m, e in explainer.explain(X, methods=["occlusion", "arch"]).items():
        maps[m] = (e.values[0], None)
    for m, n in (("kernel_shap", budgets["kernel_shap"] * K),
                 ("lime", budgets["lime"] * (K + 1))):
        e = explainer.set_params(n_samples=n).explain(X, methods=[m])[m]
        maps[m] = (e.values[0], e.standard_errors[0])
    baseline = np.asarray(explainer.background_, dtype=np.float32).reshape(image.shape)
    values, se, c = centred_rise(cnn, image, label, label_map, baseline,
                                 budgets["rise"] * (K + 1), seed)
    maps["rise"] = (values, se)
    ig = np.bincount(label_map.ravel(), weights=ig_pixels.ravel(), minlength=K)
    maps["integrated_gradients"] = (ig, None)
    fx = float(cnn.predict(X)[0, label])
    fb = float(explainer.expected_value_)
    return {m: maps[m] for m in METHODS}, baseline, fx, fb, c, explainer


# -- metrics ------------------------------------------------------------------------
def mean_disagreement(maps):
    """Mean pairwise l2 disagreement (sum over groups), its noise floor and excess."""
    result = disagreement({m: v[None] for m, (v, _) in maps.items()}, measure="l2",
                          normalize="sum",
                          standard_errors={m: None if se is None else se[None]
                                           for m, (_, se) in maps.items()})
    return result.score, result.noise_floor, result.excess


def infd(cnn, image, baseline, label, label_map, maps, fx, fb, n_coalitions, seed):
    """INFD of every map on one draw of coalitions; noise floors as in metrics.infidelity."""
    K = int(label_map.max()) + 1
    # the draws of metrics.infidelity for K groups and 2**K > n_coalitions
    removed = np.random.RandomState(seed).random_sample((n_coalitions, K)) < P
    x = image.astype(np.float32)
    deletion = np.empty(n_coalitions)
    batch = 55
    for start in range(0, n_coalitions, batch):
        pix = removed[start:start + batch][:, label_map]  # (n, H, W)
        hybrids = np.where(pix[..., None], baseline[None], x[None])
        deletion[start:start + batch] = fx - cnn.predict(hybrids)[:, label]
    ind = removed.astype(np.float64)
    pi = ind.mean(axis=0)
    sizes = ind.sum(axis=1)
    pi2 = float(np.mean(sizes * (sizes - 1))) / (K * (K - 1))
    out, sq = {}, []
    for m, (phi, se) in maps.items():
        r2 = (ind @ phi - deletion) ** 2
        sq.append(r2)
        if se is None:
            floor = 0.0
        else:
            gap = abs(phi.sum() - (fx - fb))
            efficient = gap <= 1e-8 * (np.abs(phi).sum() + abs(fx - fb))
            var = se**2
            floor = float(max(np.sum((pi - pi2) * var), 0.0) if efficient
                          else np.sum(pi * var))
        out[m] = (float(r2.mean()), floor)
    per_coalition = np.mean(sq, axis=0)
    se_mean = float(per_coalition.std(ddof=1) / np.sqrt(n_coalitions))
    return out, removed, deletion, se_mean


def relevance_gains(explainer, image, maps):
    """SRG of every map (its group values, spread over each group's pixels), blurred imputer.

    ``explainer`` is the partition's own (``baseline="blur"``): ``imputer=None``
    replaces pixels by its blurred photo. RISE's map is its centred values.
    """
    return {m: float(symmetric_relevance_gain(explainer, image[None], attributions=phi[None],
                                              n_steps=SRG_STEPS).srg[0])
            for m, (phi, _) in maps.items()}


def check_infd(explainer, image, maps, out, n_coalitions, seed):
    """metrics.infidelity on the same coalitions: the largest relative difference."""
    worst = 0.0
    for m, (phi, se) in maps.items():
        r = infidelity(explainer, image[None], attributions=phi[None],
                       standard_errors=None if se is None else se[None],
                       p=P, n_samples=n_coalitions, random_state=seed)
        score, floor = out[m]
        worst = max(worst, abs(r.score - score) / max(score, 1e-300),
                    abs((r.noise_floor or 0.0) - floor) / max(floor, score * 1e-12, 1e-300))
    return worst


# -- comparison ---------------------------------------------------------------------
def on_curve(points, keff):
    """A family's value at ``keff``: linear in log K_eff, or its nearest end (flag True)."""
    points = sorted(points)
    xs = np.log([p[0] for p in points])
    ys = [p[1] for p in points]
    t = np.log(keff)
    if t <= xs[0] or t >= xs[-1]:
        end = 0 if t <= xs[0] else -1
        return ys[end], bool(abs(t - xs[end]) > 1e-9)
    return float(np.interp(t, xs, ys)), False


def photo_table(name, rows):
    print(f"\n-- {name}: f(x) = {rows[0]['fx']:.4f}, f(b) = {rows[0]['fb']:.4f} "
          "(D, floor, excess and INFD divided by (f(x) - f(b))**2; SRG: mean over "
          "the maps, on the probability's scale) --")
    print(f"{'partition':<24}{'K':>5}{'px':>7}{'K_eff':>7}{'max':>6}"
          f"{'D':>8}{'floor':>8}{'excess':>8}{'INFD':>8}{'floor':>8}{'excess':>8}"
          f"{'se':>7}{'SRG':>7}{'evals':>7}{'s':>6}")
    for r in rows:
        label = f"{r['family']} {r['size']}"
        print(f"{label:<24}{r['K']:>5}{r['mean_pixels']:>7.0f}{r['K_eff']:>7.1f}"
              f"{r['largest_share']:>6.3f}{r['D']:>8.3f}{r['D_floor']:>8.3f}"
              f"{r['D_excess']:>8.3f}{r['INFD']:>8.3f}{r['INFD_floor']:>8.3f}"
              f"{r['INFD_excess']:>8.3f}{r['INFD_se']:>7.3f}{r['SRG']:>7.3f}{r['evaluations']:>7d}"
              f"{r['seconds']:>6.0f}", flush=True)


def comparisons(rows, photos, keys):
    """Per photo and resolution: AGREED's default against each fixed family at its K_eff."""
    table = []
    for photo in photos:
        mine = [r for r in rows if r["photo"] == photo]
        for patch in keys:
            agreed = [r for r in mine if r["family"] == f"AGREED/{patch}"
                      and r["size"] == "default"]
            if not agreed:
                continue
            a = agreed[0]
            for fam in FIXED:
                pts = [r for r in mine if r["family"] == fam]
                if len(pts) < 1:
                    continue
                entry = {"photo": photo, "resolution": patch, "family": fam,
                         "K_eff": a["K_eff"]}
                for metric in ("D_excess", "INFD_excess", "SRG"):
                    value, outside = on_curve([(r["K_eff"], r[metric]) for r in pts],
                                              a["K_eff"])
                    entry[metric] = (a[metric], value, outside)
                closest = min(pts, key=lambda r: abs(np.log(r["K_eff"] / a["K_eff"])))
                entry["closest"] = (closest["size"], closest["K_eff"],
                                    closest["D_excess"], closest["INFD_excess"], closest["SRG"])
                table.append(entry)
    return table


def print_comparisons(table, photos, agreed_fits, keys):
    print("\n== AGREED's default against each fixed family at AGREED's K_eff "
          "(interpolated in log K_eff; * = nearest end of the curve) ==")
    print(f"{'photo':<11}{'res':>4}{'family':>12}{'K_eff':>7}"
          f"{'excess D':>10}{'family':>9}{'':>2}{'INFD exc.':>10}{'family':>9}{'':>2}"
          f"{'SRG':>8}{'family':>9}{'':>2}{'closest (K_eff)':>18}")
    for e in table:
        d, i, g = e["D_excess"], e["INFD_excess"], e["SRG"]
        size, keff = e["closest"][:2]
        print(f"{e['photo']:<11}{e['resolution']:>4}{e['family']:>12}{e['K_eff']:>7.1f}"
              f"{d[0]:>10.3f}{d[1]:>9.3f}{'*' if d[2] else '':>2}"
              f"{i[0]:>10.3f}{i[1]:>9.3f}{'*' if i[2] else '':>2}"
              f"{g[0]:>8.3f}{g[1]:>9.3f}{'*' if g[2] else '':>2}"
              f"{f'{size} ({keff:.0f})':>18}")
    print("\n== Summary: share of photos on which AGREED's default is lower than the "
          "family at equal K_eff (SRG: not lower) ==")
    print(f"{'resolution':<14}{'family':<12}{'excess D':>10}{'INFD excess':>13}"
          f"{'both':>7}{'SRG':>7}{'  (closest partition: D, INFD)':>32}")
    for patch in keys:
        for fam in FIXED:
            sel = [e for e in table if e["resolution"] == patch and e["family"] == fam]
            if not sel:
                continue
            n = len(sel)
            wd = sum(e["D_excess"][0] < e["D_excess"][1] for e in sel)
            wi = sum(e["INFD_excess"][0] < e["INFD_excess"][1] for e in sel)
            wb = sum(e["D_excess"][0] < e["D_excess"][1]
                     and e["INFD_excess"][0] < e["INFD_excess"][1] for e in sel)
            wg = sum(e["SRG"][0] >= e["SRG"][1] for e in sel)
            cd = sum(e["D_excess"][0] < e["closest"][2] for e in sel)
            ci = sum(e["INFD_excess"][0] < e["closest"][3] for e in sel)
            print(f"{resolution_name(patch):<14}{fam:<12}{f'{wd}/{n}':>10}{f'{wi}/{n}':>13}"
                  f"{f'{wb}/{n}':>7}{f'{wg}/{n}':>7}{f'{cd}/{n}, {ci}/{n}':>32}")
    print("\n== AGREED's cost per photo (fit, with its path past the stop) ==")
    print(f"{'photo':<11}{'res':>8}{'initial':>8}{'groups':>8}{'stop':>16}{'useful':>8}"
          f"{'path to':>8}{'evals':>7}{'seconds':>9}{'evals/s':>9}")
    for photo in photos:
        for patch in keys:
            f = agreed_fits[photo].get(patch)
            if f is None:
                continue
            print(f"{photo:<11}{patch!s:>8}{f['n_initial']:>8}{f['n_groups']:>8}{f['stop']:>16}"
                  f"{f['useful']!s:>8}{f['path_end']:>8}{f['evaluations']:>7}"
                  f"{f['seconds']:>9.1f}{f['evaluations'] / f['seconds']:>9.1f}")


def tree_comparison(rows, photos):
    """Per photo: AGREED/tree's default against every other family's curve at its K_eff."""
    present = list(dict.fromkeys(r["family"] for r in rows))
    others = [f for f in FIXED if f in present]
    others += [f for f in present if f not in others and f != "AGREED/tree"]
    table = []
    for photo in photos:
        mine = [r for r in rows if r["photo"] == photo]
        a = next((r for r in mine if r["family"] == "AGREED/tree" and r["size"] == "default"),
                 None)
        if a is None:
            continue
        for fam in others:
            pts = [r for r in mine if r["family"] == fam]
            if not pts:
                continue
            entry = {"photo": photo, "family": fam, "K_eff": a["K_eff"]}
            for metric in ("D_excess", "INFD_excess", "SRG"):
                value, outside = on_curve([(r["K_eff"], r[metric]) for r in pts], a["K_eff"])
                entry[metric] = (a[metric], value, outside)
            table.append(entry)
    return table


def print_tree_comparison(table):
    from scipy.stats import binomtest

    if not table:
        return
    print("\n== AGREED/tree's default against each family at its K_eff (interpolated in "
          "log K_eff): photos where its excess D and its INFD excess are lower, and where "
          "its mean SRG is not lower; p: two-sided sign test; median differences "
          "AGREED/tree - family ==")
    print(f"{'family':<16}{'photos':>7}{'ends*':>6}{'D lower':>9}{'p':>8}{'med dD':>9}"
          f"{'INFD lower':>11}{'p':>8}{'SRG >=':>8}{'p':>8}{'med dSRG':>10}")
    for fam in dict.fromkeys(e["family"] for e in table):
        sel = [e for e in table if e["family"] == fam]
        n = len(sel)
        ends = sum(e["D_excess"][2] for e in sel)
        wd = sum(e["D_excess"][0] < e["D_excess"][1] for e in sel)
        wi = sum(e["INFD_excess"][0] < e["INFD_excess"][1] for e in sel)
        wg = sum(e["SRG"][0] >= e["SRG"][1] for e in sel)
        dd = np.median([e["D_excess"][0] - e["D_excess"][1] for e in sel])
        dg = np.median([e["SRG"][0] - e["SRG"][1] for e in sel])
        print(f"{fam:<16}{n:>7}{ends:>6}{f'{wd}/{n}':>9}{binomtest(wd, n).pvalue:>8.3f}"
              f"{dd:>+9.3f}{f'{wi}/{n}':>11}{binomtest(wi, n).pvalue:>8.3f}"
              f"{f'{wg}/{n}':>8}{binomtest(wg, n).pvalue:>8.3f}{dg:>+10.3f}")


def figure(rows, photos, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    style = {"AGREED/16": ("C3", "o"), "AGREED/32": ("C1", "o"), "SQUARE": ("C0", "s"),
             "SLIC": ("C2", "^"), "QUICKSHIFT": ("C4", "v"),
             "AGREED/slic200": ("C5", "D"), "AGREED/slic50": ("C6", "D"),
             "AGREED/tree": ("k", "o"), "TREE": ("C7", "P")}
    present = {r["family"] for r in rows}
    families = [f for f in style if f in present]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), layout="constrained")
    titles = {"D_excess": "mean pairwise l2 disagreement - noise floor",
              "INFD_excess": "infidelity (INFD) - noise floor",
              "SRG": "symmetric relevance gain (mean over the maps)"}
    for ax, metric in zip(axes, ("D_excess", "INFD_excess", "SRG")):
        for fam in families:
            sizes = []
            for r in rows:
                if r["family"] == fam and r["size"] not in sizes:
                    sizes.append(r["size"])
            pts = []
            for size in sizes:
                sel = [r for r in rows if r["family"] == fam and r["size"] == size]
                pts.append((np.median([r["K_eff"] for r in sel]),
                            np.median([r[metric] for r in sel]), size))
            pts.sort()
            color, marker = style[fam]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color,
                    label=fam)
            for keff, value, size in pts:
                if size == "default":
                    ax.plot(keff, value, marker="*", markersize=14, color=color,
                            markeredgecolor="k", linestyle="none")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks([10, 20, 50, 100, 200])
        ax.set_xlabel("effective number of groups $K_{eff}$ (median over photos)")
        ax.set_ylabel("SRG (higher is better)" if metric == "SRG"
                      else "excess / (f(x) - f(b))$^2$")
        ax.set_title(titles[metric], fontsize="medium")
        ax.axhline(0, color="0.6", linewidth=0.8)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels),
               fontsize="small", title="star: AGREED's default", title_fontsize="small")
    fig.suptitle(f"EfficientNet-Lite0, {len(photos)} photo{'s' * (len(photos) > 1)}, "
                 "blurred baseline; occlusion, arch, KernelSHAP, LIME, RISE, IG "
                 "(medians over the photos)", fontsize="medium")
    fig.savefig(path, dpi=110)
    print(f"\nfigure saved to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 photos, 2 sizes per family, smaller budgets")
    parser.add_argument("--photos", nargs="+", default=None,
                        help="names of load_sample_photos (default: the six labelled; "
                        "unlabelled ones are explained for the predicted class)")
    parser.add_argument("--kernel-shap", type=int, default=None,
                        help="kernel_shap n_samples per group (default 8)")
    parser.add_argument("--lime", type=int, default=None,
                        help="lime n_samples per K + 1 (default 3)")
    parser.add_argument("--rise", type=int, default=None,
                        help="rise n_samples per K + 1 (default 5; 4 with --quick)")
    parser.add_argument("--infd-samples", type=int, default=None,
                        help="INFD coalitions per partition (default 128; 96 with --quick)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from-superpixels", action="store_true",
                        help="AGREED from SLIC superpixels (n=200, n=50) as well")
    parser.add_argument("--figure", default=None, help="save the figure to this path")
    parser.add_argument("--json", default=None, help="save every row to this path "
                        "(after every photo; photos already in it are skipped)")
    parser.add_argument("--instances", default=None,
                        help="A:B, the photo instances A..B-1 of bench_image_srg.py "
                        "(sample photos and their crops), explained for the predicted class")
    parser.add_argument("--agreed", nargs="+", default=None,
                        help="AGREED's starts to run (16, 32, tree; default all)")
    parser.add_argument("--merge", nargs="+", default=(),
                        help="JSON files of earlier runs whose photos join the tables")
    args = parser.parse_args()
    mode = "quick" if args.quick else "full"
    budgets = {
        "kernel_shap": args.kernel_shap or 8,
        "lime": args.lime or 3,
        "rise": args.rise or (4 if args.quick else 5),
    }
    n_infd = args.infd_samples or (96 if args.quick else 128)
    if args.instances:
        from _photos import photo_instances

        a, b = (int(v) for v in args.instances.split(":"))
        chosen = photo_instances(SIZE)[a:b]
        todo = [(img, -1, name) for name, img in chosen]
    else:
        names = args.photos or list(QUICK_PHOTOS if args.quick else PHOTOS)
        photos = load_sample_photos(size=SIZE, names=names)
        todo = list(zip(photos.images, photos.labels, photos.names))
    rows, agreed_fits = [], {}
    for path in list(args.merge) + ([args.json] if args.json and os.path.isfile(args.json)
                                    else []):
        with open(path) as fh:
            old = json.load(fh)
        known = {r["photo"] for r in rows}
        rows += [r for r in old["rows"] if r["photo"] not in known]
        agreed_fits.update({k: v for k, v in old["agreed"].items() if k not in known})
    done = {r["photo"] for r in rows}
    names = list(dict.fromkeys([r["photo"] for r in rows] + [t[2] for t in todo]))
    todo = [t for t in todo if t[2] not in done]
    cnn = load_pretrained_cnn("onnx", n_threads=1)
    torch_cnn = load_pretrained_cnn("torch", n_threads=1)
    counter = Counter(cnn)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    print(f"EfficientNet-Lite0 (ONNX Runtime, 1 thread; IG on the torch module's gradients, "
          f"{IG_STEPS} steps), {len(names)} photos at {SIZE}x{SIZE} ({len(done)} from "
          "earlier runs), blurred baseline")
    print(f"budgets: kernel_shap {budgets['kernel_shap']} K, lime {budgets['lime']} (K + 1), "
          f"rise {budgets['rise']} (K + 1) (centred), INFD {n_infd} coalitions (p = {P})",
          flush=True)
    checked = None
    agreed_keys = dict(AGREED[mode])
    if args.agreed:
        agreed_keys = {(int(k) if k.isdigit() else k): agreed_keys[int(k) if k.isdigit()
                                                                  else k]
                       for k in args.agreed}
    if args.from_superpixels:
        agreed_keys.update(AGREED_SLIC[mode])
    start_all = time.perf_counter()
    for image, label, name in todo:
        label, predicted = explained_class(cnn, image, label)
        t0 = time.perf_counter()
        ig_pixels = integrated_gradients_pixels(torch_cnn, image, label)
        ig_seconds = time.perf_counter() - t0
        parts, agreed_fits[name] = [], {}
        for patch, targets in agreed_keys.items():
            found, agreed_fits[name][patch] = agreed_partitions(
                cnn, counter, image, label, patch, targets)
            parts += found
        parts += fixed_partitions(image, mode)
        print(f"\n[{time.perf_counter() - start_all:6.0f} s] {name} "
              f"(class {label}{', predicted' if predicted else ''}): "
              f"IG per pixel {ig_seconds:.0f} s; "
              + ", ".join(f"AGREED/{k} {f['seconds']:.0f} s"
                          for k, f in agreed_fits[name].items())
              + f"; {len(parts)} partitions",
              flush=True)
        photo_rows = []
        for family, size, label_map in parts:
            before, t = counter.n, time.perf_counter()
            maps, baseline, fx, fb, c, explainer = explain(
                cnn, image, label, label_map, ig_pixels, budgets, args.seed)
            scale = (fx - fb) ** 2
            d, d_floor, d_excess = mean_disagreement(maps)
            per_method, _, _, infd_se = infd(cnn, image, baseline, label, label_map, maps,
                                             fx, fb, n_infd, args.seed)
            info = describe(label_map)
            if checked is None and info["K"] <= 62 and family == "SQUARE":
                checked = (name, family, size, info["K"],
                           check_infd(explainer, image, maps, per_method, n_infd, args.seed))
            i_score = np.mean([s for s, _ in per_method.values()])
            i_floor = np.mean([f for _, f in per_method.values()])
            evaluations, seconds = counter.n - before, time.perf_counter() - t
            before, t = counter.n, time.perf_counter()
            srg = relevance_gains(explainer, image, maps)
            row = {"photo": name, "family": family, "size": size, **info, "fx": fx, "fb": fb,
                   "D": d / scale, "D_floor": d_floor / scale, "D_excess": d_excess / scale,
                   "INFD": i_score / scale, "INFD_floor": i_floor / scale,
                   "INFD_excess": (i_score - i_floor) / scale, "INFD_se": infd_se / scale,
                   "INFD_methods": {m: (s / scale, f / scale)
                                    for m, (s, f) in per_method.items()},
                   "SRG": float(np.mean(list(srg.values()))), "SRG_methods": srg,
                   "rise_constant": c, "predicted_class": predicted,
                   "evaluations": evaluations, "seconds": seconds,
                   "SRG_evaluations": counter.n - before,
                   "SRG_seconds": time.perf_counter() - t}
            photo_rows.append(row)
            print(f"  [{time.perf_counter() - start_all:6.0f} s] {family} {size}: K={info['K']}, "
                  f"excess D {row['D_excess']:.3f}, INFD excess {row['INFD_excess']:.3f}, "
                  f"SRG {row['SRG']:.3f} ({row['evaluations']} evals, {row['seconds']:.0f} s; "
                  f"SRG {row['SRG_evaluations']} evals, {row['SRG_seconds']:.0f} s)", flush=True)
        rows += photo_rows
        photo_table(name, photo_rows)
        if args.json:  # after every photo: a stopped run resumes
            save(args.json, rows, agreed_fits, None, None, budgets, n_infd)
    print(f"\ntotal {time.perf_counter() - start_all:.0f} s, {counter.n} ONNX evaluations")
    if checked is not None:
        print(f"INFD check on {checked[0]}, {checked[1]} {checked[2]} ({checked[3]} groups): "
              f"largest relative difference from skdecomp.metrics.infidelity {checked[4]:.1e}")
    print("INFD per method (mean over photos and partitions, / (f(x) - f(b))**2; floor): "
          + ", ".join(f"{m} {np.mean([r['INFD_methods'][m][0] for r in rows]):.3f} "
                      f"({np.mean([r['INFD_methods'][m][1] for r in rows]):.3f})"
                      for m in METHODS))
    print(f"SRG per method ({SRG_STEPS} steps, blurred imputer; mean over photos and "
          "partitions): " + ", ".join(f"{m} {np.mean([r['SRG_methods'][m] for r in rows]):.3f}"
                                      for m in METHODS))
    print("RISE's constant E_M[v(M)] / (f(x) - f(b)), median: "
          f"{np.median([r['rise_constant'] / (r['fx'] - r['fb']) for r in rows]):.2f}")
    # JSON keeps the starts' keys as strings
    agreed_fits = {p: {str(k): f for k, f in fits.items()} for p, fits in agreed_fits.items()}
    keys = list(dict.fromkeys(k for fits in agreed_fits.values() for k in fits))
    table = comparisons(rows, names, keys)
    print_comparisons(table, names, agreed_fits, keys)
    tree_table = tree_comparison(rows, names)
    print_tree_comparison(tree_table)
    if args.figure:
        figure(rows, names, args.figure)
    if args.json:
        save(args.json, rows, agreed_fits, table, tree_table, budgets, n_infd)


def save(path, rows, agreed_fits, table, tree_table, budgets, n_infd):
    with open(path, "w") as fh:
        json.dump({"rows": rows, "agreed": agreed_fits, "comparisons": table,
                   "tree_comparisons": tree_table, "budgets": budgets,
                   "infd_samples": n_infd, "srg_steps": SRG_STEPS}, fh, indent=1,
                  default=float)


if __name__ == "__main__":
    main()
