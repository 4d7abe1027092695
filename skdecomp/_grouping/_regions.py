"""FDTree: regions of the input space in which a model is additive over groups.

Groupers change the partition of the *columns* until the between-group
interactions are gone; :class:`FDTree` changes the *background* instead. It
grows a shallow tree of rule-defined regions, and explains every row against
the rows of its own region, where the between-group interactions are small
and PDP, SHAP and PFI agree (Laberge, Pequignot, Marchand and Khomh,
AISTATS 2024; Herbinger, Laberge, Muschalik, Pequignot, Wright and Fumagalli,
2026, for groups of columns).
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import (
    HasMethods,
    Interval,
    NestedParamsMixin,
    StrOptions,
    _fit_context,
    transactional_fit,
)
from .._explainer import Explainer, _check_grouper_spec, _fit_grouper
from .._explanation import Explanation, Explanations
from .._game import AnchoredStatistics, CoalitionGame
from .._model import fitted_model, is_fitted, read_frame, resolve_response
from .._partition import group_labels, resolve_groups
from .._tree import select_algorithm
from ._base import _MODEL_CONSTRAINT, _take_rows

__all__ = ["FDTree"]

# Numerical columns with more distinct values than this are split at quantiles.
_MAX_LEVELS = 40
_N_QUANTILES = 39


def _region_sums(loss, f, rows):
    """Loss of a region summed over its rows, from row means of its sub-blocks.

    ``rows[j, i]`` is the mean of row i of ``M[j]`` restricted to the
    region (see :class:`_Losses`); ``f`` holds the model outputs of the
    region's rows, (n_rows, n_outputs).
    """
    if loss == "coe":
        # f(x) - mean_R f - sum_k PDP_k(x)
        resid = f.T - f.mean(axis=0)[:, None] - rows
        return float((resid**2).sum())
    return float((rows**2).sum())


class _Losses:
    """The loss of any region of the sample, from sub-blocks of N x N matrices.

    Every loss is a function of the row means of a stack ``M`` of N x N
    matrices restricted to the region's rows and columns. For ``"pdp_pfi"``,
    ``M_k = G_k + G_k^T``: the row mean of G_k is the regional PDP effect and
    the column mean minus the PFI effect, and rows and columns of a region
    are the same rows, so their sum is the row mean of ``G_k + G_k^T``. For
    ``"pdp_shap"``, ``M_k = Phi_k - G_k`` with the anchored Shapley values;
    for ``"coe"``, ``M = sum_k G_k``. One matrix per group and output.
    """

    def __init__(self, loss, M, f):
        self.loss = loss
        self.M = M + np.swapaxes(M, 1, 2) if loss == "pdp_pfi" else M
        self.f = f

    def of(self, idx):
        sub = self.M[:, idx[:, None], idx[None, :]]
        return _region_sums(self.loss, self.f[idx], sub.mean(axis=2))

    def prefixes(self, idx, sizes):
        """Losses of the first p rows of ``idx`` and of the rest, for every p of sizes.

        One pass over the sub-block: row sums over the segments of columns
        between consecutive sizes, then cumulated over the few segments.
        """
        n = idx.shape[0]
        sizes = np.asarray(sizes, dtype=np.int64)
        # row_seg[j, a, s]: sum of row a over segment s of the columns
        block = self.M[:, idx[:, None], idx[None, :]]
        row_seg = np.add.reduceat(block, np.r_[0, sizes], axis=2)
        row_cum = np.cumsum(row_seg, axis=2)  # over the columns before sizes[s]
        row_tot = row_cum[:, :, -1]
        f = self.f[idx]
        out = []
        for s, p in enumerate(sizes):
            left = row_cum[:, :p, s] / p
            right = (row_tot[:, p:] - row_cum[:, p:, s]) / (n - p)
            out.append((_region_sums(self.loss, f[:p], left),
                        _region_sums(self.loss, f[p:], right)))
        return out


def _is_categorical(column):
    if isinstance(column, pd.Series):
        types = pd.api.types
        return not (types.is_numeric_dtype(column) or types.is_bool_dtype(column))
    return np.asarray(column).dtype.kind not in "biuf"


def _as_float(column):
    if isinstance(column, pd.Series):
        return pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    return np.asarray(column, dtype=np.float64)


def _column(X, j):
    return X.iloc[:, j] if isinstance(X, pd.DataFrame) else X[:, j]


class FDTree(NestedParamsMixin, MetaEstimatorMixin, BaseEstimator):
    """Regions of the input space in which a model is additive over groups.

    A functional-decomposition tree (FD-Tree; Laberge, Pequignot, Marchand
    and Khomh, AISTATS 2024) splits the input space into a few regions
    defined by rules such as ``x1 <= 0.02``. Within each region, with the
    background restricted to the region's rows, the between-group
    interactions of the model are small, so that PDP, SHAP and PFI agree and
    each region's explanation is additive and readable. Groups of columns
    are allowed (GRANITE; Herbinger et al., 2026): only interactions
    between groups count, so columns that interact inside one group need no
    split.

    The tree minimises ``L(T) / L_root + alpha * |T|`` greedily, where
    ``|T|`` is the number of regions and ``L(T) = sum_R (|R| / N) L_R`` the
    region-weighted loss of the decomposition, each region explained with
    its own rows as explained points and as background. A split is kept
    when it lowers ``L(T) / L_root`` by more than ``alpha``, and regions
    whose loss is already negligible are not split (``min_loss_share``).
    Everything is
    measured on a sample of N rows: the anchored N x N matrix of every
    group,

        G_k[n, m] = f(x^n_{G_k}, x^m_{-G_k}) - f(x^m),

    is computed once (from the leaves of tree ensembles, else with model
    calls), and a region's statistics are means over the sub-block of its
    rows and columns. Within a region R, the row mean of the sub-block at
    x^n is the regional PDP effect ``PDP_k(x^n)`` and the column mean is
    minus the regional PFI effect ``PFI_k(x^n)``. The losses are

    - ``"pdp_pfi"``: ``L_R = mean_{n in R} sum_k (PDP_k(x^n) - PFI_k(x^n))**2``,
      the AGREED loss (the PDP-PFI gap);
    - ``"pdp_shap"``: ``L_R = mean_{n in R} sum_k (SHAP_k(x^n) - PDP_k(x^n))**2``,
      with ``SHAP_k(x^n) = mean_{m in R} Phi_k[n, m]`` the interventional
      Shapley value of group k from the anchored Shapley values Phi_k
      (2**K coalitions per pair of rows off the tree path);
    - ``"coe"``: ``L_R = mean_{n in R} (f(x^n) - mean_{m in R} f(x^m) -
      sum_k PDP_k(x^n))**2``, the cost of exclusion of the regional additive
      approximation.

    With several outputs the losses are summed over outputs. Numerical,
    ordinal and boolean columns are split as ``x <= t`` with t among 39
    quantiles of the node's rows (all distinct values when there are at most
    40; missing values go right); categorical columns (non-numeric) as one
    level against the rest.

    Parameters
    ----------
    estimator : estimator or callable
        The model. A fitted model is used as it is, an unfitted one is fitted
        on ``(X, y)``, and a plain callable ``f(X) -> array`` is a fitted
        regressor.

    groups : None, list of lists, dict or grouper, default=None
        The partition of the columns, as :class:`Explainer` takes it: None
        (one group per column), a list of column lists, a dict name ->
        columns, or a grouper such as :class:`AdaptiveGrouper`, fitted with
        the model in :meth:`fit` (``grouper_``).

    loss : {"pdp_pfi", "pdp_shap", "coe"}, default="pdp_pfi"
        The loss the regions minimise (see above).

    max_depth : int, default=3
        Largest depth of the tree: at most ``2**max_depth`` regions.

    min_samples_leaf : int, default=20
        Fewest sample rows in a region.

    alpha : float, default=0.05
        Price of a region, as a share of the root's loss: a split is kept
        when it lowers the loss by more than ``alpha * loss_root_``.

    min_loss_share : float, default=0.05
        A region whose loss is at most this share of the variance of the
        model output over the sample is not split: the model is nearly
        additive there, and splits would follow small interactions that a
        fitted model has everywhere (such as those of boosted trees
        approximating a smooth function). 0 splits down to ``alpha`` alone.

    max_samples : int, default=300
        Number of rows N (at least 2) drawn from X without replacement for
        the anchored matrices; memory and time grow as ``K * N**2``.

    response_method : {"auto", "predict", "predict_proba", "decision_function", \
"log_odds", "margin"}, default="auto"
        Model output to explain, as in :class:`Explainer`.

    random_state : int, RandomState instance or None, default=None
        Draws the N sample rows.

    n_jobs : int or None, default=None
        Workers for the model calls and the tree kernels.

    Attributes
    ----------
    estimator_ : estimator
        The fitted model.
    grouper_ : grouper
        The fitted grouper, when ``groups`` is one.
    groups_ : list of list of int
        Column positions of every group.
    group_names_ : ndarray of str
        Name of every group.
    response_method_ : str
        The model output explained.
    algorithm_ : str
        ``"tree"`` when the anchored matrices come from the model's leaves,
        else ``"model_agnostic"``.
    background_ : ndarray or DataFrame of shape (N, n_features)
        The sample rows.
    sample_regions_ : ndarray of shape (N,)
        Region of every sample row.
    n_regions_ : int
        Number of regions (leaves).
    loss_root_ : float
        Loss of the decomposition with the whole sample as background.
    loss_ : float
        Region-weighted loss of the regional decompositions.
    remaining_share_ : float
        ``loss_ / loss_root_`` (0 when the root's loss is 0).
    rules_ : list of str
        The rule of every region, its conditions joined by ``" and "``.
    nodes_ : list of dict
        The nodes of the tree, root first: ``feature`` (the split column, -1
        at a region), ``kind`` (``"num"``: ``x <= value`` goes left;
        ``"cat"``: ``x == value`` goes left), ``value``, ``left`` and
        ``right`` (child nodes), ``n`` (sample rows) and ``loss``.
    region_sizes_ : ndarray of shape (n_regions_,)
        Rows of the X given to :meth:`fit` in every region.
    region_losses_ : ndarray of shape (n_regions_,)
        Loss of every region, with its own rows as background.
    n_features_in_ : int
        Number of columns seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    AdaptiveGrouper : Removes between-group interactions by merging columns.
    Explainer : Explanations with one background for every row.

    References
    ----------
    G. Laberge, Y. Pequignot, M. Marchand and F. Khomh. "Tackling the XAI
    Disagreement Problem with Regional Explanations". AISTATS 2024.

    J. Herbinger, G. Laberge, M. Muschalik, Y. Pequignot, M. N. Wright and
    F. Fumagalli. GRANITE, regional explanations for groups of features. 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from skdecomp import FDTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 3))
    >>> def f(X):
    ...     return X[:, 0] * np.sign(X[:, 1]) + X[:, 2]
    >>> tree = FDTree(f, max_depth=2, max_samples=120, random_state=0).fit(X)
    >>> tree.n_regions_
    2
    >>> print(tree.export_text(decimals=1))
    |--- x1 <= 0.0
    |   |--- region 0 (n=195, 48.8%)
    |--- x1 >  0.0
    |   |--- region 1 (n=205, 51.2%)
    <BLANKLINE>
    """

    _parameter_constraints = {
        "estimator": _MODEL_CONSTRAINT[:-1],
        "groups": [None, list, tuple, dict, HasMethods(["fit"])],
        "loss": [StrOptions({"pdp_pfi", "pdp_shap", "coe"})],
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "min_loss_share": [Interval(Real, 0, None, closed="left")],
        "max_samples": [Interval(Integral, 2, None, closed="left")],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function",
                        "log_odds", "margin"})
        ],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator,
        *,
        groups=None,
        loss="pdp_pfi",
        max_depth=3,
        min_samples_leaf=20,
        alpha=0.05,
        min_loss_share=0.05,
        max_samples=300,
        response_method="auto",
        random_state=None,
        n_jobs=None,
    ):
        self.estimator = estimator
        self.groups = groups
        self.loss = loss
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.alpha = alpha
        self.min_loss_share = min_loss_share
        self.max_samples = max_samples
        self.response_method = response_method
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- input ---------------------------------------------------------------
    def _allow_nan(self):
        if not hasattr(self.estimator, "fit"):
            # a plain function may handle NaN, as for Explainer: its output is
            # checked for NaN instead
            return callable(self.estimator)
        try:
            return bool(get_tags(self.estimator).input_tags.allow_nan)
        except Exception:  # pragma: no cover - non-sklearn objects
            return False

    def _check_X(self, X, reset):
        # polars rows (a LazyFrame collected) are read as pandas; a model fitted
        # on polars rows is called with polars rows
        X, container = read_frame(X)
        if reset:
            self._frame_container = container
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, skip_check_array=True, reset=reset)
            if X.shape[0] == 0:
                raise ValueError(
                    f"Found array with 0 sample(s) (shape={X.shape}) while a "
                    "minimum of 1 is required."
                )
            return X
        return validate_data(
            self, X, dtype=None, ensure_all_finite=not self._allow_nan(), reset=reset
        )

    # -- fit -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    @transactional_fit
    def fit(self, X, y=None):
        """Grow the tree of regions.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows; N of them (``max_samples``) are drawn for the loss.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model.

        Returns
        -------
        self : FDTree
            The fitted tree.
        """
        X = self._check_X(X, reset=True)
        if X.shape[0] < 2:
            raise ValueError(
                f"FDTree compares rows with each other and needs at least 2 rows, "
                f"got {X.shape[0]} sample; give more rows."
            )
        if self.n_jobs == 0:
            raise ValueError(
                "n_jobs=0 runs no worker; give None or 1 (one process), a "
                "positive number of workers, or -1 (all cores)."
            )
        _check_grouper_spec(self.groups)
        rng = check_random_state(self.random_state)
        container = self._frame_container
        self.estimator_ = fitted_model(self.estimator, X, y, "FDTree",
                                       container=container)
        feature_names = getattr(self, "feature_names_in_", None)
        spec = self.groups
        if hasattr(spec, "fit") and hasattr(spec, "get_params"):
            self.grouper_ = _fit_grouper(
                spec, X if container is None else container(X), y,
                estimator=self.estimator_,
                response_method=self.response_method, target=None,
                random_state=self.random_state,
            )
            spec = dict(zip(self.grouper_.group_names_, self.grouper_.groups_))
        groups, names = resolve_groups(spec, X.shape[1], feature_names)
        self.groups_ = [[int(j) for j in g] for g in groups]
        self.group_names_ = np.asarray(names, dtype=object)

        n = X.shape[0]
        idx = (
            np.arange(n) if self.max_samples >= n
            else np.sort(rng.choice(n, size=self.max_samples, replace=False))
        )
        sample = _take_rows(X, idx)
        response, self.output_names_ = resolve_response(
            self.estimator_, self.response_method, None, _take_rows(sample, [0]),
            container=container,
        )
        self.response_method_ = response.method
        tree, self.algorithm_ = select_algorithm(
            "auto", self.estimator_, response, sample
        )
        game = CoalitionGame(
            response, sample, group_labels(groups, X.shape[1]),
            group_names=list(names), output_names=self.output_names_,
            n_jobs=self.n_jobs, tree=tree,
        )
        stats = AnchoredStatistics(
            game, sample, anchor_values=game.background_prediction
        )
        G = stats.group_matrices(groups)  # (K, O, N, N)
        N = G.shape[2]
        if self.loss == "pdp_pfi":
            M = G.reshape(-1, N, N)
        elif self.loss == "coe":
            M = G.sum(axis=0)
        else:
            M = (stats.shapley_matrices(groups) - G).reshape(-1, N, N)
        losses = _Losses(self.loss, M, stats.anchor_values)
        self.background_ = sample
        self._grow(sample, losses, N)
        self.sample_regions_ = self._apply(sample)
        self.region_sizes_ = np.bincount(self._apply(X), minlength=self.n_regions_)
        # the regional explainers are fitted on first use (explainer, explain)
        self._explainers = {}
        return self

    def _candidates(self, column, node):
        """Splits of one column at a node: ("num", threshold) or ("cat", level)."""
        values = column.iloc[node] if isinstance(column, pd.Series) else column[node]
        if _is_categorical(column):
            levels = pd.unique(pd.Series(values).dropna())
            return [("cat", level) for level in levels]
        v = _as_float(values)
        v = v[~np.isnan(v)]
        uniq = np.unique(v)
        if uniq.size <= 1:
            return []
        if uniq.size <= _MAX_LEVELS:
            thresholds = uniq[:-1]
        else:
            qs = np.linspace(0, 1, _N_QUANTILES + 2)[1:-1]
            thresholds = np.unique(np.quantile(v, qs, method="lower"))
            thresholds = thresholds[thresholds < uniq[-1]]
        return [("num", float(t)) for t in thresholds]

    def _grow(self, sample, losses, N):
        """Greedy depth-first growth; sets the node arrays and the losses."""
        msl = self.min_samples_leaf
        columns = [_column(sample, j) for j in range(sample.shape[1])]
        floats = [None if _is_categorical(c) else _as_float(c) for c in columns]
        root = np.arange(N)
        root_sum = losses.of(root)
        self.loss_root_ = root_sum / N
        scale = root_sum if root_sum > 0 else np.inf
        floor = self.min_loss_share * float(losses.f.var(axis=0).sum())
        nodes = []  # dicts: feature, kind, value, left, right, n, loss

        def build(rows, depth, node_sum):
            node = {"feature": -1, "kind": None, "value": None, "left": -1,
                    "right": -1, "n": rows.size, "loss": node_sum / rows.size}
            nodes.append(node)
            me = len(nodes) - 1
            if (depth >= self.max_depth or rows.size < 2 * msl or node_sum <= 0
                    or node_sum / rows.size <= floor):
                return me
            best = None
            for j, col in enumerate(columns):
                cands = self._candidates(col, rows)
                if not cands:
                    continue
                if cands[0][0] == "num":
                    v = floats[j][rows]
                    order = np.argsort(v, kind="stable")  # missing values last
                    sv = v[order]
                    sizes = np.searchsorted(sv, [t for _, t in cands], side="right")
                    ok = (sizes >= msl) & (sizes <= rows.size - msl)
                    if not ok.any():
                        continue
                    sizes_ok = sizes[ok]
                    ts = np.asarray([t for _, t in cands])[ok]
                    # one threshold per left size (the largest, as values tie)
                    sizes_ok, first = np.unique(sizes_ok, return_index=True)
                    ts = ts[first]
                    scores = losses.prefixes(rows[order], sizes_ok)
                    for t, (left, right) in zip(ts, scores):
                        gain = node_sum - left - right
                        if best is None or gain > best[0]:
                            best = (gain, j, "num", float(t))
                else:
                    vals = np.asarray(col[rows] if not isinstance(col, pd.Series)
                                      else col.iloc[rows], dtype=object)
                    for _, level in cands:
                        mask = vals == level
                        k = int(mask.sum())
                        if k < msl or rows.size - k < msl:
                            continue
                        gain = node_sum - losses.of(rows[mask]) - losses.of(rows[~mask])
                        if best is None or gain > best[0]:
                            best = (gain, j, "cat", level)
            if best is None or best[0] / scale <= self.alpha:
                return me
            _, j, kind, value = best
            go_left = self._goes_left(columns[j] if kind == "cat" else floats[j], kind,
                                      value, rows)
            left_rows, right_rows = rows[go_left], rows[~go_left]
            node.update(feature=j, kind=kind, value=value)
            node["left"] = build(left_rows, depth + 1, losses.of(left_rows))
            node["right"] = build(right_rows, depth + 1, losses.of(right_rows))
            return me

        build(root, 0, root_sum)
        self.nodes_ = nodes
        leaves = [i for i, nd in enumerate(nodes) if nd["feature"] < 0]
        self._leaf_of_node = {node: r for r, node in enumerate(leaves)}
        self.n_regions_ = len(leaves)
        self.region_losses_ = np.array([nodes[i]["loss"] for i in leaves])
        sizes = np.array([nodes[i]["n"] for i in leaves])
        self.loss_ = float((self.region_losses_ * sizes).sum() / N)
        self.remaining_share_ = (
            float(self.loss_ / self.loss_root_) if self.loss_root_ > 0 else 0.0
        )
        self.rules_ = self._rules()

    @staticmethod
    def _goes_left(column, kind, value, rows):
        if kind == "cat":
            vals = column.iloc[rows] if isinstance(column, pd.Series) else column[rows]
            return np.asarray(vals, dtype=object) == value
        v = column[rows]
        with np.errstate(invalid="ignore"):
            return v <= value

    def _names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            return [f"x{j}" for j in range(self.n_features_in_)]
        return [str(c) for c in names]

    def _condition(self, node, left, decimals=None):
        name = self._names()[node["feature"]]
        value = node["value"]
        if node["kind"] == "cat":
            return f"{name} == {value!r}" if left else f"{name} != {value!r}"
        shown = f"{value:.{decimals}f}" if decimals is not None else f"{value:.6g}"
        return f"{name} <= {shown}" if left else f"{name} >  {shown}"

    def _rules(self):
        rules = []

        def walk(i, conds):
            node = self.nodes_[i]
            if node["feature"] < 0:
                rules.append(" and ".join(conds) if conds else "all rows")
                return
            walk(node["left"], conds + [self._condition(node, True)])
            walk(node["right"], conds + [self._condition(node, False)])

        walk(0, [])
        return rules

    def _region_explainer(self, region):
        if region in self._explainers:
            return self._explainers[region]
        sample = self.background_
        rows = np.flatnonzero(self.sample_regions_ == region)
        explainer = Explainer(
            self.estimator_,
            groups=dict(zip(self.group_names_, self.groups_)),
            background=int(rows.size),
            response_method=self.response_method_,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )
        region_rows = _take_rows(sample, rows)
        container = getattr(self, "_frame_container", None)  # polars rows given to fit
        self._explainers[region] = explainer.fit(
            region_rows if container is None else container(region_rows)
        )
        return self._explainers[region]

    # -- regions -------------------------------------------------------------
    def _apply(self, X):
        n = X.shape[0]
        columns = {}
        out = np.empty(n, dtype=np.int64)

        def walk(i, rows):
            node = self.nodes_[i]
            if node["feature"] < 0:
                out[rows] = self._leaf_of_node[i]
                return
            j = node["feature"]
            if j not in columns:
                col = _column(X, j)
                columns[j] = col if node["kind"] == "cat" else _as_float(col)
            left = self._goes_left(columns[j], node["kind"], node["value"], rows)
            walk(node["left"], rows[left])
            walk(node["right"], rows[~left])

        walk(0, np.arange(n))
        return out

    def apply(self, X):
        """Find the region of every row.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows.

        Returns
        -------
        regions : ndarray of shape (n_samples,)
            Index of the region (leaf) of every row, from 0 to
            ``n_regions_ - 1`` in the order of :attr:`rules_`.
        """
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        return self._apply(X)

    def explainer(self, region):
        """Return the fitted :class:`Explainer` of one region.

        Parameters
        ----------
        region : int
            Index of the region, from 0 to ``n_regions_ - 1``.

        Returns
        -------
        explainer : Explainer
            The model and groups, with the region's sample rows as
            background (fitted on first use, then kept).
        """
        check_is_fitted(self)
        if (isinstance(region, bool) or not isinstance(region, Integral)
                or not 0 <= region < self.n_regions_):
            raise ValueError(
                f"region must be an int from 0 to {self.n_regions_ - 1} (the tree has "
                f"{self.n_regions_} regions), got {region!r}."
            )
        return self._region_explainer(int(region))

    def explain(self, X, methods=None):
        """Explain every row against the rows of its own region.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.
        methods : list of str or None, default=None
            Methods, as in :meth:`Explainer.explain`.

        Returns
        -------
        explanations : Explanations
            One :class:`Explanation` per method; ``base_values`` is the mean
            model output over the row's region.
        """
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        regions = self._apply(X)
        n = X.shape[0]
        parts = {}
        for r in np.unique(regions):
            rows = np.flatnonzero(regions == r)
            explainer = self._region_explainer(int(r))
            parts[int(r)] = (rows, explainer.explain(_take_rows(X, rows), methods))
        first = next(iter(parts.values()))[1]
        result = Explanations()
        for m, e in first.items():
            values = np.empty((n,) + np.shape(e.values)[1:])
            base = np.empty((n,) + np.shape(e.base_values)[1:])
            data = np.empty((n,) + np.shape(e.data)[1:], dtype=np.asarray(e.data).dtype)
            se = None if e.standard_errors is None else np.empty_like(values)
            for rows, expl in parts.values():
                values[rows] = expl[m].values
                base[rows] = expl[m].base_values
                data[rows] = expl[m].data
                if se is not None:
                    se[rows] = expl[m].standard_errors
            result[m] = Explanation(
                values, base, data, feature_names=list(e.feature_names),
                groups=e.groups,
                raw_data=X, feature_names_in=e.feature_names_in,
                output_names=e.output_names, method=m, output=e.output,
                n_samples=e.n_samples, standard_errors=se,
            )
        return result

    def export_text(self, *, decimals=2, show_loss=False):
        """Write the rules of the regions as text, in the style of scikit-learn's.

        Parameters
        ----------
        decimals : int, default=2
            Decimals of the thresholds.
        show_loss : bool, default=False
            Also print every region's loss as a share of the root's.

        Returns
        -------
        text : str
            One line per split and per region, with the region's rows in the
            X given to :meth:`fit` (count and share).
        """
        check_is_fitted(self)
        if (not isinstance(decimals, Integral) or isinstance(decimals, bool)
                or decimals < 0):
            raise ValueError(
                f"decimals must be a whole number of at least 0 (the decimals of "
                f"the thresholds), got {decimals!r}."
            )
        total = max(1, int(self.region_sizes_.sum()))
        lines = []

        def walk(i, depth):
            node = self.nodes_[i]
            pad = "|   " * depth + "|--- "
            if node["feature"] < 0:
                r = self._leaf_of_node[i]
                size = int(self.region_sizes_[r])
                line = f"{pad}region {r} (n={size}, {100 * size / total:.1f}%"
                if show_loss:
                    share = (self.region_losses_[r] / self.loss_root_
                             if self.loss_root_ > 0 else 0.0)
                    line += f", loss {100 * share:.1f}% of root"
                lines.append(line + ")")
                return
            lines.append(pad + self._condition(node, True, decimals))
            walk(node["left"], depth + 1)
            lines.append(pad + self._condition(node, False, decimals))
            walk(node["right"], depth + 1)

        walk(0, 0)
        return "\n".join(lines) + "\n"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._allow_nan()
        if hasattr(self.estimator, "fit"):
            tags.target_tags.required = not is_fitted(self.estimator)
        return tags
