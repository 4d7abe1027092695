"""Synthetic functions with a known groupwise-additive structure, and image tasks.

Each generator returns a :class:`~sklearn.utils.Bunch` with the data, the
target, the true partition of the columns and the function itself (a
picklable callable that also has ``predict``, so it can be explained
directly). Features are independent unless asked otherwise; the true
partition is the one with no between-group interaction (see the user guide,
:ref:`why_disagree`).
:func:`make_mixed_table` is a messy table of the kind the command line gets:
numbers, many categorical columns, missing values and a date.
:func:`load_sample_photos` reads real photos that scikit-image and
scikit-learn ship, and :func:`load_pretrained_cnn` an ImageNet classifier
whose weights come in a package, to explain them.
Everything is generated or read locally; nothing is downloaded.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import special
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import Bunch, check_random_state

from ._compat import Interval, StrOptions, validate_params

# the photos and the pretrained network live in their own module (this one would
# grow past 1,000 lines); the private helpers are re-exported for tests and notebooks
from ._imagenet import (  # noqa: F401
    _imagenet_classes,
    _lite0_module,
    _lite0_onnx_session,
    load_pretrained_cnn,
    load_sample_photos,
)

__all__ = [
    "make_agreed_example",
    "make_block_function",
    "BlockFunction",
    "load_digit_images",
    "make_shape_images",
    "make_mixed_table",
    "make_semi_synthetic",
    "RankBlockFunction",
    "load_sample_photos",
    "load_pretrained_cnn",
]

# Univariate and multivariate shapes used by the block functions. Every
# multivariate shape is a product of centred factors, so every pair of its
# columns interacts.
_SINGLE = ("linear", "square", "sin")


def _block_term(shape, cols):
    """The term of one block, of shape ``shape``, on its columns ``cols``."""
    if shape == "linear":
        return cols[:, 0]
    if shape == "square":
        return cols[:, 0] ** 2
    if shape == "sin":
        return np.sin(2.0 * cols[:, 0])
    if shape == "product":
        return np.prod(cols, axis=1)
    if shape == "sin_product":
        return np.sin(2.0 * np.prod(cols, axis=1))
    raise ValueError(f"unknown block shape {shape!r}.")


class BlockFunction(RegressorMixin, BaseEstimator):
    """A sum of functions of disjoint column blocks, as a fitted regressor.

    ``f(x) = sum_b c_b * h_b(x_{block_b})``; a block of one column uses
    ``x``, ``x**2`` or ``sin(2x)``; a larger block uses the product of its
    columns (``"product"``) or ``sin`` of that product (``"sin_product"``).

    Parameters
    ----------
    blocks : list of list of int
        The true partition (blocks of columns).
    shapes : list of str
        Shape of each block.
    coefs : list of float
        Coefficient of each block.
    n_features : int
        Number of input columns.
    """

    def __init__(self, blocks, shapes, coefs, n_features):
        self.blocks = blocks
        self.shapes = shapes
        self.coefs = coefs
        self.n_features = n_features

    def __call__(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features}), got {X.shape}."
            )
        out = np.zeros(X.shape[0])
        for block, shape, coef in zip(self.blocks, self.shapes, self.coefs):
            out += coef * _block_term(shape, X[:, block])
        return out

    def predict(self, X):
        """Evaluate the function on the rows of X (same as calling it).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input rows.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            The function's values.
        """
        return self(X)

    def __sklearn_is_fitted__(self):
        return True

    def __repr__(self):
        terms = []
        for block, shape, coef in zip(self.blocks, self.shapes, self.coefs):
            args = "*".join(f"x{j}" for j in block)
            terms.append(
                {
                    "linear": f"{coef:.2g}*{args}",
                    "square": f"{coef:.2g}*{args}**2",
                    "sin": f"{coef:.2g}*sin(2*{args})",
                    "product": f"{coef:.2g}*{args}",
                    "sin_product": f"{coef:.2g}*sin(2*{args})",
                }[shape]
            )
        return "BlockFunction(" + " + ".join(terms) + ")"


def _uniform_rows(rng, n_samples, n_features, correlation):
    """Uniform(-1, 1) columns, independent or through an equicorrelated Gaussian copula."""
    if correlation == 0:
        return rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    cov = np.full((n_features, n_features), correlation)
    np.fill_diagonal(cov, 1.0)
    Z = rng.standard_normal((n_samples, n_features)) @ np.linalg.cholesky(cov).T
    return 2.0 * special.ndtr(Z) - 1.0


def _bunch(function, n_samples, noise, rng, description, correlation=0.0):
    X = _uniform_rows(rng, n_samples, function.n_features, correlation)
    y = function(X)
    if noise > 0:
        y = y + noise * rng.standard_normal(n_samples)
    return Bunch(
        data=X,
        target=y,
        groups=[list(b) for b in sorted(function.blocks, key=min)],
        function=function,
        feature_names=[f"x{j}" for j in range(function.n_features)],
        DESCR=description,
    )


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_agreed_example(n_samples=1000, *, noise=0.0, random_state=None):
    """Generate the four-block example on which AGREED finds the true groups.

    ``f(x) = x0*x1 + sin(x2*x3) + x4 + x5**2`` with six independent
    Uniform(-1, 1) features; the true partition is
    ``[[0, 1], [2, 3], [4], [5]]``. The user guide (:ref:`agreed`) uses it
    to show the AGREED loss reaching 0 at the true blocks.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    noise : float, default=0.0
        Standard deviation of Gaussian noise added to the target.
    random_state : int, RandomState instance or None, default=None
        Draws the rows and the noise.

    Returns
    -------
    data : Bunch
        ``data`` (n_samples, 6), ``target``, ``groups`` (the true
        partition), ``function`` (a :class:`BlockFunction`, callable and with
        ``predict``), ``feature_names`` and ``DESCR``.

    Examples
    --------
    >>> from skdecomp.datasets import make_agreed_example
    >>> data = make_agreed_example(n_samples=5, random_state=0)
    >>> data.data.shape, data.groups
    ((5, 6), [[0, 1], [2, 3], [4], [5]])
    """
    rng = check_random_state(random_state)
    function = _AgreedExample()
    return _bunch(function, n_samples, noise, rng, "f = x0*x1 + sin(x2*x3) + x4 + x5**2")


class _AgreedExample(BlockFunction):
    def __init__(self):
        super().__init__(
            [[0, 1], [2, 3], [4], [5]], ["product", "sin_product", "linear", "square"],
            [1.0, 1.0, 1.0, 1.0], 6,
        )

    def __call__(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 6:
            raise ValueError(f"X must have shape (n_samples, 6), got {X.shape}.")
        return X[:, 0] * X[:, 1] + np.sin(X[:, 2] * X[:, 3]) + X[:, 4] + X[:, 5] ** 2

    def __repr__(self):
        return "BlockFunction(x0*x1 + sin(x2*x3) + x4 + x5**2)"


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "max_block_size": [Interval(Integral, 1, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "correlation": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_block_function(
    n_samples=1000,
    *,
    n_features=8,
    max_block_size=3,
    noise=0.0,
    correlation=0.0,
    random_state=None,
):
    """Generate a random sum of functions of disjoint blocks of columns.

    The columns are shuffled and cut into blocks of 1 to ``max_block_size``
    columns (sizes drawn uniformly); each block gets a random shape (see
    :class:`BlockFunction`) and a coefficient of random sign with magnitude
    in [1, 2]. Features are Uniform(-1, 1): independent, or dependent
    through a Gaussian copula with ``correlation > 0``. The function is
    additive over its blocks pointwise, so the true partition is the same
    either way.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=8
        Number of columns.
    max_block_size : int, default=3
        Largest number of columns in a block.
    noise : float, default=0.0
        Standard deviation of Gaussian noise added to the target.
    correlation : float, default=0.0
        In [0, 1): the features are ``2 Phi(z) - 1`` for Gaussian z with
        unit variances and this correlation between every two columns
        (Phi the normal CDF), so each is Uniform(-1, 1) with Spearman
        correlation ``(6 / pi) arcsin(correlation / 2)``. 0 draws
        independent uniforms directly (the rows of earlier versions).
    random_state : int, RandomState instance or None, default=None
        Draws the blocks, their shapes and coefficients, the rows and the
        noise.

    Returns
    -------
    data : Bunch
        ``data``, ``target``, ``groups`` (the true partition, blocks ordered
        by their first column), ``function``, ``feature_names``, ``DESCR``.

    Examples
    --------
    >>> from skdecomp.datasets import make_block_function
    >>> data = make_block_function(10, n_features=6, random_state=0)
    >>> sorted(j for g in data.groups for j in g)
    [0, 1, 2, 3, 4, 5]
    """
    rng = check_random_state(random_state)
    perm = rng.permutation(n_features)
    blocks, start = [], 0
    while start < n_features:
        size = int(rng.randint(1, min(max_block_size, n_features - start) + 1))
        blocks.append(sorted(int(j) for j in perm[start : start + size]))
        start += size
    shapes = [
        _SINGLE[rng.randint(len(_SINGLE))] if len(b) == 1
        else ("product", "sin_product")[rng.randint(2)]
        for b in blocks
    ]
    coefs = rng.uniform(1.0, 2.0, size=len(blocks)) * rng.choice([-1.0, 1.0], size=len(blocks))
    function = BlockFunction(blocks, shapes, [float(c) for c in coefs], n_features)
    return _bunch(function, n_samples, noise, rng, repr(function), correlation)


# -- images ------------------------------------------------------------------------
def _fit_quietly(model, X, y):
    """Fit with a short, deliberately capped number of iterations.

    One BLAS thread: these small fits are faster without thread contention.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


@validate_params(
    {
        "model": [StrOptions({"mlp", "svc"})],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def load_digit_images(*, model="mlp", random_state=0):
    """Load the 8x8 digits bundled with scikit-learn, with a fitted classifier.

    A small image task that runs offline, for per-image AGREED (see
    :ref:`agreed`):
    :func:`sklearn.datasets.load_digits` scaled to [0, 1], and a classifier
    on the flattened pixels fitted on the first 1200 images (about a
    second); the other 597 are held out.

    Parameters
    ----------
    model : {"mlp", "svc"}, default="mlp"
        ``MLPClassifier(hidden_layer_sizes=(32,))`` (explained on
        ``predict_proba``) or an RBF ``SVC()`` (explained on
        ``decision_function``, one score per class).
    random_state : int, RandomState instance or None, default=0
        Seed of the model's fit.

    Returns
    -------
    data : Bunch
        ``images`` (1797, 8, 8), ``data`` (1797, 64), ``target``,
        ``image_shape`` ``(8, 8)``, ``model`` (fitted, takes flattened rows),
        ``train_index`` and ``test_index``, ``DESCR``.

    Examples
    --------
    >>> from skdecomp.datasets import load_digit_images
    >>> digits = load_digit_images()
    >>> digits.images.shape, digits.model.score(digits.data[digits.test_index],
    ...                                          digits.target[digits.test_index]) > 0.9
    ((1797, 8, 8), True)
    """
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    if model == "mlp":
        clf = MLPClassifier(hidden_layer_sizes=(32,), max_iter=300, random_state=seed)
    else:
        clf = SVC(random_state=seed)
    train, test = np.arange(1200), np.arange(1200, X.shape[0])
    _fit_quietly(clf, X[train], y[train])
    return Bunch(
        images=X.reshape(-1, 8, 8),
        data=X,
        target=y,
        image_shape=(8, 8),
        model=clf,
        train_index=train,
        test_index=test,
        DESCR="scikit-learn digits scaled to [0, 1] with a classifier on the flattened pixels",
    )


@validate_params(
    {
        "n_samples": [Interval(Integral, 2, None, closed="left")],
        "image_size": [Interval(Integral, 16, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "fit_model": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_shape_images(
    n_samples=1000, *, image_size=32, noise=0.05, fit_model=True, random_state=None
):
    """Generate bright bars on textured backgrounds, with a known class rule.

    Each grayscale image has a background texture (a sinusoidal grating of
    random orientation, frequency and phase, plus Gaussian noise) and one
    bright bar, 3 pixels thick and 12 to 20 long, at a random position.
    The class rule: ``target = 0`` for a horizontal bar, ``1`` for a
    vertical bar. With ``fit_model=True`` an
    ``MLPClassifier(hidden_layer_sizes=(24,))`` on the flattened pixels is
    fitted on the first 80% of the images (a few seconds at most); the rest
    is held out.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of images.
    image_size : int, default=32
        Height and width of the images.
    noise : float, default=0.05
        Standard deviation of the pixel noise.
    fit_model : bool, default=True
        Fit the classifier; if False, ``model`` is None.
    random_state : int, RandomState instance or None, default=None
        Draws the images and seeds the classifier's fit.

    Returns
    -------
    data : Bunch
        ``images`` (n_samples, image_size, image_size) in [0, 1], ``data``
        (flattened), ``target``, ``masks`` (boolean, the bar's pixels: the
        evidence of the class), ``image_shape``, ``model`` (fitted, or None),
        ``train_index``, ``test_index`` and ``DESCR``.

    Examples
    --------
    >>> from skdecomp.datasets import make_shape_images
    >>> shapes = make_shape_images(20, fit_model=False, random_state=0)
    >>> shapes.images.shape, sorted(set(shapes.target.tolist()))
    ((20, 32, 32), [0, 1])
    """
    rng = check_random_state(random_state)
    size, thick = int(image_size), 3
    yy, xx = np.mgrid[:size, :size]
    images = np.empty((n_samples, size, size))
    masks = np.zeros((n_samples, size, size), dtype=bool)
    target = rng.randint(2, size=n_samples)
    for i in range(n_samples):
        theta, freq = rng.uniform(0, np.pi), rng.uniform(0.3, 0.8)
        phase = rng.uniform(0, 2 * np.pi)
        wave = np.sin(freq * (np.cos(theta) * xx + np.sin(theta) * yy) + phase)
        img = 0.3 + 0.15 * wave + noise * rng.standard_normal((size, size))
        length = rng.randint(12, min(21, size - 3))
        along = rng.randint(2, size - length - 1)
        across = rng.randint(2, size - thick - 1)
        if target[i] == 0:
            masks[i, across : across + thick, along : along + length] = True
        else:
            masks[i, along : along + length, across : across + thick] = True
        img[masks[i]] = 1.0
        images[i] = np.clip(img, 0.0, 1.0)
    data = images.reshape(n_samples, -1)
    n_train = max(1, int(round(0.8 * n_samples)))
    train, test = np.arange(n_train), np.arange(n_train, n_samples)
    model = None
    if fit_model:
        from sklearn.neural_network import MLPClassifier

        seed = rng.randint(np.iinfo(np.int32).max)
        model = MLPClassifier(
            hidden_layer_sizes=(24,), solver="lbfgs", max_iter=50, random_state=seed
        )
        _fit_quietly(model, data[train], target[train])
    return Bunch(
        images=images,
        data=data,
        target=target,
        masks=masks,
        image_shape=(size, size),
        model=model,
        train_index=train,
        test_index=test,
        DESCR="bars on textured backgrounds; target 0: horizontal bar, 1: vertical bar",
    )


# -- tables ------------------------------------------------------------------------
#: number of levels of the high-cardinality categorical columns, in turn
_MANY_LEVELS = (120, 160, 240, 300)


def _level_draws(rng, n_samples, n_levels, skewed):
    """Level codes of one categorical column: Zipf-like when ``skewed``."""
    if skewed:
        p = 1.0 / (np.arange(n_levels) + 5.0)
    else:
        p = rng.uniform(0.5, 1.5, size=n_levels)
    return rng.choice(n_levels, size=n_samples, p=p / p.sum())


@validate_params(
    {
        "n_samples": [Interval(Integral, 2, None, closed="left")],
        "n_numeric": [Interval(Integral, 0, None, closed="left")],
        "n_categorical": [Interval(Integral, 0, None, closed="left")],
        "task": [StrOptions({"regression", "classification"})],
        "missing": [Interval(Real, 0, 1, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "id_column": ["boolean"],
        "constant_column": ["boolean"],
        "leak": ["boolean"],
        "return_X_y": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_mixed_table(
    n_samples=2000,
    *,
    n_numeric=8,
    n_categorical=40,
    task="regression",
    missing=0.05,
    noise=0.5,
    id_column=False,
    constant_column=False,
    leak=False,
    return_X_y=False,
    random_state=None,
):
    """Generate a table of mixed types, as a practitioner's CSV file holds.

    Columns, in this order:

    - ``id`` (with ``id_column=True``): the row number 1, 2, ..., like the
      index column many exported tables carry;
    - ``num0``, ``num1``, ...: standard normal numbers;
    - ``cat00``, ``cat01``, ...: categorical (pandas ``category`` dtype).
      Every tenth one (``cat00``, ``cat10``, ...) has 120 to 300 levels of
      skewed frequency; the others have 2 to 12 levels;
    - ``date``: a day between 2018-01-01 and 2023-12-31 (``datetime64``);
    - ``constant`` (with ``constant_column=True``): 1.0 in every row;
    - ``target_copy`` (with ``leak=True``): the target plus a little noise
      (for classification, the class as 0/1 plus noise), a leak no real
      model should be given.

    A fraction ``missing`` of the values of every other numeric and
    categorical column (``num1``, ``num3``, ..., ``cat01``, ``cat03``, ...)
    is missing. The target depends on ``num0`` (linear), ``num1 * num2``
    (an interaction), ``sin(2 num3)``, the levels of ``cat00`` and
    ``cat01``, ``cat02`` times ``num0`` (an interaction) and a trend in
    ``date``; each term exists only when its columns do. For
    classification the target is ``"yes"`` with probability
    ``sigmoid(2 s)`` of the standardised sum s of the terms, else ``"no"``.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of rows.
    n_numeric : int, default=8
        Number of numeric columns.
    n_categorical : int, default=40
        Number of categorical columns.
    task : {"regression", "classification"}, default="regression"
        A numeric target, or the classes ``"no"`` and ``"yes"``.
    missing : float, default=0.05
        Share of missing values in every other numeric and categorical
        column, in [0, 1).
    noise : float, default=0.5
        Standard deviation of Gaussian noise added to a regression target
        (the terms have a standard deviation of about 1 each).
    id_column : bool, default=False
        Add the row-number column ``id`` first.
    constant_column : bool, default=False
        Add the constant column ``constant``.
    leak : bool, default=False
        Add ``target_copy``, a noisy copy of the target.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.
    random_state : int, RandomState instance or None, default=None
        Draws the columns, the missing values, the effects and the target.

    Returns
    -------
    data : Bunch
        ``data`` (DataFrame of the columns), ``target`` (Series named
        ``"y"``), ``frame`` (both), ``categorical_columns``,
        ``high_cardinality_columns``, ``informative_columns`` (the columns
        the target depends on) and ``DESCR``. With ``return_X_y=True``, the
        tuple ``(data, target)``.

    Examples
    --------
    >>> from skdecomp.datasets import make_mixed_table
    >>> X, y = make_mixed_table(500, n_categorical=12, return_X_y=True, random_state=0)
    >>> X.shape, int(X["cat00"].cat.categories.size) >= 100
    ((500, 21), True)
    """
    import pandas as pd

    rng = check_random_state(random_state)
    n = int(n_samples)
    columns = {}
    if id_column:
        columns["id"] = np.arange(1, n + 1)
    numeric = {f"num{j}": rng.standard_normal(n) for j in range(n_numeric)}
    columns.update(numeric)
    codes, high = {}, []
    for j in range(n_categorical):
        name = f"cat{j:02d}"
        if j % 10 == 0:
            n_levels = _MANY_LEVELS[(j // 10) % len(_MANY_LEVELS)]
            high.append(name)
        else:
            n_levels = int(rng.randint(2, 13))
        codes[name] = _level_draws(rng, n, n_levels, skewed=j % 10 == 0)
        levels = [f"{name}_{k:03d}" for k in range(n_levels)]
        columns[name] = pd.Categorical.from_codes(codes[name], categories=levels)
    first, last = pd.Timestamp("2018-01-01"), pd.Timestamp("2023-12-31")
    days = rng.randint(0, (last - first).days + 1, size=n)
    columns["date"] = first + pd.to_timedelta(days, unit="D")

    terms, informative = [], []

    def term(values, *names):
        terms.append(np.asarray(values, dtype=float))
        informative.extend(c for c in names if c not in informative)

    if "num0" in numeric:
        term(numeric["num0"], "num0")
    if "num2" in numeric:
        term(numeric["num1"] * numeric["num2"], "num1", "num2")
    if "num3" in numeric:
        term(np.sin(2.0 * numeric["num3"]) * np.sqrt(2.0), "num3")
    for name in ("cat00", "cat01"):
        if name in codes:
            effect = rng.standard_normal(int(codes[name].max()) + 1)
            term(effect[codes[name]], name)
    if "cat02" in codes and "num0" in numeric:
        slope = rng.choice([-1.0, 1.0], size=int(codes["cat02"].max()) + 1)
        term(slope[codes["cat02"]] * numeric["num0"], "cat02", "num0")
    term((days - days.mean()) / 365.25 / 1.7, "date")
    score = np.sum(terms, axis=0)
    score = (score - score.mean()) / (score.std() or 1.0)
    if task == "regression":
        target = np.sum(terms, axis=0) + noise * rng.standard_normal(n)
        copy = target + 0.01 * target.std() * rng.standard_normal(n)
    else:
        yes = rng.uniform(size=n) < special.expit(2.0 * score)
        target = np.where(yes, "yes", "no").astype(object)
        copy = yes + 0.05 * rng.standard_normal(n)

    X = pd.DataFrame(columns)
    for k, name in enumerate([c for c in X.columns if c.startswith(("num", "cat"))]):
        if k % 2 == 1 and missing > 0:
            X.loc[rng.uniform(size=n) < missing, name] = np.nan
    if constant_column:
        X["constant"] = 1.0
    if leak:
        X["target_copy"] = copy
    y = pd.Series(target, name="y")
    if return_X_y:
        return X, y
    categorical = [c for c in X.columns if c.startswith("cat")]
    return Bunch(
        data=X,
        target=y,
        frame=pd.concat([X, y], axis=1),
        categorical_columns=categorical,
        high_cardinality_columns=high,
        informative_columns=informative,
        DESCR=f"mixed table: {n_numeric} numeric, {n_categorical} categorical "
        f"columns and a date; {task} target",
    )


# -- real columns, known structure -------------------------------------------------
# Columns of the tables scikit-learn bundles, chosen so that no two of them are
# near copies (Spearman correlation below 0.85): a near copy of a block column
# would let a model use either one, and no partition could be called the truth.
_SEMI_SYNTHETIC_TABLES = {
    "diabetes": (
        "load_diabetes",
        ["age", "sex", "bmi", "bp", "s1", "s3", "s4", "s5", "s6"],
    ),
    "wine": (
        "load_wine",
        [
            "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium",
            "total_phenols", "nonflavanoid_phenols", "proanthocyanins",
            "color_intensity", "hue", "od280/od315_of_diluted_wines", "proline",
        ],
    ),
    "breast_cancer": (
        "load_breast_cancer",
        [
            "mean radius", "mean texture", "mean smoothness", "mean compactness",
            "mean concave points", "mean symmetry", "mean fractal dimension",
            "radius error", "texture error", "smoothness error", "compactness error",
            "concave points error", "symmetry error",
        ],
    ),
}


def _ranks(reference, X):
    """``2 F_j(x_j) - 1`` for every column, F_j the ECDF of column j of reference."""
    ref = np.sort(np.asarray(reference, dtype=np.float64), axis=0)
    n = ref.shape[0]
    U = np.empty_like(X)
    for j in range(X.shape[1]):
        lo = np.searchsorted(ref[:, j], X[:, j], side="left")
        hi = np.searchsorted(ref[:, j], X[:, j], side="right")
        U[:, j] = (lo + hi) / n - 1.0
    return U


class RankBlockFunction(BlockFunction):
    """A :class:`BlockFunction` of the columns' ranks in a reference table.

    Every column is first mapped to ``2 F_j(x_j) - 1`` in [-1, 1], with
    ``F_j`` the empirical distribution function of column j in
    ``reference``; the blocks then act on these values, scaled by
    ``scales``. The structure is the one of the blocks, whatever the
    marginals of the real columns.

    Parameters
    ----------
    blocks : list of list of int
        The true partition (blocks of columns).
    shapes : list of str
        Shape of each block (see :class:`BlockFunction`).
    coefs : list of float
        Coefficient of each block: its standard deviation on the reference.
    n_features : int
        Number of input columns.
    reference : ndarray of shape (n_rows, n_features)
        The table whose columns define the ranks.
    scales : list of float
        Each block's term is divided by its scale (its standard deviation on
        the reference rows), so that ``coefs`` are standard deviations.
    """

    def __init__(self, blocks, shapes, coefs, n_features, reference, scales):
        super().__init__(blocks, shapes, coefs, n_features)
        self.reference = reference
        self.scales = scales

    def ranks(self, X):
        """Map the columns of X to [-1, 1] by their ranks in ``reference``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input rows.

        Returns
        -------
        U : ndarray of shape (n_samples, n_features)
            ``2 F_j(x_j) - 1`` for every column, with ties at the midpoint.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features}), got {X.shape}."
            )
        return _ranks(self.reference, X)

    def __call__(self, X):
        U = self.ranks(X)
        out = np.zeros(U.shape[0])
        for block, shape, coef, scale in zip(self.blocks, self.shapes, self.coefs, self.scales):
            out += coef * _block_term(shape, U[:, block]) / scale
        return out

    def __repr__(self):
        return "RankBlockFunction(" + super().__repr__()[len("BlockFunction("):]


@validate_params(
    {
        "table": [StrOptions(set(_SEMI_SYNTHETIC_TABLES))],
        "block_sizes": [list, tuple],
        "n_samples": [Interval(Integral, 2, None, closed="left"), None],
        "noise": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_semi_synthetic(table="diabetes", *, block_sizes=(3, 2, 2), n_samples=None,
                        noise=0.1, random_state=None):
    """Real columns of a bundled table and a target of known block structure.

    The columns are those of one of scikit-learn's bundled tables (with their
    real dependence and marginals; no near copies, see below); the target is
    a :class:`RankBlockFunction` of them: blocks of interacting columns of
    the given sizes (the product of their ranks, or ``sin`` of it) plus an
    additive term (``x``, ``x**2`` or ``sin(2x)`` of its rank) for every other
    column. Interaction blocks have standard deviation in [1, 2] and additive
    terms in [0.5, 1], with random signs. The true partition is the blocks
    and the singletons. Models fitted to it show how a grouper fares on the
    structure of a *fitted* model, where correlated columns and rows off the
    data manifold blur the truth.

    Parameters
    ----------
    table : {"diabetes", "wine", "breast_cancer"}, default="diabetes"
        The columns of one of scikit-learn's bundled tables, those with
        Spearman correlation below 0.85 to each other kept: 9 of the 10
        columns of :func:`sklearn.datasets.load_diabetes` (442 rows; ``s2``,
        correlated 0.88 with ``s1``, left out), 12 of the 13 of
        :func:`~sklearn.datasets.load_wine` (178 rows; ``flavanoids`` left
        out) or 13 of the 30 of :func:`~sklearn.datasets.load_breast_cancer`
        (569 rows).
    block_sizes : tuple of int, default=(3, 2, 2)
        Sizes of the interaction blocks (each at least 2), drawn from the
        shuffled columns such that no two columns of a block have Spearman
        correlation of 0.5 or more (a product of strongly dependent columns
        is nearly a function of one of them, which no model fitted to the
        rows can tell from an additive term).
    n_samples : int or None, default=None
        None keeps the rows of the table. An int draws that many rows by a
        smoothed bootstrap: rows of the table resampled with replacement,
        every column with more than 10 distinct values moved by Gaussian
        noise of 0.1 times its standard deviation (the others kept as they
        are), so the rows keep the table's dependence and marginals.
    noise : float, default=0.1
        Standard deviation of Gaussian noise, as a fraction of the standard
        deviation of the function on the rows.
    random_state : int, RandomState instance or None, default=None
        Draws the blocks, their shapes and coefficients, and the noise.

    Returns
    -------
    data : Bunch
        ``data`` (a DataFrame of the real columns), ``target``, ``groups``
        (the true partition, ordered by first column), ``function`` (a
        :class:`RankBlockFunction`, callable and with ``predict``),
        ``feature_names``, ``n_groups`` (of the true partition) and
        ``DESCR``.

    Examples
    --------
    >>> from skdecomp.datasets import make_semi_synthetic
    >>> data = make_semi_synthetic("diabetes", random_state=0)
    >>> data.data.shape, data.n_groups
    ((442, 9), 5)
    """
    import sklearn.datasets

    loader, columns = _SEMI_SYNTHETIC_TABLES[table]
    X = getattr(sklearn.datasets, loader)(as_frame=True).data[columns].astype(np.float64)
    d = X.shape[1]
    sizes = [int(s) for s in block_sizes]
    if any(s < 2 for s in sizes) or sum(sizes) > d:
        raise ValueError(
            f"block_sizes={tuple(block_sizes)!r} must hold sizes of at least 2 that add "
            f"up to at most the {d} columns of table={table!r}."
        )
    rng = check_random_state(random_state)
    values = X.to_numpy()
    # columns of one block are not strongly dependent: a product of two
    # columns correlated 0.8 is nearly a function of one of them, and a model
    # fitted to the rows could not tell it from an additive term
    corr = np.abs(X.corr(method="spearman").to_numpy())
    for _ in range(1000):
        perm = [int(j) for j in rng.permutation(d)]
        blocks, start = [], 0
        for s in sizes:
            blocks.append(sorted(perm[start : start + s]))
            start += s
        if all(corr[np.ix_(b, b)][np.triu_indices(len(b), 1)].max() < 0.5 for b in blocks):
            break
    else:
        raise ValueError(
            f"No blocks of sizes {tuple(sizes)} with Spearman correlation below 0.5 "
            f"within each block were found among the columns of table={table!r}; "
            "use smaller or fewer blocks."
        )
    blocks += [[j] for j in sorted(perm[start:])]
    n_blocks = len(sizes)
    shapes = [("product", "sin_product")[rng.randint(2)] for _ in range(n_blocks)]
    shapes += [_SINGLE[rng.randint(len(_SINGLE))] for _ in blocks[n_blocks:]]
    signs = rng.choice([-1.0, 1.0], size=len(blocks))
    coefs = np.r_[rng.uniform(1.0, 2.0, n_blocks), rng.uniform(0.5, 1.0, len(blocks) - n_blocks)]
    coefs = [float(c) for c in coefs * signs]
    U = _ranks(values, values)
    scales = [float(max(_block_term(shape, U[:, block]).std(), 1e-12))
              for block, shape in zip(blocks, shapes)]
    function = RankBlockFunction(blocks, shapes, coefs, d, values, scales)
    if n_samples is not None:
        rows = values[rng.randint(values.shape[0], size=n_samples)]
        for j in range(d):
            if np.unique(values[:, j]).size > 10:
                rows[:, j] += 0.1 * values[:, j].std() * rng.standard_normal(n_samples)
        values = rows
        X = pd.DataFrame(rows, columns=X.columns)
    y = function(values)
    if noise > 0:
        y = y + noise * y.std() * rng.standard_normal(y.shape[0])
    groups = sorted(blocks, key=min)
    return Bunch(
        data=X,
        target=y,
        groups=groups,
        function=function,
        feature_names=list(columns),
        n_groups=len(groups),
        DESCR=f"{table} columns; blocks {[b for b in blocks[:n_blocks]]}; {function!r}",
    )

