"""Variants of skdecomp's image map, judged by SRG against its default on the same photos.

Each variant changes one thing in ``Explainer(cnn, method="owen",
hierarchy=AdaptiveGrouper(), baseline="blur", n_samples=B)`` (the default of
``bench_image_srg.py``, ``skdecomp:adaptive``), at the same budget:

* ``compactness=C``: the colour tree's weight of position against colour
  (default 1.0; larger gives rounder regions, smaller ones closer to colour).
* ``split``: what the partition recursion leaves unexpanded in a context of a
  node is split among its children as they shared the node's expanded
  contexts (their exact contributions there, clipped at 0 against the sign of
  their sum; by size where no context was expanded), not by size.
* ``priority=size**a``: the recursion expands the (node, context) pairs by
  ``|contribution| * n_pixels(node) ** a`` instead of ``|contribution|``
  (a > 0: wide before deep, more contexts of the large regions; a < 0: deep
  first); what is left is spread by size, as by default.
* ``one-context``: every node is expanded in one context only (the first
  popped: its largest contribution), its other contexts split as in
  ``split``: the budget reaches twice as deep, with fewer contexts averaged.

Each variant patches the package only while its maps are computed. Every map is judged as
in ``bench_image_srg.py`` (the same photos, classes, blurred baseline, grey
imputer and steps), and compared with the rows of that benchmark's CSVs for
the same network, photo, budget and steps: the default's, shap's Partition's
and ShapBPT's. Rows are written to ``--out`` and a run resumes.

Run: python benchmarks/bench_image_srg_variants.py --network lite2 --budget 500
     --variants split one-context compactness=0.5 compactness=3
     "priority=size**0.5" "priority=size**-0.5"
     --instances 14:30 --against benchmarks/results/srg_lite2_c*.csv

Results (``results/variants_srg_lite2.csv``, Lite2, B = 500, 32 steps, the 16
photos of the 30 whose rows are at 32 steps): no variant beats the default
(higher SRG on 0 to 9 of the 16 photos under either imputer); see
``results/variants_srg_lite2.txt``. On Lite0 at B = 1000 (16 steps, all 30
photos; ``--network lite0 --budget 1000 --steps 16 --instances 0:30``) three
of them are level with it (``results/variants_srg_lite0.txt``).
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import functools
import sys
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_image_srg as srg  # noqa: E402
from _photos import photo_instances  # noqa: E402

from skdecomp._grouping import _agreed_images  # noqa: E402
from skdecomp._image._colour_tree import colour_tree  # noqa: E402
from skdecomp._methods import _owen_partition  # noqa: E402
from skdecomp._methods._owen_partition import _Recursion  # noqa: E402

FIELDS = ("network", "photo", "variant", "budget", "imputer", "srg", "deletion_auc",
          "insertion_auc", "evaluations", "map_sum", "steps")


class Variant(_Recursion):
    """The package's partition recursion with one rule changed.

    ``split``: what is left of a node goes to its children as they shared its
    expanded contexts (by size where none was); ``max_contexts``: a node is
    expanded in at most that many contexts; ``size_power``: the priority is
    ``|contribution| * n_pixels(node) ** size_power``.
    """

    def __init__(self, hierarchy, spread, split=False, max_contexts=None,
                 size_power=None):
        super().__init__(hierarchy, spread)
        self.split, self.max_contexts, self.size_power = split, max_contexts, size_power
        self.got = {}  # the exact contributions each node received
        self.expanded = np.zeros(hierarchy.n_nodes, dtype=int)

    def key(self, node, delta):
        key = super().key(node, delta)
        if self.size_power is not None:
            pixels = float(self.spread[self.hierarchy.leaves[node]].sum())
            key *= max(1.0, pixels) ** self.size_power
        return key

    def may_expand(self, node):
        if self.max_contexts is not None and self.expanded[node] >= self.max_contexts:
            return False
        self.expanded[node] += 1
        return True

    def received(self, node, delta):
        self.got[node] = self.got.get(node, 0.0) + delta

    def spread_left(self, phi, left):
        # top-down, with the split rule or by size (the package's rule, summed
        # in another order: the recorded rows tie-break pixels as this does)
        h, K = self.hierarchy, self.hierarchy.n_players
        pending = left  # top-down: parents have larger indices than their children
        for a in range(h.n_nodes - 1, K - 1, -1):
            if not np.any(pending[a]):
                continue
            ch = h.children[a - K]
            size = np.array([self.spread[h.leaves[c]].sum() for c in ch])
            got = np.array([self.got.get(c, np.zeros_like(pending[a])) if self.split
                            else np.zeros_like(pending[a]) for c in ch])
            for o in np.flatnonzero(pending[a]):
                g = got[:, o]
                share = np.maximum(0.0, np.sign(g.sum()) * g) * (size > 0)
                if share.sum() <= 0:
                    share = size if size.sum() > 0 else np.ones(len(ch))
                pending[ch, o] += share / share.sum() * pending[a, o]
        return phi + pending[:K]


def _row(value, hierarchy, budget, f0, f1, spread, **rules):
    """``_owen_partition._one_row`` with the variant's rules."""
    return Variant(hierarchy, spread, **rules).run(value, budget, f0, f1)


RULES = {"split": {"split": True}, "one-context": {"split": True, "max_contexts": 1}}


def patched(variant):
    """A context in which the package computes the variant's maps."""
    if variant.startswith("compactness="):
        tree = functools.partial(colour_tree, compactness=float(variant.split("=")[1]))
        return mock.patch.object(_agreed_images, "colour_tree", tree)
    if variant.startswith("priority=size**"):
        rules = {"size_power": float(variant.split("**")[1])}
    elif variant in RULES:
        rules = RULES[variant]
    else:
        raise ValueError(f"unknown variant {variant!r}")
    return mock.patch.object(_owen_partition, "_one_row", functools.partial(_row, **rules))


def read(path):
    return list(csv.DictReader(open(path, newline=""))) if Path(path).is_file() else []


def compare(rows, against, network, budget, unrecorded="16"):
    """Paired SRG of each variant against the rows of ``against`` (rows without steps:
    judged at ``unrecorded``, as Lite0's, see bench_image_srg.py)."""
    from scipy.stats import binomtest

    ref = {}
    for r in against:
        if r["network"] == network and r["budget"] == str(budget):
            ref[(r["photo"], r["method"], r["imputer"])] = r
    print(f"\n{network}, budget {budget}: each variant's SRG minus the other's, over the "
          "photos whose rows are at the variant's steps")
    for variant in sorted({r["variant"] for r in rows}):
        for imp in ("blur", "grey"):
            mine = {r["photo"]: r for r in rows if r["variant"] == variant
                    and r["imputer"] == imp and r["network"] == network
                    and r["budget"] == str(budget)}
            line = f"  {variant:<21}{imp:<5}"
            for other in ("skdecomp:adaptive", "shap:partition", "shapbpt:bpt"):
                d = np.array([float(r["srg"]) - float(ref[(p, other, imp)]["srg"])
                              for p, r in mine.items() if (p, other, imp) in ref
                              and (ref[(p, other, imp)].get("steps") or unrecorded)
                              == r["steps"]])
                if not d.size:
                    continue
                w, n = int((d > 0).sum()), int((d != 0).sum())
                p = binomtest(w, n).pvalue if n else float("nan")
                line += f" | vs {other}: {w}/{d.size} (p = {p:.2g}), {d.mean():+.4f}"
            print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="lite2", choices=sorted(srg.SIZES))
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--variants", nargs="+", default=[
        "split", "one-context", "compactness=0.5", "compactness=3",
        "priority=size**0.5", "priority=size**-0.5"])
    parser.add_argument("--instances", default="14:30",
                        help="A:B, the SRG benchmark's photo instances A..B-1")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--against", nargs="+", default=[])
    parser.add_argument("--out", default="benchmarks/results/variants_srg_{network}.csv")
    parser.add_argument("--compare-only", action="store_true")
    args = parser.parse_args()
    out = Path(args.out.replace("{network}", args.network))
    against = [r for p in args.against for r in read(p)]
    if not args.compare_only:
        cnn = srg.load_network(args.network, 1)
        counter = srg.Counter(cnn)
        for variant in args.variants:
            with patched(variant):
                run(cnn, counter, variant, args.network, args.budget, args.instances,
                    args.steps, out)
    compare(read(out), against, args.network, args.budget)


def run(cnn, counter, variant, network, budget, instances, steps, out):
    """Judge the variant's map of every photo not in ``out`` yet; rows appended."""
    a, b = (int(v) for v in instances.split(":"))
    done = {(r["photo"], r["variant"], r["budget"], r["steps"]) for r in read(out)}
    todo = [(n, x) for n, x in photo_instances(srg.SIZES[network])[a:b]
            if (n, variant, str(budget), str(steps)) not in done]
    if not todo:
        return
    grey = np.broadcast_to(np.asarray(srg.GREY, np.float32), todo[0][1].shape)
    new = not Path(out).is_file()
    with open(out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        for name, photo in todo:
            k = int(np.argmax(cnn.predict(photo[None])[0]))
            scorer = srg.Explainer(cnn, method="occlusion", baseline="blur",
                                   target=k).fit(photo[None])
            m, evals, _ = srg.skdecomp_map(cnn, photo, k, budget, "adaptive", counter, {})
            for imp, arg in (("blur", None), ("grey", grey)):
                s, d, i, _ = srg.judge(scorer, photo, m, arg, steps)
                writer.writerow({"network": network, "photo": name, "variant": variant,
                                 "budget": budget, "imputer": imp, "srg": f"{s:.6g}",
                                 "deletion_auc": f"{d:.6g}", "insertion_auc": f"{i:.6g}",
                                 "evaluations": evals, "map_sum": f"{m.sum():.6g}",
                                 "steps": steps})
            fh.flush()
            print(f"{variant} {name}: {evals} evaluations", flush=True)


if __name__ == "__main__":
    main()
