"""
==========
Quickstart
==========

Explain a gradient-boosting model on the diabetes data with groups of
columns, compare several explainers side by side, and see how much they
disagree.
"""

# %%
# A model and an explainer
# ------------------------
# The explainer takes a fitted model, a partition of the columns into groups
# and a background sample. Every attribution method is a weighted sum of the
# components of one functional decomposition, so several methods cost one
# set of model calls. Each method gives an ``Explanation``: its ``values``,
# the expected value they start from, and a table of rows by groups.
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import Explainer
from skdecomp.plot import AttributionDisplay, DisagreementDisplay

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)

groups = {
    "age": ["age"],
    "sex": ["sex"],
    "body": ["bmi", "bp"],
    "lipids": ["s1", "s2", "s3", "s4"],
    "glucose": ["s5", "s6"],
}
explainer = Explainer(model, groups=groups, background=100, random_state=0).fit(X)
methods = ["arch", "shapley", "banzhaf", "occlusion"]
attributions = explainer.explain(X.iloc[:200], methods=methods)
attributions["shapley"][:3].to_frame().round(1)

# %%
# One row
# -------
# For one row, each method gives one bar per group. The Shapley values add
# up to ``f(x) - E f``; Arch (the group alone) and Occlusion (leaving the
# group out) bracket them.
AttributionDisplay.from_result(
    {m: a[:1] for m, a in attributions.items()},
    group_names=explainer.get_feature_names_out(),
)

# %%
# Many rows
# ---------
# Over many rows, a beeswarm shows the spread of each group's attribution.
# Where the methods' clouds differ, the group interacts with other groups.
AttributionDisplay.from_result(
    attributions, group_names=explainer.get_feature_names_out()
)

# %%
# How much do the explainers disagree?
# ------------------------------------
# The mean squared difference between two methods depends only on the
# interactions between groups (see the user guide).
DisagreementDisplay.from_result(attributions)

# %%
# The same figures straight from the model
# ----------------------------------------
# ``from_estimator`` builds the explainer itself.
AttributionDisplay.from_estimator(
    model, X.iloc[:1], methods=["shapley", "occlusion"], groups=groups, random_state=0
)
