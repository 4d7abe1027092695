"""Models of the gradient-boosting libraries XGBoost, LightGBM and CatBoost.

A model is recognised by the module of its type, so that none of these
libraries is imported unless one of its models is passed. The functions read
what the response function (:mod:`._model`) and the tree reader
(:mod:`._tree._boosters`) both need: the library, the objective, the trees
an XGBoost model predicts with, and its margin in float64.
"""

# SPDX-License-Identifier: BSD-3-Clause

import json

import numpy as np
import pandas as pd

__all__ = [
    "BOOSTER_LIBRARIES",
    "booster_library",
    "booster_n_classes",
    "booster_objective",
    "is_raw_booster",
    "xgboost_offset",
    "xgboost_trees",
]


def _n_rows(data):
    shape = getattr(data, "shape", None)
    return int(shape[0]) if shape is not None else len(data)


#: Libraries whose models have a raw score before their link, the ``"margin"``
#: response. A model is recognised by the module of its type, so that none of
#: them is imported unless one of its models is passed.
BOOSTER_LIBRARIES = ("xgboost", "lightgbm", "catboost")

#: How each library returns the margin, for messages.
_MARGIN_CALLS = {
    "xgboost": "predict(X, output_margin=True)",
    "lightgbm": "predict(X, raw_score=True)",
    "catboost": "predict(X, prediction_type='RawFormulaVal')",
}


def booster_library(model):
    """``"xgboost"``, ``"lightgbm"`` or ``"catboost"`` for a model of that library.

    Parameters
    ----------
    model : object

    Returns
    -------
    library : str or None
        None for a model of any other library.
    """
    top = (getattr(type(model), "__module__", None) or "").split(".")[0]
    return top if top in BOOSTER_LIBRARIES else None


def is_raw_booster(model):
    """Whether a model is an XGBoost or LightGBM ``Booster`` (no scikit-learn wrapper)."""
    return (
        booster_library(model) in ("xgboost", "lightgbm")
        and type(model).__name__ == "Booster"
    )


def booster_objective(model):
    """The objective of an XGBoost, LightGBM or CatBoost model, or None.

    For example ``"reg:squarederror"`` or ``"binary:logistic"`` (XGBoost),
    ``"regression"`` or ``"multiclass"`` (LightGBM), ``"RMSE"`` or
    ``"Logloss"`` (CatBoost); None when the model does not say.
    """
    library = booster_library(model)
    try:
        if library == "xgboost":
            booster = model.get_booster() if hasattr(model, "get_booster") else model
            return json.loads(booster.save_config())["learner"]["objective"]["name"]
        if library == "lightgbm":
            booster = getattr(model, "booster_", model)
            return str(booster.dump_model(num_iteration=1)["objective"]).split()[0]
        if library == "catboost":
            return str(model.get_all_params()["loss_function"]).split(":")[0]
    except Exception:  # an unfitted model or an unknown version
        return None
    return None


def booster_n_classes(model):
    """Number of classes of a raw Booster with a classification objective, else None."""
    if not is_raw_booster(model):
        return None
    objective = booster_objective(model) or ""
    if booster_library(model) == "xgboost":
        if objective.startswith("binary:"):
            return 2
        if objective.startswith("multi:"):
            config = json.loads(model.save_config())["learner"]["learner_model_param"]
            return int(config["num_class"])
        return None
    if objective == "binary":
        return 2
    if objective in ("multiclass", "multiclassova"):
        return int(model.dump_model(num_iteration=1)["num_class"])
    return None


def _xgb_booster(model):
    return model.get_booster() if hasattr(model, "get_booster") else model


def _xgb_iteration_end(model):
    """Iterations predict uses: best_iteration + 1 after early stopping, else 0 (all)."""
    if is_raw_booster(model):
        return 0  # Booster.predict and inplace_predict use every tree
    best = getattr(model, "best_iteration", None)
    if best is None or getattr(model, "booster", None) == "gblinear":
        return 0
    return int(best) + 1


def xgboost_trees(model):
    """The trees an XGBoost model predicts with, read from its JSON model.

    Parameters
    ----------
    model : XGBoost scikit-learn model or ``xgboost.Booster``

    Returns
    -------
    info : dict
        ``"learner"``: the JSON learner; ``"booster"``: ``"gbtree"``,
        ``"dart"`` or ``"gblinear"``; and for tree boosters ``"trees"``: the
        JSON trees of the iterations predict uses (best_iteration after early
        stopping), ``"group"``: the output of each tree, ``"weight"``: its
        weight (1 but for DART), ``"n_outputs"`` and ``"first"``: the number
        of trees of the first iteration.
    """
    booster = _xgb_booster(model)
    learner = json.loads(bytes(booster.save_raw("json")))["learner"]
    gb = learner["gradient_booster"]
    info = {"learner": learner, "booster": gb["name"]}
    if gb["name"] == "gblinear":
        return info
    weights = gb.get("weight_drop") if gb["name"] == "dart" else None
    tree_model = (gb["gbtree"] if gb["name"] == "dart" else gb)["model"]
    trees = tree_model["trees"]
    param = learner["learner_model_param"]
    n_outputs = max(int(param.get("num_class", 0)), int(param.get("num_target", 1)), 1)
    indptr = tree_model.get("iteration_indptr")
    if indptr is None:  # XGBoost < 2.1
        per = n_outputs * int(tree_model["gbtree_model_param"]["num_parallel_tree"])
        indptr = list(range(0, len(trees) + 1, per))
    end = _xgb_iteration_end(model)
    n_trees = int(indptr[end]) if 0 < end < len(indptr) else len(trees)
    info.update(
        trees=trees[:n_trees],
        group=np.asarray(tree_model["tree_info"][:n_trees], dtype=np.int64),
        weight=(np.ones(n_trees) if weights is None
                else np.asarray(weights[:n_trees], dtype=np.float64)),
        n_outputs=n_outputs,
        first=min(int(indptr[1]) if len(indptr) > 1 else n_trees, n_trees),
    )
    return info


def _xgb_leaf_values(info):
    """Value of every node of the trees (0 at splits), and the first node of each tree."""
    values, starts, start = [], [], 0
    for tree, weight in zip(info["trees"], info["weight"]):
        cond = np.asarray(tree["split_conditions"], dtype=np.float32).astype(np.float64)
        leaf = np.asarray(tree["left_children"], dtype=np.int64) < 0
        values.append(np.where(leaf, weight * cond, 0.0))
        starts.append(start)
        start += cond.shape[0]
    values = np.concatenate(values) if values else np.zeros(0)
    return values, np.asarray(starts, dtype=np.int64)


def _xgb_dmatrix(booster, X):
    import xgboost

    if isinstance(X, pd.DataFrame):
        return xgboost.DMatrix(X, missing=np.nan, enable_categorical=True)
    return xgboost.DMatrix(
        np.asarray(X), missing=np.nan, feature_names=booster.feature_names,
        feature_types=booster.feature_types, enable_categorical=True,
    )


def xgboost_offset(model, info):
    """Constant term of an XGBoost model's margin, one value per output.

    The margin of one row with every feature missing, less the leaf values
    that row reaches in the first iteration; read from the model so that it
    holds for every objective (XGBoost keeps ``base_score`` on the scale of
    the prediction and applies the objective's link to it).
    """
    booster = _xgb_booster(model)
    probe = _xgb_dmatrix(booster, np.full((1, booster.num_features()), np.nan))
    first = (0, 1) if info["first"] else (0, 0)
    margin = booster.predict(probe, output_margin=True, iteration_range=first,
                             strict_shape=True)
    offset = np.asarray(margin, dtype=np.float64).reshape(-1)
    if info["first"]:
        values, starts = _xgb_leaf_values(info)
        leaves = np.asarray(booster.predict(probe, pred_leaf=True, iteration_range=first),
                            dtype=np.int64).reshape(-1)
        k = leaves.shape[0]
        np.subtract.at(offset, info["group"][:k], values[starts[:k] + leaves])
    return offset


def _check_float32_range(X, model):
    """Refuse values XGBoost would read as infinity (it computes in float32)."""
    if isinstance(X, pd.DataFrame):
        values = X.select_dtypes("number").to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        values = np.asarray(X)
        if values.dtype.kind not in "biuf":
            return
    big = np.abs(values) > np.finfo(np.float32).max
    big &= np.isfinite(values)
    if big.any():
        row, col = np.argwhere(big)[0]
        raise ValueError(
            f"X holds {int(big.sum())} value(s) beyond float32's range (first "
            f"{values[row, col]:.3g} at row {row}, column {col}), which "
            f"{type(model).__name__} reads as infinity; scale or clip that column "
            "(XGBoost computes in float32)."
        )


class _XGBoostMargin:
    """The margin of an XGBoost tree model in float64.

    XGBoost sums its leaf values in float32, so ``output_margin`` carries
    about 7 significant digits. This sums the same leaf values, at the leaves
    the model itself routes each row to (``pred_leaf``), in float64: the
    same margin to float32 precision, which the tree path reproduces exactly.
    A linear booster (gblinear) has no leaves, and a model with vector leaves
    one value per output at every leaf: their float32 margin is returned.
    """

    def __init__(self, model):
        self.model = model
        self.n_features = _xgb_booster(model).num_features()
        info = xgboost_trees(model)
        # a linear booster has no leaves, and vector leaves
        # (multi_strategy="multi_output_tree") hold one value per output: the
        # model's own float32 margin is returned for both
        self.linear = info["booster"] == "gblinear" or any(
            int(t["tree_param"].get("size_leaf_vector", "1")) > 1 for t in info["trees"])
        if self.linear:
            return
        self.values, self.starts = _xgb_leaf_values(info)
        self.onehot = np.zeros((self.starts.shape[0], info["n_outputs"]))
        self.onehot[np.arange(self.starts.shape[0]), info["group"]] = 1.0
        self.offset = xgboost_offset(model, info)

    def __call__(self, X):
        width = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else None
        if width is not None and width != self.n_features:
            raise ValueError(
                f"{type(self.model).__name__} was fitted on {self.n_features} columns, "
                f"but X has {width}; give the columns the model was fitted on, in "
                "the same order."
            )
        _check_float32_range(X, self.model)
        if self.linear:
            if is_raw_booster(self.model):
                return self.model.predict(_xgb_dmatrix(self.model, X), output_margin=True)
            return self.model.predict(X, output_margin=True)
        if is_raw_booster(self.model):
            leaves = self.model.predict(_xgb_dmatrix(self.model, X), pred_leaf=True)
        else:
            leaves = self.model.apply(X)
        leaves = np.asarray(leaves, dtype=np.int64).reshape(_n_rows(X), -1)
        values = self.values[self.starts[None, :] + leaves]
        return values @ self.onehot + self.offset[None, :]


def _xgb_booster_predict(booster, X):
    """``predict`` of a raw XGBoost Booster, which takes arrays and DataFrames."""
    return booster.inplace_predict(X)
