"""
=========================================
AGREED: groups that make explainers agree
=========================================

AGREED merges columns into groups, greedily, so that the interactions
*between* groups vanish. On such groups PDP/Arch, SHAP and PFI/Occlusion give
the same attributions. We first recover a known partition of a synthetic
function, then group the columns of a model fitted on the diabetes data.
"""

# %%
# A function with a known structure
# ----------------------------------
# ``f(x) = x0*x1 + sin(x2*x3) + x4 + x5**2`` with independent features: the
# partition ``{x0, x1}, {x2, x3}, {x4}, {x5}`` has no between-group
# interaction.
from skdecomp import AdaptiveGrouper, Explainer
from skdecomp.datasets import make_agreed_example
from skdecomp.metrics import disagreement
from skdecomp.plot import (
    AttributionDisplay,
    DisagreementDisplay,
    GroupingDisplay,
    InteractionDisplay,
)

data = make_agreed_example(n_samples=300, random_state=0)
grouper = AdaptiveGrouper(data.function, max_samples=60, n_groups=1, random_state=0)
grouper.fit(data.data)

# %%
# The grouping curve: the AGREED loss (the mean squared gap between PDP and
# PFI effects) against the number of groups, with each merge labelled. The
# disagreement between explainers and two unfaithfulness scores, computed
# at each cut of the merge history, fall to 0 with it.
GroupingDisplay.from_estimator(
    grouper,
    data.data[:40],
    methods=["arch", "shapley", "occlusion"],
    metrics=["insertion_error", "deletion_error"],
    background=20,
    random_state=0,
    kind="both",
)

# %%
# The cut with four groups is the true partition.
grouper.cut(4)

# %%
# A model fitted on real data
# ---------------------------
# A gradient-boosting model of disease progression on the diabetes data.
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)

agreed = AdaptiveGrouper(model, max_samples=50, n_groups=1, random_state=0).fit(X)
GroupingDisplay.from_result(agreed, kind="both")

# %%
# Pairwise interactions between columns, ordered and boxed by the AGREED
# partition with three groups: the strong interactions sit inside the boxes.
three = agreed.cut(3)
InteractionDisplay.from_estimator(
    model, X, kind="h2", grouping=three, max_samples=40, random_state=0
)

# %%
# Explainers before and after grouping
# ------------------------------------
# With one group per column the explainers disagree. On the three AGREED
# groups the interactions they split differently are mostly inside groups,
# and the total disagreement (summed over groups) is several times smaller.
# The price is a coarser explanation; the GridSearchCV example shows how to
# choose the number of groups.
methods = ["arch", "shapley", "occlusion"]
rows = X.iloc[:60]
single = Explainer(model, background=40, random_state=0).fit(X)
grouped = Explainer(model, groups=three, background=40, random_state=0).fit(X)
totals = {}
for name, explainer in [("one group per column", single), ("AGREED groups", grouped)]:
    attributions = explainer.explain(rows, methods=methods)
    # disagreement() averages over groups; multiply back to a total over groups
    result = disagreement(dict(attributions))
    totals[name] = result.pairwise * explainer.n_groups_
    print(
        f"{name}: {explainer.n_groups_} groups, "
        f"total disagreement {result.score * explainer.n_groups_:.0f}"
    )

top = max(m.max() for m in totals.values())
for name, matrix in totals.items():
    disp = DisagreementDisplay(matrix, methods).plot(vmax=top)
    disp.ax_.set_title(f"Total disagreement, {name}")

# %%
AttributionDisplay.from_estimator(grouped, rows, methods=methods)
