"""
===================================================
Disagreement and unfaithfulness along AGREED merges
===================================================

AGREED only minimises the gap between PDP and PFI effects. Here we follow
the whole merge history on a gradient-boosting model of the diabetes data
and, at every cut, measure on a sample of rows (B = D):

- the L2 disagreements PDP–SHAP, PDP–PFI and SHAP–PFI;
- three unfaithfulness scores, Sensitivity-1, infidelity (INFD) and
  Shapley-weighted faithfulness (SWF), averaged over the three explainers.

All six fall as the groups merge, and reach 0 with a single group, where
every explainer gives ``f(x) - E f``.
"""

# %%
# The model and its merge history
# -------------------------------
# A histogram gradient-boosting model of disease progression. AGREED merges
# down to one group on a sample of 60 rows; ``cut(k)`` gives the partition
# with ``k`` groups without refitting.
import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import AdaptiveGrouper, Explainer, metrics
from skdecomp.plot import GroupingDisplay

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)

grouper = AdaptiveGrouper(model, max_samples=60, n_groups=1, random_state=0).fit(X)
for step, entry in enumerate(grouper.history_, start=1):
    print(f"merge {step}: {' + '.join(entry['names'])}")

# %%
# The six quantities at one cut
# -----------------------------
# The explainers use another sample of 60 rows as both background and
# explained rows. One exact decomposition per cut gives the three
# attributions (PDP = Arch, SHAP, PFI = Occlusion), and the metrics read
# their games from it (``decomposition=``), with no further model call.
#
# - Disagreements are summed over groups: :func:`skdecomp.metrics.disagreement`
#   averages ``(phi - phi')**2`` over rows and groups, and we multiply by the
#   number of groups, so that partitions of different sizes are compared on
#   the same footing (the PDP–PFI total is the AGREED loss on these rows).
# - Sensitivity-1 is ``1 - r`` with r the correlation of ``phi_k`` with the
#   drop of the model when group k is removed; it has no unit.
# - Disagreements, INFD and SWF are in percent of the variance of the model
#   output on the rows.
rng = np.random.default_rng(1)
rows = X.iloc[np.sort(rng.choice(len(X), size=60, replace=False))]
variance = float(np.var(model.predict(rows)))
methods = {"PDP": "arch", "SHAP": "shapley", "PFI": "occlusion"}


def six_quantities(groups):
    explainer = Explainer(model, groups=groups, background=rows).fit(rows)
    dec = explainer.decompose(rows)
    phis = {name: dec.attributions(m) for name, m in methods.items()}
    K = explainer.n_groups_
    pairwise = metrics.disagreement(phis).pairwise * K * 100 / variance
    out = {
        "PDP-SHAP": pairwise[0, 1],
        "PDP-PFI": pairwise[0, 2],
        "SHAP-PFI": pairwise[1, 2],
    }
    scores = {
        "Sensitivity-1": lambda phi: metrics.sensitivity_n(
            None, None, attributions=phi, n=1, decomposition=dec
        ).score,
        "INFD": lambda phi: 100
        / variance
        * metrics.infidelity(None, None, attributions=phi, decomposition=dec).score,
        "SWF": lambda phi: 100
        / variance
        * metrics.shapley_weighted_faithfulness(
            None, None, attributions=phi, decomposition=dec
        ).score,
    }
    for name, score in scores.items():
        out[name] = float(np.mean([score(phi) for phi in phis.values()]))
    return out


# %%
# Along the history
# -----------------
# From one group per column (10) to a single group. The first column is the
# AGREED loss on the grouper's own sample, in percent of the variance there.
n_initial = len(grouper.initial_groups_)
cuts = list(range(n_initial, grouper.n_groups_ - 1, -1))
table = pd.DataFrame([six_quantities(grouper.cut(k)) for k in cuts], index=cuts)
table.index.name = "groups"
losses = [grouper.initial_loss_] + [h["loss_after"] for h in grouper.history_]
sample_variance = float(np.var(model.predict(grouper.background_)))
table.insert(0, "AGREED loss", 100 * np.array(losses) / sample_variance)
print(table.round(3).to_string())

# %%
# Every quantity, divided by its largest value, below the AGREED loss curve
# with its merges. Sensitivity-1 is the noisiest: as a correlation it ignores
# the size of the attributions, and only the ranking of groups matters.
GroupingDisplay.from_result(
    grouper,
    curves={name: table[name].to_numpy() for name in table.columns[1:]},
    kind="curve",
)

# %%
# The first merges remove most of the disagreement: with three groups every
# quantity is a fraction of its value at one group per column, and all three
# metrics are close to their optimum for all three explainers at once. Which
# cut to use is a trade-off between agreement and detail; the GridSearchCV
# example selects it on held-out rows.
print((table.loc[3] / table.loc[n_initial]).round(2).to_string())
