"""Why the AGREED paper's merge order chains on fitted models.

On semi-synthetic problems (see ``bench_fitted_grouping.py``), AGREED with
the paper's order (``strategy="paper"``) and no price per pair
(``group_penalty=0``: held-out standard error only) merges until a run
stops. For every accepted merge it prints the held-out loss decrease, the
number of column pairs it joins, the decrease per pair, and the *true-block
share*: the decrease of the same merge on the true function, on the same
rows, as a share of the decrease on the model (the part of the gain that is
interaction the target really has). It then refits the same model to the same
problem with every column permuted on its own (the dependence between
columns removed, so no hybrid row lies off the data) and prints the mean
the same summary for both: the merges kept with a true block and the
spurious ones (whose merge gains nothing on the true function), what the
rows off the data manifold add.

Run: ``python benchmarks/bench_fitted_diagnosis.py [--seeds 2]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import warnings

import numpy as np
from sklearn.utils import check_random_state

from skdecomp import AdaptiveGrouper
from skdecomp._game import AnchoredStatistics, CoalitionGame
from skdecomp._model import resolve_response
from skdecomp.datasets import make_semi_synthetic

from bench_fitted_grouping import fitted_model


def true_stats(function, rows):
    response, names = resolve_response(function, "auto", None, rows[:1])
    game = CoalitionGame(response, rows, np.arange(rows.shape[1]), output_names=names)
    return AnchoredStatistics(game, rows)


def decrease(stats, a, b):
    return stats.loss([a]) + stats.loss([b]) - stats.loss([sorted(a + b)])


def diagnose(model, X, function):
    """Accepted merges of the paper's order priced by the standard error alone."""
    grouper = AdaptiveGrouper(model, strategy="paper", group_penalty=0.0, random_state=0)
    grouper.fit(X)
    # the held-out rows of the fit (as drawn by the grouper), on the true function
    n = X.shape[0]
    perm = check_random_state(0).permutation(n)
    n_sel = min(grouper.max_samples, (n + 1) // 2)
    held = X.iloc[np.sort(perm[n_sel: n_sel + min(grouper.max_samples, n - n_sel)])]
    truth = true_stats(function, held.to_numpy())
    var = grouper.game_.predict(held).var()
    merges = []
    for h in grouper.history_:
        a, b = h["groups"]
        gain = (h["held_out_loss_before"] - h["held_out_loss_after"]) / var
        true_gain = decrease(truth, a, b) / truth.variance
        merges.append(dict(a=a, b=b, gain=gain, pairs=len(a) * len(b),
                           true=true_gain, z=gain * var / max(h["held_out_error"], 1e-300),
                           accepted=h["accepted"]))
    return grouper, merges


def summary(merges):
    kept = [m for m in merges if m["accepted"]]
    true = [m for m in kept if m["true"] > 1e-9]
    spurious = [m for m in kept if m["true"] <= 1e-9]

    def med(ms):
        return np.median([m["gain"] / m["pairs"] for m in ms]) if ms else float("nan")

    return (f"{len(kept)} merges kept, {len(true)} with a true block "
            f"(median gain per pair {med(true):.4f} of Var f), {len(spurious)} spurious "
            f"(median gain per pair {med(spurious):.4f}, "
            f"{sum(m['pairs'] for m in spurious)} column pairs joined)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    for table in ("breast_cancer", "wine"):
        for family in ("hgb", "rf"):
            for seed in range(args.seeds):
                data = make_semi_synthetic(table, n_samples=args.rows, random_state=seed)
                X, y = data.data, data.target
                model = fitted_model(family, seed).fit(X, y)
                grouper, merges = diagnose(model, X, data.function)
                print(f"\n{table} {family} seed {seed}: true groups {data.groups}, "
                      f"largest group found {max(len(g) for g in grouper.groups_)} of "
                      f"{X.shape[1]} ({grouper.stop_reason_})")
                print("  merge: held-out gain / Var f, pairs joined, gain per pair, "
                      "standard errors, gain of the true function / its Var f")
                for m in merges:
                    flag = "" if m["accepted"] else "  (refused)"
                    print(f"  {m['a']} + {m['b']}: {m['gain']:7.4f} {m['pairs']:3d} "
                          f"{m['gain'] / m['pairs']:8.5f} {m['z']:5.1f} {m['true']:7.4f}{flag}")
                print("  real columns:        " + summary(merges))
                # the same problem with independent columns: no hybrid row off the data
                rng = np.random.default_rng(seed)
                Xi = X.copy()
                for c in Xi.columns:
                    Xi[c] = rng.permutation(Xi[c].to_numpy())
                yi = data.function(Xi.to_numpy())
                yi = yi + 0.1 * yi.std() * rng.standard_normal(yi.shape[0])
                mi = fitted_model(family, seed).fit(Xi, yi)
                gi, merges_i = diagnose(mi, Xi, data.function)
                print("  independent columns: " + summary(merges_i)
                      + f"; largest group {max(len(g) for g in gi.groups_)}")


if __name__ == "__main__":
    main()
