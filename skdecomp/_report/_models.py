"""The models the report fits, and the model files it loads."""

# SPDX-License-Identifier: BSD-3-Clause

import functools
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ._common import HUGE_VALUE, PICKLE_SUFFIXES, DataError
from ._table import _names, _too_large, is_classification


# -- types a model file may hold ------------------------------------------------------
# Plain builtins skops needs for containers and scalars. Only types: a file that
# names a builtin callable (exec, eval, getattr, __import__, open, ...) is refused.
BUILTIN_TYPES = (
    "builtins.bool",
    "builtins.bytearray",
    "builtins.bytes",
    "builtins.complex",
    "builtins.dict",
    "builtins.float",
    "builtins.frozenset",
    "builtins.int",
    "builtins.list",
    "builtins.set",
    "builtins.slice",
    "builtins.str",
    "builtins.tuple",
    "collections.OrderedDict",
    "collections.defaultdict",
)
# Building blocks of fitted scikit-learn models that are not estimators themselves.
SKLEARN_PARTS = (
    "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.neighbors._ball_tree.BallTree",
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.tree._tree.Tree",
    "sklearn.utils._bunch.Bunch",
    "scipy.interpolate._bsplines.BSpline",
)


def _type_name(cls):
    return f"{cls.__module__}.{cls.__name__}"


def _classes_in(module, base=object, exclude=()):
    """Names of the classes defined in ``module`` that derive from ``base``."""
    return {
        _type_name(obj)
        for name, obj in vars(module).items()
        if isinstance(obj, type)
        and obj.__module__ == module.__name__
        and issubclass(obj, base)
        and name not in exclude
    }


def _functions_in(path):
    """Names of the functions an skops file holds (its ``FunctionNode`` entries)."""
    import json

    try:
        with zipfile.ZipFile(path) as archive:
            schema = json.loads(archive.read("schema.json"))
    except (KeyError, ValueError, OSError, zipfile.BadZipFile):
        return set()
    found = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("__loader__") == "FunctionNode":
                found.add(f"{node.get('__module__')}.{node.get('__class__')}")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


@functools.lru_cache(maxsize=1)
def allowed_model_types():
    """Types the command line lets a model file hold.

    Scikit-learn estimators and transformers and the parts of fitted models,
    NumPy and SciPy array types, and the plain builtins skops uses for
    containers. Never a function: skops may call a type named in a file, so a
    callable such as ``builtins.exec`` would run code.

    Returns
    -------
    types : frozenset of str
        Fully qualified type names, as :func:`skops.io.get_untrusted_types`
        lists them.
    """
    import scipy.sparse
    import sklearn._loss.link
    import sklearn._loss.loss
    import sklearn.gaussian_process.kernels as kernels
    import sklearn.metrics._dist_metrics as dist_metrics
    from sklearn.utils import all_estimators

    names = set(BUILTIN_TYPES) | set(SKLEARN_PARTS)
    names |= {
        _type_name(cls) for _, cls in all_estimators() if cls.__module__.startswith("sklearn.")
    }
    names |= _classes_in(kernels, kernels.Kernel)
    # a distance given as a Python function (PyFuncDistance) is left out
    names |= _classes_in(dist_metrics, exclude=("PyFuncDistance32", "PyFuncDistance64"))
    names |= _classes_in(sklearn._loss.loss) | _classes_in(sklearn._loss.link)
    names |= {"numpy.dtype", "numpy.ndarray"}
    names |= {
        _type_name(t) for t in set(np.sctypeDict.values()) if t.__module__ == "numpy"
    }
    names |= {
        f"numpy.random.{name}"
        for name in dir(np.random)
        if isinstance(getattr(np.random, name), type)
        and issubclass(getattr(np.random, name), (np.random.BitGenerator,
                                                    np.random.Generator,
                                                    np.random.RandomState))
    }
    sparse_bases = tuple(
        b for b in (getattr(scipy.sparse, "spmatrix", None),
                    getattr(scipy.sparse, "sparray", None)) if b is not None
    )
    names |= {
        _type_name(obj)
        for obj in vars(scipy.sparse).values()
        if isinstance(obj, type) and issubclass(obj, sparse_bases)
    }
    return frozenset(names)


# -- models ----------------------------------------------------------------------------
ESTIMATORS = ("hgb", "rf", "linear", "mlp")
#: categorical columns with at most this many levels are one-hot encoded (linear, mlp)
ONE_HOT_MAX_LEVELS = 20
#: levels seen in fewer rows are pooled into one (tree models)
RARE_LEVEL_ROWS = 5
#: most levels a tree model tells apart (HistGradientBoosting allows 255)
MAX_TREE_LEVELS = 250


def check_estimator(estimator):
    """Refuse an unknown ``--estimator`` name before any model work.

    Parameters
    ----------
    estimator : str
        The model to fit.

    Returns
    -------
    estimator : str
        The same name.
    """
    if estimator not in ESTIMATORS:
        raise DataError(
            f"unknown estimator {estimator!r}; choose among {list(ESTIMATORS)}."
        )
    return estimator


def _target_encoder(classification, random_state):
    """A TargetEncoder with seeded cross fitting, for the installed scikit-learn."""
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.preprocessing import TargetEncoder

    if TargetEncoder().get_params().get("shuffle") == "deprecated":
        split = StratifiedKFold if classification else KFold
        return TargetEncoder(cv=split(5, shuffle=True, random_state=random_state))
    return TargetEncoder(shuffle=True, random_state=random_state)


def make_model(kind, X, y, random_state=None):
    """A pipeline that encodes the columns as the chosen model needs, then the model.

    Every encoding is dense and works column by column, so the explainer
    explains the table's own columns through the pipeline, and the tree
    models keep the exact tree path.

    - ``"hgb"``: categorical columns become category codes that the
      gradient-boosted trees split natively; missing values stay missing.
    - ``"rf"``: categorical columns become category codes (missing: -1);
      missing numbers become the median.
    - ``"linear"`` and ``"mlp"``: categorical columns with at most
      :data:`ONE_HOT_MAX_LEVELS` levels are one-hot encoded, those with more
      are target encoded (each level becomes the mean target of the rows
      that have it, cross-fitted); numbers are standardised, missing ones
      replaced by the median.

    In the tree models, levels seen in fewer than :data:`RARE_LEVEL_ROWS`
    rows are pooled, and at most :data:`MAX_TREE_LEVELS` levels are kept.

    Parameters
    ----------
    kind : {"hgb", "rf", "linear", "mlp"}
        The model.
    X : DataFrame
        The table, without the target, as :func:`prepare_table` returns it.
    y : Series
        The target; it decides between classifier and regressor.
    random_state : int or None, default=None
        Seed of the model.

    Returns
    -------
    pipeline : Pipeline
        The unfitted pipeline.
    note : str
        How the columns are encoded, in plain words.
    """
    from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    check_estimator(kind)
    clf = is_classification(y)
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    levels = {c: int(X[c].nunique()) for c in categorical}
    many = [c for c in categorical if levels[c] > ONE_HOT_MAX_LEVELS]
    notes = []
    if kind in ("hgb", "rf"):
        missing = np.nan if kind == "hgb" else -1
        codes = OrdinalEncoder(
            handle_unknown="use_encoded_value", unknown_value=missing,
            encoded_missing_value=missing, min_frequency=RARE_LEVEL_ROWS,
            max_categories=MAX_TREE_LEVELS,
        )
        numbers = "passthrough" if kind == "hgb" else SimpleImputer(strategy="median")
        transformers = [("categorical", codes, categorical)] if categorical else []
        transformers += [("numeric", numbers, numeric)] if numeric else []
        if kind == "hgb":
            cls = HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor
            # early stopping on a tenth of the rows: the defaults overfit small tables
            model = cls(categorical_features=list(range(len(categorical))) or None,
                        learning_rate=0.05, max_iter=300,
                        early_stopping=X.shape[0] >= 200, random_state=random_state)
        else:
            cls = RandomForestClassifier if clf else RandomForestRegressor
            model = cls(n_estimators=100, min_samples_leaf=3, random_state=random_state)
        if categorical:
            notes.append(
                "categorical columns become category codes that the trees split on"
                + (" natively" if kind == "hgb" else "")
                + f"; levels seen in fewer than {RARE_LEVEL_ROWS} rows are pooled"
            )
        if numeric and kind == "rf":
            notes.append("missing numbers are replaced by the column's median")
    else:
        one_hot = [c for c in categorical if c not in many]
        transformers = []
        if one_hot:
            transformers.append((
                "categorical",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                one_hot,
            ))
        if many:
            transformers.append((
                "many_levels",
                make_pipeline(_target_encoder(clf, random_state), StandardScaler()),
                many,
            ))
        if numeric:
            transformers.append((
                "numeric",
                make_pipeline(SimpleImputer(strategy="median"), StandardScaler()),
                numeric,
            ))
        if kind == "linear":
            model = (LogisticRegression(max_iter=1000) if clf
                     else RidgeCV(alphas=np.logspace(-3, 3, 13)))
        else:
            # L-BFGS with a strong L2 penalty: steady on small and wide tables
            mlp = (MLPClassifier if clf else MLPRegressor)(
                hidden_layer_sizes=(64,), solver="lbfgs", alpha=10.0, max_iter=200,
                random_state=random_state,
            )
            model = mlp if clf else TransformedTargetRegressor(
                regressor=mlp, transformer=StandardScaler()
            )
        if one_hot:
            notes.append(f"categorical columns with at most {ONE_HOT_MAX_LEVELS} levels "
                         "are one-hot encoded")
        if many:
            notes.append(
                f"{_names(many)} {'has' if len(many) == 1 else 'have'} more levels "
                f"(up to {max(levels[c] for c in many)}) and "
                f"{'is' if len(many) == 1 else 'are'} target encoded: each level "
                "becomes the mean target of the rows that have it (cross-fitted)"
            )
        if numeric:
            notes.append("numbers are standardised, missing ones replaced by the median")
    pre = ColumnTransformer(transformers, sparse_threshold=0.0)
    if not notes:
        return make_pipeline(pre, model), "All columns are numeric; none needs encoding."
    note = ("Encoding: " + "; ".join(notes) + ". Each column of the table is "
            "explained as it is, through the encoding.")
    return make_pipeline(pre, model), note


def load_model(path):
    """Load a scikit-learn model saved with skops; refuse pickles and foreign types.

    Only the few first bytes are read to recognise a pickle. The types the
    file names are checked against :func:`allowed_model_types` with
    :func:`skops.io.get_untrusted_types` before anything is built, and
    :func:`skops.io.load` is given exactly those types as trusted.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`skops.io.dump`.

    Returns
    -------
    model : estimator
        The loaded model.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such model file; check the path given to --model.")
    if not path.is_file():
        raise DataError(f"--model {path} is not a file; give a model saved with skops.")
    try:
        with open(path, "rb") as f:
            head = f.read(4)
        is_zip = zipfile.is_zipfile(path)  # reads the end of the file only
    except OSError as exc:
        raise DataError(
            f"{path} could not be read ({exc.strerror or exc}); check its permissions."
        ) from exc
    if path.suffix.lower() in PICKLE_SUFFIXES or head[:1] == b"\x80":
        raise DataError(
            f"{path.name} is a pickle file. Loading a pickle can run any code it "
            "contains, so skdecomp refuses it. Convert it where you trust it: "
            "'import joblib, skops.io as sio; sio.dump(joblib.load(\"model.pkl\"), "
            "\"model.skops\")', then pass --model model.skops."
        )
    if head[:2] != b"PK" or not is_zip:
        raise DataError(
            f"{path.name} is not an skops file; save the model with "
            "'skops.io.dump(model, \"model.skops\")'."
        )
    try:
        import skops.io as sio
    except ImportError as exc:  # pragma: no cover - skops is a dependency
        raise DataError("loading models needs skops: pip install skops") from exc
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:
        raise DataError(f"{path.name} is unreadable as an skops file ({exc}).") from exc
    allowed = allowed_model_types()
    # skops trusts NumPy's ufuncs by default, so they are not listed as
    # untrusted; a model file may hold no function at all
    refused = sorted(set(t for t in untrusted if t not in allowed) | _functions_in(path))
    if refused:
        raise DataError(
            f"{path.name} names types the command line does not load: {refused}. "
            "It loads only scikit-learn estimators, NumPy and SciPy arrays and plain "
            "containers, never functions (a function in a model file can run code). "
            "If you trust the file, load it in Python with skops.io.load(path, "
            "trusted=[...]) and explain it with skdecomp.Explainer."
        )
    try:
        return sio.load(path, trusted=list(untrusted))
    except Exception as exc:
        raise DataError(f"{path.name} could not be loaded ({exc}).") from exc


def _huge_columns(X, limit=HUGE_VALUE):
    """Numeric columns holding a finite value of ``limit`` or more, with the largest."""
    out = {}
    for c in X.columns:
        if pd.api.types.is_numeric_dtype(X[c]) and not pd.api.types.is_bool_dtype(X[c]):
            a = np.abs(X[c].to_numpy(dtype=float, na_value=np.nan))
            a = a[np.isfinite(a)]
            if a.size and a.max() >= limit:
                out[c] = float(a.max())
    return out


def check_value_sizes(X, estimator):
    """Refuse values the model the report fits cannot take, before it is fitted.

    ``X`` is the table as :func:`prepare_table` returns it.

    HistGradientBoosting bins the values and takes any finite number; the
    random forest reads its columns as float32 (up to 3.4e38); the linear
    model and the MLP standardise their columns, whose squares overflow
    from ``HUGE_VALUE`` up.
    """
    if estimator == "hgb":
        return
    if estimator == "rf":
        limit = float(np.finfo(np.float32).max)
        why = (f"the random forest reads its columns as 32-bit floats, whose largest "
               f"is {limit:.2g}, so they would become infinite")
    else:
        limit = HUGE_VALUE
        why = (f"{_too_large}, so the model the report fits (which standardises its "
               "columns) and the spread of its predictions would not be numbers")
    huge = _huge_columns(X, limit)
    if not huge:
        return
    names = list(huge)
    one = len(names) == 1
    raise DataError(
        f"{_names(names, 'column', 'columns')} {'holds' if one else 'hold'} values as "
        f"large as {max(huge.values()):.3g}: {why}. Rescale {'it' if one else 'them'} "
        f"(other units, or logarithms), leave {'it' if one else 'them'} out with "
        f"--drop {' '.join(map(str, names[:6]))}, or use --estimator hgb, which "
        "takes such values."
    )
