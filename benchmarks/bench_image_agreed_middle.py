"""AGREED's image loss at the corners of the hybrid cube or in its middle, on real photos.

AGREED scores a photo's groups on the pair {photo x, baseline b}: the
interactions it sees are those at the corners of the cube of hybrids
``x_S b_-S``. Does a loss that looks in the middle of the cube find groups
with fewer interactions there? Here the middle is looked at directly, at the
same number of model evaluations: AGREED is run on the pair of complementary
half-hybrids ``c1 = x_H b_-H`` and ``c0 = b_H x_-H`` (``H``: a random half
of the initial groups), whose own hybrids are points in the middle of the
{x, b} cube, every pixel still moving between its value in x and in b.

Per photo (the SRG benchmark's instances on EfficientNet-Lite0, each
explained for the predicted class, blurred baseline):

* ``corner``: ``AdaptiveGrouper(cnn, baseline="blur", target=k).fit(x)``,
  AGREED's default (the colour tree's cut, merged by interactions on {x, b}).
* ``middle``: the same grouper fitted on ``c1`` with ``baseline=c0``,
  starting from the same cut of x's colour tree.

The grouper with fewer groups is cut back along its merge path to the
other's number (a path runs from the initial groups to the default), and
each partition is scored as in ``bench_image_agreed.py``
(``--quick`` budgets): the six explainers' disagreement and the infidelity
at random half-removals (p = 0.5) against {x, blur}, each less its noise
floor, as a share of (f(x) - f(b))^2. Paired over photos, with sign tests.

Results (``results/agreed_middle.txt``, 30 photos, ``--instances 0:30``): the
middle loss merges more (median 53 groups against 92, at most 1,281
evaluations each); at equal K the corner loss's partition has the lower INFD
excess on 23/30 photos (p = 0.002; one tie, where neither merged) and the
lower disagreement excess on 26/30 (p < 0.001).

Run: python benchmarks/bench_image_agreed_middle.py --instances 0:10
     [--json benchmarks/results/agreed_middle.json] [--report JSON ...]
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_image_agreed as fam  # noqa: E402
from _photos import photo_instances  # noqa: E402

from skdecomp import AdaptiveGrouper  # noqa: E402
from skdecomp.datasets import load_pretrained_cnn  # noqa: E402

BUDGETS = {"kernel_shap": 8, "lime": 3, "rise": 4}  # bench_image_agreed.py --quick
N_INFD = 96


def fit_corner(cnn, image, k):
    return AdaptiveGrouper(cnn, baseline="blur", target=k).fit(image[None])


def fit_middle(cnn, image, blurred, k, initial, seed):
    """AGREED on (c1, c0), complementary half-hybrids, from x's colour-tree cut."""
    from skdecomp._grouping import _agreed_images

    K0 = int(initial.max()) + 1
    half = np.random.default_rng(seed).random(K0) < 0.5
    H = half[initial][..., None]
    x = image.astype(np.float64)
    c1, c0 = np.where(H, x, blurred), np.where(H, blurred, x)
    tree = _agreed_images.colour_tree
    with mock.patch.object(_agreed_images, "colour_tree",
                           lambda _, **kw: tree(image, **kw)):  # x's tree
        g = AdaptiveGrouper(cnn, baseline=c0, target=k).fit(c1[None])
    if not np.array_equal(g.initial_label_maps_[0], initial):
        raise RuntimeError("the middle run did not start from x's colour-tree cut")
    return g


def at(grouper, n):
    """The label map of a fitted grouper with n >= n_groups_ groups (on its merge path)."""
    if n == grouper.n_groups_:
        return grouper.label_map_
    return fam.label_map_of(grouper.cut(n))


def score(cnn, image, k, label_map, ig_pixels, seed):
    maps, baseline, fx, fb, _, _ = fam.explain(cnn, image, k, label_map, ig_pixels,
                                               BUDGETS, seed)
    scale = (fx - fb) ** 2
    _, _, d_excess = fam.mean_disagreement(maps)
    per_method, _, _, _ = fam.infd(cnn, image, baseline, k, label_map, maps, fx, fb,
                                   N_INFD, seed)
    i_excess = np.mean([s - f for s, f in per_method.values()])
    return {"K": int(label_map.max()) + 1, "D_excess": d_excess / scale,
            "INFD_excess": float(i_excess) / scale}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", default="0:10")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default="benchmarks/results/agreed_middle.json")
    parser.add_argument("--report", nargs="+", default=None,
                        help="only print the comparison of these JSON files")
    args = parser.parse_args()
    if args.report:
        report([r for path in args.report for r in json.load(open(path))])
        return
    rows = json.load(open(args.json)) if os.path.isfile(args.json) else []
    done = {r["photo"] for r in rows}
    a, b = (int(v) for v in args.instances.split(":"))
    todo = [(n, x) for n, x in photo_instances(fam.SIZE)[a:b] if n not in done]
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    if todo:
        cnn = load_pretrained_cnn("onnx", n_threads=1)
        torch_cnn = load_pretrained_cnn("torch", n_threads=1)
        counter = fam.Counter(cnn)
    for name, image in todo:
        t = time.perf_counter()
        k = int(np.argmax(cnn.predict(image[None])[0]))
        ig = fam.integrated_gradients_pixels(torch_cnn, image, k)
        counter.n = 0
        corner = fit_corner(cnn, image, k)
        ev_corner = counter.n
        blurred = np.asarray(corner.baseline_images_[0], dtype=np.float64)
        counter.n = 0
        middle = fit_middle(cnn, image, blurred, k, corner.initial_label_maps_[0], args.seed)
        ev_middle = counter.n
        n = max(corner.n_groups_, middle.n_groups_)  # both paths reach it
        row = {"photo": name, "class": k, "K0": len(corner.initial_groups_),
               "K_default": {"corner": int(corner.n_groups_), "middle": int(middle.n_groups_)},
               "evaluations": {"corner": ev_corner, "middle": ev_middle}}
        for key, g in (("corner", corner), ("middle", middle)):
            row[key] = score(cnn, image, k, at(g, n), ig, args.seed)
        rows.append(row)
        json.dump(rows, open(args.json, "w"), indent=1)
        print(f"{name}: K0 {row['K0']}, defaults {row['K_default']}, compared at {n}; "
              f"evaluations {row['evaluations']}; corner {row['corner']}, "
              f"middle {row['middle']} ({time.perf_counter() - t:.0f} s)", flush=True)
    report(rows)


def report(rows):
    from scipy.stats import binomtest

    print(f"\n{len(rows)} photos; corner minus middle, paired at equal K")
    for col in ("D_excess", "INFD_excess"):
        d = np.array([r["corner"][col] - r["middle"][col] for r in rows])
        lower, n = int((d < 0).sum()), int((d != 0).sum())
        p = binomtest(lower, n).pvalue if n else float("nan")
        print(f"  {col}: corner lower on {lower}/{len(d)} (sign test p = {p:.2g}), "
              f"median difference {np.median(d):+.4f}")


if __name__ == "__main__":
    main()
