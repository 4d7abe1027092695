"""The Explainer estimator: attributions over groups of columns."""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils import Bunch, check_random_state, get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from ._compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    _get_output_config,
)
from ._decomposition import EXACT_METHODS, Decomposition
from ._grouping._groupers import fit_grouper, partition_loss
from ._decomposition._kernels import moebius_transform
from ._partition import GroupNamesOutMixin, group_labels, resolve_groups
from ._tree._dispatch import explainer_attributions, select_algorithm, tree_components
from ._grouping._image import explainer_image_setup, image_model
from ._methods._sampled import (
    SAMPLED_METHODS,
    SINGLE_GROUP_METHODS,
    check_method_params,
    resolve_budget,
    sampled_attributions,
    single_group_attributions,
)
from ._game import Table, coalition_values, common_dtypes
from ._model import as_model, is_fitted, resolve_response

__all__ = ["Explainer", "MAX_EXACT_GROUPS"]

#: Largest number of groups for exact enumeration of all 2**K coalitions.
MAX_EXACT_GROUPS = 16


def _check_exact_groups(n_groups, what):
    """Exact enumeration of 2**K coalitions is limited to MAX_EXACT_GROUPS groups."""
    if n_groups > MAX_EXACT_GROUPS:
        raise ValueError(
            f"{what!r} enumerates all 2**K coalitions, and {n_groups} groups are "
            f"more than exact enumeration allows (at most {MAX_EXACT_GROUPS} "
            "groups). Merge columns into fewer groups, or use a sampled method: "
            f"{', '.join(repr(m) for m in SAMPLED_METHODS)}."
        )


def _numeric_part(X):
    if isinstance(X, pd.DataFrame):
        num = X.select_dtypes(include=[np.number])
        return num.to_numpy(dtype=np.float64) if num.shape[1] else None
    if np.issubdtype(X.dtype, np.number):
        return X
    return None


class Explainer(GroupNamesOutMixin, TransformerMixin, MetaEstimatorMixin, BaseEstimator):
    """Attributions of a model over groups of columns, from its functional decomposition.

    For explained rows x, a background B and a partition of the columns into
    K groups, the explainer evaluates the coalition values
    ``v_x(S) = mean_{z in B} f(x_{G_S}, z_{-G_S})`` for every subset S of
    groups, takes their Möbius transform to get the grouped components F_U(x)
    and returns attributions as weighted sums of components (paper-spec
    §1.2, §2).

    Parameters
    ----------
    estimator : estimator or callable
        The model to explain. A fitted model is used as it is; an unfitted
        one is fitted on ``(X, y)`` in :meth:`fit`. To keep a fitted model
        fitted under cloning (e.g. in ``GridSearchCV``), wrap it in
        :class:`sklearn.frozen.FrozenEstimator`. A plain callable
        ``f(X) -> array`` is treated as a fitted regressor.

    method : {"shapley", "banzhaf", "occlusion", "arch", "pdp", "pfi", \
            "kernel_shap", "permutation_shap", "lime", "rise", \
            "integrated_gradients"}, default="shapley"
        The attribution returned by :meth:`transform`. The exact methods
        enumerate all 2**K coalitions (K at most ``MAX_EXACT_GROUPS``),
        except "arch" and "occlusion" (and their aliases) alone, which need
        2K coalitions and work for any number of groups.
        With ``F_U`` the components, every exact method is
        ``phi_k = sum_{U contains k} w(|U|) F_U`` with

        - ``"shapley"``: ``w = 1/|U|`` (interventional SHAP over groups);
        - ``"banzhaf"``: ``w = 2**(1-|U|)``;
        - ``"occlusion"``: ``w = 1``, i.e. ``f(x) - v_x(all but k)``;
        - ``"arch"``: ``w = 1`` for ``|U| = 1`` only, i.e. ``v_x({k}) - v_x({})``
          (ArchAttribute);
        - ``"pdp"`` is an alias of ``"arch"`` and ``"pfi"`` an alias of
          ``"occlusion"``: with a data background they are the local
          partial-dependence and local permutation-importance effects
          (paper-spec §2.4).

        The sampled methods work for any number of groups; their cost is
        ``n_samples`` coalitions per explained row (paper-spec §2.2, §7.2):

        - ``"kernel_shap"``: Shapley-kernel weighted least squares with the
          efficiency constraint; estimates ``"shapley"``;
        - ``"permutation_shap"``: mean marginal contributions over random
          permutations, each with its reverse; estimates ``"shapley"``;
        - ``"lime"``: least squares on group-presence indicators drawn
          i.i.d. Bernoulli(p), with an intercept; with the constant kernel it
          estimates ``w = p**(|U|-1)`` (p-weighted Banzhaf);
        - ``"rise"``: ``S_k = E_M[v_x(M) M_k] / p`` over random hard group
          masks M with keep probability p, i.e.
          ``E_M[v_x(M)] + (1-p) sum_{U contains k} p**(|U|-1) F_U``;
        - ``"integrated_gradients"``: a derivative-free path integral along
          the straight lines from the background rows to x; attributions sum
          to ``f(x) - E_B f``. Needs numeric columns. On a multilinear
          model it equals ``"shapley"``; on non-smooth models (trees) it is
          path-dependent: a jump of the model is credited to the group that
          crosses it on the path.

        Coalitions are drawn once per call from ``random_state`` and shared
        by all explained rows. When ``n_samples >= 2**K - 2`` every coalition
        is evaluated and the method returns its exact closed form.

    groups : None, list of lists or dict, default=None
        The partition of the columns. None gives one group per column; a list
        of column lists, or a dict mapping group names to column lists.
        Columns are integer positions or, for DataFrames, column names. Every
        column must be in exactly one group. A grouper such as
        :class:`AdaptiveGrouper` learns the groups in :meth:`fit`; its model
        is the explainer's model when its ``estimator`` is None, and its
        parameters can be tuned as ``groups__<name>`` (e.g.
        ``GridSearchCV(explainer, {"groups__n_groups": range(2, 8)})`` with
        :meth:`score`).

    background : int or array-like, default=100
        Reference rows B. An int draws that many rows (without replacement)
        from the data passed to :meth:`fit`, or takes all of them when there
        are fewer. An array or DataFrame gives the rows explicitly; a single
        row (1-D array) gives the anchored decomposition around it. Not used
        when ``baseline`` is set.

    baseline : {"zeros", "mean", "blur"}, array-like or None, default=None
        Images (flattened rows): explain against one baseline image b, the
        anchored decomposition of paper-spec §1.1 (B = delta_b), instead of
        ``background``. "zeros" is black; "mean" the mean of the rows passed
        to :meth:`fit` (a reference set, never the explained image alone);
        "blur" the image passed to :meth:`fit` (one image) blurred by a
        Gaussian of standard deviation ``max(H, W) / 8`` pixels, which
        needs the image shape from an image grouper in ``groups``; an array
        of the image's shape (or its flattened row) is that image. A
        grouper in ``groups`` with a ``baseline`` left at None gets this
        image. When ``groups`` is an image grouper (e.g.
        :class:`PatchGrouper`), a plain callable model gets batches of
        images of shape (n, *image_shape) instead of flattened rows.

    response_method : {"auto", "predict", "predict_proba", "decision_function"}, default="auto"
        Output of the model to explain. "auto" uses ``predict_proba``, then
        ``decision_function``, for classifiers and ``predict`` otherwise.

    target : class label or int, default=None
        Which output to explain. None explains all outputs, except that for
        binary ``predict_proba`` only the positive class ``classes_[1]`` is
        explained. A class label picks one class; for multi-output
        regressors an integer picks one output.

    batch_size : int or "auto", default="auto"
        Largest number of hybrid rows sent to the model at once. Memory is
        bounded by it (or by the background size, if larger), whatever the
        number of explained rows. "auto" sends chunks of about 32 MiB
        (``2**22`` cells, i.e. ``2**22 // n_features`` rows, at least 1024).

    n_jobs : int, default=None
        Number of joblib workers over chunks of hybrid rows (at least one
        chunk per worker, each at most ``batch_size`` rows). None means 1
        unless in a :obj:`joblib.parallel_backend` context. On the tree path,
        the number of threads the trees are shared between (None: one). A
        model with its own ``n_jobs`` competes with these workers for the
        cores; parallelise one of the two. The first parallel call also pays
        for starting the workers.

    n_samples : int, default=None
        Budget of the sampled methods: the number of coalitions evaluated per
        explained row (each costs one model call per background row). None
        uses ``2 * K + 2048``. ``"kernel_shap"`` needs at least ``2 * K``,
        ``"permutation_shap"`` ``2 * (K - 1)`` and ``"lime"`` ``K + 1``.
        ``"integrated_gradients"`` does not use it: its cost is set by
        ``method_params["n_steps"]``.

    method_params : dict, default=None
        Options of the sampled method ``method``:

        - ``"lime"``: ``p`` (keep probability, default 0.5), ``kernel``
          (``"constant"``, the default, or ``"distance"``: the LIME image
          kernel ``sqrt(exp(-d**2 / kernel_width**2))`` of the cosine
          distance d between the presence vector and all-ones),
          ``kernel_width`` (default 0.25) and ``alpha`` (ridge penalty on the
          group coefficients relative to the weighted mean squared error,
          default 0);
        - ``"rise"``: ``p`` (keep probability, default 0.5);
        - ``"integrated_gradients"``: ``n_steps`` (default 32) and ``scheme``:
          ``"path"`` (default) moves the groups one at a time within each
          step, in forward and in reverse order, and credits each group its
          finite difference, so attributions sum exactly to
          ``f(x) - E_B f`` for any model; ``"central"`` takes central
          differences per column at the step midpoints and sums them over
          each group, which converges faster for smooth models but is
          complete only up to the discretisation error. Both converge to
          the gradient-based Integrated Gradients of a smooth model.

        :meth:`explain` passes every sampled method the keys it takes.

    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        How the exact methods get the components. "tree" walks the fitted
        trees of a DecisionTree*, RandomForest*, ExtraTrees*,
        GradientBoosting* or HistGradientBoosting* model (alone or as the last
        step of a Pipeline of column-wise steps) and computes the components
        exactly without model calls; boosting classifiers are explained on
        ``decision_function`` only (their ``predict_proba`` is not a sum over
        trees). "model_agnostic" evaluates the model on hybrid rows. "auto"
        takes the tree path when it can and falls back otherwise (see
        ``algorithm_``).

    random_state : int, RandomState instance or None, default=None
        Draws the background sample when ``background`` is an int, and the
        coalitions and permutations of the sampled methods. The same value
        gives the same attributions for any ``n_jobs``.

    group_penalty : float, default=0.1
        Trade-off of :meth:`score` between agreement and granularity: the
        score loses ``group_penalty`` when all columns are in one group,
        proportionally less for finer partitions.

    verbose : int, default=0
        Show a progress bar over chunks of model calls when positive. Silent by
        default, so also inside ``GridSearchCV``.

    Attributes
    ----------
    estimator_ : estimator
        The fitted model that is explained.
    background_ : ndarray or DataFrame
        The background rows.
    groups_ : list of ndarray
        Column positions of each group.
    grouper_ : estimator
        The fitted grouper, when ``groups`` is a grouper.
    group_names_ : ndarray of str
        Name of each group.
    labels_ : ndarray of shape (n_features_in_,)
        Group index of every column.
    n_groups_ : int
    expected_value_ : float or ndarray of shape (n_outputs_,)
        Mean model output over the background, E_B f.
    n_outputs_ : int
        Number of explained outputs.
    output_names_ : list of str
        Names of the explained outputs (class labels for classifiers).
    response_method_ : str
        The response method used.
    algorithm_ : str
        ``"tree"`` or ``"model_agnostic"``; ``"model_agnostic (<reason>)"``
        when ``algorithm="auto"`` could not take the tree path.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    Decomposition : the components behind the attributions.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import LinearRegression
    >>> from skdecomp import Explainer
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = LinearRegression().fit(X, y)
    >>> explainer = Explainer(model, groups={"body": ["age", "sex", "bmi", "bp"],
    ...     "blood": ["s1", "s2", "s3", "s4", "s5", "s6"]}, background=50,
    ...     random_state=0).fit(X)
    >>> explainer.transform(X.iloc[:3]).shape
    (3, 2)
    """

    _parameter_constraints = {
        "estimator": [
            HasMethods(["predict"]),
            HasMethods(["predict_proba"]),
            HasMethods(["decision_function"]),
            callable,
        ],
        "method": [StrOptions(set(EXACT_METHODS) | set(SAMPLED_METHODS))],
        "groups": [None, list, tuple, dict, HasMethods(["fit", "get_params"])],
        "background": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function"})
        ],
        "target": "no_validation",
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "algorithm": [StrOptions({"auto", "tree", "model_agnostic"})],
        "group_penalty": [Interval(Real, 0, None, closed="left")],
        "n_samples": [Interval(Integral, 1, None, closed="left"), None],
        "method_params": [dict, None],
        "verbose": ["verbose"],
        "baseline": [StrOptions({"zeros", "mean", "blur"}), "array-like", None],
    }

    def __init__(
        self,
        estimator,
        *,
        method="shapley",
        groups=None,
        background=100,
        response_method="auto",
        target=None,
        batch_size="auto",
        n_jobs=None,
        random_state=None,
        algorithm="auto",
        group_penalty=0.1,
        n_samples=None,
        method_params=None,
        verbose=0,
        baseline=None,
    ):
        self.estimator = estimator
        self.method = method
        self.groups = groups
        self.background = background
        self.response_method = response_method
        self.target = target
        self.batch_size = batch_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.algorithm = algorithm
        self.group_penalty = group_penalty
        self.n_samples = n_samples
        self.method_params = method_params
        self.verbose = verbose
        self.baseline = baseline

    # -- input checks ---------------------------------------------------------
    def _check_X(self, X, reset):
        if isinstance(X, pd.DataFrame):
            X = validate_data(self, X, skip_check_array=True, reset=reset)
            if X.shape[0] == 0:
                raise ValueError(
                    "Found array with 0 sample(s) (shape=(0, "
                    f"{X.shape[1]})) while a minimum of 1 is required."
                )
            if X.shape[1] == 0:
                raise ValueError("X has 0 features; a minimum of 1 is required.")
            if not reset and not getattr(self, "_frame_input", True):
                X = X.to_numpy()
        else:
            X = validate_data(
                self, X, dtype=None, ensure_all_finite=False, reset=reset
            )
            if not reset and getattr(self, "_frame_input", False):
                X = pd.DataFrame(X, columns=self.feature_names_in_).astype(
                    dict(zip(self.feature_names_in_, self._fit_dtypes))
                )
        return X

    def _check_finite(self, X, what):
        """Raise a clear error if X has NaN/inf that the model cannot take."""
        num = _numeric_part(X)
        if num is None:
            return
        num = np.asarray(num, dtype=np.float64)
        bad = ~np.isfinite(num).all(axis=1)
        if not bad.any():
            return
        rows = np.flatnonzero(bad)[:5]
        sample = X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]
        try:
            self._response(sample)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ValueError(
                f"{what} contains NaN or infinity, which "
                f"{type(self.estimator_).__name__} cannot take ({first}). Impute or "
                "drop those values, or explain a model that accepts missing "
                "values (e.g. HistGradientBoosting* or a Pipeline with an imputer)."
            ) from exc

    def _resolve_background(self, X, rng):
        bg = self.background
        if isinstance(bg, Integral) and not isinstance(bg, bool):
            n = X.shape[0]
            if bg >= n:
                idx = np.arange(n)
            else:
                idx = np.sort(rng.choice(n, size=bg, replace=False))
            return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]
        if isinstance(bg, pd.Series):
            bg = bg.to_frame().T
        if isinstance(X, pd.DataFrame):
            if isinstance(bg, pd.DataFrame):
                missing = [c for c in X.columns if c not in bg.columns]
                if missing or bg.shape[1] != X.shape[1]:
                    raise ValueError(
                        f"background has columns {list(bg.columns)} but X has "
                        f"{list(X.columns)}; give background rows with the "
                        "columns of X."
                    )
                bg = bg[X.columns]
            else:
                arr = np.asarray(bg, dtype=object)
                if arr.ndim == 1:
                    arr = arr[None, :]
                if arr.ndim != 2 or arr.shape[1] != X.shape[1]:
                    raise ValueError(
                        f"background has shape {arr.shape}; it needs "
                        f"{X.shape[1]} columns like X."
                    )
                bg = pd.DataFrame(arr, columns=X.columns)
            bg = bg.astype(dict(zip(X.columns, X.dtypes)))
        else:
            if isinstance(bg, pd.DataFrame):
                bg = bg.to_numpy()
            bg = np.asarray(bg)
            if bg.ndim == 1:
                bg = bg[None, :]
            if bg.ndim != 2 or bg.shape[1] != X.shape[1]:
                raise ValueError(
                    f"background has shape {bg.shape}; it needs "
                    f"{X.shape[1]} columns like X."
                )
            if bg.dtype != X.dtype and X.dtype != object:
                bg = bg.astype(np.result_type(bg.dtype, X.dtype))
        if bg.shape[0] == 0:
            raise ValueError(
                "background has 0 rows; give at least one reference row or an "
                "int number of rows to sample from X."
            )
        return bg

    # -- fit ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the model if needed, and fix the background and the groups.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data; the background is sampled from it when ``background`` is an
            int, and the model is fitted on it when it is not fitted.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model.

        Returns
        -------
        self : Explainer
        """
        X = self._check_X(X, reset=True)
        self._frame_input = isinstance(X, pd.DataFrame)
        self._fit_dtypes = list(X.dtypes) if self._frame_input else None
        rng = check_random_state(self.random_state)

        estimator = as_model(self.estimator)
        if is_fitted(estimator):
            self.estimator_ = estimator
        elif y is None:
            raise ValueError(
                "This Explainer estimator requires y to be passed, but the "
                f"target y is None: {type(estimator).__name__} is not fitted, so "
                "fit(X, y) fits it first. Pass y, or pass a fitted model (wrap "
                "it in sklearn.frozen.FrozenEstimator to keep it fitted when "
                "cloned, e.g. in GridSearchCV)."
            )
        else:
            self.estimator_ = clone(estimator).fit(X, y)

        feature_names = getattr(self, "feature_names_in_", None)
        spec = self.groups
        image_shape, base_row = explainer_image_setup(self.baseline, spec, X)
        if image_shape is not None:
            self.estimator_ = image_model(self.estimator_, image_shape)
        if hasattr(spec, "fit") and hasattr(spec, "get_params"):
            self.grouper_ = fit_grouper(
                spec,
                X,
                y,
                estimator=self.estimator_,
                response_method=self.response_method,
                target=self.target,
                random_state=self.random_state,
                baseline=None if base_row is None else base_row.reshape(
                    image_shape or base_row.shape
                ),
            )
            spec = dict(zip(self.grouper_.group_names_, self.grouper_.groups_))
        groups, names = resolve_groups(spec, X.shape[1], feature_names)
        if self.method in SAMPLED_METHODS:
            check_method_params(self.method, self.method_params)
            if self.method != "integrated_gradients":
                resolve_budget(self.method, self.n_samples, len(groups))
        else:
            if self.method_params:
                check_method_params(self.method, self.method_params)
            if self.method not in SINGLE_GROUP_METHODS:
                _check_exact_groups(len(groups), self.method)
        self.groups_ = groups
        self.group_names_ = np.asarray(names, dtype=object)
        self.n_groups_ = len(groups)
        self.labels_ = group_labels(groups, X.shape[1])

        bg = self._resolve_background(X, rng) if base_row is None else base_row[None, :]
        self._response, self.output_names_ = resolve_response(
            self.estimator_, self.response_method, self.target, bg.iloc[:1]
            if isinstance(bg, pd.DataFrame) else bg[:1]
        )
        self.response_method_ = self._response.method
        self._check_finite(X, "X")
        self._check_finite(bg, "background")
        self.background_ = bg
        self.n_outputs_ = len(self.output_names_)
        base = self._response(bg).mean(axis=0)
        self.expected_value_ = float(base[0]) if self.n_outputs_ == 1 else base
        self._tree, self.algorithm_ = select_algorithm(
            self.algorithm, self.estimator_, self._response, bg
        )
        return self

    # -- decomposition --------------------------------------------------------
    def _tables(self, X):
        if self._frame_input:
            dtypes = common_dtypes(self._fit_dtypes, X)
            return Table(X, dtypes), Table(self.background_, dtypes)
        return Table(X), Table(self.background_)

    def _components(self, X):
        """Components (n_samples, n_outputs, 2**K) and f(X) (n_samples, n_outputs)."""
        if getattr(self, "_tree", None) is not None:
            F = tree_components(
                self._tree, X, self.background_, self.labels_, self.n_groups_,
                n_jobs=self.n_jobs,
            )
            return F, self._response(X)
        K = self.n_groups_
        full = (1 << K) - 1
        table, bg = self._tables(X)
        prediction = self._response(X)
        n, n_out = prediction.shape
        values = np.empty((n, n_out, full + 1))
        values[:, :, 0] = np.atleast_1d(self.expected_value_)[None, :]
        values[:, :, full] = prediction
        if full > 1:
            inner = coalition_values(
                self._response,
                table,
                bg,
                self.labels_,
                np.arange(1, full),
                batch_size=self._batch_rows(),
                n_jobs=self.n_jobs,
                progress="model calls" if self.verbose else None,
            )
            values[:, :, 1:full] = np.moveaxis(inner, 1, 2)
        F = moebius_transform(values.reshape(n * n_out, full + 1))
        return F.reshape(n, n_out, full + 1), prediction

    def _batch_rows(self):
        """Rows per model call from ``batch_size``."""
        if self.batch_size == "auto":
            return max(1024, 2**22 // max(1, self.n_features_in_))
        return self.batch_size

    def decompose(self, X):
        """Grouped functional decomposition of the model at the rows of X.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        decomposition : Decomposition
            Components F_U(x) for every subset U of groups.
        """
        check_is_fitted(self)
        _check_exact_groups(self.n_groups_, "decompose")
        X = self._check_X(X, reset=False)
        self._check_finite(X, "X")
        F, prediction = self._components(X)
        return Decomposition(F, list(self.group_names_), self.output_names_, prediction)

    def explain(self, X, methods=None):
        """Attributions of several methods from one set of model calls.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        methods : list of str or None
            Methods to compute (see ``method``); None computes
            shapley, banzhaf, occlusion and arch, or, beyond
            ``MAX_EXACT_GROUPS`` groups, occlusion, arch, kernel_shap and lime.

        Returns
        -------
        attributions : Bunch
            One array per method, each (n_samples, n_groups) or
            (n_samples, n_groups, n_outputs).
        """
        check_is_fitted(self)
        if methods is None:
            methods = (
                ["shapley", "banzhaf", "occlusion", "arch"]
                if self.n_groups_ <= MAX_EXACT_GROUPS
                else ["occlusion", "arch", "kernel_shap", "lime"]
            )
        elif isinstance(methods, str):
            methods = [methods]
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        self._check_finite(X, "X")
        return Bunch(**self._attributions(X, list(methods)))

    def _attributions(self, X, methods):
        """Dict method -> attributions for validated X; exact methods share one decomposition."""
        for m in methods:
            if m not in EXACT_METHODS and m not in SAMPLED_METHODS:
                raise ValueError(
                    f"Unknown method {m!r}; choose among "
                    f"{list(EXACT_METHODS) + list(SAMPLED_METHODS)}."
                )
        out = {}
        exact = [m for m in methods if m in EXACT_METHODS]
        if exact and getattr(self, "_tree", None) is None and all(
            m in SINGLE_GROUP_METHODS for m in exact
        ):
            # at most 2K coalitions, for any number of groups
            out.update(single_group_attributions(self, X, exact))
        elif exact:
            _check_exact_groups(self.n_groups_, exact[0])
            if getattr(self, "_tree", None) is not None:
                out.update(explainer_attributions(
                    self._tree, X, self.background_, self.labels_, self.n_groups_,
                    exact, n_jobs=self.n_jobs,
                ))
            else:
                F, prediction = self._components(X)
                dec = Decomposition(
                    F, list(self.group_names_), self.output_names_, prediction
                )
                out.update({m: dec.attributions(m) for m in exact})
        sampled = [m for m in methods if m in SAMPLED_METHODS]
        if sampled:
            rng = check_random_state(self.random_state)
            out.update(sampled_attributions(self, X, sampled, rng))
        return {m: out[m] for m in methods}

    def transform(self, X):
        """Attributions of ``method`` for every row of X.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        attributions : ndarray of shape (n_samples, n_groups) or (n_samples, n_groups, n_outputs)
            Columns are in group order (see :meth:`get_feature_names_out`).
        """
        check_is_fitted(self)
        if self.n_outputs_ > 1 and _get_output_config("transform", self)["dense"] != "default":
            raise ValueError(
                f"transform returns a 3-D array for {self.n_outputs_} outputs, "
                "which cannot be a DataFrame; pick one output with target=... "
                "or use set_output(transform='default')."
            )
        X = self._check_X(X, reset=False)
        self._check_finite(X, "X")
        return self._attributions(X, [self.method])[self.method]

    def score(self, X, y=None):
        """Held-out agreement of the explanation over its groups; higher is better.

        ``score = -L / Var(f) - group_penalty * (d - K) / (d - 1)``, with L
        the AGREED loss of the fitted groups (paper-spec §4.1: the mean
        squared gap between PDP and PFI effects, i.e. the between-group
        interaction) and Var(f) the variance of the model output, both on a
        sample of X used as B = D (the ``background`` number of rows when it
        is an int, else 100; all rows when X has fewer); d is the number of
        columns and K the number of groups. The first term is 0 when the
        model is groupwise additive over the groups on X, and the second
        keeps a single all-in group from winning by default. Use it to
        select groupings, e.g. ``GridSearchCV`` over ``groups__n_groups``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Held-out data.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        self._check_finite(X, "X")
        bg = self.background
        size = bg if isinstance(bg, Integral) and not isinstance(bg, bool) else 100
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        idx = np.arange(n) if size >= n else np.sort(rng.choice(n, size, replace=False))
        sample = X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]
        dtypes = common_dtypes(self._fit_dtypes, sample) if self._frame_input else None
        loss, var = partition_loss(
            self._response, sample, self.groups_, n_jobs=self.n_jobs, dtypes=dtypes
        )
        d = self.n_features_in_
        share = loss / var if var > 0 else 0.0
        coarseness = (d - self.n_groups_) / (d - 1) if d > 1 else 0.0
        return float(-share - self.group_penalty * coarseness)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        estimator = self.estimator
        if hasattr(estimator, "fit"):
            try:
                tags.input_tags.allow_nan = get_tags(estimator).input_tags.allow_nan
            except Exception:  # pragma: no cover - non-sklearn objects
                pass
            tags.target_tags.required = not is_fitted(estimator)
        return tags
