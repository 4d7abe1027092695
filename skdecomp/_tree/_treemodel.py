"""The flat form of a tree ensemble that every reader fills and every walk reads.

:class:`TreeModel` owns the node arrays of all trees of a fitted model (and
the fitted preprocessing that turns the model's input into the columns the
trees read); :class:`TreeBuilder` collects them tree by tree. The readers
(:mod:`._extract` for scikit-learn, :mod:`._boosters` for XGBoost, LightGBM
and CatBoost) build it; the evaluation (:mod:`._dispatch`, :mod:`._indices`)
walks it. This module imports no other module of the subpackage.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from .._table import Table

__all__ = ["TreeUnsupportedError", "TreeModel", "TreeBuilder"]


class TreeUnsupportedError(ValueError):
    """The model (or the explained output) cannot take the tree path."""


class TreeModel:
    """A fitted tree ensemble as flat numpy arrays.

    Built by :func:`extract_tree_model`; holds plain arrays (and the fitted
    preprocessing steps), so it pickles with the estimator that owns it.

    Attributes
    ----------
    roots : ndarray of shape (n_trees,), int64
        Root node of each tree.
    node_int : ndarray of shape (n_nodes, 6), int64
        Per node: feature (-1 at leaves), left child, right child, 1 when a
        missing value goes left, row of ``cat_bits`` holding the categories
        sent left (-1 for a numerical split), row holding the known
        categories of the feature.
    threshold : ndarray of shape (n_nodes,)
        ``x <= threshold`` goes left at numerical splits.
    values : ndarray of shape (n_nodes, n_outputs)
        Leaf values of the explained outputs, scaled so that the model output
        is ``offset + sum over trees of values[leaf]``.
    cat_bits : ndarray of shape (n_bitsets, 8), int64
        256-bit category sets (HistGradientBoosting categorical splits).
    offset : ndarray of shape (n_outputs,)
        Constant term (initial prediction of boosting).
    sources : ndarray of shape (n_model_columns,), int64
        Input column on which each column seen by the trees depends.
    max_depth : int
    kind : str
        ``"sklearn"``, ``"hgb"``, ``"xgboost"``, ``"lightgbm"`` or
        ``"catboost"``: how :meth:`prepare` reads the model's input.
    description : str
        The model and output the arrays reproduce.
    cover : ndarray of shape (n_nodes,)
        Training cover of every node (samples, weights or hessian sums, as
        the library records them), read by the path-dependent game; NaN
        where the model does not record it.
    """

    def __init__(
        self, roots, node_int, threshold, values, cat_bits, offset, sources,
        max_depth, preprocess, model, kind, description, encoder=None, cover=None,
    ):
        self.roots = roots
        self.node_int = node_int
        self.threshold = threshold
        self.values = values
        self.cat_bits = cat_bits
        self.offset = offset
        self.sources = sources
        self.max_depth = int(max_depth)
        self.preprocess = preprocess
        self.model = model
        self.kind = kind
        self.description = description
        self.encoder = encoder
        if cover is None:
            cover = np.full(node_int.shape[0], np.nan)
        self.cover = np.ascontiguousarray(cover, dtype=np.float64)

    @property
    def n_outputs(self):
        return self.values.shape[1]

    @property
    def n_leaves(self):
        """Leaves over all trees."""
        return int(np.count_nonzero(self.node_int[:, 0] < 0))

    def prepare(self, X):
        """Columns seen by the trees for raw model input X, as float64."""
        if isinstance(X, Table):
            X = X.rows(np.arange(X.n_rows))
        for step in self.preprocess:
            X = step.transform(X)
        if sp.issparse(X):
            X = X.toarray()
        if self.kind == "hgb":
            X = self.model._preprocess_X(X, reset=False)
            X = np.asarray(X, dtype=np.float64)
        elif getattr(self, "encoder", None) is not None:
            # XGBoost, LightGBM, CatBoost: their own category codes, missing
            # values and float32 or float64 comparisons (see _boosters)
            X = self.encoder.transform(X)
        else:
            # scikit-learn's trees compare float32 inputs with their thresholds
            X = check_array(X, dtype=np.float32, ensure_all_finite=False)
            X = X.astype(np.float64)
        if X.shape[1] != self.sources.shape[0]:
            raise ValueError(
                f"The trees expect {self.sources.shape[0]} columns after "
                f"preprocessing, got {X.shape[1]}."
            )
        return np.ascontiguousarray(X)

    def column_groups(self, labels):
        """Group of each column seen by the trees, from the input columns' groups."""
        labels = np.asarray(labels, dtype=np.int64)
        if labels.shape[0] <= self.sources.max(initial=-1):
            raise ValueError(
                f"labels has {labels.shape[0]} entries but the model reads input "
                f"column {int(self.sources.max())}; give one group per input column."
            )
        return np.ascontiguousarray(labels[self.sources])

    def arrays(self):
        """The flat node arrays ``(roots, node_int, threshold, values, cat_bits)``."""
        return (self.roots, self.node_int, self.threshold, self.values, self.cat_bits)

    def __getstate__(self):
        # the background summary cached by the dispatch is not pickled
        state = self.__dict__.copy()
        state.pop("_background_leaves", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "cover" not in state:  # pickled before the cover was recorded
            self.cover = np.full(self.node_int.shape[0], np.nan)


class TreeBuilder:
    """Flat node arrays of several trees, filled tree by tree by the readers."""

    def __init__(self):
        self.roots, self.nodes, self.thresholds, self.values = [], [], [], []
        self.covers = []
        self.bits = [np.zeros((0, 8), dtype=np.int64)]
        self.n_nodes = 0
        self.n_bits = 0
        self.max_depth = 0

    def add(self, node_int, threshold, values, depth, bits=None, cover=None):
        """Append one tree; ``cover`` is its nodes' training cover (NaN if None)."""
        node_int = node_int.copy()
        inner = node_int[:, 0] >= 0
        node_int[inner, 1] += self.n_nodes
        node_int[inner, 2] += self.n_nodes
        node_int[~inner, 1:3] = -1
        if bits is not None and bits.shape[0]:
            cat = node_int[:, 4] >= 0
            node_int[cat, 4] += self.n_bits
            self.bits.append(bits.astype(np.int64))
            self.n_bits += bits.shape[0]
        self.roots.append(self.n_nodes)
        self.nodes.append(node_int)
        self.thresholds.append(threshold)
        self.values.append(values)
        if cover is None:
            cover = np.full(node_int.shape[0], np.nan)
        cover = np.asarray(cover, dtype=np.float64).reshape(-1)
        if cover.shape[0] != node_int.shape[0]:
            raise ValueError(
                f"cover has {cover.shape[0]} entries for {node_int.shape[0]} nodes."
            )
        self.covers.append(cover)
        self.n_nodes += node_int.shape[0]
        self.max_depth = max(self.max_depth, depth)

    def add_bits(self, bits):
        start = self.n_bits
        self.bits.append(bits.astype(np.int64))
        self.n_bits += bits.shape[0]
        return start

    def arrays(self):
        return (
            np.asarray(self.roots, dtype=np.int64),
            np.ascontiguousarray(np.concatenate(self.nodes)),
            np.ascontiguousarray(np.concatenate(self.thresholds)),
            np.ascontiguousarray(np.concatenate(self.values)),
            np.ascontiguousarray(np.concatenate(self.bits)),
        )

    def cover(self):
        """Training cover of every node, float64 of shape (n_nodes,)."""
        if not self.covers:
            return np.zeros(0)
        return np.ascontiguousarray(np.concatenate(self.covers), dtype=np.float64)
