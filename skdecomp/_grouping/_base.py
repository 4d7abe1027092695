"""Shared plumbing of the groupers: input checks, the model, fitted partitions."""

# SPDX-License-Identifier: BSD-3-Clause

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import HasMethods, _get_output_config
from .._game import AnchoredStatistics, CoalitionGame, make_imputer
from .._image import SharedRuntimeCloneMixin, as_image_rows, image_ndim
from .._model import fitted_model, is_fitted, read_frame, resolve_response
from .._partition import GroupNamesOutMixin, group_labels
from ._merge import _ATOL

_MODEL_CONSTRAINT = [
    HasMethods(["predict"]),
    HasMethods(["predict_proba"]),
    HasMethods(["decision_function"]),
    HasMethods(["run", "get_inputs"]),  # an ONNX Runtime session
    callable,
    None,
]


def _take_rows(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]


def _canonical(groups):
    """Groups as sorted int arrays, ordered by their smallest column."""
    groups = [np.sort(np.asarray(g, dtype=np.int64)) for g in groups]
    return sorted(groups, key=lambda g: int(g[0]))


def column_names(grouper, d):
    """The names of the d columns a grouper was fitted on, as strings."""
    names = getattr(grouper, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else [f"x{j}" for j in range(d)]


def loss_path(stats, merges, names, chosen, singles=None, unions=None):
    """``path_`` of a grouper whose merges are known in order.

    Parameters
    ----------
    stats : AnchoredStatistics or None
        The sample the grouper was fitted on; one union per merge. None for
        a grouper without a model: the path then has no loss.
    merges : list of (list of int, list of int)
        The column lists merged at every step, from one group per column.
    names : list of str
        Column names.
    chosen : list of list of int
        The grouper's partition (``groups_``), marked ``"chosen"``.
    singles : tuple of ndarray or None, default=None
        The statistics of the single columns (``stats.union_stats``), when
        known.
    unions : list of tuple of ndarray or None, default=None
        The statistics (each of shape ``(n_outputs, N)``) of the union formed
        by every merge, when known; None asks ``stats``, one union per merge.

    Returns
    -------
    path : list of dict
        The keys of ``AdaptiveGrouper.path_``, with ``"held_out_loss"`` None
        and the disagreement left as a share of the loss on the sample.
    """
    d = len(names)
    empty = np.zeros(0, dtype=np.int64)
    groups = {(j,): np.array([j], dtype=np.int64) for j in range(d)}
    if stats is None:
        contrib = dict.fromkeys(groups, np.zeros(1))
    else:
        if singles is None:
            singles = stats.union_stats(empty, list(groups.values()))
        contrib = dict(zip(groups, stats.row_terms(singles)))
    target = {tuple(sorted(int(j) for j in g)) for g in chosen}
    tiny = 0.0 if stats is None else _ATOL * max(stats.variance, np.finfo(float).tiny)
    path, largest, merged, base = [], 1, None, None
    for t in range(len(merges) + 1):
        if t:
            a, b = (tuple(sorted(int(j) for j in m)) for m in merges[t - 1])
            union = tuple(sorted(a + b))
            if stats is None:
                contrib[union] = np.zeros(1)
            else:
                got = (stats.union_stats(empty, [np.asarray(union, dtype=np.int64)])
                       if unions is None else tuple(u[None] for u in unions[t - 1]))
                contrib[union] = stats.row_terms(got)[0]
            del contrib[a], contrib[b]
            largest = max(largest, len(union))
            merged = (":".join(names[j] for j in a), ":".join(names[j] for j in b))
        loss = float(np.sum(list(contrib.values()), axis=0).mean())
        base = loss if base is None else base
        share = float(loss / base) if base > tiny else 0.0
        path.append({
            "n_groups": len(contrib),
            "merged": merged,
            "loss": None if stats is None else loss,
            "held_out_loss": None,
            "largest_group": int(largest),
            "remaining_share": None if stats is None else share,
            "chosen": set(contrib) == target,
        })
    return path


def path_cut(path, merges, n_groups):
    """The groups of the partition of ``n_groups`` groups along a path."""
    counts = [p["n_groups"] for p in path]
    if (not isinstance(n_groups, Integral) or isinstance(n_groups, bool)
            or n_groups not in counts):
        raise ValueError(
            f"n_groups={n_groups!r} is outside the merge path, which goes from "
            f"{counts[0]} to {counts[-1]} groups; pass an int between them."
        )
    groups = {j: [j] for j in range(counts[0])}
    for a, b in merges[: counts.index(n_groups)]:
        union = sorted(a + b)
        for j in a + b:
            groups.pop(j, None)
        groups[union[0]] = union
    return [[int(j) for j in g] for g in _canonical(groups.values())]


class MergePathMixin:
    """``cut`` along ``path_``, for the groupers whose merges are known in order.

    The grouper sets ``path_`` (see :func:`loss_path`) and ``_path_merges``,
    the merges as pairs of column lists, in :meth:`fit`.
    """

    def cut(self, n_groups):
        """The groups of the partition with ``n_groups`` groups along ``path_``.

        Parameters
        ----------
        n_groups : int
            Number of groups, between the last and the first of ``path_``.

        Returns
        -------
        groups : list of list of int
            Column positions of each group, ordered by their first column.
        """
        check_is_fitted(self, "path_")
        return path_cut(self.path_, self._path_merges, n_groups)


# -- base class ----------------------------------------------------------------


class _BaseGrouper(SharedRuntimeCloneMixin, GroupNamesOutMixin, TransformerMixin,
                   BaseEstimator):
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
        # polars rows (a LazyFrame collected) are read as pandas; a model fitted
        # on polars rows is called with polars rows (see _fit_model)
        X, container = read_frame(X)
        if reset:
            self._frame_container = container
        if not reset and getattr(self, "image_shape_", None) is not None:
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

    def _set_partition(self, groups, names=None, feature_names=None, arrays=False):
        """Set groups_, labels_, n_groups_, group_names_ from column arrays.

        ``arrays`` keeps ``groups_`` as int64 arrays (images: millions of
        columns, 8 bytes each instead of a Python int's 36), else lists.
        """
        groups = _canonical(groups) if names is None else groups
        if names is None:
            cols = (
                [str(c) for c in feature_names]
                if feature_names is not None
                else [f"x{j}" for j in range(self.n_features_in_)]
            )
            names = [":".join(cols[j] for j in g) for g in groups]
        groups = [np.asarray(g, dtype=np.int64) for g in groups]
        self.groups_ = groups if arrays else [g.tolist() for g in groups]
        self.labels_ = group_labels(groups, self.n_features_in_)
        self.n_groups_ = len(groups)
        self.group_names_ = np.asarray(names, dtype=object)
        self._n_features_out = self.n_groups_
        self._warn_unmet_bounds(len(self.labels_))

    def _warn_unmet_bounds(self, n_columns):
        """Warn when ``n_groups`` groups of at most ``max_group_size`` columns
        cannot hold every column, so the grouping has more groups."""
        wanted = getattr(self, "n_groups", None)
        bound = getattr(self, "max_group_size", None)
        if not isinstance(wanted, Integral) or not isinstance(bound, Integral):
            return
        if wanted * bound >= n_columns or self.n_groups_ <= wanted:
            return
        need = -(-n_columns // bound)
        warnings.warn(
            f"n_groups={wanted} groups of at most max_group_size={bound} columns "
            f"cannot hold the {n_columns} columns, so {type(self).__name__} returned "
            f"{self.n_groups_} groups. Set max_group_size >= {-(-n_columns // wanted)} "
            f"or n_groups >= {need} to meet both.",
            UserWarning,
            stacklevel=3,
        )

    def _fit_model(self, X, y, rng, held_out=False):
        """Fit or take the model; draw the sample; set the response.

        With ``held_out``, a second sample of rows disjoint from the first
        is drawn and returned with the game: ``max_samples`` rows each when X
        has at least twice as many, else X split in two halves.
        """
        estimator = getattr(self, "estimator", None)
        if estimator is None:
            raise ValueError(
                f"{type(self).__name__} measures interactions of a model; pass "
                "estimator=<fitted or unfitted model>, or use the grouper as "
                "Explainer(model, groups=...), which passes its model on."
            )
        # the container of polars rows given to fit (set by _check_X)
        container = getattr(self, "_frame_container", None)
        self.estimator_ = fitted_model(
            estimator, X, y, type(self).__name__, container=container
        )
        if X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} compares rows with each other and needs "
                f"at least 2 rows, got {X.shape[0]} sample; give more rows."
            )
        n = X.shape[0]
        if held_out:
            if n < 4:
                raise ValueError(
                    f"n_groups='auto' scores every merge on held-out rows and needs "
                    f"at least 4 rows (2 to merge on, 2 held out), got {n}; give "
                    "more rows, or set n_groups to a number or rel_tol (e.g. 0.25)."
                )
            perm = rng.permutation(n)
            n_sel = min(self.max_samples, (n + 1) // 2)
            n_held = min(self.max_samples, n - n_sel)
            idx = np.sort(perm[:n_sel])
            held_idx = np.sort(perm[n_sel : n_sel + n_held])
        else:
            idx = (
                np.arange(n)
                if self.max_samples >= n
                else np.sort(rng.choice(n, size=self.max_samples, replace=False))
            )
        sample = _take_rows(X, idx)
        self.background_ = sample
        response, self.output_names_ = resolve_response(
            self.estimator_, self.response_method, self.target, _take_rows(sample, [0]),
            container=container,
        )
        self.n_outputs_ = len(self.output_names_)
        self.response_method_ = response.method
        imputer, tree, self.algorithm_ = make_imputer(
            getattr(self, "imputer", "marginal"), getattr(self, "algorithm", "auto"),
            self.estimator_, response, sample, X, rng,
        )
        self.imputer_ = "marginal" if imputer is None else imputer.name
        self.game_ = CoalitionGame(
            response,
            sample,
            np.arange(X.shape[1]),
            output_names=self.output_names_,
            n_jobs=getattr(self, "n_jobs", None),
            tree=tree,
            imputer=imputer,
        )
        base = self.game_.expected_value
        self.expected_value_ = float(base[0]) if self.n_outputs_ == 1 else base
        if held_out:
            return self.game_, _take_rows(X, held_idx)
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


def _progress(verbose, total, desc):
    """A tqdm bar when verbose, else a silent stand-in with the same methods."""
    if not verbose:
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc)
