"""Owen values over AGREED's merge tree against shap's PartitionExplainer, on real photos.

EfficientNet-Lite0 on ONNX Runtime, one thread (``load_pretrained_cnn(runtime=
"onnx", n_threads=1)``), on the labelled sample photos at 224x224
(``load_sample_photos``), each explained for its ImageNet label.

* **skdecomp Owen**: AGREED at its defaults on the photo
  (``AdaptiveGrouper(cnn, initial_groups=PatchGrouper(16), baseline="blur",
  target=k)``: 196 patches, at most 2,000 evaluations), its merges as a
  binary tree (``linkage()``: AGREED's merges and its path past the stop,
  then the groups left joined two at a time, adjacent pairs of least area
  first), and ``Explainer(cnn, method="owen", groups=PatchGrouper(16),
  hierarchy=Z, baseline="blur", target=k, n_samples=budget,
  method_params={"estimator": "partition"})``: the tree expanded top-down,
  the largest contributions first, as shap does on its own tree, what is
  left unexpanded spread over the patches by area. The exact value would
  need billions of coalitions.
* **shap Partition**: ``shap.PartitionExplainer(f, shap.maskers.Image(
  "blur(128,128)", (224, 224, 3)))(photo, max_evals=budget)``, f the same
  ImageModel's probability of the class; its values per pixel and channel,
  summed over the channels.

**AGREED's cost is reported apart** (the "AGREED" row): its model
evaluations and seconds in ``fit``, once per photo, shared by both Owen
budgets. They are *not* in the Owen rows' budgets; the last column
("+AGREED") adds them.

Faithfulness, per photo and explanation, at the pixel level: pixels ranked
by their value (an Owen patch's value spread evenly over its 256 pixels;
ties broken at random with a fixed seed); **deletion** replaces the pixels
by the baseline image from the most to the least important, **insertion**
puts them into the baseline in the same order, in ``--steps`` equal steps;
the AUC is the mean of the class probability along the curve (trapezoids
over the fraction of pixels, 0 to 1). Lower deletion and higher insertion
are better. The baseline image of the curves is skdecomp's blurred photo
(a Gaussian of standard deviation 28 pixels, the explainers' own ``"blur"``)
and, in the second table, shap's ``blur(128,128)`` (OpenCV's 128x128 box
blur), so that neither method is scored only against its own baseline. A
random ranking is the reference.

Milliseconds per evaluation: CPU seconds of this process (one thread, so
the other load of shared cores changes them least; wall seconds are shown
too) for the explanation alone (the model loaded, AGREED fitted) over its
model evaluations, counted by a wrapper around ``ImageModel.forward``.

``--superpixels 200``: SLIC's superpixels (n_segments = 200, compactness
10) as the leaves and AGREED's initial groups instead of the patches.

Run: python benchmarks/bench_image_owen.py [--quick] [--photos cat espresso]
     [--steps 32] [--superpixels N] [--json out.json]
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time

import numpy as np

from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper, SuperpixelGrouper
from skdecomp.datasets import load_pretrained_cnn, load_sample_photos

PATCH = 16
SIZE = 224
LABELLED = ("cat", "espresso", "rocket", "motorcycle", "palace", "daisy")
SHAP_BUDGETS = (500, 2000)
OWEN_BUDGETS = (500, 2000)
SEED = 0


class Counter:
    """Counts the images an ImageModel gives its runtime (wraps its ``forward``)."""

    def __init__(self, cnn):
        self.n = 0
        forward = cnn.forward

        def counted(x):
            self.n += int(x.shape[0])
            return forward(x)

        cnn.forward = counted


def now():
    """(wall, CPU) seconds."""
    return np.array([time.perf_counter(), time.process_time()])


def ranked_pixels(pixel_values, seed=SEED):
    """Pixels from the largest value to the smallest, ties broken at random."""
    v = np.asarray(pixel_values, dtype=np.float64).ravel()
    tie = np.random.default_rng(seed).random(v.size)
    return np.lexsort((tie, -v))


def curves(cnn, photo, baseline, order, label, steps):
    """Deletion and insertion curves: probability at 0, 1/steps, ..., 1 of the pixels."""
    n_pixels = order.size
    counts = np.round(np.linspace(0, n_pixels, steps + 1)).astype(int)
    x = photo.reshape(n_pixels, -1).astype(np.float32)
    b = baseline.reshape(n_pixels, -1).astype(np.float32)
    deleted, inserted = [], []
    for c in counts:
        d, i = x.copy(), b.copy()
        d[order[:c]] = b[order[:c]]
        i[order[:c]] = x[order[:c]]
        deleted.append(d.reshape(photo.shape))
        inserted.append(i.reshape(photo.shape))
    p = cnn.predict(np.stack(deleted + inserted))[:, label]
    return p[: steps + 1], p[steps + 1:]


def auc(curve):
    """Mean of the curve over the fraction of pixels, by trapezoids."""
    c = np.asarray(curve, dtype=np.float64)
    return float((c[1:] + c[:-1]).sum() / (2 * (c.size - 1)))


def owen_pixel_map(explainer, values):
    """An Owen patch map as pixel values: each patch's value over its pixels."""
    labels = np.asarray(explainer.labels_).reshape(SIZE, SIZE, -1)[..., 0]
    sizes = np.bincount(labels.ravel())
    return (np.asarray(values, dtype=np.float64) / sizes)[labels]


def explain_photo(cnn, counter, photo, name, label, args):
    import shap

    rows = []
    # -- AGREED (in fit) and the Owen values -----------------------------------------
    counter.n = 0
    start = now()
    def leaves():
        if args.superpixels:
            return SuperpixelGrouper("slic", segmentation_params={
                "n_segments": args.superpixels, "compactness": 10})
        return PatchGrouper(PATCH)

    grouper = AdaptiveGrouper(cnn, initial_groups=leaves(), baseline="blur",
                              target=label).fit(photo[None])
    Z = grouper.linkage()
    agreed_seconds = now() - start
    agreed_evals = counter.n
    rows.append({"method": "AGREED (fit)", "budget": None, "evals": agreed_evals,
                 "seconds": agreed_seconds.tolist(), "groups": len(grouper.groups_),
                 "largest": next(p["largest_share"] for p in grouper.path_ if p["chosen"])})
    for budget in OWEN_BUDGETS:
        explainer = Explainer(
            cnn, method="owen", groups=leaves(), hierarchy=Z, baseline="blur",
            target=label, n_samples=budget, method_params={"estimator": "partition"},
        ).fit(photo[None])
        counter.n = 0
        start = now()
        res = explainer.explain(photo[None], methods=["owen"])["owen"]
        seconds = now() - start
        rows.append({"method": "skdecomp Owen", "budget": budget, "evals": counter.n,
                     "seconds": seconds.tolist(),
                     "pixels": owen_pixel_map(explainer, res.values[0]),
                     "total": float(res.values.sum())})
    blurred = np.asarray(explainer.background_, dtype=np.float32).reshape(photo.shape)

    # -- shap's PartitionExplainer ---------------------------------------------------
    def f(images):
        return cnn.predict(np.asarray(images, dtype=np.float32))[:, label:label + 1]

    masker = shap.maskers.Image("blur(128,128)", photo.shape)
    for budget in SHAP_BUDGETS:
        counter.n = 0
        start = now()
        sv = shap.PartitionExplainer(f, masker)(
            photo[None].astype(np.float32), max_evals=budget,
            batch_size=cnn.batch_rows(photo.size), silent=True)
        seconds = now() - start
        values = np.asarray(sv.values)[0, ..., 0]  # (224, 224, 3)
        rows.append({"method": "shap Partition", "budget": budget, "evals": counter.n,
                     "seconds": seconds.tolist(), "pixels": values.sum(axis=-1),
                     "total": float(values.sum())})

    # -- faithfulness ------------------------------------------------------------------
    import cv2

    baselines = {"gauss": blurred,
                 "box": cv2.blur(photo.astype(np.float32), (128, 128))}
    random_order = np.random.default_rng(SEED + 1).permutation(SIZE * SIZE)
    rows.append({"method": "random ranking", "budget": None, "evals": 0,
                 "seconds": [0.0, 0.0], "order": random_order})
    for row in rows:
        if "pixels" in row:
            row["order"] = ranked_pixels(row.pop("pixels"))
        if "order" not in row:
            continue
        order = row.pop("order")
        for key, base in baselines.items():
            d, i = curves(cnn, photo, base, order, label, args.steps)
            row[f"del_{key}"], row[f"ins_{key}"] = auc(d), auc(i)
    f_x = float(cnn.predict(photo[None])[0, label])
    return {"photo": name, "label": int(label), "f_x": f_x,
            "f_b": float(explainer.expected_value_), "agreed_evals": agreed_evals,
            "rows": rows}


def print_photo(out):
    print(f"\n{out['photo']} (class {out['label']}): f(x) = {out['f_x']:.4f}, "
          f"f(blurred) = {out['f_b']:.4f}")
    print(f"{'method':<16}{'budget':>7}{'evals':>7}{'wall s':>8}{'CPU ms/eval':>12}"
          f"{'del':>8}{'ins':>8}{'ins-del':>8}{'del box':>9}{'ins box':>9}{'+AGREED':>9}")
    for r in out["rows"]:
        if r["method"].startswith("AGREED"):
            print(f"{r['method']:<16}{'':>7}{r['evals']:>7}{r['seconds'][0]:>8.1f}"
                  f"{1e3 * r['seconds'][1] / max(r['evals'], 1):>12.1f}"
                  f"   ({r['groups']} groups, the largest {r['largest']:.1%} of the "
                  "image)")
            continue
        ms = 1e3 * r["seconds"][1] / r["evals"] if r["evals"] else float("nan")
        plus = (r["evals"] + out["agreed_evals"] if r["method"] == "skdecomp Owen"
                else r["evals"])
        budget = "" if r["budget"] is None else r["budget"]
        print(f"{r['method']:<16}{budget:>7}{r['evals']:>7}{r['seconds'][0]:>8.1f}"
              f"{ms:>12.1f}{r['del_gauss']:>8.3f}{r['ins_gauss']:>8.3f}"
              f"{r['ins_gauss'] - r['del_gauss']:>8.3f}{r['del_box']:>9.3f}"
              f"{r['ins_box']:>9.3f}{plus:>9}")
    owens = [r for r in out["rows"] if r["method"] == "skdecomp Owen"]
    print("Owen: sum of patch values - (f(x) - f(b)) = "
          + ", ".join(f"{r['total'] - (out['f_x'] - out['f_b']):.1e}" for r in owens))


def summary(results):
    print("\nMedian over the photos (deletion, insertion against the Gaussian blur; "
          "against the box blur)")
    print(f"{'method':<16}{'budget':>7}{'evals':>7}{'CPU ms/eval':>12}{'del':>8}{'ins':>8}"
          f"{'ins-del':>8}{'del box':>9}{'ins box':>9}")
    keys = sorted({(r["method"], r["budget"] or 0) for o in results for r in o["rows"]})
    for method, budget in keys:
        got = [r for o in results for r in o["rows"]
               if r["method"] == method and (r["budget"] or 0) == budget]
        evals = float(np.median([r["evals"] for r in got]))
        ms = float(np.median([1e3 * r["seconds"][1] / r["evals"] for r in got
                              if r["evals"]] or [np.nan]))
        if method.startswith("AGREED"):
            print(f"{method:<16}{'':>7}{evals:>7.0f}{ms:>12.1f}   (not in the Owen "
                  "budgets)")
            continue
        med = {k: float(np.median([r[k] for r in got]))
               for k in ("del_gauss", "ins_gauss", "del_box", "ins_box")}
        print(f"{method:<16}{budget or '':>7}{evals:>7.0f}{ms:>12.1f}{med['del_gauss']:>8.3f}"
              f"{med['ins_gauss']:>8.3f}{med['ins_gauss'] - med['del_gauss']:>8.3f}"
              f"{med['del_box']:>9.3f}{med['ins_box']:>9.3f}")
    wins = {}
    for o in results:
        best = {}
        for r in o["rows"]:
            if r["method"] in ("skdecomp Owen", "shap Partition"):
                best.setdefault(r["budget"], {})[r["method"]] = r
        for budget, pair in best.items():
            if len(pair) == 2:
                a, b = pair["skdecomp Owen"], pair["shap Partition"]
                w = wins.setdefault(budget, [0, 0, 0])
                w[0] += a["del_gauss"] < b["del_gauss"]
                w[1] += a["ins_gauss"] > b["ins_gauss"]
                w[2] += 1
    for budget, (d, i, n) in sorted(wins.items()):
        print(f"at {budget} evaluations Owen beats shap on deletion on {d}/{n} photos, "
              f"on insertion on {i}/{n} (Gaussian-blur curves)")


def warm_up(cnn, photo):
    """The runtime at full batches and shap's first call, before anything is timed."""
    import shap

    cnn.predict(np.repeat(photo[None], cnn.batch_rows(photo.size), axis=0))
    masker = shap.maskers.Image("blur(128,128)", photo.shape)
    shap.PartitionExplainer(lambda x: cnn.predict(np.asarray(x, dtype=np.float32))[:, :1],
                            masker)(photo[None].astype(np.float32), max_evals=100,
                                    silent=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the cat photo only")
    parser.add_argument("--photos", nargs="*", default=None)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--json", default=None)
    parser.add_argument("--superpixels", type=int, default=None,
                        help="SLIC superpixels (this n_segments) as the leaves, not patches")
    args = parser.parse_args()
    names = ["cat"] if args.quick else list(args.photos or LABELLED)
    photos = load_sample_photos(size=SIZE, names=names)
    cnn = load_pretrained_cnn(runtime="onnx", n_threads=1)
    counter = Counter(cnn)
    warm_up(cnn, photos.images[0])
    results = []
    for photo, name, label in zip(photos.images, photos.names, photos.labels):
        if label < 0:  # no ImageNet label: the predicted class
            label = int(np.argmax(cnn.predict(photo[None])[0]))
        out = explain_photo(cnn, counter, photo, name, int(label), args)
        print_photo(out)
        results.append(out)
    summary(results)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
