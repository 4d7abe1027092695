"""
===================================================
A Pipeline with a ColumnTransformer, per raw column
===================================================

A pipeline that scales numeric columns and one-hot encodes categorical ones
is explained on its raw input: each raw column is one group, so the one-hot
block of a categorical column moves as one. Explaining the final model on
the transformed columns, grouped by the raw column they come from, gives
the same attributions.
"""

# %%
# Data with categorical columns
# -----------------------------
# The diabetes data, with ``sex`` as a string and the age cut into bands.
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_diabetes
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures, StandardScaler

from skdecomp import Explainer, column_transformer_groups
from skdecomp.plot import AttributionDisplay, PartialDependenceDisplay

X, y = load_diabetes(return_X_y=True, as_frame=True)
X = X[["age", "sex", "bmi", "bp", "s5"]].copy()
X["sex"] = np.where(X["sex"] > 0, "male", "female")
X["age"] = pd.cut(X["age"], 3, labels=["young", "middle", "old"]).astype(str)

numeric = ["bmi", "bp", "s5"]
categorical = ["age", "sex"]
preprocess = ColumnTransformer(
    [
        ("num", StandardScaler(), numeric),
        ("cat", OneHotEncoder(sparse_output=False), categorical),
    ]
)
# Pairwise products of the transformed columns make the model interact.
model = make_pipeline(
    preprocess, PolynomialFeatures(2, interaction_only=True), RidgeCV()
).fit(X, y)

# %%
# Explain the pipeline on raw columns
# -----------------------------------
# With ``groups=None`` every raw column is a group. The pipeline is called
# on hybrid raw rows, so the encoder sees valid categories.
explainer = Explainer(model, background=100, random_state=0).fit(X)
methods = ["arch", "shapley", "occlusion"]
raw = explainer.explain(X.iloc[:150], methods=methods)
AttributionDisplay.from_result(raw, group_names=explainer.get_feature_names_out())

# %%
# The same on transformed columns
# -------------------------------
# ``column_transformer_groups`` maps every output column of the fitted
# ColumnTransformer to its raw column: the one-hot columns of ``age`` form
# one group. Explaining the rest of the pipeline on the transformed data with
# these groups gives the same Shapley values, since a hybrid of transformed
# rows is the transform of the hybrid of raw rows.
fitted_ct = model[0]
groups = column_transformer_groups(fitted_ct)
groups

# %%
Xt = fitted_ct.transform(X)
rest = model[1:]
explainer_t = Explainer(
    rest,
    groups=list(groups.values()),
    background=fitted_ct.transform(explainer.background_),
).fit(Xt)
shap_t = explainer_t.explain(Xt[:150], methods=["shapley"])["shapley"].values
order = [list(explainer.get_feature_names_out()).index(name) for name in groups]
print("largest difference:", np.abs(shap_t - raw["shapley"].values[:, order]).max())

# %%
# Partial dependence of groups
# ----------------------------
# One numeric column gives PD and ICE curves, two columns a heatmap, and a
# categorical column one point per category.
PartialDependenceDisplay.from_estimator(
    model, X, ["bmi", ["bmi", "bp"], "age"], grid_resolution=20, random_state=0
)
