"""The baseline groupers: PAIRWISE, correlation clustering and fixed groups.

:class:`PairwiseGrouper` measures the interaction of every pair of columns
and clusters them, :class:`CorrelationGrouper` clusters column dependence
without a model, and :class:`FixedGrouper` takes given groups. They are the
baselines of :class:`~skdecomp.AdaptiveGrouper` (see :ref:`agreed`).
"""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import cut_tree, fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.utils import check_random_state

from .._compat import HasMethods, Interval, StrOptions, _fit_context, transactional_fit
from .._model import non_numeric_columns
from .._partition import resolve_groups
from ._base import (
    _MODEL_CONSTRAINT, MergePathMixin, _BaseGrouper, _canonical, _progress, column_names,
    loss_path,
)
from ._columns import column_transformer_groups
from ._merge import _ATOL

__all__ = ["PairwiseGrouper", "CorrelationGrouper", "FixedGrouper"]


def _bounded_cluster(distances, n_groups, threshold, method, max_size, merges=None):
    """Agglomerative clustering in which no cluster exceeds ``max_size`` columns.

    At every step the two closest clusters whose union has at most
    ``max_size`` columns are merged (cluster distances by ``method``, from
    the column distances, as in :func:`scipy.cluster.hierarchy.linkage`).
    Merging stops at ``n_groups`` clusters, or, with ``n_groups=None``, once
    the closest admissible pair is farther apart than ``threshold``; it also
    stops when no admissible pair is left, so there may be more than
    ``n_groups`` clusters.
    """
    d = distances.shape[0]
    clusters = [[j] for j in range(d)]
    reduce = {"single": np.min, "complete": np.max, "average": np.mean}[method]
    target = 1 if n_groups is None else n_groups
    while len(clusters) > target:
        best, pair = np.inf, None
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                if len(clusters[a]) + len(clusters[b]) > max_size:
                    continue
                dist = float(reduce(distances[np.ix_(clusters[a], clusters[b])]))
                if dist < best:
                    best, pair = dist, (a, b)
        if pair is None or (n_groups is None and best > threshold):
            break
        a, b = pair
        if merges is not None:
            merges.append((clusters[a], clusters[b]))
        clusters[a] = clusters[a] + clusters.pop(b)
    labels = np.empty(d, dtype=np.int64)
    for k, cols in enumerate(clusters):
        labels[cols] = k
    return labels


def _merge_sequence(distances, method, max_size=None):
    """The clustering's merges to one cluster (or until none is admissible).

    A list of pairs of column lists, in merge order: scipy's linkage
    without a bound, the constrained agglomeration of ``_bounded_cluster``
    with one, so every partition :func:`_cluster` returns is on it.
    """
    d = distances.shape[0]
    if d == 1:
        return []
    if max_size is None:
        Z = linkage(squareform(distances, checks=False), method=method)
        members = {j: [j] for j in range(d)}
        merges = []
        for t, (a, b) in enumerate(Z[:, :2].astype(np.int64)):
            merges.append((members[a], members[b]))
            members[d + t] = members.pop(a) + members.pop(b)
        return merges
    merges = []
    _bounded_cluster(distances, None, np.inf, method, max_size, merges)
    return merges


def _cluster(distances, n_groups, threshold, method, max_size=None):
    """Labels from hierarchical clustering of a square distance matrix."""
    d = distances.shape[0]
    if d == 1:
        return np.zeros(1, dtype=np.int64)
    if max_size is not None:
        return _bounded_cluster(distances, n_groups, threshold, method, max_size)
    Z = linkage(squareform(distances, checks=False), method=method)
    if n_groups is not None:
        return cut_tree(Z, n_clusters=min(n_groups, d)).ravel()
    return fcluster(Z, t=threshold, criterion="distance") - 1


def _groups_from_labels(labels):
    return _canonical([np.flatnonzero(labels == k) for k in np.unique(labels)])


class PairwiseGrouper(MergePathMixin, _BaseGrouper):
    """The PAIRWISE baseline: all pairwise interactions, then clustering.

    Measures the interaction of every pair of columns on N sample rows, as
    the strength of the pair's interaction matrix
    ``I_ij = G_{ij} - G_i - G_j``,
    ``s_ij = mean_n I_ij.mean(1)[n]**2 + mean_m I_ij.mean(0)[m]**2`` (or the
    loss decrease of merging the pair, see ``pair_score``), and clusters the
    columns with ``1 / (1 + max(s_ij, 0) / (min_interaction * L_1))`` as
    distance, where ``L_1 = sum_j Psi_j`` is the AGREED loss of the
    singletons (one group per column): the total interaction that grouping
    can remove. A pair is thus joined when its score is at least
    ``min_interaction`` times the measured interaction loss, whatever the
    size of the interactions relative to the model's variance. Costs
    ``N + (d + d (d - 1) / 2 + d - 1) N**2`` model calls (the last d - 1
    matrices for the loss along ``path_``), against O(d N**2) per merge for
    :class:`AdaptiveGrouper`.

    Parameters
    ----------
    estimator : estimator, callable or None, default=None
        The model (see :class:`AdaptiveGrouper`).
    max_samples : int, default=100
        Number of sample rows N (at least 2).
    n_groups : int or None, default=None
        Number of clusters; None cuts the tree at ``min_interaction``.
    min_interaction : float, default=0.05
        With ``n_groups=None``, pairs whose score is at least this share of
        the AGREED loss of the singletons (``singleton_loss_``) end up in
        the same group (with ``linkage="single"``: connected components of
        such pairs). For ``pair_score="loss"`` a share of 1 is the decrease
        of a pair that carries all the interaction of the model. Scores
        below ``1e-9`` times the model's variance count as zero, so a model
        without interaction gives one group per column.
    pair_score : {"interaction", "loss"}, default="interaction"
        Pair measure: the interaction strength, which is exactly 0 for a
        pair without interaction, or the AGREED loss decrease of merging the
        pair, ``Psi_i + Psi_j - Psi_{ij}``, which also carries sampling
        noise from other interactions (their products do not average to 0
        exactly on N rows).
    linkage : {"single", "average", "complete"}, default="single"
        Linkage of :func:`scipy.cluster.hierarchy.linkage`.
    response_method : {"auto", "predict", "predict_proba", "decision_function", "log_odds", "margin"}, default="auto"
        Model output to group on (see :class:`AdaptiveGrouper`).
    target : class label or int, default=None
        Output to group on (see :class:`AdaptiveGrouper`).
    n_jobs : int, default=None
        Joblib workers over chunks of hybrid rows.
    random_state : int, RandomState instance or None, default=None
        Draws the N sample rows.
    max_memory : int, str or None, default=None
        Largest size of the anchored values held at once (see
        :class:`AdaptiveGrouper`).

    verbose : int, default=0
        Show a progress bar over the pairs when positive.

    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        As for :class:`AdaptiveGrouper`.

    max_group_size : int or None, default=None
        The largest number of columns of a group. The clustering is then a
        constrained agglomeration: at every step the two closest clusters
        whose union has at most ``max_group_size`` columns merge, so larger
        clusters are never formed; it stops at ``n_groups`` clusters, at the
        ``min_interaction`` cut, or when no admissible pair is left (so
        there may be more than ``n_groups`` groups). None uses
        :func:`scipy.cluster.hierarchy.linkage` without a bound.

    imputer : {"marginal", "path_dependent", "conditional"} or sampler, \
            default="marginal"
        As for :class:`AdaptiveGrouper`.

    Attributes
    ----------
    groups_, labels_, n_groups_, group_names_, group_features_
        The partition (see :class:`AdaptiveGrouper`).
    interactions_ : ndarray of shape (n_features_in_, n_features_in_)
        Pair scores divided by the model's variance (0 on the diagonal),
        with their sign: the loss decrease of ``pair_score="loss"`` is
        negative for some pairs through sampling noise. Only the clustering
        treats negative scores as 0.
    singleton_loss_ : float
        AGREED loss of one group per column, ``sum_j Psi_j``, the scale of
        ``min_interaction``.
    path_ : list of dict
        Every partition along the clustering's merges, from one group per
        column to one group (or until ``max_group_size`` admits no merge),
        with the keys of :attr:`AdaptiveGrouper.path_`: the AGREED loss on
        the sample (``"loss"``; one anchored matrix per merge), the largest
        group, the disagreement left as a share of the initial loss, and
        ``"chosen"`` for ``groups_``. :meth:`cut` gives the groups of any of
        them; :class:`~skdecomp.plot.GroupingDisplay` draws the trade-off.
    model_calls_ : int
    estimator_, background_, expected_value_, n_outputs_, output_names_, \
            response_method_
        As in :class:`AdaptiveGrouper`.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.
    """

    _parameter_constraints = {
        "estimator": _MODEL_CONSTRAINT,
        "max_samples": [Interval(Integral, 2, None, closed="left")],
        "n_groups": [Interval(Integral, 1, None, closed="left"), None],
        "min_interaction": [Interval(Real, 0, None, closed="neither")],
        "pair_score": [StrOptions({"loss", "interaction"})],
        "linkage": [StrOptions({"single", "average", "complete"})],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function", "log_odds",
                        "margin"})
        ],
        "target": "no_validation",
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), str, None],
        "verbose": ["verbose"],
        "algorithm": [StrOptions({"auto", "tree", "model_agnostic"})],
        "imputer": [
            StrOptions({"marginal", "path_dependent", "conditional"}),
            HasMethods(["fit", "sample"]),
        ],
        "max_group_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        max_samples=100,
        n_groups=None,
        min_interaction=0.05,
        pair_score="interaction",
        linkage="single",
        response_method="auto",
        target=None,
        n_jobs=None,
        random_state=None,
        max_memory=None,
        verbose=0,
        algorithm="auto",
        max_group_size=None,
        imputer="marginal",
    ):
        self.estimator = estimator
        self.max_samples = max_samples
        self.n_groups = n_groups
        self.min_interaction = min_interaction
        self.pair_score = pair_score
        self.linkage = linkage
        self.response_method = response_method
        self.target = target
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_memory = max_memory
        self.verbose = verbose
        self.algorithm = algorithm
        self.imputer = imputer
        self.max_group_size = max_group_size

    @_fit_context(prefer_skip_nested_validation=False)
    @transactional_fit
    def fit(self, X, y=None):
        """Measure all pairwise interactions and cluster the columns.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data; the N sample rows are drawn from it.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model.

        Returns
        -------
        self : PairwiseGrouper
            The fitted grouper.
        """
        X = self._check_X(X, reset=True)
        d = X.shape[1]
        ev = self._sample(self._fit_model(X, y, check_random_state(self.random_state)))
        singles = [np.array([j], dtype=np.int64) for j in range(d)]
        bar = _progress(self.verbose, d - 1, "pairwise interactions")
        means = ev.group_stats(singles)
        pairs, unions = ev.pair_stats(singles, progress=bar)
        bar.close()
        j, k = pairs[:, 0], pairs[:, 1]
        psi = ev.potentials_from(means)
        if self.pair_score == "loss":
            scores = psi[j] + psi[k] - ev.potentials_from(unions)
        else:
            scores = ev.interactions_from(tuple(m[j] for m in means),
                                          tuple(m[k] for m in means), unions)
        score = np.zeros((d, d))
        score[j, k] = scores
        score = score + score.T
        var = ev.variance
        self.interactions_ = score / var if var > 0 else np.zeros_like(score)
        self.singleton_loss_ = float(np.sum(psi))
        # losses below _ATOL times the variance are rounding noise (as in AGREED)
        scale = max(self.min_interaction * self.singleton_loss_, _ATOL * var)
        if scale > 0:
            distances = 1.0 / (1.0 + np.maximum(score, 0.0) / scale)
        else:
            distances = np.ones((d, d))
        np.fill_diagonal(distances, 0.0)
        labels = _cluster(distances, self.n_groups, 0.5, self.linkage, self.max_group_size)
        self._set_partition(
            _groups_from_labels(labels), feature_names=getattr(self, "feature_names_in_", None)
        )
        merges = _merge_sequence(distances, self.linkage, self.max_group_size)
        self.path_ = loss_path(ev, merges, column_names(self, d), self.groups_, means)
        self._path_merges = merges
        self.model_calls_ = ev.model_calls
        return self


def _non_numeric(X):
    """The non-numeric columns of a pandas or polars frame (read from its schema)."""
    if isinstance(X, pd.DataFrame):
        return non_numeric_columns(X)
    schema = getattr(X, "collect_schema", None)  # a polars DataFrame or LazyFrame
    if callable(schema) and type(X).__module__.startswith("polars"):
        return [c for c, t in schema().items()
                if not (t.is_numeric() or str(t) == "Boolean")]
    return []


class CorrelationGrouper(MergePathMixin, _BaseGrouper):
    """Hierarchical clustering of column dependence, the model-free baseline.

    Distance between columns is ``1 - |rho|`` with rho the Spearman or
    Pearson correlation; the columns are clustered with
    :func:`scipy.cluster.hierarchy.linkage`. :meth:`transform` returns the
    mean of each group's columns, like
    :class:`sklearn.cluster.FeatureAgglomeration`.

    Parameters
    ----------
    n_groups : int or None, default=None
        Number of clusters; None cuts the tree at ``distance_threshold``.
    distance_threshold : float, default=0.5
        With ``n_groups=None``, columns closer than this (|rho| above
        ``1 - distance_threshold``) are merged.
    correlation : {"spearman", "pearson"}, default="spearman"
        The correlation rho.
    linkage : {"average", "single", "complete"}, default="average"
        Linkage of :func:`scipy.cluster.hierarchy.linkage`.
    max_group_size : int or None, default=None
        The largest number of columns of a group, by a constrained
        agglomeration as in :class:`PairwiseGrouper`: the two closest
        clusters whose union has at most ``max_group_size`` columns merge,
        so larger clusters are never formed; there may be more than
        ``n_groups`` groups when no admissible pair is left. None uses
        :func:`scipy.cluster.hierarchy.linkage` without a bound.

    Attributes
    ----------
    groups_, labels_, n_groups_, group_names_, group_features_
        The partition (see :class:`AdaptiveGrouper`).
    correlation_ : ndarray of shape (n_features_in_, n_features_in_)
        Column correlations (0 for constant columns).
    path_ : list of dict
        Every partition along the clustering's merges, from one group per
        column to one group (or until ``max_group_size`` admits no merge),
        with the keys of :attr:`AdaptiveGrouper.path_`. The grouper uses no
        model, so ``"loss"``, ``"held_out_loss"`` and
        ``"remaining_share"`` are None. :meth:`cut` gives the groups of
        any of them.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.
    """

    _parameter_constraints = {
        "n_groups": [Interval(Integral, 1, None, closed="left"), None],
        "distance_threshold": [Interval(Real, 0, 1, closed="both")],
        "correlation": [StrOptions({"spearman", "pearson"})],
        "linkage": [StrOptions({"single", "average", "complete"})],
        "max_group_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        n_groups=None,
        *,
        distance_threshold=0.5,
        correlation="spearman",
        linkage="average",
        max_group_size=None,
    ):
        self.n_groups = n_groups
        self.distance_threshold = distance_threshold
        self.correlation = correlation
        self.linkage = linkage
        self.max_group_size = max_group_size

    @_fit_context(prefer_skip_nested_validation=True)
    @transactional_fit
    def fit(self, X, y=None):
        """Cluster the columns of X by correlation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data whose columns are clustered.
        y : None
            Ignored.

        Returns
        -------
        self : CorrelationGrouper
            The fitted grouper.
        """
        cols = _non_numeric(X)
        if cols:
            raise ValueError(
                f"CorrelationGrouper correlates numbers, but X has non-numeric "
                f"columns {cols}; encode them as numbers first, or drop them."
            )
        X = np.asarray(self._check_X(X, reset=True), dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(
                "CorrelationGrouper needs at least 2 rows to correlate columns, "
                f"got {X.shape[0]} sample; give more rows."
            )
        if self.correlation == "spearman":
            X = np.apply_along_axis(_ranks, 0, X) if X.shape[0] > 1 else X
        centred = X - X.mean(axis=0)
        norms = np.sqrt((centred**2).sum(axis=0))
        ok = norms > 0
        corr = np.zeros((X.shape[1], X.shape[1]))
        if ok.any():
            unit = centred[:, ok] / norms[ok]
            corr[np.ix_(ok, ok)] = np.clip(unit.T @ unit, -1.0, 1.0)
        np.fill_diagonal(corr, 1.0)
        self.correlation_ = corr
        distances = 1.0 - np.abs(corr)
        np.fill_diagonal(distances, 0.0)
        labels = _cluster(
            distances, self.n_groups, self.distance_threshold, self.linkage, self.max_group_size
        )
        self._set_partition(
            _groups_from_labels(labels), feature_names=getattr(self, "feature_names_in_", None)
        )
        merges = _merge_sequence(distances, self.linkage, self.max_group_size)
        self.path_ = loss_path(None, merges, column_names(self, X.shape[1]), self.groups_)
        self._path_merges = merges
        return self



def _ranks(column):
    from scipy.stats import rankdata

    return rankdata(column)


class FixedGrouper(_BaseGrouper):
    """Given groups, as an estimator: for pipelines, searches and explainers.

    Parameters
    ----------
    groups : None, list of lists, dict or ColumnTransformer, default=None
        The partition: None gives one group per column; a list of column
        lists or a dict of named column lists (as ``Explainer(groups=...)``);
        or a fitted :class:`~sklearn.compose.ColumnTransformer`, giving one
        group per raw input column over its output columns (see
        :func:`column_transformer_groups`), for data that it transformed.
        Wrap it in :class:`sklearn.frozen.FrozenEstimator` to keep it fitted
        when cloned (e.g. in ``GridSearchCV``).

    Attributes
    ----------
    groups_, labels_, n_groups_, group_names_, group_features_
        The partition (see :class:`AdaptiveGrouper`).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    Examples
    --------
    >>> import numpy as np
    >>> from skdecomp import FixedGrouper
    >>> FixedGrouper([[0, 2], [1]]).fit(np.zeros((3, 3))).group_names_
    array(['x0:x2', 'x1'], dtype=object)
    """

    _parameter_constraints = {
        "groups": [None, list, tuple, dict, HasMethods(["transform", "get_feature_names_out"])],
    }

    def __init__(self, groups=None):
        self.groups = groups

    def _lax_input(self):
        return True

    def _allow_nan(self):
        return True

    @_fit_context(prefer_skip_nested_validation=True)
    @transactional_fit
    def fit(self, X, y=None):
        """Check the groups against X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data whose columns are grouped.
        y : None
            Ignored.

        Returns
        -------
        self : FixedGrouper
            The fitted grouper.
        """
        X = self._check_X(X, reset=True)
        spec = self.groups
        if spec is not None and not isinstance(spec, (Mapping, list, tuple)):
            spec = column_transformer_groups(spec)
        positions, names = resolve_groups(
            spec, X.shape[1], getattr(self, "feature_names_in_", None)
        )
        self._set_partition(positions, names)
        return self
