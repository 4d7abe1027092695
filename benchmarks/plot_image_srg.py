"""The user guide's figure of the SRG benchmark (``doc/_static/image_srg.png``).

Reads the per-run rows of ``bench_image_srg.py`` (one or more CSV files) and
draws, per network and imputer, the paired SRG difference of skdecomp's Owen
map minus each other method's at every budget: its mean with a 95 %
bootstrap interval (2,000 resamples of the photos, seed 0), and the share of
photos where skdecomp's map scores higher printed above the points.

Run: python benchmarks/plot_image_srg.py benchmarks/results/srg_lite0_s*.csv
     [benchmarks/results/srg_lite2_c*.csv] [--out doc/_static/image_srg.png]
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv

import numpy as np

OURS = "skdecomp:adaptive"
OTHERS = {"shap:partition": ("shap Partition (axis-aligned)", "#E69F00", "o"),
          "shapbpt:aa": ("ShapBPT, axis-aligned", "#999999", "s"),
          "shapbpt:bpt": ("ShapBPT, data-aware tree", "#0072B2", "^")}


def read(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as fh:
            rows.extend(csv.DictReader(fh))
    return rows


def paired(rows, network, imputer, budget, other):
    """SRG of skdecomp minus the other method's, paired over photos."""
    srg = {}
    for r in rows:
        if (r["network"], r["imputer"], int(r["budget"])) == (network, imputer, budget):
            srg.setdefault(r["photo"], {})[r["method"]] = float(r["srg"])
    return np.array([v[OURS] - v[other] for v in srg.values() if OURS in v and other in v])


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--out", default="doc/_static/image_srg.png")
    args = parser.parse_args()
    rows = read(args.csv)
    networks = sorted({r["network"] for r in rows})
    imputers = ["blur", "grey"]
    fig, axes = plt.subplots(len(networks), 2, figsize=(10, 3.6 * len(networks)),
                             squeeze=False, layout="constrained", sharey=True)
    rng = np.random.default_rng(0)
    for i, network in enumerate(networks):
        budgets = sorted({int(r["budget"]) for r in rows if r["network"] == network})
        for j, imputer in enumerate(imputers):
            ax = axes[i, j]
            ax.axhline(0, color="black", lw=0.8)
            ax.margins(y=0.15)
            for k, (other, (label, color, marker)) in enumerate(OTHERS.items()):
                xs, means, lows, highs = [], [], [], []
                for b in budgets:
                    d = paired(rows, network, imputer, b, other)
                    if not d.size:
                        continue
                    boot = d[rng.integers(0, d.size, (2000, d.size))].mean(axis=1)
                    lo, hi = np.percentile(boot, [2.5, 97.5])
                    x = b * (1.0 + 0.08 * (k - 1))
                    xs.append(x)
                    means.append(d.mean())
                    lows.append(d.mean() - lo)
                    highs.append(hi - d.mean())
                    # shap's to the left, ShapBPT's tree to the right, its squares below
                    below = other == "shapbpt:aa"
                    side = {"shap:partition": ("right", 2), "shapbpt:bpt": ("left", -2)}
                    ha, dx = side.get(other, ("center", 0))
                    ax.annotate(f"{int((d > 0).sum())}/{d.size}", (x, lo if below else hi),
                                textcoords="offset points",
                                xytext=(dx, -9 if below else 3), ha=ha, fontsize=7,
                                color=color)
                ax.errorbar(xs, means, yerr=[lows, highs], color=color, marker=marker,
                            capsize=3, label=f"vs {label}")
            n = len({r["photo"] for r in rows if r["network"] == network})
            ax.set_xscale("log")
            ax.set_xlim(min(budgets) * 0.7, max(budgets) * 1.4)  # room for the counts
            ax.set_xticks(budgets)
            ax.set_xticklabels([str(b) for b in budgets])
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_title(f"{network}, {n} photos, imputer: "
                         f"{'the blurred photo' if imputer == 'blur' else 'grey'}",
                         fontsize=10)
            ax.set_xlabel("model evaluations per photo")
            if j == 0:
                ax.set_ylabel("SRG: skdecomp minus the other")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=9)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
