"""Fitted scikit-learn tree ensembles as flat node arrays.

The fitted trees of a supported model are flattened into plain numpy arrays
(:class:`~._treemodel.TreeModel`) that the walk kernels of :mod:`._kernels` read: one row
per node over all trees, leaf values scaled so that the model output is a
constant plus the sum of one leaf value per tree.

Supported models: DecisionTree*, RandomForest*, ExtraTrees*,
GradientBoosting* and HistGradientBoosting* (regressors with an identity link;
classifiers on ``predict_proba`` for averaging forests and on
``decision_function`` for boosting), and the tree models of XGBoost, LightGBM
and CatBoost (float features only) on their raw score, ``margin``, read by
:mod:`._boosters`; alone or as the last step of a Pipeline whose earlier steps
transform each column on its own.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    SplineTransformer,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from .._boosters import booster_library
from ._treemodel import TreeBuilder, TreeModel, TreeUnsupportedError

__all__ = [
    "TreeModel",
    "TreeUnsupportedError",
    "extract_tree_model",
]

_FORESTS = (
    RandomForestRegressor,
    RandomForestClassifier,
    ExtraTreesRegressor,
    ExtraTreesClassifier,
)
_SK_TREES = (DecisionTreeRegressor, DecisionTreeClassifier)
_GB = (GradientBoostingRegressor, GradientBoostingClassifier)
_HGB = (HistGradientBoostingRegressor, HistGradientBoostingClassifier)
_SUPPORTED = (
    "DecisionTree*, RandomForest*, ExtraTrees*, GradientBoosting*, "
    "HistGradientBoosting*, or an XGBoost, LightGBM or CatBoost tree model"
)

# Transformers whose output column j is a function of input column j alone.
_ONE_TO_ONE = (
    StandardScaler,
    MinMaxScaler,
    MaxAbsScaler,
    RobustScaler,
    QuantileTransformer,
    PowerTransformer,
    OrdinalEncoder,
    Binarizer,
)


# -- preprocessing ----------------------------------------------------------
def _unsupported(msg):
    return TreeUnsupportedError(msg)


def _column_sources(transformer, n_in):
    """Input column behind each output column of a column-wise transformer."""
    name = type(transformer).__name__
    if transformer is None or (isinstance(transformer, str) and transformer == "passthrough"):
        return np.arange(n_in)
    if isinstance(transformer, str) and transformer == "drop":
        return np.zeros(0, dtype=np.int64)
    if isinstance(transformer, Pipeline):
        src = np.arange(n_in)
        for _, _, step in transformer._iter(with_final=True, filter_passthrough=True):
            src = src[_column_sources(step, src.shape[0])]
        return src
    if isinstance(transformer, ColumnTransformer):
        n_out = sum(
            s.stop - s.start for s in transformer.output_indices_.values()
        )
        src = np.full(n_out, -1, dtype=np.int64)
        inputs = getattr(transformer, "_transformer_to_input_indices", None)
        if inputs is None:
            raise _unsupported("the ColumnTransformer does not expose its input columns")
        for tname, trans, _ in transformer.transformers_:
            out = transformer.output_indices_.get(tname)
            if out is None or out.stop == out.start:
                continue
            idx = np.asarray(inputs[tname], dtype=np.int64)
            sub = _column_sources(trans, idx.shape[0])
            if sub.shape[0] != out.stop - out.start:
                raise _unsupported(f"cannot map the columns of step {tname!r}")
            src[out] = idx[sub]
        if (src < 0).any():
            raise _unsupported("cannot map every column of the ColumnTransformer")
        return src
    if isinstance(transformer, _ONE_TO_ONE):
        return np.arange(n_in)
    if isinstance(transformer, FunctionTransformer) and transformer.func is None:
        return np.arange(n_in)
    if isinstance(transformer, KBinsDiscretizer):
        if transformer.encode == "ordinal":
            return np.arange(n_in)
        return np.repeat(np.arange(n_in), np.asarray(transformer.n_bins_, dtype=np.int64))
    if isinstance(transformer, OneHotEncoder):
        counts = getattr(transformer, "_n_features_outs", None)
        if counts is None:
            raise _unsupported("cannot count the OneHotEncoder's output columns")
        return np.repeat(np.arange(n_in), np.asarray(counts, dtype=np.int64))
    if isinstance(transformer, SplineTransformer):
        per = transformer.n_features_out_ // max(n_in, 1)
        if per * n_in != transformer.n_features_out_:
            raise _unsupported("cannot map the SplineTransformer's output columns")
        return np.repeat(np.arange(n_in), per)
    if isinstance(transformer, TargetEncoder):
        # one column per input column, one per class and column for a
        # multiclass target
        per = len(transformer.classes_) if transformer.target_type_ == "multiclass" else 1
        return np.repeat(np.arange(n_in), per)
    if isinstance(transformer, MissingIndicator):
        return np.asarray(transformer.features_, dtype=np.int64)
    if isinstance(transformer, SimpleImputer):
        if transformer.strategy == "constant" or transformer.keep_empty_features:
            kept = np.arange(n_in)
        else:
            stats = np.asarray(transformer.statistics_, dtype=object)
            kept = np.flatnonzero(~pd.isna(stats).astype(bool))
        if transformer.add_indicator:
            kept = np.concatenate([kept, _column_sources(transformer.indicator_, n_in)])
        return kept
    raise _unsupported(
        f"the preprocessing step {name} may mix columns (supported column-wise "
        "steps: scalers, encoders, imputers, KBinsDiscretizer, SplineTransformer, "
        "ColumnTransformer and Pipeline of those)"
    )


def _check_supported(model):
    if booster_library(model) is not None:
        return  # the reader of _boosters checks the rest
    if not isinstance(model, _SK_TREES + _FORESTS + _GB + _HGB):
        raise _unsupported(
            f"{type(model).__name__} is not a supported tree model ({_SUPPORTED})"
        )


def _split_pipeline(estimator):
    """(column-wise preprocessing steps, final model, sources of the model's columns)."""
    from sklearn.frozen import FrozenEstimator

    if isinstance(estimator, FrozenEstimator):
        return _split_pipeline(estimator.estimator)
    if not isinstance(estimator, Pipeline):
        return [], estimator, None
    steps = [
        step
        for _, _, step in estimator._iter(with_final=False, filter_passthrough=True)
    ]
    final = estimator.steps[-1][1]
    if final is None or (isinstance(final, str) and final == "passthrough"):
        raise _unsupported("the Pipeline has no final model")
    inner_pre, model, inner_src = _split_pipeline(final)
    _check_supported(model)
    n_in = getattr(estimator, "n_features_in_", None)
    if n_in is None:
        n_in = getattr(steps[0], "n_features_in_", None) if steps else None
    if n_in is None:
        raise _unsupported("the Pipeline does not record its number of input columns")
    src = np.arange(n_in)
    for step in steps:
        src = src[_column_sources(step, src.shape[0])]
    if inner_src is not None:
        src = src[inner_src]
    return steps + inner_pre, model, src


# -- extraction -----------------------------------------------------------------
def _sk_tree_nodes(tree):
    t = tree.tree_
    n = t.node_count
    node_int = np.empty((n, 6), dtype=np.int64)
    leaf = t.children_left < 0
    node_int[:, 0] = np.where(leaf, -1, t.feature)
    node_int[:, 1] = t.children_left
    node_int[:, 2] = t.children_right
    missing = getattr(t, "missing_go_to_left", None)
    node_int[:, 3] = 0 if missing is None else np.asarray(missing, dtype=np.int64)
    node_int[:, 4] = -1
    node_int[:, 5] = -1
    return node_int, np.asarray(t.threshold, dtype=np.float64), int(t.max_depth)


def _sk_tree_values(tree, is_clf):
    value = np.asarray(tree.tree_.value, dtype=np.float64)
    if is_clf:
        # DecisionTreeClassifier.predict_proba: class fractions, renormalised
        proba = value[:, 0, : tree.n_classes_]
        norm = proba.sum(axis=1, keepdims=True)
        norm[norm == 0.0] = 1.0
        return proba / norm
    return value[:, :, 0]


def _tree_scale(model):
    """The response method on which a classifier has a tree path, or None."""
    if booster_library(model) is not None:
        return "margin"
    if isinstance(model, _SK_TREES + _FORESTS):
        return "predict_proba"
    if isinstance(model, _GB + _HGB):
        return "decision_function"
    return None


def _model_outputs(model, method):
    """(trees, constant term, kind, explained output, input encoder), or raise."""
    name = type(model).__name__
    if booster_library(model) is not None:
        from ._boosters import booster_outputs

        return booster_outputs(model, method)
    if method == "margin":
        raise _unsupported(f"{name} has no margin; response_method='margin' is for "
                           "XGBoost, LightGBM and CatBoost models")
    is_clf = isinstance(model, (DecisionTreeClassifier, RandomForestClassifier,
                                ExtraTreesClassifier, GradientBoostingClassifier,
                                HistGradientBoostingClassifier))
    if is_clf and method == "predict":
        raise _unsupported(
            f"{name}.predict returns class labels, which are not a sum over "
            f"trees; response_method='{_tree_scale(model)}' has a tree path"
        )
    b = TreeBuilder()
    if isinstance(model, _SK_TREES + _FORESTS):
        if is_clf and method != "predict_proba":
            raise _unsupported(f"{name} has no output {method!r} on the tree path")
        if is_clf and getattr(model, "n_outputs_", 1) > 1:
            raise _unsupported(f"{name} has several targets")
        trees = [model] if isinstance(model, _SK_TREES) else list(model.estimators_)
        scale = 1.0 / len(trees)
        for tree in trees:
            node_int, thr, depth = _sk_tree_nodes(tree)
            b.add(node_int, thr, scale * _sk_tree_values(tree, is_clf), depth,
                  cover=tree.tree_.weighted_n_node_samples)
        n_out = b.values[0].shape[1]
        return b, np.zeros(n_out), "sklearn", "mean of the trees", None
    if isinstance(model, _GB):
        if is_clf and method != "decision_function":
            raise _unsupported(
                f"{name}.{method} is a non-linear (sigmoid/softmax) function of "
                "the sum over trees, so it has no exact tree decomposition; "
                "response_method='decision_function' explains the raw score "
                "(log-odds) on the tree path"
            )
        init = model.init_
        if not (isinstance(init, str) and init == "zero") and not isinstance(
            init, (DummyRegressor, DummyClassifier)
        ):
            raise _unsupported(f"{name} has a non-constant init estimator")
        n_k = model.estimators_.shape[1]
        lr = float(model.learning_rate)
        for i in range(model.estimators_.shape[0]):
            for k in range(n_k):
                tree = model.estimators_[i, k]
                node_int, thr, depth = _sk_tree_nodes(tree)
                vals = np.zeros((node_int.shape[0], n_k))
                vals[:, k] = lr * tree.tree_.value[:, 0, 0]
                b.add(node_int, thr, vals, depth,
                      cover=tree.tree_.weighted_n_node_samples)
        offset = _gb_init_offset(model, is_clf, n_k)
        what = "raw score (decision_function)" if is_clf else "sum of the trees"
        return b, offset, "sklearn", what, None
    if isinstance(model, _HGB):
        if is_clf and method != "decision_function":
            raise _unsupported(
                f"{name}.{method} is a non-linear (sigmoid/softmax) function of "
                "the sum over trees, so it has no exact tree decomposition; "
                "response_method='decision_function' explains the raw score "
                "(log-odds) on the tree path"
            )
        link = type(model._loss.link).__name__
        if not is_clf and link != "IdentityLink":
            raise _unsupported(
                f"{name} with loss={model.loss!r} predicts through a {link}, which "
                "is not a sum over trees"
            )
        known, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
        known_start = b.add_bits(np.asarray(known))
        f_idx_map = np.asarray(f_idx_map, dtype=np.int64)
        n_k = model.n_trees_per_iteration_
        for predictors in model._predictors:
            for k, predictor in enumerate(predictors):
                nodes = predictor.nodes
                n = nodes.shape[0]
                node_int = np.empty((n, 6), dtype=np.int64)
                leaf = nodes["is_leaf"].astype(bool)
                feat = nodes["feature_idx"].astype(np.int64)
                node_int[:, 0] = np.where(leaf, -1, feat)
                node_int[:, 1] = nodes["left"]
                node_int[:, 2] = nodes["right"]
                node_int[:, 3] = nodes["missing_go_to_left"]
                cat = nodes["is_categorical"].astype(bool) & ~leaf
                node_int[:, 4] = np.where(cat, nodes["bitset_idx"].astype(np.int64), -1)
                node_int[:, 5] = np.where(cat, known_start + f_idx_map[feat], -1)
                vals = np.zeros((n, n_k))
                vals[:, k] = np.where(leaf, nodes["value"], 0.0)
                depth = int(nodes["depth"].max(initial=0))
                bits = np.asarray(predictor.raw_left_cat_bitsets)
                # training samples at each node (unweighted), as shap reads them
                b.add(node_int, np.asarray(nodes["num_threshold"], dtype=np.float64),
                      vals, depth, bits, cover=nodes["count"])
        offset = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
        what = "raw score (decision_function)" if is_clf else "sum of the trees"
        return b, offset, "hgb", what, None
    raise _unsupported(f"{name} is not a supported tree model ({_SUPPORTED})")


def _gb_init_offset(model, is_clf, n_k):
    """Constant initial raw prediction of GradientBoosting* (zero or Dummy* init)."""
    if isinstance(model.init_, str):
        return np.zeros(n_k)
    from sklearn.ensemble._gb import _init_raw_predictions

    probe = np.zeros((1, model.n_features_in_), dtype=np.float32)
    raw = _init_raw_predictions(probe, model.init_, model._loss, is_clf)
    return np.asarray(raw, dtype=np.float64).reshape(-1)


def _hgb_sources(model):
    """Input column of each column after HistGradientBoosting's own encoding."""
    pre = getattr(model, "_preprocessor", None)
    n_in = model.n_features_in_
    if pre is None:
        return np.arange(n_in)
    # categorical columns first (ordinal codes), then the numerical ones
    is_cat = np.asarray(model.is_categorical_, dtype=bool)
    src = np.empty(n_in, dtype=np.int64)
    src[pre.output_indices_["encoder"]] = np.flatnonzero(is_cat)
    src[pre.output_indices_["numerical"]] = np.flatnonzero(~is_cat)
    return src


def extract_tree_model(estimator, response=None):
    """Flatten a fitted tree ensemble, or a Pipeline ending in one.

    Parameters
    ----------
    estimator : fitted estimator
        A supported tree model, a Pipeline whose last step is one and whose
        earlier steps are column-wise, or a FrozenEstimator of either.
    response : ResponseFunction or None
        The explained output (method, output columns and sign). None means
        ``predict``, all outputs.

    Returns
    -------
    tree_model : TreeModel

    Raises
    ------
    TreeUnsupportedError
        With the reason, when the model or its output has no tree path.
    """
    method = "predict" if response is None else response.method
    preprocess, model, src = _split_pipeline(estimator)
    _check_supported(model)
    if method == "log_odds":
        raise TreeUnsupportedError(
            "the log-odds of predict_proba are not a sum over trees; "
            f"response_method='{_tree_scale(model)}' has a tree path for "
            f"{type(model).__name__}"
        )
    builder, offset, kind, what, encoder = _model_outputs(model, method)
    roots, node_int, threshold, values, cat_bits = builder.arrays()
    if kind == "hgb":
        model_src = _hgb_sources(model)
    elif encoder is not None:
        model_src = np.arange(encoder.n_features)
    else:
        model_src = np.arange(model.n_features_in_)
    sources = model_src if src is None else src[model_src]
    if response is not None:
        if response.columns is not None:
            cols = np.asarray(response.columns, dtype=np.int64)
            values = values[:, cols]
            offset = offset[cols]
        if response.sign != 1.0:
            values = response.sign * values
            offset = response.sign * offset
    name = type(model).__name__
    if preprocess:
        name = f"Pipeline ending in {name}"
    return TreeModel(
        roots, node_int, threshold, np.ascontiguousarray(values, dtype=np.float64),
        cat_bits, np.ascontiguousarray(offset, dtype=np.float64),
        np.ascontiguousarray(sources, dtype=np.int64), builder.max_depth,
        preprocess, model, kind, f"{name}, {method}: {what}", encoder,
        builder.cover(),
    )
