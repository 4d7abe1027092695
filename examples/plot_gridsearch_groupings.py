"""
======================================
Tuning the grouping with GridSearchCV
======================================

How many groups? Fewer groups make the explainers agree, more groups give
finer explanations. :meth:`Explainer.score <skdecomp.Explainer.score>`
trades the two off on held-out rows, so ``GridSearchCV`` can choose the
number of groups found by AGREED.
"""

# %%
# A function made of blocks
# -------------------------
# ``make_block_function`` draws a random sum of functions of disjoint blocks
# of columns; the blocks are the partition without between-group
# interaction.
import matplotlib.pyplot as plt
from sklearn.model_selection import GridSearchCV

from skdecomp import AdaptiveGrouper, Explainer
from skdecomp.datasets import make_block_function
from skdecomp.plot import DisagreementDisplay

data = make_block_function(400, n_features=8, max_block_size=3, random_state=2)
print("true blocks:", data.groups)

# %%
# The search
# ----------
# The explainer's groups are an :class:`~skdecomp.AdaptiveGrouper`; its
# parameters are reached as ``groups__<name>``. The model is already fitted
# (a plain function here; wrap a fitted scikit-learn model in
# ``sklearn.frozen.FrozenEstimator``) so only the grouping is fitted in each
# fold. The score is minus the held-out AGREED loss relative to the variance
# of the model, minus ``group_penalty`` (0.02) for every pair of columns that
# share a group: a merge pays off only when it removes more than its price.
explainer = Explainer(
    data.function,
    groups=AdaptiveGrouper(max_samples=40),
    background=40,
    random_state=0,
)
search = GridSearchCV(explainer, {"groups__n_groups": range(1, 9)}, cv=3)
search.fit(data.data)
print("best number of groups:", search.best_params_["groups__n_groups"])
print("groups found:", search.best_estimator_.groups_)

# %%
# The validation curve
# --------------------
n_groups = search.cv_results_["param_groups__n_groups"].astype(int)
mean = search.cv_results_["mean_test_score"]
std = search.cv_results_["std_test_score"]
fig, ax = plt.subplots(layout="constrained")
ax.errorbar(n_groups, mean, yerr=std, marker="o", capsize=3)
ax.axvline(len(data.groups), color="C1", linestyle="--", label="true number of blocks")
ax.set_xlabel("number of groups (groups__n_groups)")
ax.set_ylabel("Explainer.score (held out)")
ax.legend()

# %%
# On the selected groups the explainers agree
# -------------------------------------------
best = search.best_estimator_
rows = data.data[:50]
DisagreementDisplay.from_estimator(best, rows, methods=["arch", "shapley", "occlusion"])
best.explain(rows[:2], methods=["arch", "occlusion"])["arch"].to_frame().round(3)
