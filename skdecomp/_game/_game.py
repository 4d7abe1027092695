"""The coalition game of a model over groups of columns.

For explained rows x, background rows z and a partition of the columns into
K groups, the value of a coalition S of groups is

    v_x(S) = mean_{z in B} f(x_{G_S}, z_{-G_S}).

:class:`CoalitionGame` holds the model response, the background rows and the
partition, and is the one object that sends hybrid rows to the model: it
builds them at the level of the raw input columns (a pipeline that one-hot
encodes a column sees that column move as one), sends them in chunks bounded
by the working memory, in parallel with joblib when asked, and checks what
the model returns.
"""

# SPDX-License-Identifier: BSD-3-Clause

import copy

import time
import warnings

import numpy as np
import pandas as pd
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from .._config import batch_rows, format_seconds
from .._image import read_images
from .._model import (
    FunctionModel,
    NonFiniteOutputError,
    ResponseFunction,
    non_numeric_columns,
)
from .._result_checks import short_list
from .._table import Table, column_masks, common_dtypes
from .._tree import explainer_attributions, tree_components, tree_interactions
from ._kernels import mean_over_background

__all__ = ["CoalitionGame", "coalition_values", "run_blocks"]


# -- chunked model calls --------------------------------------------------------
def _run_chunk(response, make_data, pairs, n_block, average, describe):
    data = make_data(pairs)
    try:
        preds = np.ascontiguousarray(response(data))
    except NonFiniteOutputError as exc:
        first = int(exc.rows[0])
        where = describe(int(pairs[first // n_block]), first % n_block)
        n_bad = len(np.unique(pairs[np.asarray(exc.rows) // n_block]))
        raise ValueError(
            f"{getattr(response, 'name', 'The model')} returned NaN or infinity "
            f"on {where}"
            + (f" (and on the hybrids of {n_bad - 1} more)" if n_bad > 1 else "")
            + ". Explanations need a finite output wherever explained and "
            "background rows are mixed; make the model return finite values "
            "there (e.g. impute or clip its inputs in a Pipeline), or leave "
            "out the rows that cause it."
        ) from None
    if not average:
        return preds
    return mean_over_background(preds, n_block)


def _run_chunks(response, make_data, chunks, n_block, average, describe):
    return np.concatenate(
        [
            _run_chunk(response, make_data, pairs, n_block, average, describe)
            for pairs in chunks
        ],
        axis=0,
    )


def _default_describe(pair, row):
    return f"block {pair}, row {row}"


def run_blocks(
    response,
    make_data,
    n_pairs,
    n_block,
    *,
    batch_size,
    n_jobs=None,
    average=True,
    progress=None,
    describe=None,
):
    """Model outputs on ``n_pairs`` blocks of ``n_block`` rows each, in chunks.

    Parameters
    ----------
    response : ResponseFunction
    make_data : callable
        ``make_data(pairs)`` returns the ``len(pairs) * n_block`` input rows
        of the blocks ``pairs`` (an int array), block-major.
    n_pairs, n_block : int
    batch_size : int
        Largest number of rows per model call (at least one block).
    n_jobs : int or None
        Joblib workers over chunks; results do not depend on it.
    average : bool, default=True
        Return the mean output of each block instead of every row's.
    progress : str or None
        Show a progress bar with this label.
    describe : callable or None
        ``describe(pair, row)`` names a hybrid row in error messages.

    Returns
    -------
    values : ndarray of shape (n_pairs, n_outputs), or
        (n_pairs * n_block, n_outputs) when ``average=False``.
    """
    if n_pairs == 0:
        raise ValueError("The game needs at least one row and one coalition.")
    describe = _default_describe if describe is None else describe
    n_workers = effective_n_jobs(n_jobs)
    per_chunk = max(1, int(batch_size) // n_block)
    if n_workers > 1:
        # at least one chunk per worker, so that small jobs run in parallel too
        per_chunk = max(1, min(per_chunk, -(-n_pairs // n_workers)))
    starts = range(0, n_pairs, per_chunk)

    def chunk(start):
        return np.arange(start, min(start + per_chunk, n_pairs))

    if n_workers == 1 or len(starts) == 1:
        results = (
            _run_chunk(response, make_data, chunk(s), n_block, average, describe)
            for s in starts
        )
        total = len(starts)
    else:
        # A task takes several chunks, so the model is sent to workers a few
        # times rather than once per chunk; joblib returns tasks in order, so
        # results do not depend on n_jobs or on the backend (e.g. dask).
        per_task = -(-len(starts) // (4 * n_workers))
        tasks = [starts[i : i + per_task] for i in range(0, len(starts), per_task)]
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_run_chunks)(
                response, make_data, [chunk(s) for s in task], n_block, average,
                describe,
            )
            for task in tasks
        )
        total = len(tasks)
    if progress:
        from tqdm.auto import tqdm

        results = tqdm(results, total=total, desc=progress)
    else:
        results = _announced(results, total, n_pairs * n_block,
                             getattr(response, "name", "the model"),
                             n_workers if total > 1 and n_workers > 1 else 1)
    return np.concatenate(list(results), axis=0)


#: a run whose estimate is longer than this many seconds is announced
LONG_RUN_SECONDS = 60.0


def _announced(results, total, n_rows, name, n_workers=1):
    """``results``, with a warning after the first part if the whole looks long.

    The estimate is the time of the first part (one chunk, or one task of
    chunks) times the number of parts over the workers: the measured speed
    of this call.
    """
    start = time.perf_counter()
    for i, part in enumerate(results):
        if i == 0 and total > 1:
            seconds = (time.perf_counter() - start) * total / n_workers
            if seconds > LONG_RUN_SECONDS:
                warnings.warn(
                    f"This call sends {n_rows:,} rows to {name}, about "
                    f"{format_seconds(seconds)} at the speed of its first "
                    f"{n_rows // total:,}. Set verbose=1 for a progress bar; "
                    "fewer rows, a smaller n_samples or fewer methods shorten it.",
                    UserWarning, stacklevel=4,
                )
        yield part


class _Hybrids:
    """Builds the hybrid rows of (explained row, coalition) pairs; picklable."""

    def __init__(self, table, background, cmask_table, n_masks):
        self.table = table
        self.background = background
        self.cmask_table = cmask_table
        self.n_masks = n_masks

    def __call__(self, pairs):
        return self.table.hybrids(
            self.background, pairs // self.n_masks, self.cmask_table[pairs % self.n_masks]
        )


def coalition_values(
    response,
    table,
    background,
    labels,
    masks,
    *,
    batch_size,
    n_jobs=None,
    average=True,
    progress=None,
    row_names=None,
):
    """Coalition values v_x(S) for every explained row and every mask.

    Parameters
    ----------
    response : ResponseFunction
    table : Table of explained rows
    background : Table of background rows
    labels : ndarray of shape (n_features,), group of each column
    masks : ndarray of int64 bitmasks, or bool of shape (n_masks, n_groups),
        the coalitions to evaluate (the boolean form has no limit on the
        number of groups)
    batch_size : int, maximum rows per model call (at least one pair of
        ``background.n_rows`` rows is sent at once)
    n_jobs : int or None, joblib workers over chunks
    average : bool, default=True
        Average over the background rows. When False, return the model
        output at every hybrid, f(x^n_{G_S}, z^m_{-G_S}): the anchored values
        behind the N x N matrices of anchored statistics.
    progress : str or None
        Show a progress bar with this label over the chunks.
    row_names : tuple of str or None
        How to call explained and background rows in error messages.

    Returns
    -------
    values : ndarray of shape (n_rows, n_masks, n_outputs), or
        (n_rows, n_masks, n_background, n_outputs) when ``average=False``.
    """
    masks = np.asarray(masks)
    if not (masks.ndim == 2 and masks.dtype == bool):
        masks = masks.astype(np.int64, copy=False)
    n_rows, n_masks, n_bg = table.n_rows, masks.shape[0], background.n_rows
    cmask_table = column_masks(masks, labels)
    x_name, z_name = row_names or ("explained row", "background row")

    def describe(pair, row):
        cols = np.flatnonzero(cmask_table[pair % n_masks])
        shown = ", ".join(str(c) for c in cols[:8]) + (", ..." if cols.size > 8 else "")
        return (
            f"the hybrid of {x_name} {pair // n_masks} (columns [{shown}]) with "
            f"{z_name} {row} (the other columns)"
        )

    values = run_blocks(
        response,
        _Hybrids(table, background, cmask_table, n_masks),
        n_rows * n_masks,
        n_bg,
        batch_size=batch_size,
        n_jobs=n_jobs,
        average=average,
        progress=progress,
        describe=describe,
    )
    if average:
        return values.reshape(n_rows, n_masks, -1)
    return values.reshape(n_rows, n_masks, n_bg, -1)


# -- the game -------------------------------------------------------------------
def _numeric_part(X):
    if isinstance(X, pd.DataFrame):
        num = X.select_dtypes(include=[np.number])
        return num.to_numpy(dtype=np.float64) if num.shape[1] else None
    X = np.asarray(X)
    if np.issubdtype(X.dtype, np.number):
        return X
    return None


def _take(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]


class CoalitionGame:
    """A fitted model seen as a cooperative game over groups of columns.

    For explained rows x, the background rows z of B and the groups
    G_1..G_K, the value of a coalition S of groups is
    ``v_x(S) = mean_{z in B} f(x_{G_S}, z_{-G_S})``. The game owns the model
    response, the background and the partition, and every model call of the
    explainers, metrics, inspection tools and groupers goes through it: it
    builds the hybrid rows, sends them in chunks bounded by scikit-learn's
    ``working_memory``, runs chunks in parallel with joblib, and raises a
    ValueError naming the rows when the model returns NaN or infinity.

    :class:`Explainer` builds one in :meth:`~Explainer.fit` (``game_``);
    the groupers build one over their sample rows.

    Parameters
    ----------
    response : callable
        The explained outputs: ``response(X)`` returns an array of shape
        (n,) or (n, n_outputs). A plain callable is wrapped so that its
        output is checked like a model's.
    background : ndarray or DataFrame of shape (n_background, n_features)
        The background rows B.
    labels : array-like of int of shape (n_features,)
        Group index of every column.
    group_names : list of str or None, default=None
        Name of every group; None gives ``"g0"``, ``"g1"``, ...
    output_names : list of str or None, default=None
        Name of every output.
    batch_size : int or None, default=None
        Largest number of hybrid rows per model call; None derives it from
        the working memory and the number of columns.
    n_jobs : int or None, default=None
        Joblib workers over chunks of hybrid rows.
    tree : object or None, default=None
        Flattened trees of the model when the tree path applies; explainers
        and anchored statistics then read values from the trees.
    verbose : int, default=0
        Show a progress bar over chunks of model calls when positive.
    background_prediction : ndarray of shape (n_background, n_outputs) or None
        The outputs at the background rows, when already known.
    imputer : PathDependentImputer, ConditionalImputer or None, default=None
        How the absent columns of a coalition are filled (see
        :mod:`._imputation`); None is the marginal game above.
    fill_batches : bool, default=False
        Evaluate enough coalitions at once to fill every model call with
        ``batch_size`` rows, for wide rows such as images, where
        ``batch_size`` is small.
    image_shape : tuple of int or None, default=None
        (H, W) or (H, W, C) when the rows are flattened images: the game
        then also takes the images as they are, shape (n, H, W[, C]).

    Attributes
    ----------
    n_features : int
        Number of input columns.
    n_groups : int
        Number of groups K.
    n_outputs : int
        Number of explained outputs.
    expected_value : ndarray of shape (n_outputs,)
        The value of the empty coalition v_x({}): the mean output over the
        background (marginal), over the sampler's draws with no column known
        (conditional), or the cover-weighted mean of the leaves
        (path-dependent).
    imputation : str
        ``"marginal"``, ``"path_dependent"`` or ``"conditional"``.
    background_prediction : ndarray of shape (n_background, n_outputs)
        The model's outputs at the background rows.
    """

    def __init__(
        self,
        response,
        background,
        labels,
        *,
        group_names=None,
        output_names=None,
        batch_size=None,
        n_jobs=None,
        tree=None,
        verbose=0,
        background_prediction=None,
        imputer=None,
        fill_batches=False,
        image_shape=None,
    ):
        if not isinstance(response, ResponseFunction):
            response = ResponseFunction(FunctionModel(response), "predict")
        self.response = response
        self.background = background
        self.labels = np.asarray(labels, dtype=np.int64)
        self.n_features = int(self.labels.shape[0])
        self.n_groups = int(self.labels.max()) + 1 if self.n_features else 0
        self.group_names = (
            [f"g{k}" for k in range(self.n_groups)]
            if group_names is None
            else [str(g) for g in group_names]
        )
        self.batch_size = batch_rows(self.n_features) if batch_size is None else int(batch_size)
        self.fill_batches = bool(fill_batches)
        self.image_shape = None if image_shape is None else tuple(image_shape)
        self.n_jobs = n_jobs
        self.tree = tree
        self.verbose = verbose
        self.frame = isinstance(background, pd.DataFrame)
        self.dtypes = list(background.dtypes) if self.frame else None
        self.columns = list(background.columns) if self.frame else None
        if background_prediction is None:
            self.check_finite(background, "the background")
            background_prediction = self.predict(background, what="the background")
        self.background_prediction = np.asarray(background_prediction, dtype=np.float64)
        self.imputer = imputer
        base = None if imputer is None else imputer.empty_value(self)
        if base is None:
            base = self.background_prediction.mean(axis=0)
        self.expected_value = base
        self.n_outputs = int(base.shape[0])
        self.output_names = (
            [f"y{o}" for o in range(self.n_outputs)] if output_names is None
            else list(output_names)
        )

    def with_imputer(self, imputer):
        """The same game with the absent columns filled by ``imputer``.

        Everything else is shared, the value of the empty coalition too.

        Parameters
        ----------
        imputer : ConditionalImputer
            The imputer of the copy.

        Returns
        -------
        game : CoalitionGame
            A shallow copy of the game.
        """
        game = copy.copy(self)
        game.imputer = imputer
        return game

    @property
    def imputation(self):
        """The imputation's name: "marginal", "path_dependent" or "conditional"."""
        return "marginal" if self.imputer is None else self.imputer.name

    @property
    def anchored(self):
        """Whether values are means over background rows (the marginal game).

        Only then do hybrid rows of one explained and one background row, and
        the N x N anchored matrices built from them, exist.
        """
        return self.imputer is None

    # -- inputs -----------------------------------------------------------------
    def check_X(self, X, what="X"):
        """X in the form the model was fitted on, checked.

        A DataFrame keeps the background's columns and dtypes; an array
        given for a DataFrame background becomes a DataFrame with those
        columns. Rows with NaN or infinity raise a ValueError when the model
        cannot take them.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to explain.
        what : str, default="X"
            Name of X in error messages.

        Returns
        -------
        X : ndarray or DataFrame of shape (n_samples, n_features)
            The checked rows, in the model's input form.
        """
        if self.image_shape is not None and not isinstance(X, pd.DataFrame):
            # images as they are, or their flattened rows
            X, _ = read_images(X, self.image_shape, what, dtype=self.background.dtype)
        if isinstance(X, pd.DataFrame):
            if X.shape[1] != self.n_features:
                raise ValueError(
                    f"{what} has {X.shape[1]} columns, but the game has "
                    f"{self.n_features}; give rows with the columns of the data "
                    "the explainer was fitted on."
                )
            if self.frame:
                missing = [c for c in self.columns if c not in X.columns]
                if missing:
                    raise ValueError(
                        f"{what} lacks the columns {short_list(missing)} of the data the "
                        "explainer was fitted on."
                    )
                X = X[self.columns]
            else:
                X = X.to_numpy()
        else:
            arr = np.asarray(X)
            if arr.ndim == 1:
                arr = arr[None, :]
            if arr.ndim != 2 or arr.shape[1] != self.n_features:
                raise ValueError(
                    f"{what} has shape {np.shape(X)}; it needs {self.n_features} "
                    "columns, like the data the explainer was fitted on."
                )
            if self.frame:
                try:
                    X = pd.DataFrame(arr, columns=self.columns).astype(
                        dict(zip(self.columns, self.dtypes))
                    )
                except (TypeError, ValueError) as exc:
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                    raise ValueError(
                        f"{what} cannot take the column types of the data the "
                        f"explainer was fitted on ({first}); give a DataFrame "
                        "with the columns and types of that data."
                    ) from exc
            else:
                X = arr
        if X.shape[0] == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={X.shape}) while a "
                "minimum of 1 is required."
            )
        self._check_kinds(X, what)
        self.check_finite(X, what)
        return X

    def _check_kinds(self, X, what):
        """Raise a ValueError where X has text but the background has numbers."""
        if self.frame:
            if not isinstance(X, pd.DataFrame):  # pragma: no cover - made a frame above
                return
            numeric = [
                c for c, dt in zip(self.columns, self.dtypes)
                if pd.api.types.is_numeric_dtype(dt)
            ]
            bad = [c for c in non_numeric_columns(X[numeric]) if c in numeric] if numeric else []
            if bad:
                kinds = sorted({str(X[c].dtype) for c in bad})
                raise ValueError(
                    f"{what} has non-numeric values (dtype {', '.join(kinds)}) in "
                    f"the columns {short_list(bad)}, which hold numbers in the data the "
                    "explainer was fitted on; give rows with the column types of "
                    "that data."
                )
            return
        bg_kind = np.asarray(self.background).dtype.kind
        if bg_kind in "biuf" and non_numeric_columns(X):
            raise ValueError(
                f"{what} has non-numeric values (dtype {np.asarray(X).dtype}), but "
                "the explainer was fitted on numbers; give numeric rows like the "
                "data passed to fit."
            )

    def check_finite(self, X, what="X"):
        """Raise a clear ValueError if X has NaN or infinity the model cannot take.

        Parameters
        ----------
        X : ndarray or DataFrame
            Rows in the model's input form.
        what : str, default="X"
            Name of X in error messages.
        """
        num = _numeric_part(X)
        if num is None:
            return
        num = np.asarray(num, dtype=np.float64)
        bad = ~np.isfinite(num).all(axis=1)
        if not bad.any():
            return
        rows = np.flatnonzero(bad)[:5]
        try:
            self.response(_take(X, rows))
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            model = getattr(self.response, "estimator", self.response)
            raise ValueError(
                f"{what} contains NaN or infinity, which "
                f"{type(model).__name__} cannot take ({first}). Impute or "
                "drop those values, or explain a model that accepts missing "
                "values (e.g. HistGradientBoosting* or a Pipeline with an imputer)."
            ) from exc

    def tables(self, X):
        """Column stores of X and of the background that share category codes.

        Parameters
        ----------
        X : ndarray or DataFrame
            Rows in the model's input form (see :meth:`check_X`).

        Returns
        -------
        table, background : Table
            Column stores of X and of the background.
        """
        if self.frame and isinstance(X, pd.DataFrame):
            dtypes = common_dtypes(self.dtypes, X)
            return Table(X, dtypes), Table(self.background, dtypes)
        return Table(X), Table(self.background)

    # -- model calls --------------------------------------------------------------
    def predict(self, X, what="X"):
        """The explained outputs f(X), shape (n_samples, n_outputs).

        Parameters
        ----------
        X : ndarray or DataFrame
            Rows in the model's input form.
        what : str, default="X"
            Name of X in error messages.

        Returns
        -------
        prediction : ndarray of shape (n_samples, n_outputs)
            The explained outputs of the model at every row.
        """
        try:
            return self.response(X)
        except NonFiniteOutputError as exc:
            rows = np.asarray(exc.rows)
            raise ValueError(
                f"{getattr(self.response, 'name', 'The model')} returned NaN or "
                f"infinity on rows {rows[:10].tolist()} of {what}. Explanations "
                "need a finite output; make the model return finite values "
                "there (e.g. impute or clip its inputs in a Pipeline), or leave "
                "those rows out."
            ) from None

    def hybrid_predictions(self, X, coalitions, *, labels=None, background=None,
                           row_names=None):
        """Model outputs f(x_{G_S}, z_{-G_S}) for every x, S and background row z.

        Parameters
        ----------
        X : ndarray, DataFrame or Table
            Explained rows in the model's input form.
        coalitions : ndarray
            Coalitions as int64 bitmasks, or booleans of shape
            (n_coalitions, n_groups).
        labels : ndarray of int or None, default=None
            Group of every column; None uses the game's partition.
        background : ndarray, DataFrame, Table or None, default=None
            Background rows; None uses the game's.
        row_names : tuple of str or None, default=None
            Names of the explained and background rows in error messages.

        Returns
        -------
        values : ndarray of shape (n_samples, n_coalitions, n_background, n_outputs)
            Model output at every hybrid row.
        """
        if not self.anchored:
            raise ValueError(
                f"Hybrid rows of one explained and one background row exist for "
                f"imputer='marginal' only; this game is {self.imputation}. Use "
                "imputer='marginal' for anchored matrices."
            )
        return self._values(X, coalitions, labels, background, False, row_names)

    def values(self, X, coalitions, *, prediction=None, labels=None):
        """Coalition values v_x(S), shape (n_samples, n_coalitions, n_outputs).

        The empty and the full coalitions are E_B f and f(x), without model
        calls.

        Parameters
        ----------
        X : ndarray or DataFrame
            Explained rows in the model's input form.
        coalitions : ndarray
            Coalitions as int64 bitmasks (at most 62 groups), or booleans of
            shape (n_coalitions, n_groups).
        prediction : ndarray of shape (n_samples, n_outputs) or None, default=None
            The model output f(X), when already known.
        labels : ndarray of int or None, default=None
            Group of every column; None uses the game's partition.

        Returns
        -------
        values : ndarray of shape (n_samples, n_coalitions, n_outputs)
            Coalition value of every coalition at every row.
        """
        coalitions = np.asarray(coalitions)
        lab = self.labels if labels is None else np.asarray(labels, dtype=np.int64)
        K = int(lab.max()) + 1 if lab.size else 0
        if coalitions.ndim == 2 and coalitions.dtype == bool:
            sizes = coalitions.sum(axis=1)
        else:
            coalitions = coalitions.astype(np.int64, copy=False)
            sizes = ((coalitions[:, None] >> np.arange(K)[None, :]) & 1).sum(axis=1)
        if prediction is None and np.any(sizes == K):
            prediction = self.predict(X)
        n_rows = X.n_rows if isinstance(X, Table) else X.shape[0]
        out = np.empty((n_rows, coalitions.shape[0], self.n_outputs))
        out[:, sizes == 0, :] = self.expected_value[None, None, :]
        if np.any(sizes == K):
            out[:, sizes == K, :] = prediction[:, None, :]
        inner = np.flatnonzero((sizes > 0) & (sizes < K))
        # a block of coalitions at a time keeps the column masks small
        block = max(1, self.batch_size * 4 // max(1, self.n_features))
        if self.fill_batches:
            # wide rows (images): enough coalitions to fill every model call
            n_bg = getattr(self.background, "shape", (1,))[0]
            block = max(block, -(-self.batch_size // max(1, n_rows * n_bg)))
        for start in range(0, inner.size, block):
            idx = inner[start : start + block]
            if self.imputer is not None:
                out[:, idx, :] = self.imputer.values(self, X, coalitions[idx], lab)
            else:
                out[:, idx, :] = self._values(X, coalitions[idx], lab, None, True, None)
        return out

    def _values(self, X, coalitions, labels, background, average, row_names):
        table = X if isinstance(X, Table) else None
        bg = background if isinstance(background, Table) else None
        if table is None or bg is None:
            t, b = self.tables(X if table is None else self.background)
            table = t if table is None else table
            if bg is None:
                bg = b if background is None else Table(
                    background, self.dtypes if self.frame else None
                )
        return coalition_values(
            self.response,
            table,
            bg,
            self.labels if labels is None else labels,
            coalitions,
            batch_size=self.batch_size,
            n_jobs=self.n_jobs,
            average=average,
            progress="model calls" if self.verbose else None,
            row_names=row_names,
        )

    def mean_predictions(self, make_data, n_pairs, n_block, describe=None):
        """Mean model output over blocks of rows built by ``make_data``.

        Parameters
        ----------
        make_data : callable
            ``make_data(pairs)`` returns the input rows of the blocks
            ``pairs``, ``n_block`` rows per block, block-major.
        n_pairs, n_block : int
            Number of blocks and rows per block.
        describe : callable or None, default=None
            ``describe(pair, row)`` names a row in error messages.

        Returns
        -------
        values : ndarray of shape (n_pairs, n_outputs)
            Mean model output over the rows of every block.
        """
        return run_blocks(
            self.response, make_data, n_pairs, n_block, batch_size=self.batch_size,
            n_jobs=self.n_jobs, describe=describe,
        )

    # -- the tree path --------------------------------------------------------------
    def tree_components(self, X):
        """All 2**K components F_U(x) from the trees, (n_rows, n_outputs, 2**K).

        Parameters
        ----------
        X : ndarray or DataFrame
            Explained rows in the model's input form.

        Returns
        -------
        components : ndarray of shape (n_rows, n_outputs, 2**n_groups)
            F_U(x) for every bitmask U; F_{} is the expected value.
        """
        if self.imputation == "path_dependent":
            from .._tree import path_dependent_components

            return path_dependent_components(
                self.tree, X, self.labels, self.n_groups, n_jobs=self.n_jobs
            )
        return tree_components(
            self.tree, X, self.background, self.labels, self.n_groups, n_jobs=self.n_jobs
        )

    def tree_attributions(self, X, weights):
        """Exact attributions from the trees, in the Explainer's layout.

        Parameters
        ----------
        X : ndarray or DataFrame
            Explained rows in the model's input form.
        weights : dict
            Name -> size weights of shape (n_groups + 1,).

        Returns
        -------
        attributions : dict
            Name -> ndarray of shape (n_rows, n_groups), or
            (n_rows, n_groups, n_outputs) for several outputs.
        """
        if self.imputation == "path_dependent":
            from .._tree import path_dependent_attributions

            phi = path_dependent_attributions(
                self.tree, X, self.labels, self.n_groups, weights, n_jobs=self.n_jobs
            )
            out = {}
            for m, p in phi.items():
                p = np.moveaxis(p, 1, -1)
                out[m] = p[..., 0] if p.shape[-1] == 1 else p
            return out
        return explainer_attributions(
            self.tree, X, self.background, self.labels, self.n_groups, weights,
            n_jobs=self.n_jobs,
        )

    def tree_interactions(self, X, weight, order):
        """Interaction index terms of order up to 3 from the trees, leaf by leaf.

        Parameters
        ----------
        X : ndarray or DataFrame
            Explained rows in the model's input form.
        weight : callable
            The index's weight, from the index registry.
        order : int
            The largest number of groups in a term (1 to 3).

        Returns
        -------
        values : ndarray of shape (n_rows, n_terms, n_outputs)
            The index value of every term at every row.
        terms : list of tuple of int
            The terms, the empty one first.
        """
        if self.imputation == "path_dependent":
            from .._tree import path_dependent_interactions

            return path_dependent_interactions(
                self.tree, X, self.labels, self.n_groups, weight, order,
                n_jobs=self.n_jobs,
            )
        return tree_interactions(
            self.tree, X, self.background, self.labels, self.n_groups, weight, order,
            n_jobs=self.n_jobs,
        )

    def with_partition(self, labels, group_names=None):
        """The same model and background over another partition of the columns.

        Parameters
        ----------
        labels : array-like of int of shape (n_features,)
            Group of every column.
        group_names : list of str or None, default=None
            Names of the groups.

        Returns
        -------
        game : CoalitionGame
            A new game; the model and background are shared, not copied.
        """
        game = object.__new__(CoalitionGame)
        game.__dict__.update(self.__dict__)
        game.labels = np.asarray(labels, dtype=np.int64)
        game.n_groups = int(game.labels.max()) + 1 if game.labels.size else 0
        game.group_names = (
            [f"g{k}" for k in range(game.n_groups)]
            if group_names is None
            else [str(g) for g in group_names]
        )
        return game

    def __repr__(self):
        return (
            f"CoalitionGame(n_features={self.n_features}, n_groups={self.n_groups}, "
            f"n_background={self.background.shape[0]}, n_outputs={self.n_outputs}, "
            f"tree={'yes' if self.tree is not None else 'no'}, "
            f"imputation={self.imputation!r})"
        )
