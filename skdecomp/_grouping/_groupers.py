"""Groupers: estimators that learn a partition of the input columns.

:class:`AdaptiveGrouper` implements AGREED (see the user guide, :ref:`agreed`):
greedy merges of the groups whose between-group interactions are largest, so
that PDP, SHAP, PFI and the other explainers of :ref:`explainers_as_weights`
agree on the result.
:class:`PairwiseGrouper`, :class:`CorrelationGrouper` and :class:`FixedGrouper`
are the baselines. Every grouper sets ``groups_``, ``labels_``,
``n_groups_`` and ``group_names_``, and can be passed to
``Explainer(groups=...)``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import copy
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import cut_tree, fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    _get_output_config,
)
from .._config import parse_memory
from .._game import AnchoredStatistics, CoalitionGame
from .._game._kernels import interaction_potentials
from .._partition import GroupNamesOutMixin, group_labels, resolve_groups
from .._tree._dispatch import select_algorithm
from .._model import as_model, is_fitted, resolve_response

__all__ = [
    "AdaptiveGrouper",
    "PairwiseGrouper",
    "CorrelationGrouper",
    "FixedGrouper",
    "column_transformer_groups",
]

# Losses below this fraction of the model's variance count as zero.
_ATOL = 1e-9

_MODEL_CONSTRAINT = [
    HasMethods(["predict"]),
    HasMethods(["predict_proba"]),
    HasMethods(["decision_function"]),
    callable,
    None,
]


def _take_rows(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]


def _canonical(groups):
    """Groups as sorted int arrays, ordered by their smallest column."""
    groups = [np.sort(np.asarray(g, dtype=np.int64)) for g in groups]
    return sorted(groups, key=lambda g: int(g[0]))


# -- base class ----------------------------------------------------------------


class _BaseGrouper(GroupNamesOutMixin, TransformerMixin, BaseEstimator):
    """Shared plumbing: input checks, fitted attributes, transform, names."""

    def _model_given(self):
        return getattr(self, "estimator", None) is not None

    def _allow_nan(self):
        estimator = getattr(self, "estimator", None)
        if estimator is None or not hasattr(estimator, "fit"):
            return False
        try:
            return bool(get_tags(estimator).input_tags.allow_nan)
        except Exception:  # pragma: no cover - non-sklearn objects
            return False

    def _lax_input(self):
        """Whether fit takes any data (the model, not the grouper, reads it)."""
        return self._model_given()

    def _check_X(self, X, reset, lax=None):
        if not reset and getattr(self, "image_shape_", None) is not None:
            from ._image import as_image_rows, image_ndim

            if image_ndim(X) > 2:
                X, _ = as_image_rows(X, self.image_shape_)
        lax = self._lax_input() if lax is None else lax
        if isinstance(X, pd.DataFrame) and lax:
            validate_data(self, X, skip_check_array=True, reset=reset)
            if X.shape[0] == 0:
                raise ValueError(
                    f"Found array with 0 sample(s) (shape={X.shape}) while a "
                    "minimum of 1 is required."
                )
            if X.shape[1] == 0:
                raise ValueError("X has 0 features; a minimum of 1 is required.")
            return X
        return validate_data(
            self,
            X,
            dtype=None if lax else "numeric",
            ensure_all_finite=not self._allow_nan(),
            reset=reset,
        )

    def _set_partition(self, groups, names=None, feature_names=None):
        """Set groups_, labels_, n_groups_, group_names_ from column arrays."""
        groups = _canonical(groups) if names is None else groups
        if names is None:
            cols = (
                [str(c) for c in feature_names]
                if feature_names is not None
                else [f"x{j}" for j in range(self.n_features_in_)]
            )
            names = [":".join(cols[j] for j in g) for g in groups]
        self.groups_ = [[int(j) for j in g] for g in groups]
        self.labels_ = group_labels([np.asarray(g) for g in groups], self.n_features_in_)
        self.n_groups_ = len(groups)
        self.group_names_ = np.asarray(names, dtype=object)
        self._n_features_out = self.n_groups_

    def _fit_model(self, X, y, rng):
        """Fit or take the model; draw the sample; set the response."""
        estimator = getattr(self, "estimator", None)
        if estimator is None:
            raise ValueError(
                f"{type(self).__name__} measures interactions of a model; pass "
                "estimator=<fitted or unfitted model>, or use the grouper as "
                "Explainer(model, groups=...), which passes its model on."
            )
        estimator = as_model(estimator)
        if is_fitted(estimator):
            self.estimator_ = estimator
        elif y is None:
            raise ValueError(
                f"This {type(self).__name__} estimator requires y to be passed, "
                f"but the target y is None: {type(estimator).__name__} is not "
                "fitted, so fit(X, y) fits it first. Pass y, or pass a fitted "
                "model (wrap it in sklearn.frozen.FrozenEstimator to keep it "
                "fitted when cloned)."
            )
        else:
            self.estimator_ = clone(estimator).fit(X, y)
        n = X.shape[0]
        idx = (
            np.arange(n)
            if self.max_samples >= n
            else np.sort(rng.choice(n, size=self.max_samples, replace=False))
        )
        sample = _take_rows(X, idx)
        self.background_ = sample
        response, self.output_names_ = resolve_response(
            self.estimator_, self.response_method, self.target, _take_rows(sample, [0])
        )
        self.n_outputs_ = len(self.output_names_)
        tree, self.algorithm_ = select_algorithm(
            getattr(self, "algorithm", "auto"), self.estimator_, response, sample
        )
        self.game_ = CoalitionGame(
            response,
            sample,
            np.arange(X.shape[1]),
            output_names=self.output_names_,
            n_jobs=getattr(self, "n_jobs", None),
            tree=tree,
        )
        base = self.game_.expected_value
        self.expected_value_ = float(base[0]) if self.n_outputs_ == 1 else base
        return self.game_

    def _sample(self, game):
        return AnchoredStatistics(
            game,
            self.background_,
            max_memory=getattr(self, "max_memory", None),
            anchor_values=game.background_prediction,
        )

    def transform(self, X):
        """Each group's main effect, or the mean of its columns without a model.

        With a model, column k is the main effect of group k,
        ``h_k(x) = mean_z f(x_{G_k}, z_{-G_k}) - mean_z f(z)`` over the
        background sample (the PDP effect): the model's
        additive view over the groups, with
        ``f(x) ≈ expected_value_ + sum_k h_k(x)`` when between-group interactions
        are gone. Without a model, column k is the mean of the columns of
        group k, as in :class:`sklearn.cluster.FeatureAgglomeration`.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_groups_) or \
                (n_samples, n_groups_, n_outputs_)
            One column per group; the last axis holds the model outputs
            when there are several.
        """
        check_is_fitted(self)
        game = getattr(self, "game_", None)
        X = self._check_X(X, reset=False, lax=game is not None)
        if game is None:
            X = np.asarray(X, dtype=np.float64)
            out = np.empty((X.shape[0], self.n_groups_))
            for k, g in enumerate(self.groups_):
                out[:, k] = X[:, g].mean(axis=1)
            return out
        if self.n_outputs_ > 1 and _get_output_config("transform", self)["dense"] != "default":
            raise ValueError(
                f"transform returns a 3-D array for {self.n_outputs_} outputs, "
                "which cannot be a DataFrame; pick one output with target=... "
                "or use set_output(transform='default')."
            )
        game = game.with_partition(self.labels_, self.group_names_)
        X = game.check_X(X)
        singles = np.eye(self.n_groups_, dtype=bool)
        out = game.values(X, singles) - game.expected_value[None, None, :]
        return out[:, :, 0] if self.n_outputs_ == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._allow_nan()
        estimator = getattr(self, "estimator", None)
        if estimator is not None and hasattr(estimator, "fit"):
            tags.target_tags.required = not is_fitted(estimator)
        if self._lax_input():
            tags.input_tags.string = True
        return tags


class _NoProgress:
    def update(self, n=1):
        pass

    def close(self):
        pass


def _progress(verbose, total, desc, iterate=False):
    """A tqdm bar when verbose, else a silent stand-in (or a plain range)."""
    if not verbose:
        return range(total) if iterate else _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(range(total), desc=desc) if iterate else tqdm(total=total, desc=desc)


# -- AGREED --------------------------------------------------------------------


class AdaptiveGrouper(_BaseGrouper):
    """AGREED: adaptive grouping that removes between-group interactions.

    Starting from one group per column (or ``initial_groups``), repeatedly
    merges the group with the largest interaction potential Psi with the
    group that best reduces the AGREED loss ``L = sum_k Psi_k``, the mean
    squared gap between the PDP and PFI effects of the groups (see
    :ref:`agreed`). On the learned groups the between-group interactions are
    small, so PDP, SHAP, PFI and the other explainers agree (see
    :ref:`why_disagree`).

    Everything is measured on a sample of N rows used both as explained
    points and as background (B = D). The anchored N x N matrix of a group
    is ``G_k[n, m] = f(x^n_{G_k}, x^m_{-G_k}) - f(x^m)``; Psi_k depends only
    on its row and column means, which are cached. A candidate merge
    of groups i and j costs one new matrix, G_{i∪j} = G_i + G_j + I_ij;
    groups that are not merged are never evaluated again. Model calls are at
    most ``N + K N**2 + sum_steps (K_step - 1) N**2``, O(d**2 N**2), and
    memory is O(K N) plus one chunk of N x N blocks bounded by
    ``max_memory``.

    Parameters
    ----------
    estimator : estimator, callable or None, default=None
        The model. A fitted model is used as it is, an unfitted one is fitted
        on ``(X, y)``, and a plain callable ``f(X) -> array`` is a fitted
        regressor. None is allowed only inside ``Explainer(model,
        groups=AdaptiveGrouper())``, which passes its own model.

    max_samples : int, default=100
        Number of rows N drawn from X (without replacement) for the
        anchored matrices. Cost grows as N**2; 100 is a good default, 50
        for wide data.

    n_groups : int or None, default=None
        Merge until this many groups remain (``rel_tol`` is then ignored).
        None stops on ``rel_tol``.

    rel_tol : float, default=0.25
        When ``n_groups`` is None, stop as soon as the loss is at most
        ``rel_tol`` times the initial loss. 0 merges until no between-group
        interaction is left.

    merge_score : {"loss", "interaction"}, default="loss"
        How the partner j of the chosen group i is picked: "loss" takes the
        largest exact loss decrease ``Psi_i + Psi_j - Psi_{i∪j}``; "interaction"
        the largest interaction strength
        ``mean_n I_ij.mean(1)[n]**2 + mean_m I_ij.mean(0)[m]**2``.

    initial_groups : None, list of lists, dict, grouper or label map, default=None
        Partition to start from (e.g. one-hot blocks kept together); None
        starts from one group per column (one group per pixel for images).
        For images also an image grouper such as ``PatchGrouper(4)`` or
        ``SuperpixelGrouper()`` (fitted on the images), or a label map of
        shape (H, W).

    response_method : {"auto", "predict", "predict_proba", "decision_function"}, default="auto"
        Model output to group on; "auto" uses ``predict_proba``, then
        ``decision_function`` for classifiers, ``predict`` otherwise.

    target : class label or int, default=None
        Output to group on (see :class:`Explainer`); None uses all outputs,
        with the loss summed over them.

    n_jobs : int, default=None
        Joblib workers over chunks of hybrid rows.

    random_state : int, RandomState instance or None, default=None
        Draws the N sample rows.

    max_memory : int or str, default="1GB"
        Largest size of the anchored values held at once, in bytes or as a
        string such as ``"512MB"``. A ValueError gives the size needed when
        one N x N block does not fit. Not used on the tree path, which never
        holds the N x N values.

    verbose : int, default=0
        Show a progress bar over merges when positive; silent by default, so
        also inside ``GridSearchCV``.

    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        How the N x N anchored values are computed. "tree" reads their row
        and column sums exactly from the flattened trees of a scikit-learn
        tree ensemble (one walk per tree for all N rows, no model calls and
        no N x N block in memory); "auto" does so when the model allows it
        (see :class:`~skdecomp.Explainer`) and calls the model otherwise;
        "model_agnostic" always calls the model.

    image_shape : tuple of int or None, default=None
        Set it (or pass images of shape (n, H, W) or (n, H, W, C)) for
        per-image AGREED (see :ref:`agreed`): every image x passed to
        :meth:`fit` gets its own partition, learned on the mixture
        Q = (delta_x + delta_b) / 2 of the image and its baseline b (N = 2),
        with loss ``1/4 sum_k (Arch_k - Occ_k)**2``; merges are limited to
        adjacent groups, so groups stay connected. (H, W) or (H, W, C) of
        flattened rows (C order: row, column, channel); all channels of a
        pixel are in one group. ``max_samples``, ``random_state``, ``verbose``
        and ``algorithm`` are not used. Estimators get flattened rows; a
        plain callable gets batches of images of shape (n, *image_shape).
        All groups and all adjacent pairs are evaluated in one batch, then
        only the new group's pairs after each merge;
        images are merged in lockstep, so each round is one batch over all
        images; a batch holds at most ``min(max_memory, 64 MiB)`` of hybrid
        images.

    adjacency : {"4", "8"}, default="4"
        Images: groups are adjacent when their pixels touch through a side
        ("4") or also through a corner ("8").

    baseline : {"zeros", "mean", "blur"}, array-like or None, default=None
        Images: the baseline image b. "zeros" is black; "mean" the mean
        image of a reference set passed as ``fit(X, reference=images)``
        (never of the explained images); "blur" each image blurred by a
        Gaussian of standard deviation ``max(H, W) / 8`` pixels; an array
        of the image's shape is that image. None is "zeros", except inside
        ``Explainer(baseline=...)``, which passes its baseline image on.

    Attributes
    ----------
    groups_ : list of list of int
        Column positions of each group, ordered by their first column.
    labels_ : ndarray of shape (n_features_in_,)
        Group index of every column.
    n_groups_ : int
    group_names_ : ndarray of str
        Column names of each group joined by ``":"``.
    history_ : list of dict
        One entry per merge, in order, with keys ``"groups"`` (the two merged
        groups, as column lists), ``"names"``, ``"score"`` (the loss decrease
        or interaction strength), ``"loss_before"``, ``"loss_after"``,
        ``"n_groups"`` (after the merge) and ``"model_calls"`` (so far).
    loss_ : float
        AGREED loss of the final partition on the sample.
    initial_loss_ : float
        AGREED loss of the initial partition.
    initial_groups_ : list of list of int
        The partition merging started from.
    model_calls_ : int
        Rows sent to the model during fit (only the N sample rows on the tree
        path).
    algorithm_ : str
        ``"tree"`` or ``"model_agnostic"``, with the reason in parentheses
        when "auto" could not take the tree path.
    estimator_ : estimator
        The fitted model.
    background_ : ndarray or DataFrame
        The N sample rows.
    expected_value_ : float or ndarray
        Mean model output over the sample.
    n_outputs_ : int
    output_names_ : list of str
    label_maps_ : ndarray of shape (n_images, H, W)
        Images only: the partition of every image; ``groups_``, ``labels_``,
        ``history_``, ``loss_`` and the other attributes above describe the
        first image's, and ``background_`` is its baseline.
    label_map_ : ndarray of shape (H, W)
        Images only: the first image's partition (group ``k`` of
        ``groups_`` is label ``k``).
    initial_label_maps_ : ndarray of shape (n_images, H, W)
        Images only: the partitions merging started from.
    merges_ : list of ndarray of shape (n_merges, 2)
        Images only: per image, the merges in order, each as one initial
        group id of either side (see :meth:`cut_label_map`).
    losses_, initial_losses_ : ndarray of shape (n_images,)
        Images only: final and initial loss of every image.
    baseline_images_ : ndarray of shape (n_images, *image_shape)
        Images only: the baseline of every image.
    image_shape_ : tuple
        Images only: (H, W) or (H, W, C).
    model_batches_ : int
        Images only: number of calls to the model (batches of hybrid images).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    PairwiseGrouper : All pairwise interactions, then clustering.
    CorrelationGrouper : Clustering of column dependence, model-free.

    References
    ----------
    "Tackling the XAI Disagreement Problem with Adaptive Feature Grouping".
    ICLR 2026.

    Examples
    --------
    >>> from skdecomp import AdaptiveGrouper
    >>> from skdecomp.datasets import make_agreed_example
    >>> data = make_agreed_example(n_samples=300, random_state=0)
    >>> grouper = AdaptiveGrouper(data.function, max_samples=60, rel_tol=0,
    ...                           random_state=0).fit(data.data)
    >>> grouper.groups_
    [[0, 1], [2, 3], [4], [5]]
    """

    _parameter_constraints = {
        "estimator": _MODEL_CONSTRAINT,
        "max_samples": [Interval(Integral, 1, None, closed="left")],
        "n_groups": [Interval(Integral, 1, None, closed="left"), None],
        "rel_tol": [Interval(Real, 0, 1, closed="both")],
        "merge_score": [StrOptions({"loss", "interaction"})],
        "initial_groups": [None, list, tuple, dict, HasMethods(["fit"]), np.ndarray],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function"})
        ],
        "target": "no_validation",
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), str],
        "verbose": ["verbose"],
        "image_shape": [tuple, list, None],
        "adjacency": [StrOptions({"4", "8"})],
        "baseline": [StrOptions({"zeros", "mean", "blur"}), "array-like", None],
        "algorithm": [StrOptions({"auto", "tree", "model_agnostic"})],
    }

    def __init__(
        self,
        estimator=None,
        *,
        max_samples=100,
        n_groups=None,
        rel_tol=0.25,
        merge_score="loss",
        initial_groups=None,
        response_method="auto",
        target=None,
        n_jobs=None,
        random_state=None,
        max_memory="1GB",
        verbose=0,
        algorithm="auto",
        image_shape=None,
        adjacency="4",
        baseline=None,
    ):
        self.estimator = estimator
        self.max_samples = max_samples
        self.n_groups = n_groups
        self.rel_tol = rel_tol
        self.merge_score = merge_score
        self.initial_groups = initial_groups
        self.response_method = response_method
        self.target = target
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_memory = max_memory
        self.verbose = verbose
        self.algorithm = algorithm
        self.image_shape = image_shape
        self.adjacency = adjacency
        self.baseline = baseline

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, *, reference=None):
        """Learn the groups by greedy merges.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Tabular rows; or images of shape (n_images, H, W[, C]), or
            flattened images with ``image_shape``, each grouped on its own.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model (tabular data).
        reference : array-like of images or None, default=None
            Images only: the reference set whose mean image is the baseline
            when ``baseline="mean"``.

        Returns
        -------
        self : AdaptiveGrouper
            The fitted grouper.
        """
        from ._image import fit_image_agreed, image_ndim

        if self.image_shape is not None or image_ndim(X) in (3, 4):
            return fit_image_agreed(self, X, y, reference=reference)
        if reference is not None:
            raise ValueError(
                "reference= gives the images of baseline='mean'; it is used only "
                "for images (set image_shape or pass images of shape (n, H, W[, C]))."
            )
        X = self._check_X(X, reset=True)
        feature_names = getattr(self, "feature_names_in_", None)
        initial, names = resolve_groups(self.initial_groups, X.shape[1], feature_names)
        rng = check_random_state(self.random_state)
        ev = self._sample(self._fit_model(X, y, rng))

        # Groups are kept with their names; order follows the first column.
        order = np.argsort([int(g[0]) for g in initial], kind="stable")
        groups = [initial[k] for k in order]
        names = [names[k] for k in order]
        self.initial_groups_ = [[int(j) for j in g] for g in groups]
        self._initial_names = list(names)
        rows, cols = ev.union_means(np.zeros(0, dtype=np.int64), groups)
        psi = interaction_potentials(rows, cols)
        loss = float(psi.sum())
        self.initial_loss_ = loss
        atol = _ATOL * max(ev.variance, np.finfo(float).tiny)
        target_k = self.n_groups

        history = []
        bar = _progress(self.verbose, len(groups) - 1, "AGREED merges")
        while len(groups) > 1:
            if target_k is not None:
                if len(groups) <= target_k:
                    break
            elif loss <= max(self.rel_tol * self.initial_loss_, atol):
                break
            i = int(np.argmax(psi))
            others = [j for j in range(len(groups)) if j != i]
            r_new, c_new = ev.union_means(groups[i], [groups[j] for j in others])
            psi_new = interaction_potentials(r_new, c_new)
            if self.merge_score == "loss":
                scores = psi[i] + psi[others] - psi_new
            else:
                r_int = r_new - rows[i][None] - rows[others]
                c_int = c_new - cols[i][None] - cols[others]
                scores = (r_int**2).mean(axis=2).sum(axis=1) + (c_int**2).mean(
                    axis=2
                ).sum(axis=1)
            best = int(np.argmax(scores))
            j = others[best]
            merged = np.sort(np.concatenate([groups[i], groups[j]]))
            first, second = sorted((i, j), key=lambda k: int(groups[k][0]))
            entry_groups = ([int(c) for c in groups[first]], [int(c) for c in groups[second]])
            entry_names = (names[first], names[second])
            # keep the merged group at the position of its first column
            keep = [k for k in range(len(groups)) if k not in (i, j)]
            groups = [groups[k] for k in keep] + [merged]
            names = [names[k] for k in keep] + [f"{entry_names[0]}:{entry_names[1]}"]
            rows = np.concatenate([rows[keep], r_new[best][None]])
            cols = np.concatenate([cols[keep], c_new[best][None]])
            psi = np.concatenate([psi[keep], psi_new[best : best + 1]])
            order = np.argsort([int(g[0]) for g in groups], kind="stable")
            groups = [groups[k] for k in order]
            names = [names[k] for k in order]
            rows, cols, psi = rows[order], cols[order], psi[order]
            new_loss = float(psi.sum())
            history.append(
                {
                    "groups": entry_groups,
                    "names": entry_names,
                    "score": float(scores[best]),
                    "loss_before": loss,
                    "loss_after": new_loss,
                    "n_groups": len(groups),
                    "model_calls": ev.model_calls,
                }
            )
            bar.update(1)
            loss = new_loss
        bar.close()

        self.history_ = history
        self.loss_ = loss
        self.model_calls_ = ev.model_calls
        self._set_partition(groups, names)
        return self

    def cut(self, n_groups):
        """The partition with ``n_groups`` groups along the merge history.

        Parameters
        ----------
        n_groups : int
            Between ``n_groups_`` (the end of the history) and the number of
            initial groups.

        Returns
        -------
        groups : list of list of int
            Column positions of each group, ordered by their first column.
        """
        check_is_fitted(self)
        n_initial = len(self.initial_groups_)
        if (
            not isinstance(n_groups, Integral)
            or isinstance(n_groups, bool)
            or not self.n_groups_ <= n_groups <= n_initial
        ):
            raise ValueError(
                f"n_groups={n_groups!r} is outside the merge history, which goes "
                f"from {n_initial} to {self.n_groups_} groups; refit with a "
                "smaller n_groups (or rel_tol=0) to go further."
            )
        groups = [list(g) for g in self.initial_groups_]
        for entry in self.history_[: n_initial - n_groups]:
            a, b = (sorted(g) for g in entry["groups"])
            groups = [g for g in groups if g != a and g != b] + [sorted(a + b)]
        return [[int(j) for j in g] for g in _canonical(groups)]

    def cut_label_map(self, n_groups, image=0):
        """Images: the label map with ``n_groups`` groups along an image's merges.

        Parameters
        ----------
        n_groups : int
            Between the image's final and initial numbers of groups.
        image : int, default=0
            Index of the image among those passed to :meth:`fit`.

        Returns
        -------
        label_map : ndarray of shape (H, W)
            Group ids in order of each group's first pixel (row by row).
        """
        check_is_fitted(self, "label_maps_")
        from ._image import cut_label_map

        n_images = self.label_maps_.shape[0]
        if not isinstance(image, Integral) or not -n_images <= image < n_images:
            raise ValueError(
                f"image={image!r} is not the index of one of the {n_images} fitted images."
            )
        initial = self.initial_label_maps_[image]
        n_initial = int(initial.max()) + 1
        n_final = n_initial - len(self.merges_[image])
        if (
            not isinstance(n_groups, Integral)
            or isinstance(n_groups, bool)
            or not n_final <= n_groups <= n_initial
        ):
            raise ValueError(
                f"n_groups={n_groups!r} is outside the merge history of image "
                f"{image}, which goes from {n_initial} to {n_final} groups; refit "
                "with a smaller n_groups (or rel_tol=0) to go further."
            )
        return cut_label_map(initial, self.merges_[image], n_groups)


# -- baselines -----------------------------------------------------------------


def _cluster(distances, n_groups, threshold, method):
    """Labels from hierarchical clustering of a square distance matrix."""
    d = distances.shape[0]
    if d == 1:
        return np.zeros(1, dtype=np.int64)
    Z = linkage(squareform(distances, checks=False), method=method)
    if n_groups is not None:
        return cut_tree(Z, n_clusters=min(n_groups, d)).ravel()
    return fcluster(Z, t=threshold, criterion="distance") - 1


def _groups_from_labels(labels):
    return _canonical([np.flatnonzero(labels == k) for k in np.unique(labels)])


class PairwiseGrouper(_BaseGrouper):
    """The PAIRWISE baseline: all pairwise interactions, then clustering.

    Measures the interaction of every pair of columns on N sample rows, as
    the strength of the pair's interaction matrix
    ``I_ij = G_{ij} - G_i - G_j``,
    ``s_ij = mean_n I_ij.mean(1)[n]**2 + mean_m I_ij.mean(0)[m]**2`` (or the
    loss decrease of merging the pair, see ``pair_score``), divided by the
    model's variance, and clusters the
    columns with ``1 / (1 + s_ij / min_interaction)`` as distance. Costs
    ``N + (d + d (d - 1) / 2) N**2`` model calls, against O(d N**2) per
    merge for :class:`AdaptiveGrouper`.

    Parameters
    ----------
    estimator : estimator, callable or None, default=None
        The model (see :class:`AdaptiveGrouper`).
    max_samples : int, default=100
        Number of sample rows N.
    n_groups : int or None, default=None
        Number of clusters; None cuts the tree at ``min_interaction``.
    min_interaction : float, default=0.01
        With ``n_groups=None``, pairs joined by an interaction of at least
        this fraction of the model's variance end up in the same group
        (with ``linkage="single"``: connected components of such pairs).
    pair_score : {"interaction", "loss"}, default="interaction"
        Pair measure: the interaction strength, which is exactly 0 for a
        pair without interaction, or the AGREED loss decrease of merging the
        pair, ``Psi_i + Psi_j - Psi_{ij}``, which also carries sampling
        noise from other interactions (their products do not average to 0
        exactly on N rows).
    linkage : {"single", "average", "complete"}, default="single"
        Linkage of :func:`scipy.cluster.hierarchy.linkage`.
    response_method : {"auto", "predict", "predict_proba", "decision_function"}, default="auto"
        Model output to group on (see :class:`AdaptiveGrouper`).
    target : class label or int, default=None
        Output to group on (see :class:`AdaptiveGrouper`).
    n_jobs : int, default=None
        Joblib workers over chunks of hybrid rows.
    random_state : int, RandomState instance or None, default=None
        Draws the N sample rows.
    max_memory : int or str, default="1GB"
        Largest size of the anchored values held at once (see
        :class:`AdaptiveGrouper`).

    verbose : int, default=0
        Show a progress bar over the pairs when positive.

    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        As for :class:`AdaptiveGrouper`.

    Attributes
    ----------
    groups_, labels_, n_groups_, group_names_
        The partition (see :class:`AdaptiveGrouper`).
    interactions_ : ndarray of shape (n_features_in_, n_features_in_)
        Pair measures divided by the model's variance (0 on the diagonal).
    model_calls_ : int
    estimator_, background_, expected_value_, n_outputs_, output_names_
        As in :class:`AdaptiveGrouper`.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.
    """

    _parameter_constraints = {
        "estimator": _MODEL_CONSTRAINT,
        "max_samples": [Interval(Integral, 1, None, closed="left")],
        "n_groups": [Interval(Integral, 1, None, closed="left"), None],
        "min_interaction": [Interval(Real, 0, None, closed="neither")],
        "pair_score": [StrOptions({"loss", "interaction"})],
        "linkage": [StrOptions({"single", "average", "complete"})],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function"})
        ],
        "target": "no_validation",
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), str],
        "verbose": ["verbose"],
        "algorithm": [StrOptions({"auto", "tree", "model_agnostic"})],
    }

    def __init__(
        self,
        estimator=None,
        *,
        max_samples=100,
        n_groups=None,
        min_interaction=0.01,
        pair_score="interaction",
        linkage="single",
        response_method="auto",
        target=None,
        n_jobs=None,
        random_state=None,
        max_memory="1GB",
        verbose=0,
        algorithm="auto",
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

    @_fit_context(prefer_skip_nested_validation=False)
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
        rows, cols = ev.union_means(np.zeros(0, dtype=np.int64), singles)
        psi = interaction_potentials(rows, cols)
        strength = np.zeros((d, d))
        for i in _progress(self.verbose, d - 1, "pairwise interactions", iterate=True):
            others = list(range(i + 1, d))
            r_new, c_new = ev.union_means(singles[i], [singles[j] for j in others])
            if self.pair_score == "loss":
                s = psi[i] + psi[others] - interaction_potentials(r_new, c_new)
            else:
                r_int = r_new - rows[i][None] - rows[others]
                c_int = c_new - cols[i][None] - cols[others]
                s = (r_int**2).mean(axis=2).sum(axis=1) + (c_int**2).mean(axis=2).sum(
                    axis=1
                )
            strength[i, others] = s
        strength = np.maximum(strength + strength.T, 0.0)
        var = ev.variance
        strength = strength / var if var > 0 else np.zeros_like(strength)
        self.interactions_ = strength
        distances = 1.0 / (1.0 + strength / self.min_interaction)
        np.fill_diagonal(distances, 0.0)
        labels = _cluster(distances, self.n_groups, 0.5, self.linkage)
        self.model_calls_ = ev.model_calls
        self._set_partition(
            _groups_from_labels(labels), feature_names=getattr(self, "feature_names_in_", None)
        )
        return self


class CorrelationGrouper(_BaseGrouper):
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
    linkage : {"average", "single", "complete"}, default="average"

    Attributes
    ----------
    groups_, labels_, n_groups_, group_names_
        The partition (see :class:`AdaptiveGrouper`).
    correlation_ : ndarray of shape (n_features_in_, n_features_in_)
        Column correlations (0 for constant columns).
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
    }

    def __init__(
        self, n_groups=None, *, distance_threshold=0.5, correlation="spearman", linkage="average"
    ):
        self.n_groups = n_groups
        self.distance_threshold = distance_threshold
        self.correlation = correlation
        self.linkage = linkage

    @_fit_context(prefer_skip_nested_validation=True)
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
        X = np.asarray(self._check_X(X, reset=True), dtype=np.float64)
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
        labels = _cluster(distances, self.n_groups, self.distance_threshold, self.linkage)
        self._set_partition(
            _groups_from_labels(labels), feature_names=getattr(self, "feature_names_in_", None)
        )
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
    groups_, labels_, n_groups_, group_names_
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


def column_transformer_groups(column_transformer):
    """Make one group per raw input column of a fitted ColumnTransformer.

    Output columns of a transformer that sees one input column (e.g. the
    one-hot block of a categorical column) form that column's group;
    transformers with one output per input column (scalers, passthrough)
    map each output to its input; outputs named ``<input>_<suffix>`` (e.g.
    one-hot encoders of several columns) go to the input they name; any
    other transformer's outputs form one group named after the transformer.

    Parameters
    ----------
    column_transformer : fitted ColumnTransformer
        The transformer (or a ``FrozenEstimator`` holding it) whose output
        columns are grouped.

    Returns
    -------
    groups : dict
        Raw column name -> list of output column positions, in output order.
    """
    if not hasattr(column_transformer, "output_indices_") and hasattr(
        column_transformer, "estimator"
    ):
        column_transformer = column_transformer.estimator  # FrozenEstimator
    if not hasattr(column_transformer, "output_indices_"):
        raise ValueError(
            f"{type(column_transformer).__name__} is not a fitted ColumnTransformer; "
            "fit it first (its output columns are needed)."
        )
    ct = column_transformer
    in_names = getattr(ct, "feature_names_in_", None)
    groups = {}
    for name, trans, cols in ct.transformers_:
        sl = ct.output_indices_[name]
        out = list(range(sl.start, sl.stop))
        if trans == "drop" or not out:
            continue
        cols = np.atleast_1d(cols)
        if cols.dtype == bool:
            cols = np.flatnonzero(cols)
        raw = [
            str(in_names[c]) if isinstance(c, (Integral, np.integer)) and in_names is not None
            else (f"x{c}" if isinstance(c, (Integral, np.integer)) else str(c))
            for c in cols
        ]
        if len(raw) == 1:
            groups.setdefault(raw[0], []).extend(out)
            continue
        if len(out) == len(raw) and (trans == "passthrough" or _one_to_one(trans, raw)):
            for r, o in zip(raw, out):
                groups.setdefault(r, []).append(o)
            continue
        try:
            out_names = [str(s) for s in trans.get_feature_names_out(raw)]
        except Exception:
            out_names = None
        if out_names is not None and len(out_names) == len(out):
            owners = []
            for s in out_names:
                hits = [r for r in raw if s == r or s.startswith(r + "_")]
                owners.append(max(hits, key=len) if hits else None)
            if all(o is not None for o in owners):
                for r, o in zip(owners, out):
                    groups.setdefault(r, []).append(o)
                continue
        groups.setdefault(name, []).extend(out)
    return groups


def _one_to_one(trans, raw):
    try:
        names = [str(s) for s in trans.get_feature_names_out(raw)]
    except Exception:
        return False
    return names == list(raw)
