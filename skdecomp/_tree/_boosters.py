"""XGBoost, LightGBM and CatBoost models as flat node arrays.

A reader beside the scikit-learn one of :mod:`._extract`: it reads each
library's own dump of its trees (XGBoost's JSON model, LightGBM's
``dump_model``, CatBoost's JSON export) into the node format of
:class:`~._treemodel.TreeModel`, so the walk kernels need no change. None of
the libraries is imported here; the model passed in brings its own.

How each library routes a row, and how it maps onto ``x <= threshold``:

* XGBoost tests ``float32(x) < split``. The threshold is the float32 just
  below the split and the input is cast to float32, so that
  ``x <= threshold`` is the same test. Missing values follow
  ``default_left``. A categorical split sends the categories it lists right
  and every other category, negative or beyond the list included, left.
* LightGBM tests ``x <= threshold`` in float64. With ``missing_type`` "NaN"
  a NaN follows ``default_left``; with "None" a NaN is read as 0, so it goes
  the way 0 goes. A categorical split (``==``) sends the categories it lists
  left and everything else, NaN and negative codes included, right.
* CatBoost's oblivious trees test ``float32(x) > border`` at every level of
  a tree; each is expanded into a full binary tree, its last split at the
  root (as CatBoost's own path-dependent SHAP values take it). Missing
  values go the way their ``nan_value_treatment`` says.

Category codes must stay below 256, the size of the category sets of the
node format.
"""

# SPDX-License-Identifier: BSD-3-Clause

import json
import os
import tempfile

import numpy as np
import pandas as pd
from sklearn.utils import check_array

from .._boosters import (
    booster_library,
    booster_objective,
    is_raw_booster,
    xgboost_offset,
    xgboost_trees,
)
from .._model import _is_classifier
from ._treemodel import TreeBuilder, TreeUnsupportedError

__all__ = ["booster_outputs"]

#: Objectives whose prediction is the raw score itself (no link).
_IDENTITY = {
    "xgboost": {"reg:squarederror", "reg:squaredlogerror", "reg:pseudohubererror",
                "reg:absoluteerror", "reg:quantileerror", "binary:logitraw",
                "rank:ndcg", "rank:map", "rank:pairwise"},
    "lightgbm": {"regression", "regression_l1", "huber", "fair", "quantile", "mape",
                 "lambdarank", "rank_xendcg"},
    "catboost": {"RMSE", "MAE", "Quantile", "MAPE", "Expectile", "Huber", "Lq",
                 "LogCosh", "MultiRMSE"},
}

_WORD_MASK = np.int64(0xFFFFFFFF)  # the node format uses the low 32 bits of each word


def _unsupported(msg):
    return TreeUnsupportedError(msg)


def _bitset(codes):
    """The 8 words of the 256-bit set of category codes (32 bits per word)."""
    bits = np.zeros(8, dtype=np.int64)
    for code in np.asarray(codes, dtype=np.int64):
        bits[code >> 5] |= np.int64(1) << np.int64(code & 31)
    return bits


def _max_depth(left, right):
    """Depth of a tree given by child arrays (negative at leaves), root 0."""
    depth, stack = 0, [(0, 0)]
    while stack:
        node, d = stack.pop()
        if left[node] < 0:
            depth = max(depth, d)
            continue
        stack.append((int(left[node]), d + 1))
        stack.append((int(right[node]), d + 1))
    return depth


def _raw_decision_function(model, library, method):
    """Whether ``method`` is LightGBM's decision_function, its raw score.

    Since LightGBM 4.7, ``LGBMClassifier.decision_function`` returns
    ``predict(X, raw_score=True)``: the sum over the trees, as the margin.
    """
    return (method == "decision_function" and library == "lightgbm"
            and callable(getattr(model, "decision_function", None)))


def _check_method(model, library, method):
    """Raise unless the response method is a sum over the model's trees."""
    name = type(model).__name__
    if method == "margin" or _raw_decision_function(model, library, method):
        return
    margin = "response_method='margin' explains the raw score on the tree path"
    if method == "predict":
        if _is_classifier(model):
            raise _unsupported(
                f"{name}.predict returns class labels, which are not a sum over "
                f"trees; {margin}"
            )
        objective = booster_objective(model)
        if library == "xgboost" and objective in _IDENTITY[library]:
            raise _unsupported(
                f"{name} returns float32 predictions, rounded sums of its trees "
                "that the tree path does not reproduce exactly; "
                "response_method='margin' explains the same score in float64 "
                "on the tree path"
            )
        if library == "xgboost" or objective not in _IDENTITY[library]:
            raise _unsupported(
                f"{name} with objective {objective!r} predicts through a link "
                f"(e.g. exp or sigmoid) of the sum over trees; {margin}"
            )
        return
    raise _unsupported(
        f"{name}.{method} is a non-linear (sigmoid or softmax) function of the "
        f"raw score, so it has no exact tree decomposition; {margin}"
    )


def booster_outputs(model, method):
    """Leaf values of a gradient-boosting model and how to read its input.

    Parameters
    ----------
    model : XGBoost, LightGBM or CatBoost model
        A scikit-learn wrapper or a raw Booster.
    method : str
        The explained response method.

    Returns
    -------
    builder : TreeBuilder
        The trees.
    offset : ndarray of shape (n_outputs,)
    kind : str
        ``"xgboost"``, ``"lightgbm"`` or ``"catboost"``.
    what : str
        The explained output, for the description.
    encoder : object
        ``encoder.transform(X)`` gives the float64 columns the trees read;
        ``encoder.n_features`` is their number.

    Raises
    ------
    TreeUnsupportedError
        With the reason, when the model or the output has no tree path.
    """
    library = booster_library(model)
    _check_method(model, library, method)
    read = {"xgboost": _read_xgboost, "lightgbm": _read_lightgbm,
            "catboost": _read_catboost}[library]
    raw = _raw_decision_function(model, library, method)
    builder, offset, encoder = read(model, "margin" if raw else method)
    what = ("raw score (LightGBM's decision_function is its raw score)" if raw
            else "raw score (margin)" if method == "margin" else "sum of the trees")
    return builder, offset, library, what, encoder


def _table(X):
    """Rows of X as a 2-D float64 array or a DataFrame, unchanged otherwise."""
    if isinstance(X, pd.DataFrame):
        return X
    return check_array(X, dtype=np.float64, ensure_all_finite=False)


def _frame_codes(X, categories):
    """Float64 columns of a DataFrame: category codes, with NaN for missing.

    ``categories[j]`` lists the categories the model was trained with for
    column j (the codes are positions in it), or is None to keep the
    DataFrame's own codes.
    """
    columns = []
    for j in range(X.shape[1]):
        col = X.iloc[:, j]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cats = categories.get(j)
            if cats is not None and list(col.cat.categories) != list(cats):
                col = col.cat.set_categories(cats)
            codes = col.cat.codes.to_numpy().astype(np.float64)
            codes[codes < 0] = np.nan
            columns.append(codes)
        else:
            columns.append(col.to_numpy(dtype=np.float64, na_value=np.nan))
    if not columns:
        return np.zeros((X.shape[0], 0))
    return np.column_stack(columns)


# -- XGBoost ------------------------------------------------------------------
class _XGBoostInput:
    """The float32 columns an XGBoost model reads, as float64.

    Category columns of a DataFrame become the codes of the categories the
    model was trained with; values equal to the model's ``missing`` become
    NaN; category codes outside [0, 256), which XGBoost sends left at every
    categorical split, become a code that no split of the column sends
    right.
    """

    def __init__(self, n_features, categories, missing, invalid_codes):
        self.n_features = n_features
        self.categories = categories
        self.missing = missing
        self.invalid_codes = invalid_codes

    def transform(self, X):
        X = _table(X)
        if isinstance(X, pd.DataFrame):
            X = _frame_codes(X, self.categories)
        X = np.asarray(X, dtype=np.float32).astype(np.float64)
        if not np.isnan(self.missing):
            X[X == np.float32(self.missing)] = np.nan
        for j, code in self.invalid_codes.items():
            col = X[:, j]
            col[(col < 0) | (col >= 256)] = code
        return X


def _xgb_categories(learner):
    """Training categories of each categorical column (XGBoost >= 3.1), by column."""
    gb = learner["gradient_booster"]
    model = (gb["gbtree"] if gb["name"] == "dart" else gb)["model"]
    out = {}
    for j, enc in enumerate(model.get("cats", {}).get("enc", [])):
        values = enc.get("values") or []
        offsets = enc.get("offsets") or []
        if offsets:
            raw = bytes(values)
            out[j] = [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])]
        elif values:
            out[j] = list(values)
    return out


def _read_xgboost(model, method):
    name = type(model).__name__
    info = xgboost_trees(model)
    if info["booster"] == "gblinear":
        raise _unsupported(f"{name} is a linear booster (booster='gblinear'), not trees")
    learner = info["learner"]
    n_features = int(learner["learner_model_param"]["num_feature"])
    b = TreeBuilder()
    right_sets = {}  # categorical column -> union of the codes its splits send right
    for tree, weight, group in zip(info["trees"], info["weight"], info["group"]):
        if int(tree["tree_param"].get("size_leaf_vector", "1")) > 1:
            raise _unsupported(
                f"{name} has vector leaves (multi_strategy='multi_output_tree')"
            )
        left = np.asarray(tree["left_children"], dtype=np.int64)
        right = np.asarray(tree["right_children"], dtype=np.int64)
        cond = np.asarray(tree["split_conditions"], dtype=np.float32)
        n = left.shape[0]
        leaf = left < 0
        node_int = np.empty((n, 6), dtype=np.int64)
        node_int[:, 0] = np.where(leaf, -1, np.asarray(tree["split_indices"], dtype=np.int64))
        node_int[:, 1] = left
        node_int[:, 2] = right
        node_int[:, 3] = np.asarray(tree["default_left"], dtype=np.int64)
        node_int[:, 4:] = -1
        # float32(x) < split  <=>  float32(x) <= the float32 just below split
        threshold = np.nextafter(cond, np.float32(-np.inf)).astype(np.float64)
        cat_nodes = tree.get("categories_nodes") or []
        if cat_nodes:
            cats = np.asarray(tree["categories"], dtype=np.int64)
            rows = []
            for i, node in enumerate(cat_nodes):
                start = tree["categories_segments"][i]
                codes = cats[start:start + tree["categories_sizes"][i]]
                if codes.size and (codes.min() < 0 or codes.max() >= 256):
                    raise _unsupported(
                        f"{name} splits on category codes beyond 255; the tree "
                        "path takes at most 256 categories per column"
                    )
                sent_right = _bitset(codes)
                rows.append(~sent_right & _WORD_MASK)  # every other code goes left
                rows.append(sent_right)
                feature = int(node_int[node, 0])
                right_sets.setdefault(feature, set()).update(codes.tolist())
            start = b.add_bits(np.asarray(rows))
            for i, node in enumerate(cat_nodes):
                node_int[node, 4] = start + 2 * i
                node_int[node, 5] = start + 2 * i + 1
        values = np.zeros((n, info["n_outputs"]))
        values[leaf, group] = weight * cond[leaf].astype(np.float64)
        # the cover of XGBoost (and of shap's path-dependent game): hessian sums
        cover = tree.get("sum_hessian")
        b.add(node_int, threshold, values, _max_depth(left, right),
              cover=None if cover is None else np.asarray(cover, dtype=np.float64))
    if not b.roots:
        raise _unsupported(f"{name} has no trees")
    invalid = {}
    for feature, codes in right_sets.items():
        free = sorted(set(range(256)) - codes)
        if not free:
            raise _unsupported(
                f"{name} sends every category code 0-255 of column {feature} right "
                "at some split"
            )
        invalid[feature] = float(free[0])
    missing = np.nan if is_raw_booster(model) else getattr(model, "missing", np.nan)
    missing = np.nan if missing is None else float(missing)
    encoder = _XGBoostInput(n_features, _xgb_categories(learner), missing, invalid)
    return b, xgboost_offset(model, info), encoder


# -- LightGBM -----------------------------------------------------------------
class _LightGBMInput:
    """The float64 columns a LightGBM model reads.

    Category columns of a DataFrame become the codes of the categories the
    model was trained with (``pandas_categorical``), matched in order as
    LightGBM matches them; text columns count as category columns and are
    read with those categories, as the model calls read them; columns with
    categorical splits are truncated to integers, as LightGBM reads them.
    """

    def __init__(self, n_features, pandas_categorical, categorical, name="LightGBM"):
        self.n_features = n_features
        self.pandas_categorical = pandas_categorical
        self.categorical = categorical
        self.name = name

    def transform(self, X):
        X = _table(X)
        if isinstance(X, pd.DataFrame):
            X = _frame_codes(*self._as_categories(X))
        X = np.array(X, dtype=np.float64)
        if self.categorical:
            X[:, self.categorical] = np.trunc(X[:, self.categorical])
        return X

    def _as_categories(self, X):
        """X with its text columns as categories, and the categories by column."""
        fitted = list(self.pandas_categorical or [])
        cat_cols = [j for j, dt in enumerate(X.dtypes)
                    if isinstance(dt, pd.CategoricalDtype)
                    or not pd.api.types.is_numeric_dtype(dt)]
        text = [j for j in cat_cols if not isinstance(X.dtypes.iloc[j], pd.CategoricalDtype)]
        if text and len(cat_cols) != len(fitted):
            names = [X.columns[j] for j in text]
            raise ValueError(
                f"X has the columns {names} as text ({X.dtypes.iloc[text[0]]}), "
                f"which {self.name} cannot read: it was fitted with "
                f"{len(fitted)} pandas category column(s) and X has "
                f"{len(cat_cols)} category or text column(s). Pass the columns the "
                "model was fitted on as categories, with the categories of the "
                "data it was fitted on (X[col].astype(fit_X[col].dtype)), and its "
                "numeric columns as numbers."
            )
        cats = dict(zip(cat_cols, fitted))
        if text:
            X = X.copy()
            for j in text:
                col = X.iloc[:, j]  # values the model was not fitted on are missing
                col = col.where(col.isin(cats[j]))
                X.isetitem(j, pd.Categorical(col, categories=cats[j]))
        return X, cats


def _read_lightgbm(model, method):
    name = type(model).__name__
    booster = getattr(model, "booster_", model)
    dump = booster.dump_model()
    n_k = int(dump.get("num_tree_per_iteration", 1))
    trees = dump["tree_info"]
    if not trees:
        raise _unsupported(f"{name} has no trees")
    scale = 1.0
    if dump.get("average_output") and method == "predict":
        # boosting="rf" predicts the mean over iterations; its raw score is the sum
        scale = n_k / len(trees)
    b = TreeBuilder()
    categorical = set()
    for t, info in enumerate(trees):
        node_int, threshold, leaf_values, bits, depth, cover = _lgb_tree(
            info["tree_structure"], name, categorical
        )
        if bits:
            start = b.add_bits(np.asarray(bits))
            cat = node_int[:, 4] >= 0
            node_int[cat, 4] += start
            node_int[cat, 5] += start
        values = np.zeros((node_int.shape[0], n_k))
        values[:, t % n_k] = scale * leaf_values
        b.add(node_int, threshold, values, depth, cover=cover)
    # LightGBM adds its initial score to the leaves of the first trees
    encoder = _LightGBMInput(
        booster.num_feature(), getattr(booster, "pandas_categorical", None),
        sorted(categorical), name,
    )
    return b, np.zeros(n_k), encoder


def _lgb_tree(root, name, categorical):
    """Node arrays of one tree of ``dump_model``, nodes in depth-first order.

    The cover of a node is its count of training rows (``internal_count``,
    ``leaf_count``), as shap reads it; a tree of one leaf records none (0).
    """
    stack = [(root, -1, False, 0)]
    rows_int, thresholds, leaf_values, bits, cover = [], [], [], [], []
    depth = 0
    while stack:
        node, parent, is_right, d = stack.pop()
        i = len(rows_int)
        if parent >= 0:
            rows_int[parent][2 if is_right else 1] = i
        depth = max(depth, d)
        row = [-1, -1, -1, 0, -1, -1]
        thr = 0.0
        if "split_feature" not in node:
            if node.get("leaf_coeff"):
                raise _unsupported(f"{name} has linear trees (linear_tree=True)")
            rows_int.append(row)
            thresholds.append(0.0)
            leaf_values.append(float(node["leaf_value"]))
            cover.append(float(node.get("leaf_count", 0)))
            continue
        feature = int(node["split_feature"])
        missing = node.get("missing_type", "None")
        row[0] = feature
        if node["decision_type"] == "==":
            codes = [int(c) for c in str(node["threshold"]).split("||")]
            if min(codes) < 0 or max(codes) >= 256:
                raise _unsupported(
                    f"{name} splits on category codes beyond 255; the tree path "
                    "takes at most 256 categories per column"
                )
            sent_left = _bitset(codes)
            row[4] = len(bits)
            bits.append(sent_left)
            row[5] = len(bits)
            bits.append(~sent_left & _WORD_MASK)  # everything else goes right
            row[3] = 0  # NaN and codes outside [0, 256) go right
            categorical.add(feature)
        elif node["decision_type"] == "<=":
            if missing == "Zero":
                raise _unsupported(
                    f"{name} treats zeros as missing values (zero_as_missing=True)"
                )
            thr = float(node["threshold"])
            if missing == "NaN":
                row[3] = int(bool(node["default_left"]))
            else:  # "None": LightGBM reads a NaN as 0
                row[3] = int(0.0 <= thr)
        else:
            raise _unsupported(f"{name} has a split of type {node['decision_type']!r}")
        rows_int.append(row)
        thresholds.append(thr)
        leaf_values.append(0.0)
        cover.append(float(node.get("internal_count", 0)))
        stack.append((node["right_child"], i, True, d + 1))
        stack.append((node["left_child"], i, False, d + 1))
    return (
        np.asarray(rows_int, dtype=np.int64), np.asarray(thresholds, dtype=np.float64),
        np.asarray(leaf_values, dtype=np.float64), bits, depth,
        np.asarray(cover, dtype=np.float64),
    )


# -- CatBoost -----------------------------------------------------------------
class _CatBoostInput:
    """The float32 columns a CatBoost model of float features reads, as float64."""

    def __init__(self, n_features):
        self.n_features = n_features

    def transform(self, X):
        X = _table(X)
        if isinstance(X, pd.DataFrame):
            X = _frame_codes(X, {})
        return np.asarray(X, dtype=np.float32).astype(np.float64)


def _catboost_json(model):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.json")
        model.save_model(path, format="json")
        with open(path, encoding="utf-8") as f:
            return json.load(f)


def _read_catboost(model, method):
    name = type(model).__name__
    dump = _catboost_json(model)
    features = dump.get("features_info", {})
    for kind in ("categorical_features", "text_features", "embedding_features"):
        if features.get(kind):
            raise _unsupported(
                f"{name} has {kind.replace('_', ' ')}, whose splits read learned "
                "statistics (CTRs) of several columns; only float features have a "
                "tree path"
            )
    if "oblivious_trees" not in dump:
        raise _unsupported(
            f"{name} has non-symmetric trees; only grow_policy='SymmetricTree' has a "
            "tree path"
        )
    floats = {f["feature_index"]: f for f in features.get("float_features", [])}
    scale, bias = dump.get("scale_and_bias", [1.0, [0.0]])
    bias = np.atleast_1d(np.asarray(bias, dtype=np.float64))
    n_out = bias.shape[0]
    b = TreeBuilder()
    for tree in dump["oblivious_trees"]:
        splits = tree["splits"]
        if any(s.get("split_type") != "FloatFeature" for s in splits):
            raise _unsupported(f"{name} splits on other than float features")
        D = len(splits)
        leaves = np.asarray(tree["leaf_values"], dtype=np.float64).reshape(1 << D, n_out)
        n_inner = (1 << D) - 1
        n = 2 * n_inner + 1
        node_int = np.full((n, 6), -1, dtype=np.int64)
        node_int[:, 3] = 0
        threshold = np.zeros(n)
        values = np.zeros((n, n_out))
        # breadth-first layout: node k has children 2k+1 (x <= border, the
        # split's condition false) and 2k+2 (true); level d tests
        # splits[D - 1 - d], the last split at the root, as CatBoost expands
        # its trees for the path-dependent game (see the cover below)
        for d, split in enumerate(splits[::-1]):
            info = floats[split["float_feature_index"]]
            level = np.arange((1 << d) - 1, (1 << (d + 1)) - 1)
            node_int[level, 0] = info["flat_feature_index"]
            node_int[level, 1] = 2 * level + 1
            node_int[level, 2] = 2 * level + 2
            node_int[level, 3] = int(info.get("nan_value_treatment", "AsIs") != "AsTrue")
            threshold[level] = float(np.float32(split["border"]))
        # the leaf at breadth-first position p of the last level took the
        # branches given by p's bits, the root's highest, so that bit d of p
        # is the outcome of splits[d]: CatBoost's own numbering of the leaves
        values[n_inner:] = scale * leaves
        # cover: the training weight of each leaf, summed up the levels
        cover = np.zeros(n)
        weights = tree.get("leaf_weights")
        if weights is None:
            cover[:] = np.nan
        else:
            cover[n_inner:] = np.asarray(weights, dtype=np.float64)
            for k in range(n_inner - 1, -1, -1):
                cover[k] = cover[2 * k + 1] + cover[2 * k + 2]
        b.add(node_int, threshold, values, D, cover=cover)
    if not b.roots:
        raise _unsupported(f"{name} has no trees")
    n_features = getattr(model, "n_features_in_", None)
    if n_features is None:
        n_features = len(model.feature_names_)
    return b, bias, _CatBoostInput(int(n_features))
