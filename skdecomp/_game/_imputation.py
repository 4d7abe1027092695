"""How a coalition's absent columns are filled: the imputation of the game.

The value of a coalition S of groups at a row x is the model's expected
output when only the columns of S are known. Three imputations give three
games (Fumagalli et al., "Unifying feature-based explanations with functional
ANOVA and cooperative game theory", AISTATS 2025):

``"marginal"``
    ``v_x(S) = E_Z f(x_S, Z_-S)``: the absent columns from background rows,
    independently of x_S (interventional; the default).
``"path_dependent"``
    Tree ensembles only: each tree follows its splits on the columns of S and
    weighs both children of any other split by their training cover (the
    game of TreeSHAP's default, Lundberg et al., Nature Machine Intelligence
    2020). No background.
``"conditional"``
    ``v_x(S) = E[f(X) | X_S = x_S]``: the absent columns drawn from a
    conditional sampler fitted on the data (Aas, Jullum and Løland,
    Artificial Intelligence 2021).

Every explainer is a weighting of the Möbius components of the game, for any
imputation, so the methods, metrics and groupers work unchanged on top of
:class:`CoalitionGame`, which holds one of the imputers below.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils import check_random_state

from .._table import column_masks

__all__ = [
    "IMPUTERS",
    "ConditionalImputer",
    "PathDependentImputer",
    "check_imputer",
    "check_sampler",
    "checked_draws",
    "make_imputer",
    "numeric_rows",
]

#: The imputations by name.
IMPUTERS = ("marginal", "path_dependent", "conditional")

def _is_sampler(obj):
    return callable(getattr(obj, "fit", None)) and callable(getattr(obj, "sample", None))


def check_sampler(sampler):
    """The sampler, or a TypeError when it is not a sampler instance.

    Parameters
    ----------
    sampler : object
        An object with ``fit(X)`` and ``sample(X, known, n_draws,
        random_state)``.

    Returns
    -------
    sampler : object
        The sampler passed.
    """
    if isinstance(sampler, type):
        name = sampler.__name__
        raise TypeError(
            f"The conditional sampler must be an instance, but the class {name} "
            f"was passed; pass an instance, e.g. {name}()."
        )
    if not _is_sampler(sampler):
        raise TypeError(
            "A conditional sampler needs fit(X) and sample(X, known, n_draws, "
            f"random_state) methods; got {type(sampler).__name__}."
        )
    return sampler


def _read_only(a):
    """A read-only copy of an array, for a user's sampler."""
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def _calling(sampler, method, *args, **kwargs):
    """``sampler.<method>(*args)``; writing into the (read-only) input is refused."""
    try:
        return getattr(sampler, method)(*args, **kwargs)
    except ValueError as exc:
        if "read-only" not in str(exc):
            raise
        fix = ("return a new array (e.g. draws = np.repeat(X[:, None, :], n_draws, "
               "axis=1), then fill its unknown cells), or copy X first "
               "(X = np.array(X))" if method == "sample"
               else "copy X before changing it (X = np.array(X))")
        raise ValueError(
            f"{type(sampler).__name__}.{method}: the sampler wrote into its input "
            f"({exc}); the arrays a conditional sampler is given are read-only: "
            f"{fix}."
        ) from exc


def checked_draws(sampler, X, known, n_draws, random_state):
    """The sampler's draws of the unknown cells of X, checked against its contract.

    Every conditional path draws through this function. The sampler gets
    read-only copies of ``X`` and ``known``: one that writes into its input
    is refused with a clear message (see ``_calling``). Its draws must be
    numbers of shape (n_rows, n_draws, n_features), finite in the cells it
    draws; the known cells are set to the row's values (a sampler that
    leaves them as drawn is corrected).

    Parameters
    ----------
    sampler : object
        A fitted sampler with ``sample(X, known, n_draws, random_state)``.
    X : ndarray of shape (n_rows, n_features)
        Float rows whose known cells are conditioned on.
    known : ndarray of bool, shape (n_rows, n_features) or (n_features,)
        True for the conditioning cells.
    n_draws : int
        Draws per row.
    random_state : int, RandomState instance or None
        Passed to the sampler.

    Returns
    -------
    draws : ndarray of shape (n_rows, n_draws, n_features)
        Float draws, equal to X on its known cells.
    """
    X = np.asarray(X, dtype=np.float64)
    known = np.broadcast_to(np.asarray(known, dtype=bool), X.shape)
    who = f"{type(sampler).__name__}.sample"
    contract = ("a conditional sampler's sample(X, known, n_draws, random_state) "
                "returns an array of shape (n_rows, n_draws, n_features)")
    expected = (X.shape[0], int(n_draws), X.shape[1])
    raw = _calling(sampler, "sample", _read_only(X), _read_only(known), n_draws,
                   random_state=random_state)
    try:
        draws = np.asarray(raw)
    except ValueError:  # ragged nested lists
        raise ValueError(
            f"{who} returned draws that are not an array (ragged sequences of "
            f"{type(raw).__name__}); {contract} = {expected}."
        ) from None
    if draws.shape != expected:
        if (draws.ndim == 3 and draws.shape[0] == expected[0]
                and draws.shape[2] == expected[2]):
            got = draws.shape[1]
            problem = (f"returned {got} draw{'' if got == 1 else 's'} per row, but "
                       f"n_draws={expected[1]} were asked for")
        else:
            problem = f"returned draws of shape {draws.shape}"
        raise ValueError(f"{who} {problem}; {contract} = {expected}.")
    if draws.dtype.kind not in "biuf":
        converted = None
        if draws.dtype.kind == "O":
            try:
                converted = draws.astype(np.float64)
            except (TypeError, ValueError):
                pass
        if converted is None:
            raise TypeError(
                f"{who} returned draws of dtype {draws.dtype}, not numbers; a "
                "conditional sampler draws numbers in the columns' own encoding, "
                "so return a float array (encode categories as numbers before "
                "the model)."
            )
        draws = converted
    draws = draws.astype(np.float64, copy=False)
    draws = np.where(known[:, None, :], X[:, None, :], draws)
    bad = ~np.isfinite(draws)
    bad &= ~known[:, None, :]  # the sampler answers for what it drew only
    if bad.any():
        row, draw, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{who} returned {int(bad.sum())} NaN or infinite draws (the first in "
            f"row {row}, draw {draw}, column {col}); a conditional sampler must "
            "draw finite values: fix the sampler, or use a built-in one such as "
            "GaussianCopulaSampler()."
        )
    return draws


def check_imputer(imputer):
    """The imputation's name and the user's sampler (or None).

    Parameters
    ----------
    imputer : {"marginal", "path_dependent", "conditional"} or sampler
        A sampler is an object with ``fit(X)`` and
        ``sample(X, known, n_draws, random_state)``; it stands for
        ``"conditional"`` with that sampler.

    Returns
    -------
    name : str
    sampler : object or None
    """
    if isinstance(imputer, str):
        if imputer not in IMPUTERS:
            raise ValueError(
                f"imputer={imputer!r} is not an imputation; choose one of "
                f"{', '.join(repr(i) for i in IMPUTERS)}, or pass a conditional "
                "sampler with fit(X) and sample(X, known, n_draws, random_state)."
            )
        return imputer, None
    if _is_sampler(imputer):
        return "conditional", check_sampler(imputer)
    raise TypeError(
        f"imputer must be one of {', '.join(repr(i) for i in IMPUTERS)} or a "
        "conditional sampler with fit(X) and sample(X, known, n_draws, "
        f"random_state) methods; got {type(imputer).__name__}."
    )


def numeric_rows(X, what="X"):
    """X as a float64 array for a conditional sampler, or a clear error."""
    if isinstance(X, pd.DataFrame):
        # bool columns are numbers 0 and 1, as in a numpy bool array
        bad = [c for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c].dtype)
                                            or pd.api.types.is_bool_dtype(X[c].dtype))]
        if bad:
            shown = ", ".join(repr(c) for c in bad[:5]) + (
                f" and {len(bad) - 5} more" if len(bad) > 5 else "")
            raise ValueError(
                f"imputer='conditional' draws numbers, but {what} has "
                f"non-numeric columns ({shown}); encode them as numbers before "
                "the model (e.g. ordinal codes), pass a sampler that handles "
                "them, or use imputer='marginal'."
            )
        arr = X.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    else:
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            raise ValueError(
                f"imputer='conditional' draws numbers, but {what} has dtype "
                f"{arr.dtype}; give numeric rows, pass a sampler that handles "
                "them, or use imputer='marginal'."
            )
        arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(
            f"imputer='conditional' fits its sampler on {what}, which holds NaN "
            "or infinity; impute or drop those values first, or use "
            "imputer='marginal'."
        )
    return arr


class PathDependentImputer:
    """The cover-weighted game of a tree ensemble (no background).

    Parameters
    ----------
    tree : TreeModel
        The flattened trees, with their training cover.
    """

    name = "path_dependent"

    def __init__(self, tree):
        from .._tree import path_dependent_expected_value

        self.tree = tree
        self.expected_value = np.asarray(
            path_dependent_expected_value(tree), dtype=np.float64
        )

    def empty_value(self, game):
        """v_x({}), the same at every row: the cover-weighted mean output."""
        return self.expected_value

    def values(self, game, X, coalitions, labels):
        """v_x(S) for the given coalitions, shape (n_rows, n_masks, n_outputs)."""
        from .._tree import path_dependent_values

        return path_dependent_values(self.tree, X, labels, coalitions, n_jobs=game.n_jobs)


class _Draws:
    """Model input rows of (explained row, coalition) pairs, drawn; picklable.

    For a pair, ``n_draws`` rows hold the row's known columns and draws of
    the others from the sampler. The sampler's draws for a row depend on
    the row, its known columns and the seed alone, so a coalition value
    does not depend on the rows and coalitions it is computed with, nor on
    the chunks the model calls are sent in.
    """

    def __init__(self, x, cmasks, sampler, n_draws, seed, columns, dtypes):
        self.x = x
        self.cmasks = cmasks
        self.sampler = sampler
        self.n_draws = n_draws
        self.seed = seed
        self.columns = columns
        self.dtypes = dtypes

    def __call__(self, pairs):
        n_masks = self.cmasks.shape[0]
        x = self.x[pairs // n_masks]
        known = self.cmasks[pairs % n_masks]
        draws = checked_draws(self.sampler, x, known, self.n_draws, self.seed)
        data = draws.reshape(-1, x.shape[1])
        if self.columns is not None:
            data = pd.DataFrame(data, columns=self.columns)
            try:
                data = data.astype(dict(zip(self.columns, self.dtypes)))
            except (TypeError, ValueError):
                pass  # float draws of an integer column stay floats
        return data


#: Draws of the value of the empty coalition, at least (model rows, once).
EMPTY_DRAWS = 4096


class ConditionalImputer:
    """Conditional expectations ``E[f(X) | X_S = x_S]`` from a sampler.

    Parameters
    ----------
    sampler : object
        A fitted conditional sampler (``sample(X, known, n_draws,
        random_state)``).
    n_draws : int
        Draws per explained row and coalition.
    seed : int
        Seed of the draws.
    """

    name = "conditional"

    def __init__(self, sampler, n_draws, seed):
        self.sampler = sampler
        self.n_draws = int(n_draws)
        self.seed = int(seed)

    @classmethod
    def fit(cls, sampler, X, n_draws, random_state):
        """Fit a clone of ``sampler`` (None: the default) on the rows of X.

        The sampler is checked with :func:`check_sampler` and fitted on a
        read-only float copy of X; its draws are checked with
        :func:`checked_draws`.
        """
        from ._samplers import GaussianCopulaSampler

        sampler = GaussianCopulaSampler() if sampler is None else check_sampler(sampler)
        data = numeric_rows(X, "the data given to fit")
        try:
            sampler = clone(sampler)
        except TypeError:
            import copy

            sampler = copy.deepcopy(sampler)
        data.setflags(write=False)  # a copy of X: the sampler must not write into it
        _calling(sampler, "fit", data)
        seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
        return cls(sampler, n_draws, int(seed))

    def halves(self):
        """Two imputers that split the draws in two independent halves.

        ``n_draws // 2`` and the rest, with seeds of their own: their values
        are independent estimates, and the product of two of them an
        unbiased estimate of a square (see ``AnchoredStatistics``).
        """
        first = self.n_draws // 2
        # a seed drawn from the seed, not seed + 1, which another fit may use
        second = np.random.RandomState(self.seed).randint(np.iinfo(np.int32).max)
        return [ConditionalImputer(self.sampler, first, self.seed),
                ConditionalImputer(self.sampler, self.n_draws - first, int(second))]

    def empty_value(self, game):
        """v_x({}): the mean output over the sampler's draws with no column known.

        The draws of a row with no known column do not depend on the row, so
        this is the same at every row, and the game's values add up to
        ``f(x) - v({})`` under the sampler's own distribution. It is one
        value for all rows, so it takes at least ``EMPTY_DRAWS`` draws: its
        error would shift every row's explanation alike.
        """
        x = numeric_rows(game.background[:1] if not isinstance(game.background, pd.DataFrame)
                         else game.background.iloc[:1], "the background")
        none = np.zeros((1, game.n_groups), dtype=bool)
        imputer = self if self.n_draws >= EMPTY_DRAWS else ConditionalImputer(
            self.sampler, EMPTY_DRAWS, self.seed)
        return imputer.values(game, x, none, game.labels)[0, 0]

    def values(self, game, X, coalitions, labels):
        """v_x(S) for the given coalitions, shape (n_rows, n_masks, n_outputs)."""
        from ._game import run_blocks

        x = numeric_rows(X if not hasattr(X, "rows") else X.rows(np.arange(X.n_rows)))
        cmasks = column_masks(coalitions, labels)
        make = _Draws(x, cmasks, self.sampler, self.n_draws, self.seed,
                      game.columns, game.dtypes)
        n_masks = cmasks.shape[0]

        def describe(pair, row):
            return (f"draw {row} for explained row {pair // n_masks} given the "
                    f"columns {np.flatnonzero(cmasks[pair % n_masks])[:8].tolist()}")

        values = run_blocks(
            game.response, make, x.shape[0] * n_masks, self.n_draws,
            batch_size=game.batch_size, n_jobs=game.n_jobs, describe=describe,
            progress="model calls" if game.verbose else None,
        )
        return values.reshape(x.shape[0], n_masks, -1)


def make_imputer(imputer, algorithm, estimator, response, background, X,
                 random_state, *, image=False, method=None):
    """The imputer of a game, its tree model and the algorithm's description.

    Parameters
    ----------
    imputer : str or sampler
        The ``imputer`` parameter (see :func:`check_imputer`).
    algorithm : {"auto", "tree", "model_agnostic"}
    estimator : fitted estimator
    response : ResponseFunction
    background : ndarray or DataFrame
        The background rows; under ``"conditional"`` their number is the
        number of draws per coalition.
    X : ndarray or DataFrame
        The data given to ``fit``: the conditional sampler is fitted on it.
    random_state : int, RandomState or None
        Seeds the conditional draws.
    image : bool, default=False
        Whether the game explains images against a baseline.
    method : str or None, default=None
        The explainer's method, for its checks.

    Returns
    -------
    imputer : PathDependentImputer, ConditionalImputer or None
        None for the marginal game.
    tree : TreeModel or None
        The trees, when the game reads them.
    algorithm_ : str
    """
    from .._tree import select_algorithm

    name, sampler = check_imputer(imputer)
    if name != "marginal":
        if image:
            raise ValueError(
                f"imputer={name!r} cannot be combined with baseline=...: an image "
                "is explained against one baseline image, which is the marginal "
                "game; use imputer='marginal' (the default)."
            )
        if method == "integrated_gradients":
            raise ValueError(
                "method='integrated_gradients' moves along straight paths from "
                f"the background rows and has no {name} form; use "
                "imputer='marginal' or another method."
            )
    if name == "conditional":
        if algorithm == "tree":
            raise ValueError(
                "algorithm='tree' reads the marginal or path-dependent game from "
                "the trees, but imputer='conditional' evaluates the model on "
                "drawn rows; use algorithm='auto' or 'model_agnostic'."
            )
        imp = ConditionalImputer.fit(sampler, X, background.shape[0], random_state)
        return imp, None, "model_agnostic (conditional imputation)"
    if name == "path_dependent" and algorithm == "model_agnostic":
        raise ValueError(
            "imputer='path_dependent' is the game of the fitted trees and their "
            "training cover, read from the trees; use algorithm='auto' or 'tree'."
        )
    tree, algorithm_ = select_algorithm(algorithm, estimator, response, background)
    if name == "marginal":
        return None, tree, algorithm_
    if tree is None:
        reason = algorithm_.partition("(")[2].rstrip(")") or "it is not a tree model"
        raise ValueError(
            "imputer='path_dependent' needs a tree ensemble on the tree path "
            "(scikit-learn trees, forests and gradient boosting, XGBoost, "
            f"LightGBM, CatBoost), but this model has none: {reason}. Use "
            "imputer='marginal' or 'conditional' for this model."
        )
    return PathDependentImputer(tree), tree, algorithm_
