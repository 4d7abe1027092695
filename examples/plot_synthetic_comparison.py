"""
=====================================================
AGREED against PAIRWISE, RECURSIVE and IGREEDY
=====================================================

The synthetic study of AGREED: on random block functions, whose true
partition is known, how often does each grouper recover it exactly, at what
cost in model calls and time? The four groupers are

* AGREED (:class:`~skdecomp.AdaptiveGrouper`): greedy merges that remove
  between-group interactions;
* PAIRWISE (:class:`~skdecomp.PairwiseGrouper`): all pairwise interactions,
  then clustering;
* RECURSIVE (:class:`~skdecomp.RecursiveGrouper`): the recursive
  differential grouping of Shapley Sets;
* IGREEDY (:class:`~skdecomp.IShapGrouper`): the greedy partition search of
  iShap.

Every grouper runs with its default stopping rule (AGREED: held-out rows,
``n_groups="auto"``; PAIRWISE: ``min_interaction``; RECURSIVE: ``tol``;
IGREEDY: no merge lowers its objective) and the same N = 40 sample rows
(AGREED holds out 40 more). One more row shows AGREED with the stopping rule
of its paper, ``rel_tol=0.25``.
"""

# %%
# The problems
# ------------
# Eight block functions of 8 columns with blocks of up to 3 columns, first
# with independent Uniform(-1, 1) features, then with features dependent
# through a Gaussian copula (correlation 0.7 between every two columns).
# The functions are additive over their blocks at every point, so the true
# partition is the same in both settings.
import time

import matplotlib.pyplot as plt
import numpy as np

from skdecomp import AdaptiveGrouper, IShapGrouper, PairwiseGrouper, RecursiveGrouper
from skdecomp.datasets import make_block_function

GROUPERS = {
    "AGREED": AdaptiveGrouper,
    "PAIRWISE": PairwiseGrouper,
    "RECURSIVE": RecursiveGrouper,
    "IGREEDY": IShapGrouper,
    "AGREED, rel_tol=0.25": lambda f, **kw: AdaptiveGrouper(
        f, strategy="paper", rel_tol=0.25, **kw
    ),
}
SETTINGS = {"independent": 0.0, "correlated": 0.7}
SEEDS = range(8)


def same_partition(a, b):
    return sorted(map(sorted, a)) == sorted(map(sorted, b))


# one fit of each grouper first, so that no timing includes compilation
warm_up = make_block_function(100, n_features=4, random_state=0)
for cls in GROUPERS.values():
    cls(warm_up.function, max_samples=10, random_state=0).fit(warm_up.data)

results = {}
for setting, rho in SETTINGS.items():
    for name, cls in GROUPERS.items():
        rows = []
        for seed in SEEDS:
            data = make_block_function(
                300, n_features=8, max_block_size=3, correlation=rho, random_state=seed
            )
            grouper = cls(data.function, max_samples=40, random_state=seed)
            start = time.perf_counter()
            grouper.fit(data.data)
            elapsed = time.perf_counter() - start
            rows.append(
                (same_partition(grouper.groups_, data.groups), grouper.model_calls_, elapsed)
            )
        results[setting, name] = np.array(rows, dtype=float)

# %%
# The table
# ---------
# Recovery is the share of problems whose partition was found exactly.
print(f"{'inputs':<12} {'method':<21} {'recovery':>9} {'model calls':>12} {'time (s)':>9}")
for (setting, name), rows in results.items():
    print(
        f"{setting:<12} {name:<21} {rows[:, 0].mean():>9.2f} "
        f"{rows[:, 1].mean():>12,.0f} {rows[:, 2].mean():>9.3f}"
    )

# %%
# Recovery and cost
# -----------------
fig, (ax_rec, ax_calls) = plt.subplots(1, 2, figsize=(11, 3.6))
width = 0.38
x = np.arange(len(GROUPERS))
for k, setting in enumerate(SETTINGS):
    rec = [results[setting, name][:, 0].mean() for name in GROUPERS]
    calls = [results[setting, name][:, 1].mean() for name in GROUPERS]
    ax_rec.bar(x + (k - 0.5) * width, rec, width, label=setting)
    ax_calls.bar(x + (k - 0.5) * width, calls, width, label=setting)
for ax, title in [(ax_rec, "exact recovery rate"), (ax_calls, "mean model calls")]:
    ax.set_xticks(x, [name.replace(", ", "\n") for name in GROUPERS])
    ax.set_title(title)
ax_rec.set_ylim(0, 1.05)
ax_rec.legend(loc="lower left")
fig.tight_layout()

# %%
# Reading the table
# -----------------
# RECURSIVE, PAIRWISE and AGREED measure interactions exactly (an additive
# pair gives 0 on any sample), so dependence between the features does not
# mislead them. RECURSIVE needs far fewer tests than PAIRWISE's
# d (d - 1) / 2, but each test costs two N x N blocks of model calls, so at
# d = 8 both cost about the same; its advantage grows with d. AGREED's
# default stops when the next merge no longer pays its price on held-out
# rows (``group_penalty=0.02`` of the output variance per column pair
# joined) and finds every partition here but one with independent features:
# there the three-way term ``x0 * x1 * x3`` carries about 3 % of the
# variance, and adding x0 to x1+x3 gains 4.4 % against a price of 4.5 % for
# its two column pairs (``group_penalty=0.01`` finds it). The paper's rule
# (``strategy="paper", rel_tol=0.25``) stops once three quarters of the
# interaction loss are gone, and often leaves a weak block split.
# IGREEDY's statistical test and its greedy
# objective can both stop it short of a block (e.g. a three-way product
# whose pairs alone do not improve the fit), more often on dependent
# features.
