"""The Explainer estimator: attributions over groups of columns."""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    TransformerMixin,
)
from joblib import effective_n_jobs
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from ._compat import HasMethods, Interval, NestedParamsMixin, StrOptions
from ._compat import _fit_context, _get_output_config, transactional_fit
from ._decomposition import Decomposition
from ._decomposition._kernels import moebius_transform
from ._explanation import explanations_of
from ._partition import GroupNamesOutMixin, fit_grouper as _fit_grouper
from ._partition import check_grouper_spec as _check_grouper_spec
from ._partition import group_labels, resolve_groups
from ._hierarchy import fit_hierarchy, resolve_hierarchy
from ._tree import MAX_LEAF_ORDER
from ._image import (
    ImageModel, SharedRuntimeCloneMixin, check_baseline_values, explainer_image_setup,
    image_dtype, image_model, is_image_batch, read_images, wrap_runtime,
)
from ._methods._owen import check_owen_budget, hierarchical_attributions
from ._methods import (
    EXACT_METHODS,
    SAMPLED_METHODS,
    SINGLE_GROUP_METHODS,
    canonical,
    check_exact_groups,
    check_method_params,
    default_methods,
    dummy_groups,
    get_method,
    is_hierarchical,
    resolve_budget,
    resolve_method,
    sampled_attributions,
    single_group_attributions,
    zero_dummy_groups,
)
from ._config import MAX_EXACT_GROUPS
from ._game import CoalitionGame, agreement_score, make_imputer
from ._game._background import resolve_background
from ._model import FrameContainer, collect, fitted_model, is_fitted, resolve_response, to_pandas

__all__ = ["Explainer", "MAX_EXACT_GROUPS"]


class Explainer(SharedRuntimeCloneMixin, NestedParamsMixin, GroupNamesOutMixin,
                TransformerMixin, MetaEstimatorMixin,
                BaseEstimator):
    """Attributions of a model over groups of columns, from its functional decomposition.

    For explained rows x, a background B and a partition of the columns into
    K groups, the explainer evaluates the coalition values
    ``v_x(S) = mean_{z in B} f(x_{G_S}, z_{-G_S})`` for every subset S of
    groups, takes their Möbius transform to get the grouped components F_U(x)
    and returns attributions as weighted sums of components (see
    :ref:`functional_decomposition` and :ref:`explainers_as_weights`).

    Parameters
    ----------
    estimator : estimator or callable
        The model to explain. A fitted model is used as it is; an unfitted
        one is fitted on ``(X, y)`` in :meth:`fit`. To keep a fitted model
        fitted under cloning (e.g. in ``GridSearchCV``), wrap it in
        :class:`sklearn.frozen.FrozenEstimator`. A plain callable
        ``f(X) -> array`` is treated as a fitted regressor. A
        ``torch.nn.Module`` or an ``onnxruntime.InferenceSession`` is an
        image model, wrapped in :class:`ImageModel` with its defaults (or
        pass your own :class:`ImageModel`); ``fit`` then takes images.

    method : {"auto", "shapley", "banzhaf", "occlusion", "arch", "pdp", "pfi", \
            "kernel_shap", "permutation_shap", "lime", "rise", \
            "integrated_gradients"}, default="auto"
        The attribution returned by :meth:`transform`. "auto" is exact
        Shapley values where they are exact (the tree path, for any number
        of groups, or at most ``MAX_EXACT_GROUPS`` groups through model
        calls) and ``"permutation_shap"`` beyond, with ``n_samples``
        coalitions per row (the chosen method is ``method_``, and the
        result states its budget). The exact methods enumerate all 2**K
        coalitions (K at most ``MAX_EXACT_GROUPS``), except "arch" and
        "occlusion" (and their aliases) alone, which need 2K coalitions and
        work for any number of groups, and except on the tree path, which
        reads exact attributions from the leaves for any number of groups.
        With ``F_U`` the components, every exact method is
        ``phi_k = sum_{U contains k} w(|U|) F_U`` with

        - ``"shapley"``: ``w = 1/|U|`` (interventional SHAP over groups;
          Lundberg & Lee, 2017);
        - ``"banzhaf"``: ``w = 2**(1-|U|)``;
        - ``"occlusion"``: ``w = 1``, i.e. ``f(x) - v_x(all but k)``;
        - ``"arch"``: ``w = 1`` for ``|U| = 1`` only, i.e. ``v_x({k}) - v_x({})``
          (ArchAttribute; Tsang et al., 2020);
        - ``"pdp"`` is an alias of ``"arch"`` and ``"pfi"`` an alias of
          ``"occlusion"``: with a data background they are the local
          partial-dependence and local permutation-importance effects.

        The sampled methods work for any number of groups; their cost is
        ``n_samples`` coalitions per explained row:

        - ``"kernel_shap"``: Shapley-kernel weighted least squares with the
          efficiency constraint (Lundberg & Lee, 2017), solved for every
          background row's game and averaged (see :ref:`sampled_estimators`);
          estimates ``"shapley"``;
        - ``"permutation_shap"``: mean marginal contributions over random
          permutations, each with its reverse, for every background row's
          game; estimates ``"shapley"``;
        - ``"lime"``: least squares on group-presence indicators drawn
          i.i.d. Bernoulli(p), with an intercept (Ribeiro et al., 2016);
          with the constant kernel it estimates ``w = p**(|U|-1)``
          (p-weighted Banzhaf);
        - ``"rise"``: ``S_k = E_M[v_x(M) M_k] / p`` over random hard group
          masks M with keep probability p (Petsiuk et al., 2018), i.e.
          ``E_M[v_x(M)] + (1-p) sum_{U contains k} p**(|U|-1) F_U``;
        - ``"integrated_gradients"``: Integrated Gradients (Sundararajan et
          al., 2017), a path integral along the straight lines from the
          background rows to x. On a torch module it takes the module's own
          gradients (complete up to the quadrature error); on any other model
          a derivative-free version whose attributions sum exactly to
          ``f(x) - E_B f``. Needs numeric columns. On a multilinear
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

    response_method : {"auto", "predict", "predict_proba", "decision_function", \
            "log_odds", "margin"}, default="auto"
        Output of the model to explain. "auto" explains a model on the scale
        on which it is a sum over trees or terms: "margin", the raw score
        before the link, for XGBoost, LightGBM and CatBoost models
        (``output_margin`` / ``raw_score`` / ``RawFormulaVal``);
        ``predict_proba`` for random forests, extra trees and decision trees
        (a forest's probability is the mean of its trees'); else a
        classifier's ``decision_function`` when it has one (gradient
        boosting, linear models, SVMs); else "log_odds", the log-odds of
        ``predict_proba`` (binary: ``log(p1 / p0)``; multiclass: the centred
        log-probabilities, with probabilities clipped to the machine
        epsilon); ``predict`` for regressors. A model inside a
        FrozenEstimator or at the end of a Pipeline counts as that model.
        See :ref:`output_scale` for why. The choice made is
        ``response_method_``.

    target : class label or int, default=None
        Which output to explain. None explains all outputs, except that for
        binary ``predict_proba`` only the positive class ``classes_[1]`` is
        explained. A class label picks one class; for multi-output
        regressors an integer picks one output.

    batch_size : int or "auto", default="auto"
        Largest number of hybrid rows sent to the model at once. Memory is
        bounded by it (or by the background size, if larger), whatever the
        number of explained rows. "auto" sends chunks of 1/32 of
        scikit-learn's ``working_memory`` (:func:`sklearn.set_config`): 32 MiB,
        i.e. ``2**22 // n_features`` rows (at least 1024), by default.

    n_jobs : int, default=None
        Number of joblib workers over chunks of hybrid rows (at least one
        chunk per worker, each at most ``batch_size`` rows). None means 1
        unless in a :obj:`joblib.parallel_backend` context. On the tree path,
        the number of threads the trees are shared between (None: one). A
        model with its own ``n_jobs`` competes with these workers for the
        cores; parallelise one of the two. The first parallel call also pays
        for starting the workers. On an :class:`ImageModel` no workers are
        started: ``n_jobs`` is the number of the runtime's threads (unless
        the model sets ``n_threads``), so the two never share the cores.

    random_state : int, RandomState instance or None, default=None
        Draws the background sample when ``background`` is an int, and the
        coalitions and permutations of the sampled methods. The same value
        gives the same attributions for any ``n_jobs``.

    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        How the exact methods get the components. "tree" walks the fitted
        trees of a DecisionTree*, RandomForest*, ExtraTrees*,
        GradientBoosting*, HistGradientBoosting*, XGBoost, LightGBM or
        CatBoost model (alone or as the last step of a Pipeline of
        column-wise steps) and computes exact attributions for any number
        of groups without model calls (see :ref:`tree_path`); boosting
        classifiers are explained on their raw score only
        (``decision_function`` or "margin": their ``predict_proba`` is not a
        sum over trees). "model_agnostic"
        evaluates the model on hybrid rows. "auto" takes the tree path when
        it can and falls back otherwise (see ``algorithm_``).

    group_penalty : float, default=0.02
        Trade-off of :meth:`score` between agreement and granularity: the
        price of every pair of columns that share a group, as a share of the
        variance of the model output (a merge of groups of a and b columns
        costs ``group_penalty * a * b``; on d > 20 columns the price is
        scaled by 20 / d). Passed on to a grouper that keeps
        its default, such as ``AdaptiveGrouper(n_groups="auto")``, which
        stops merging at the same price.

    n_samples : int, default=None
        Budget of the sampled methods: the number of coalitions evaluated per
        explained row and background row, i.e. one model call each (KernelSHAP
        and permutation SHAP draw them afresh for every background row; LIME
        and RISE evaluate the same ones with every background row). Groups on
        which the row equals every background row get no budget, and exactly
        0 from every method but RISE (whose definition gives them
        ``E_M[v_x(M)]``). None uses ``2 * K + 2048``. ``"kernel_shap"`` needs at least ``2 * K``,
        ``"permutation_shap"`` ``2 * (K - 1)``, and ``"lime"`` and ``"rise"``
        ``K + 1``. LIME's coalitions are random draws: with few of them
        (below about ``4 * (K + 1)``) they may leave a group's coefficient
        undetermined, which raises a ValueError.
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
          ``"auto"`` (default) is ``"gradient"`` on a torch module and
          ``"path"`` on any other model. ``"gradient"`` uses the module's
          gradients (autograd) at ``n_steps`` Gauss-Legendre nodes on every
          path, like captum's ``IntegratedGradients`` summed over each group;
          attributions then sum to ``f(x) - E_B f`` only up to the quadrature
          error. ``"path"`` moves the groups one at a time within each
          step, in forward and in reverse order, and credits each group its
          finite difference, so attributions sum exactly to
          ``f(x) - E_B f`` for any model; ``"central"`` takes central
          differences per column at the step midpoints and sums them over
          each group, which converges faster for smooth models but is
          complete only up to the discretisation error. Both converge to
          the gradient-based Integrated Gradients of a smooth model;
        - ``"owen"``: ``estimator`` beyond the exact coalitions:
          ``"permutation"`` (sampled orders, standard errors, from
          ``8 (K - 1)``), ``"partition"``: shap's PartitionExplainer
          recursion, largest contributions first, the rest spread by group
          size; deterministic, from the root's ``2**m - 2`` coalitions up (m
          children), for binary trees such as
          :meth:`~skdecomp.AdaptiveGrouper.linkage`; or ``"auto"`` (default): the
          first when ``n_samples`` reaches its smallest budget, else the second.

        :meth:`explain` passes every method the keys it takes.

    verbose : int, default=0
        Show a progress bar over chunks of model calls when positive. Silent by
        default, so also inside ``GridSearchCV``.

    baseline : {"zeros", "mean", "blur"}, array-like or None, default=None
        Images: explain against one baseline image b, the anchored
        decomposition with B = delta_b (see
        :ref:`functional_decomposition`), instead of ``background``.
        "zeros" is black; "mean" the mean of the images passed
        to :meth:`fit` (a reference set, never the explained image alone);
        "blur" the image passed to :meth:`fit` (one image) blurred by a
        Gaussian of standard deviation ``max(H, W) / 8`` pixels; an array
        of the image's shape (or its flattened row, or either as a batch
        of one) is that image. A grouper in ``groups`` with a ``baseline``
        left at None gets this image. Images are passed to :meth:`fit` as
        they are, shape (n, H, W) or (n, H, W, C), uint8 or float, or as
        flattened rows with an image grouper that knows ``image_shape``;
        a plain callable model then gets batches of images of shape
        (n, *image_shape), a scikit-learn model the flattened rows.

    imputer : {"marginal", "path_dependent", "conditional"} or sampler, \
            default="marginal"
        How a coalition's absent columns are filled, which defines the game
        every method explains (see :ref:`imputation`). ``"marginal"``: from
        the background rows, ``v_x(S) = mean_z f(x_S, z_-S)``.
        ``"path_dependent"`` (tree models; ``background`` is not used): every tree follows
        its splits on the present columns and weighs both children of the
        others by their training cover, the game of
        ``shap.TreeExplainer(model)``. ``"conditional"``: ``v_x(S) =
        E[f(X) | X_S = x_S]``, averaging ``background`` draws (their number)
        from a :class:`GaussianCopulaSampler` fitted on the data given to
        :meth:`fit`; or pass any sampler with ``fit(X)`` and ``sample(X,
        known, n_draws, random_state)``. ``"integrated_gradients"`` is
        marginal only.

    hierarchy : list, dict, ndarray, clustering, grouper or None, default=None
        A hierarchy over the groups for ``method="owen"`` (the Owen value of
        two levels, the Winter value of more; see :ref:`hierarchical`):
        nested lists or dicts of columns (names or positions; a dict names
        its blocks), a scipy linkage matrix over the groups, a fitted
        ``FeatureAgglomeration`` (or an ``AgglomerativeClustering`` fitted on
        the columns), or a grouper that keeps a merge path, such as
        :class:`AdaptiveGrouper`, whose merge tree is the hierarchy (fitted
        in :meth:`fit` when it is not fitted). Every group in exactly one
        block. On images, an :class:`AdaptiveGrouper` fitted on the
        explained image (with the explainer's model, baseline and target)
        nests the explainer's groups, which must be its initial groups
        (``groups=None`` takes them): every patch gets an Owen value, and
        the totals over AGREED's groups are their grouped Shapley values.
        ``AdaptiveGrouper()`` (its colour tree) with ``n_samples=B`` and
        ``groups=None``: B is the whole budget per image, AGREED's merges
        (a tenth) included, and the players are regions of its colour tree,
        nested by the tree below AGREED's groups and split by the partition
        recursion (:ref:`image_maps`).

    Attributes
    ----------
    estimator_ : estimator
        The fitted model that is explained.
    game_ : CoalitionGame
        The model as a coalition game over the groups: the response, the
        background and the partition. Every model call of the explainer, of
        :mod:`skdecomp.metrics` and of :mod:`skdecomp.inspection` goes
        through it; NaN or infinity from the model raises a ValueError that
        names the rows.
    background_ : ndarray or DataFrame
        The background rows.
    groups_ : list of ndarray
        Column positions of each group.
    grouper_ : estimator
        The fitted grouper, when ``groups`` is a grouper.
    group_names_ : ndarray of str
        Name of each group.
    group_features_ : list of list of str
        Column names of each group: ``feature_names_in_``, or ``"x0"``,
        ``"x1"``, ... when fit saw no string column names.
    labels_ : ndarray of shape (n_features_in_,)
        Group index of every column.
    hierarchy_ : Hierarchy
        The hierarchy over the groups, when ``hierarchy`` is given.
    n_groups_ : int
    expected_value_ : float or ndarray of shape (n_outputs_,)
        v({}): E_B f, or the trees' cover-weighted mean (path-dependent).
    imputer_ : str
        The imputation: "marginal", "path_dependent" or "conditional".
    sampler_ : object or None
        The fitted sampler of "conditional".
    n_outputs_ : int
        Number of explained outputs.
    output_names_ : list of str
        Names of the explained outputs (class labels for classifiers).
    method_ : str
        The attribution method of :meth:`transform`: ``method``, or what
        ``method="auto"`` chose.
    response_method_ : str
        The response method used: ``"predict"``, ``"predict_proba"``,
        ``"decision_function"``, ``"log_odds"`` or ``"margin"``.
    algorithm_ : str
        ``"tree"`` or ``"model_agnostic"``; ``"model_agnostic (<reason>)"``
        when ``algorithm="auto"`` could not take the tree path.
    image_shape_ : tuple or None
        (H, W) or (H, W, C) when :meth:`fit` got images, else None; the
        explainer then takes images of that shape (or their flattened rows).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    Decomposition : The components behind the attributions.

    References
    ----------
    "Tackling the XAI Disagreement Problem with Adaptive Feature Grouping".
    ICLR 2026.

    G. Laberge, Y. Pequignot, M. Marchand and F. Khomh. "Tackling the XAI
    Disagreement Problem with Regional Explanations". AISTATS 2024.

    F. Fumagalli et al. "Unifying feature-based explanations with functional
    ANOVA and cooperative game theory". AISTATS 2025.

    S. M. Lundberg and S.-I. Lee. "A unified approach to interpreting model
    predictions". NeurIPS 2017.

    M. T. Ribeiro, S. Singh and C. Guestrin. "Why should I trust you?
    Explaining the predictions of any classifier". KDD 2016.

    V. Petsiuk, A. Das and K. Saenko. "RISE: Randomized input sampling for
    explanation of black-box models". BMVC 2018.

    M. Sundararajan, A. Taly and Q. Yan. "Axiomatic attribution for deep
    networks". ICML 2017.

    M. Tsang, S. Rambhatla and Y. Liu. "How does this interaction affect me?
    Interpretable attribution for feature interactions". NeurIPS 2020.

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
            HasMethods(["run", "get_inputs"]),  # an ONNX Runtime session
            callable,
        ],
        "method": [StrOptions({"auto"} | set(EXACT_METHODS) | set(SAMPLED_METHODS))],
        "groups": [None, list, tuple, dict, HasMethods(["fit", "get_params"])],
        "background": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function",
                        "log_odds", "margin"})
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
        "imputer": [
            StrOptions({"marginal", "path_dependent", "conditional"}),
            HasMethods(["fit", "sample"]),
        ],
        "hierarchy": "no_validation",
    }

    def __init__(
        self,
        estimator,
        *,
        method="auto",
        groups=None,
        background=100,
        response_method="auto",
        target=None,
        batch_size="auto",
        n_jobs=None,
        random_state=None,
        algorithm="auto",
        group_penalty=0.02,
        n_samples=None,
        method_params=None,
        verbose=0,
        baseline=None,
        imputer="marginal",
        hierarchy=None,
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
        self.imputer = imputer
        self.hierarchy = hierarchy

    # -- input checks ---------------------------------------------------------
    def _check_X(self, X, reset):
        shape = None if reset else getattr(self, "image_shape_", None)
        if is_image_batch(X) or shape is not None:
            # images as they are: float32 rows in their own value scale
            dtype = image_dtype(wrap_runtime(self.estimator))
            X, shape = read_images(X, shape, dtype=dtype)
            if reset:
                self.image_shape_ = shape
        elif reset:
            self.image_shape_ = None
        X = to_pandas(X)  # polars rows are read as pandas, names and types kept
        if isinstance(X, pd.DataFrame):
            X = validate_data(self, X, skip_check_array=True, reset=reset)
            if X.shape[0] == 0:
                raise ValueError(
                    "Found array with 0 sample(s) (shape=(0, "
                    f"{X.shape[1]})) while a minimum of 1 is required."
                )
            if X.shape[1] == 0:
                raise ValueError("X has 0 features; a minimum of 1 is required.")
        else:
            if hasattr(X, "shape") and len(X.shape) > 2:
                raise ValueError(
                    f"X has shape {tuple(X.shape)}; the Explainer takes 2-D rows, "
                    "or images of shape (n, height, width[, channels])."
                )
            X = validate_data(
                self, X, dtype=None, ensure_all_finite=False, reset=reset
            )
        if not reset:
            X = self.game_.check_X(X)
        return X

    # -- fit ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    @transactional_fit
    def fit(self, X, y=None):
        """Fit the model if needed, and fix the background and the groups.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data; the background is sampled from it when ``background`` is an
            int, and the model is fitted on it when it is not fitted. Or
            images of shape (n, H, W) or (n, H, W, C), uint8 or float.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model.

        Returns
        -------
        self : Explainer
            The fitted explainer.
        """
        # a model fitted on polars rows is called with polars rows
        X = collect(X)  # a polars LazyFrame, once
        container, given = FrameContainer.of(X), X
        X = self._check_X(X, reset=True)
        rng = check_random_state(self.random_state)
        if self.n_jobs == 0:
            raise ValueError(
                "n_jobs=0 runs no worker; give None or 1 (one process), a "
                "positive number of workers, or -1 (all cores)."
            )
        check_baseline_values(self.baseline)
        _check_grouper_spec(self.groups)

        self.estimator_ = fitted_model(
            wrap_runtime(self.estimator), X if container is None else given, y,
            "Explainer",
        )

        feature_names = getattr(self, "feature_names_in_", None)
        spec = self.groups
        image_shape, base_row = explainer_image_setup(
            self.baseline, spec, X, self.image_shape_
        )
        if isinstance(self.estimator_, ImageModel) and image_shape is None:
            raise ValueError(
                f"{self.estimator_!r} takes images; pass images of shape (n, height, "
                "width[, channels]) to fit, not rows of a table."
            )
        n_jobs = self.n_jobs
        if image_shape is not None:
            jobs = None if self.n_jobs is None else effective_n_jobs(self.n_jobs)
            self.estimator_ = image_model(self.estimator_, image_shape, jobs)
            if isinstance(self.estimator_, ImageModel):
                # the runtime's threads do the work: no workers of our own
                n_jobs = None
        # a grouper given as groups= or hierarchy= gets the explainer's model,
        # data, imputer and random state; a model fitted on polars rows is
        # called with polars rows
        params = dict(
            estimator=self.estimator_, response_method=self.response_method,
            target=self.target, random_state=self.random_state,
            group_penalty=self.group_penalty, imputer=self.imputer,
            baseline=None if base_row is None else base_row.reshape(
                image_shape or base_row.shape),
        )
        data = ((X if container is None else given) if self.image_shape_ is None
                else X.reshape(len(X), *image_shape))
        # images: a grouper's merge tree of the first image (before groups=: peaks apart)
        hierarchy, spec, plan = fit_hierarchy(
            self.hierarchy, spec, data if image_shape is None else data[:1], y,
            images=image_shape is not None, budget=self.n_samples, **params)
        if hasattr(spec, "fit") and hasattr(spec, "get_params"):
            self.grouper_ = _fit_grouper(spec, data, y, **params)
            groups_ = map(np.asarray, self.grouper_.groups_)
            spec = dict(zip(self.grouper_.group_names_, groups_))
        self._tree_plan = plan  # the budget left after an image grouper's evaluations
        # a frame's columns may be labels that are not strings; a grouper's are positions
        labels = (
            list(X.columns)
            if isinstance(X, pd.DataFrame) and feature_names is None
            and spec is self.groups
            else None
        )
        groups, names = resolve_groups(spec, X.shape[1], feature_names, labels)
        if self.method in SAMPLED_METHODS:
            check_method_params(self.method, self.method_params)
            if self.method != "integrated_gradients":
                resolve_budget(self.method, self.n_samples, len(groups))
        elif self.method_params and self.method != "auto":
            check_method_params(self.method, self.method_params)
        self.groups_ = groups
        self.group_names_ = np.asarray(names, dtype=object)
        self.n_groups_ = len(groups)
        self.labels_ = group_labels(groups, X.shape[1])
        if hierarchy is not None or is_hierarchical(self.method):
            frame_labels = (list(X.columns) if isinstance(X, pd.DataFrame)
                            and feature_names is None else None)
            self.hierarchy_ = resolve_hierarchy(
                hierarchy, groups, [str(n) for n in names], feature_names, X,
                method=self.method, column_labels=frame_labels)
        hierarchy = None  # a fitted grouper's arrays (a photo's pixels) are freed
        bg = (resolve_background(self.background, X, rng) if base_row is None
              else base_row[None, :])
        if image_shape is not None and isinstance(bg, np.ndarray):
            bg = bg.astype(image_dtype(self.estimator_))  # float32 for image models
        response, self.output_names_ = resolve_response(
            self.estimator_, self.response_method, self.target, bg.iloc[:1]
            if isinstance(bg, pd.DataFrame) else bg[:1], what="the background",
            container=container,
        )
        self.response_method_ = response.method
        if isinstance(self.estimator_, ImageModel):
            self.output_names_ = self.estimator_.explained_names(response.columns)
            if len(self.output_names_) > 1:
                raise ValueError(
                    f"The image model has {len(self.output_names_)} outputs; pick the "
                    "explained class with target=<class index> (on the Explainer or "
                    "the ImageModel), e.g. the predicted one: "
                    "target=int(model.predict(images[:1]).argmax())."
                )
        imputer, tree, self.algorithm_ = make_imputer(
            self.imputer, self.algorithm, self.estimator_, response, bg, X, rng,
            image=base_row is not None, method=self.method,
        )
        self.imputer_ = "marginal" if imputer is None else imputer.name
        self.sampler_ = getattr(imputer, "sampler", None)
        method = resolve_method(self.method, len(groups), tree is not None)
        if method != self.method and method in SAMPLED_METHODS:
            check_method_params(method, self.method_params)
            resolve_budget(method, self.n_samples, len(groups))
        if (method not in SAMPLED_METHODS and method not in SINGLE_GROUP_METHODS
                and not (is_hierarchical(method) and tree is None)):  # see _owen
            check_exact_groups(len(groups), method, tree=tree is not None)
        game = CoalitionGame(
            response,
            bg,
            self.labels_,
            group_names=list(self.group_names_),
            output_names=self.output_names_,
            batch_size=self._batch_rows(X.shape[1]),
            n_jobs=n_jobs,
            fill_batches=image_shape is not None,
            image_shape=image_shape,
            tree=tree,
            verbose=self.verbose,
            imputer=imputer,
        )
        game.check_finite(X, "X")
        self.game_ = game
        if is_hierarchical(method) and tree is None:  # refused in fit, not in transform
            check_owen_budget(game, self.hierarchy_, *self._owen_args())
        self.background_ = bg
        self.n_outputs_ = game.n_outputs
        base = game.expected_value
        self.expected_value_ = float(base[0]) if self.n_outputs_ == 1 else base.copy()
        return self

    def _owen_args(self):
        """The Owen value's budget and options, less an image grouper's evaluations."""
        plan = getattr(self, "_tree_plan", None)
        if plan is None:
            return self.n_samples, self.method_params
        return plan["n_samples"], {"estimator": "partition", **(self.method_params or {})}

    def _batch_rows(self, n_features):
        """Rows per model call: ``batch_size``, or the image model's batch."""
        if self.batch_size != "auto":
            return self.batch_size
        est = self.estimator_
        return est.batch_rows(n_features) if isinstance(est, ImageModel) else None

    @property
    def method_(self):
        """The method of :meth:`transform`: ``method``, or what "auto" stands for."""
        check_is_fitted(self)
        return resolve_method(self.method, self.n_groups_, self.game_.tree is not None)

    # -- decomposition --------------------------------------------------------
    def _components(self, X):
        """Components (n_samples, n_outputs, 2**K) and f(X) (n_samples, n_outputs)."""
        game = self.game_
        prediction = game.predict(X)
        if game.tree is not None:
            return game.tree_components(X), prediction
        K = self.n_groups_
        values = game.values(X, np.arange(1 << K, dtype=np.int64), prediction=prediction)
        n, n_out = prediction.shape
        values = np.ascontiguousarray(np.moveaxis(values, 1, 2))
        F = moebius_transform(values.reshape(n * n_out, 1 << K))
        return F.reshape(n, n_out, 1 << K), prediction

    def decompose(self, X):
        """Grouped functional decomposition of the model at the rows of X.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.

        Returns
        -------
        decomposition : Decomposition
            Components F_U(x) for every subset U of groups.
        """
        check_is_fitted(self)
        check_exact_groups(self.n_groups_, "decompose")
        X = self._check_X(X, reset=False)
        F, prediction = self._components(X)
        return Decomposition(F, list(self.group_names_), self.output_names_, prediction)

    def interactions(self, X, index="k-SII", max_order=2, n_samples=None):
        """Interaction index values between the groups, at the rows of X.

        Every index is a weighted sum of the Moebius components of the
        grouped decomposition (see :ref:`interaction_indices`). The values
        are exact through model calls up to ``MAX_EXACT_GROUPS`` groups, and
        on the tree path for orders 1 to 3 for any number of groups. Beyond,
        or when ``n_samples`` is given, they are estimated from ``n_samples``
        coalitions per row, with standard errors (see
        :ref:`sampled_interactions`).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.
        index : {"k-SII", "SII", "STII", "FSII", "BII", "FBII", "Moebius", \
                "SV", "BV"}, default="k-SII"
            The index, named as shapiq names it.
        max_order : int, default=2
            Largest number of groups in a term (1 for "SV" and "BV").
        n_samples : int, default=None
            Coalitions per row for an estimate. None gives the exact values
            where they are in reach, else an estimate with the explainer's
            ``n_samples``, or 4096 or twice the number of terms if larger.
            The draws come from ``random_state``.

        Returns
        -------
        interactions : InteractionExplanation
            One value per row and term (the empty term first, then by size
            and lexicographically), with the base values and term names, and
            for an estimate the ``standard_errors``. On the tree path with
            more than 16,384 terms of at most ``max_order`` groups, the terms
            of several groups are those whose groups share a root-to-leaf
            path; the others are exactly 0.
        """
        from ._explanation import InteractionExplanation
        from ._methods._indices import index_order, index_terms, index_values
        from ._methods._sampled_indices import index_budget, sampled_interactions

        check_is_fitted(self)
        tree = self.game_.tree
        spec, order = index_order(index, max_order, self.n_groups_)
        budget = index_budget(order, self.n_groups_, tree is not None, n_samples,
                              self.n_samples, spec)
        X = self._check_X(X, reset=False)
        base = np.asarray(self.expected_value_, dtype=np.float64)
        se = None
        if budget is not None:
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            values, se = sampled_interactions(self.game_, X, spec, order, budget, seed)
            terms = index_terms(self.n_groups_, order)
        elif tree is not None and order <= MAX_LEAF_ORDER:
            # per-leaf work, for any number of groups
            values, terms = self.game_.tree_interactions(X, spec.weight, order)
            if spec.efficient:
                values[:, 0, :] = base
        else:
            F, _ = self._components(X)
            values = np.moveaxis(index_values(F, index, order), 1, -1)
            terms = index_terms(self.n_groups_, order)
        if self.n_outputs_ == 1:
            values, se = values[..., 0], None if se is None else se[..., 0]
            base = np.full(X.shape[0], float(base))
        else:
            base = np.broadcast_to(base, (X.shape[0], self.n_outputs_)).copy()
        return InteractionExplanation(
            values, terms, base, [str(g) for g in self.group_names_], index, order,
            self.output_names_, standard_errors=se,
        )

    def explain(self, X, methods=None):
        """Compute the attributions of several methods from one set of model calls.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.
        methods : list of str or None, default=None
            Methods to compute (see ``method``); None computes shapley,
            banzhaf, occlusion and arch, or, beyond ``MAX_EXACT_GROUPS``
            groups off the tree path, occlusion, arch, kernel_shap and lime.
            Sampled methods share one design (:ref:`design <shared_design>`).

        Returns
        -------
        explanations : Explanations
            A dict (a Bunch) of one :class:`~skdecomp.Explanation` per method,
            with the expected value, the rows and the group names. Its
            ``values`` are (n_samples, n_groups) or
            (n_samples, n_groups, n_outputs), as ``np.asarray`` gives them.
            :meth:`set_output` does not apply here: call
            :meth:`~skdecomp.Explanation.to_frame` for a DataFrame of rows by
            groups.

        See Also
        --------
        Explanation.from_explainer : The explanation of ``method`` alone.
        """
        check_is_fitted(self)
        if methods is None:
            methods = default_methods(
                "exact"
                if self.n_groups_ <= MAX_EXACT_GROUPS or self.game_.tree is not None
                else "wide"
            )
        elif isinstance(methods, str):
            methods = [methods]
        elif not isinstance(methods, (list, tuple)):
            raise TypeError(
                "methods must be a method name, a list of method names or None, "
                f"got {type(methods).__name__}."
            )
        if len(methods) == 0:
            raise ValueError(
                "methods is empty; give at least one method name, or None for "
                "the default set."
            )
        X = self._check_X(X, reset=False)
        errors = {}  # standard errors of the sampled methods
        values = self._attributions(X, list(methods), errors)
        return explanations_of(self, X, values, errors)

    def _attributions(self, X, methods, errors=None):
        """Dict method -> attributions for validated X; exact methods share one decomposition.

        A dict ``errors`` receives the standard errors of the sampled methods.
        """
        specs = {m: get_method(m) for m in methods}
        out = {}
        exact = every_exact = [m for m in methods if specs[m].kind == "exact"]
        single = [m for m in exact if specs[m].single_group]
        if single and self.game_.tree is None and (
            len(single) == len(exact) or self.n_groups_ > MAX_EXACT_GROUPS
        ):
            # at most 2K coalitions, for any number of groups
            out.update(single_group_attributions(self.game_, X, single))
            exact = [m for m in exact if m not in single]
        if exact:
            tree = self.game_.tree is not None
            hierarchical = [m for m in exact if specs[m].hierarchical]
            by_size = [m for m in exact if not specs[m].hierarchical]
            if by_size:
                check_exact_groups(self.n_groups_, by_size[0], tree=tree)
            if hierarchical and (tree or not by_size):
                # leaf by leaf on the tree path, else the hierarchy's coalitions
                out.update(hierarchical_attributions(
                    self.game_, X, getattr(self, "hierarchy_", None), hierarchical,
                    check_random_state(self.random_state), *self._owen_args()[:1], errors,
                    self._owen_args()[1]))
                hierarchical = []
            if tree and by_size:
                canon = {m: canonical(m) for m in by_size}
                phi = self.game_.tree_attributions(
                    X, {c: specs[m].weights(self.n_groups_) for m, c in canon.items()}
                )
                out.update({m: phi[c] for m, c in canon.items()})
            if hierarchical or (by_size and not tree):
                F, prediction = self._components(X)
                dec = Decomposition(
                    F, list(self.group_names_), self.output_names_, prediction
                )
                hierarchy = getattr(self, "hierarchy_", None)
                out.update({m: dec.attributions(m) for m in by_size if not tree})
                out.update({m: dec.attributions(
                    m, weights=specs[m].weights(self.n_groups_, hierarchy))
                    for m in hierarchical})
        if every_exact and self.game_.anchored:
            # exactly 0 for the groups on which x equals every background row
            dummy = dummy_groups(self.game_, X)
            out.update({m: zero_dummy_groups(out[m], dummy) for m in every_exact})
        sampled = [m for m in methods if specs[m].kind == "sampled"]
        if sampled:
            rng = check_random_state(self.random_state)
            out.update(sampled_attributions(
                self.game_, X, sampled, rng, n_samples=self.n_samples,
                method_params=self.method_params,
                feature_names=getattr(self, "feature_names_in_", None), errors=errors,
            ))
        return {m: out[m] for m in methods}

    def transform(self, X):
        """Compute the attributions of ``method`` for every row of X.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.

        Returns
        -------
        attributions : ndarray of shape (n_samples, n_groups) or (n_samples, n_groups, n_outputs)
            Columns are in group order (see :meth:`get_feature_names_out`).

        See Also
        --------
        Explanation.from_explainer : The same values with their expected
            value, rows and names, as a table or a ``shap.Explanation``.
        """
        check_is_fitted(self)
        if self.n_outputs_ > 1 and _get_output_config("transform", self)["dense"] != "default":
            raise ValueError(
                f"transform returns a 3-D array for {self.n_outputs_} outputs, "
                "which cannot be a DataFrame; pick one output with target=... "
                "or use set_output(transform='default')."
            )
        X = self._check_X(X, reset=False)
        method = self.method_
        return self._attributions(X, [method])[method]

    def score(self, X, y=None):
        """Held-out agreement of the explanation over its groups; higher is better.

        ``score = -L / Var(f) - group_penalty * P``, with L the AGREED loss
        of the fitted groups (see :ref:`agreed`: the mean squared gap
        between PDP and PFI effects, i.e. the between-group interaction) and
        Var(f) the variance of the model output, both on a sample of X used
        as B = D (the ``background`` number of rows when it is an int, else
        100; all rows when X has fewer), and P the number of pairs of columns
        that share a group (beyond 20 columns ``group_penalty`` is scaled by
        20 / d). The first term is 0 when the model is groupwise
        additive over the groups on X; the second prices every pair of
        columns joined, so a merge of groups of a and b columns pays off
        only when it removes more than ``group_penalty * a * b`` of the
        variance, the rule by which :class:`AdaptiveGrouper` stops. Use it
        to select groupings, e.g. ``GridSearchCV`` over
        ``groups__n_groups`` (see :ref:`agreed_fitted`).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Held-out data.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Higher is better; 0 is the largest possible value.
        """
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        bg = self.background
        size = bg if isinstance(bg, Integral) and not isinstance(bg, bool) else 100
        return agreement_score(self.game_, X, self.groups_, self.group_penalty,
                               size=size, random_state=self.random_state)

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
