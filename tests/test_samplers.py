"""Conditional samplers: Gaussian closed forms, contract, reproducibility, errors."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import (
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from skdecomp._game._samplers import GaussianCopulaSampler, KNeighborsSampler

SAMPLERS = [GaussianCopulaSampler, KNeighborsSampler]
P, RHO, N_FIT = 4, 0.8, 2000
# sets of known columns, mixed in one call: every pattern is solved on its own
PATTERNS = [(0,), (1, 3), (0, 1, 2), ()]


def _corr(p=P, rho=RHO):
    C = np.full((p, p), rho)
    np.fill_diagonal(C, 1.0)
    return C


def _gaussian(n, seed, p=P, rho=RHO):
    rng = np.random.default_rng(seed)
    return rng.multivariate_normal(np.zeros(p), _corr(p, rho), n)


def _conditional(C, x, known_cols):
    """Closed-form mean (rows, |U|) and covariance of X_U given X_S = x_S."""
    S = list(known_cols)
    U = [j for j in range(C.shape[0]) if j not in S]
    if not S:
        return np.zeros((len(x), len(U))), C[np.ix_(U, U)]
    B = np.linalg.solve(C[np.ix_(S, S)], C[np.ix_(S, U)])
    return x[:, S] @ B, C[np.ix_(U, U)] - C[np.ix_(U, S)] @ B


def _mask(n, cols, p=P):
    known = np.zeros((n, p), dtype=bool)
    known[:, list(cols)] = True
    return known


@pytest.fixture(scope="module")
def X_fit():
    return _gaussian(N_FIT, seed=0)


@pytest.fixture(scope="module")
def X_rows():
    return _gaussian(200, seed=1)


def _fitted(cls, X):
    return cls().fit(X)


def _draw_count(sampler):
    # the copula's draws are independent; kNN's mean rests on its k neighbours
    if isinstance(sampler, KNeighborsSampler):
        return sampler.n_neighbors_
    return 2000


# -- conditional moments on Gaussian data ------------------------------------------
@pytest.mark.parametrize("cls", SAMPLERS)
def test_conditional_moments_match_the_gaussian_closed_form(cls, X_fit, X_rows):
    sampler = _fitted(cls, X_fit)
    n_draws = _draw_count(sampler)
    blocks = np.array_split(np.arange(len(X_rows)), len(PATTERNS))
    known = np.zeros(X_rows.shape, dtype=bool)
    for rows, cols in zip(blocks, PATTERNS):
        known[np.ix_(rows, cols)] = True
    draws = sampler.sample(X_rows, known, n_draws, random_state=0)
    C = _corr()
    for rows, cols in zip(blocks, PATTERNS):
        U = [j for j in range(P) if j not in cols]
        mean, cov = _conditional(C, X_rows[rows], cols)
        got = draws[rows][:, :, U]
        sd = np.sqrt(np.diag(cov))
        # Standard error of a row's mean: sd / sqrt(n_draws) from the draws
        # (sd / sqrt(k) for kNN, whose mean rests on k rows), plus the error of
        # the fit: an empirical-CDF normal score has standard error
        # sqrt(F(1 - F) / n) / phi(z), 0.028 at z = 0 and 0.06 at z = 2 for
        # n = 2000; 0.04 stands for it (kNN's bias near the edges is of the
        # same size). The RMS over 50 rows of errors of that size stays below
        # 1.5 standard errors.
        se = np.sqrt(sd**2 / n_draws + 0.04**2)
        rms = np.sqrt(((got.mean(axis=1) - mean) ** 2).mean(axis=0))
        assert np.all(rms < 1.5 * se), (cols, rms, se)
        # The variance of n_draws draws has relative standard error
        # sqrt(2 / n_draws) (0.03 for the copula, 0.2 / sqrt(50 rows) = 0.03
        # for kNN with k = 50); 15 % is about five of them.
        ratio = got.var(axis=1).mean(axis=0) / sd**2
        assert np.all(np.abs(ratio - 1.0) < 0.15), (cols, ratio)


@pytest.mark.parametrize("cls", SAMPLERS)
def test_closed_form_coalition_value_of_linear_plus_product(cls, X_fit, X_rows):
    # f(x) = b.x + c x1 x2; E[f | x_S] = b.E[X | x_S] + c (Cov(X1, X2 | S)
    # + E[X1 | x_S] E[X2 | x_S]), known columns entering as their values.
    b, c = np.array([1.0, -0.5, 0.8, 0.3]), 1.5

    def f(X):
        return X @ b + c * X[..., 1] * X[..., 2]

    sampler = _fitted(cls, X_fit)
    spread = f(X_fit).std()
    C = _corr()
    lo, hi = np.quantile(X_fit, [0.01, 0.99], axis=0)
    for cols in [(0,), (1,), (0, 3), (1, 2), (0, 1, 3)]:
        U = [j for j in range(P) if j not in cols]
        mean, cov = _conditional(C, X_rows, cols)
        m = X_rows.copy()
        m[:, U] = mean
        full = np.zeros((P, P))
        full[np.ix_(U, U)] = cov
        exact = m @ b + c * (full[1, 2] + m[:, 1] * m[:, 2])
        draws = sampler.sample(X_rows, _mask(len(X_rows), cols), _draw_count(sampler),
                               random_state=0)
        error = f(draws).mean(axis=1) - exact
        if cls is KNeighborsSampler:
            # kNN does not extrapolate: beyond the extreme fitted values the
            # neighbours all lie on one side (documented). It is held to the
            # rows whose known values lie within the central 98 % of the data;
            # on all rows its error reaches 14 % of the spread here.
            inside = ((X_rows[:, cols] >= lo[list(cols)])
                      & (X_rows[:, cols] <= hi[list(cols)])).all(axis=1)
            assert inside.mean() > 0.9
            error = error[inside]
        rms = np.sqrt(np.mean(error**2))
        assert rms < 0.10 * spread, (cols, rms, spread)


# -- the contract ------------------------------------------------------------------
@pytest.mark.parametrize("cls", SAMPLERS)
def test_shapes_and_known_cells(cls, X_fit, X_rows):
    sampler = _fitted(cls, X_fit)
    known = np.random.default_rng(3).random(X_rows.shape) < 0.5
    draws = sampler.sample(X_rows, known, 7, random_state=0)
    assert draws.shape == (len(X_rows), 7, P)
    assert draws.dtype == np.float64
    cells = np.broadcast_to(known[:, None, :], draws.shape)
    repeated = np.broadcast_to(X_rows[:, None, :], draws.shape)
    assert np.array_equal(draws[cells], repeated[cells])
    assert np.isfinite(draws).all()
    # one mask for every row
    one = sampler.sample(X_rows[:3], np.array([True, False, False, True]), 2, 0)
    assert one.shape == (3, 2, P)
    assert np.array_equal(one[:, :, [0, 3]], np.repeat(X_rows[:3, None][:, :, [0, 3]],
                                                       2, axis=1))
    assert sampler.sample(X_rows[:0], np.zeros((0, P), bool), 3, 0).shape == (0, 3, P)


@pytest.mark.parametrize("cls", SAMPLERS)
def test_all_known_and_none_known(cls, X_fit, X_rows):
    sampler = _fitted(cls, X_fit)
    draws = sampler.sample(X_rows[:5], np.ones((5, P), bool), 4, random_state=0)
    assert np.array_equal(draws, np.repeat(X_rows[:5, None, :], 4, axis=1))
    draws = sampler.sample(X_rows[:5], np.zeros((5, P), bool), 300, random_state=0)
    flat = draws.reshape(-1, P)
    # every value is an observed value of its column
    for j in range(P):
        assert np.isin(flat[:, j], X_fit[:, j]).all()
    if cls is KNeighborsSampler:
        # whole rows of the data: the empirical joint distribution
        rows = {tuple(r) for r in X_fit}
        assert all(tuple(r) in rows for r in flat)
    assert abs(np.corrcoef(flat[:, 0], flat[:, 1])[0, 1] - RHO) < 0.08


@pytest.mark.parametrize("cls", SAMPLERS)
def test_unknown_cells_are_not_read(cls, X_fit, X_rows):
    sampler = _fitted(cls, X_fit)
    known = _mask(10, (0, 2))
    X = X_rows[:10].copy()
    a = sampler.sample(X, known, 5, random_state=0)
    X[:, [1, 3]] = np.nan
    b = sampler.sample(X, known, 5, random_state=0)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("cls", SAMPLERS)
def test_reproducible_with_random_state(cls, X_fit, X_rows):
    sampler = _fitted(cls, X_fit)
    known = np.random.default_rng(5).random(X_rows.shape) < 0.4
    a = sampler.sample(X_rows, known, 5, random_state=7)
    b = sampler.sample(X_rows, known, 5, random_state=7)
    c = sampler.sample(X_rows, known, 5, random_state=8)
    d = sampler.sample(X_rows, known, 5, random_state=np.random.RandomState(7))
    e = clone(sampler).fit(X_fit).sample(X_rows, known, 5, random_state=7)
    assert np.array_equal(a, b) and np.array_equal(a, d) and np.array_equal(a, e)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("cls", SAMPLERS)
def test_draws_of_a_row_do_not_depend_on_the_other_rows(cls, X_fit, X_rows):
    # given the seed, a row's draws depend on its known values and pattern
    # alone: one call, row by row, shuffled or in chunks, all agree
    sampler = _fitted(cls, X_fit)
    X = X_rows[:30]
    known = np.random.default_rng(7).random(X.shape) < 0.5
    whole = sampler.sample(X, known, 6, random_state=3)
    alone = np.concatenate(
        [sampler.sample(X[i:i + 1], known[i:i + 1], 6, random_state=3)
         for i in range(len(X))]
    )
    np.testing.assert_array_equal(whole, alone)
    perm = np.random.default_rng(8).permutation(len(X))
    shuffled = sampler.sample(X[perm], known[perm], 6, random_state=3)
    np.testing.assert_array_equal(shuffled, whole[perm])
    # the unknown cells play no part; another seed gives other draws
    other = X.copy()
    other[~known] = 123.0
    np.testing.assert_array_equal(sampler.sample(other, known, 6, 3), whole)
    assert not np.array_equal(sampler.sample(X, known, 6, 4), whole)


@pytest.mark.parametrize("cls", SAMPLERS)
def test_rows_of_one_call_get_independent_draws(cls, X_fit):
    # rows with different known values have streams of their own: the
    # unknown draws of two rows given nearly the same value are uncorrelated
    sampler = _fitted(cls, X_fit)
    rows = np.zeros((2, P))
    rows[1, 0] = 1e-9
    draws = sampler.sample(rows, _mask(2, (0,)), 2000, random_state=0)
    r = np.corrcoef(draws[0, :, 1], draws[1, :, 1])[0, 1]
    assert abs(r) < 4 / np.sqrt(2000)  # four standard errors of a zero correlation


@pytest.mark.parametrize("cls", SAMPLERS)
def test_memory_blocks_give_the_same_values(cls, X_fit, X_rows):
    sampler = _fitted(cls, X_fit)
    known = _mask(len(X_rows), (0, 2))
    n_draws = 50  # kNN: every neighbour once, so no random pick
    whole = sampler.sample(X_rows, known, n_draws, random_state=0)
    with config_context(working_memory=0.001):  # one row per block
        blocks = sampler.sample(X_rows, known, n_draws, random_state=0)
    if cls is KNeighborsSampler:
        assert np.array_equal(whole, blocks)
    else:
        # the normal draws come in the same order whatever the blocks
        np.testing.assert_allclose(whole, blocks)


def test_copula_keeps_discrete_columns_and_ranges():
    rng = np.random.default_rng(0)
    z = _gaussian(1500, seed=2, p=3, rho=0.7)
    X = np.column_stack([np.round(2 * z[:, 0]), np.exp(z[:, 1]), z[:, 2]])
    sampler = GaussianCopulaSampler().fit(X)
    rows = np.column_stack([rng.normal(size=50) * 3, np.exp(rng.normal(size=50)),
                            rng.normal(size=50) * 5])
    known = rng.random(rows.shape) < 0.5
    draws = sampler.sample(rows, known, 20, random_state=0)
    free = ~np.broadcast_to(known[:, None, :], draws.shape)
    for j in range(3):
        values = draws[..., j][free[..., j]]
        assert np.isin(values, X[:, j]).all()
        assert values.min() >= X[:, j].min() and values.max() <= X[:, j].max()
    # the round trip of a fitted value through its score is exact
    for j in range(3):
        u = ndtr(sampler._scores(X[:, [j]], [j])[:, 0])
        idx = np.floor(u * len(X)).astype(int)
        assert np.array_equal(sampler.quantiles_[idx, j], X[:, j])


def test_kneighbors_takes_all_neighbours_in_order_when_n_draws_is_k():
    X = np.column_stack([np.arange(20.0), 100 + np.arange(20.0)])
    sampler = KNeighborsSampler(n_neighbors=3).fit(X)
    draws = sampler.sample(np.array([[4.2, 0.0]]), np.array([True, False]), 3, 0)
    assert np.array_equal(draws[0, :, 1], [104.0, 105.0, 103.0])
    # with another number of draws: uniformly, with replacement, from the three
    draws = sampler.sample(np.array([[4.2, 0.0]]), np.array([True, False]), 3000, 0)
    values, counts = np.unique(draws[0, :, 1], return_counts=True)
    assert np.array_equal(values, [103.0, 104.0, 105.0])
    assert np.all(np.abs(counts / 3000 - 1 / 3) < 0.04)


def test_kneighbors_breaks_ties_at_random():
    # a binary known column: 1000 rows tie at distance 0; the draws must come
    # from all of them, not from the first n_neighbors in storage order
    rng = np.random.default_rng(0)
    x0 = np.repeat([0.0, 1.0], 1000)
    x1 = np.concatenate([np.sort(rng.normal(size=1000)) for _ in range(2)])
    X = np.column_stack([x0, x1])
    sampler = KNeighborsSampler(n_neighbors=20).fit(X)
    rows = np.array([[0.0, 0.0], [1.0, 0.0]] * 100)
    draws = sampler.sample(rows, np.array([True, False]), 20, random_state=0)
    # mean 0 and sd 1 within each level: the mean of 100 x 20 draws from 20
    # neighbours per call is within 3 / sqrt(20) of 0 in any case, and the
    # first 20 sorted rows would sit near -2.5
    assert abs(draws[0::2, :, 1].mean()) < 3 / np.sqrt(20)
    assert abs(draws[1::2, :, 1].mean()) < 3 / np.sqrt(20)


def test_kneighbors_with_fewer_rows_than_neighbours():
    X = _gaussian(12, seed=4)
    sampler = KNeighborsSampler(n_neighbors=50).fit(X)
    assert sampler.n_neighbors_ == 12
    draws = sampler.sample(X[:2], _mask(2, (0,)), 12, random_state=0)
    assert np.array_equal(np.sort(draws[0, :, 1]), np.sort(X[:, 1]))


@pytest.mark.parametrize("cls", SAMPLERS)
def test_constant_and_duplicated_columns(cls):
    z = _gaussian(300, seed=6, p=2)
    X = np.column_stack([z[:, 0], np.full(300, 3.0), z[:, 0], z[:, 1]])
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        sampler = cls().fit(X)
        draws = sampler.sample(X[:20], _mask(20, (0,)), 10, random_state=0)
        draws_c = sampler.sample(X[:20], _mask(20, (1,)), 10, random_state=0)
    assert np.all(draws[..., 1] == 3.0) and np.all(draws_c[..., 1] == 3.0)
    # the duplicated column follows its twin closely
    assert np.corrcoef(draws[..., 0].ravel(), draws[..., 2].ravel())[0, 1] > 0.9


# -- bad input ---------------------------------------------------------------------
@pytest.mark.parametrize("cls", SAMPLERS)
def test_bad_fit_input(cls):
    with pytest.raises(TypeError, match="numeric"):
        cls().fit(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(TypeError, match=r"non-numeric columns \['c'\]"):
        cls().fit(pd.DataFrame({"a": [1.0, 2.0, 3.0], "c": ["x", "y", "z"]}))
    X = _gaussian(10, seed=0)
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN.*row 3, column 2.*impute"):
        cls().fit(X)
    with pytest.raises(ValueError, match="2-D"):
        cls().fit(np.arange(5.0))
    with pytest.raises(ValueError, match="at least"):
        cls().fit(np.zeros((0, 3)))


def test_bad_parameters():
    with pytest.raises(InvalidParameterError, match="shrinkage"):
        GaussianCopulaSampler(shrinkage=1.0).fit(_gaussian(10, seed=0))
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        KNeighborsSampler(n_neighbors=0).fit(_gaussian(10, seed=0))
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        KNeighborsSampler(n_neighbors=True).fit(_gaussian(10, seed=0))


def test_copula_without_shrinkage_on_duplicated_columns():
    x = (_gaussian(100, seed=0, p=2) > 0).astype(float)
    X = np.column_stack([x[:, 0], x[:, 0], x[:, 1]])
    sampler = GaussianCopulaSampler(shrinkage=0.0).fit(X)
    with pytest.raises(ValueError, match="singular.*larger shrinkage"):
        sampler.sample(X[:3], np.array([True, True, False]), 2, random_state=0)
    # the default shrinkage keeps the solve stable
    draws = GaussianCopulaSampler().fit(X).sample(
        X[:3], np.array([True, True, False]), 2, random_state=0
    )
    assert np.isin(draws[..., 2], [0.0, 1.0]).all()


@pytest.mark.parametrize("cls", SAMPLERS)
def test_bad_sample_input(cls, X_fit):
    sampler = _fitted(cls, X_fit)
    X = X_fit[:5]
    with pytest.raises(NotFittedError):
        cls().sample(X, _mask(5, (0,)), 3)
    with pytest.raises(ValueError, match=r"same shape as X \(5, 4\)"):
        sampler.sample(X, np.zeros((5, 3), bool), 3)
    with pytest.raises(ValueError, match="same shape"):
        sampler.sample(X, np.zeros(3, bool), 3)
    with pytest.raises(TypeError, match="boolean mask"):
        sampler.sample(X, np.full((5, 4), 0.5), 3)
    with pytest.raises(ValueError, match="n_draws >= 1"):
        sampler.sample(X, _mask(5, (0,)), 0)
    with pytest.raises(TypeError, match="integer n_draws"):
        sampler.sample(X, _mask(5, (0,)), 2.5)
    with pytest.raises(TypeError, match="integer n_draws"):
        sampler.sample(X, _mask(5, (0,)), True)
    with pytest.raises(ValueError, match=r"shape \(n_rows, 4\)"):
        sampler.sample(X[:, :3], np.zeros((5, 3), bool), 3)
    with pytest.raises(ValueError, match=r"shape \(n_rows, 4\)"):
        sampler.sample(X[0], np.zeros(4, bool), 3)
    with pytest.raises(TypeError, match="numeric"):
        sampler.sample(np.full((5, 4), "a"), _mask(5, (0,)), 3)
    bad = X.copy()
    bad[2, 0] = np.inf
    with pytest.raises(ValueError, match=r"row 2, column 0.*mark those cells"):
        sampler.sample(bad, _mask(5, (0,)), 3)
    # 0/1 integers are a mask too
    ints = _mask(5, (0,)).astype(int)
    assert np.array_equal(sampler.sample(X, ints, 3, 0),
                          sampler.sample(X, ints.astype(bool), 3, 0))


# -- estimator basics --------------------------------------------------------------
@pytest.mark.parametrize("cls", SAMPLERS)
def test_estimator_basics(cls, X_fit):
    name = cls.__name__
    est = cls()
    check_parameters_default_constructible(name, est)
    check_no_attributes_set_in_init(name, est)
    check_get_params_invariance(name, est)
    check_set_params(name, est)
    assert repr(est) == f"{name}()"
    fitted = est.fit(X_fit)
    assert fitted is est and est.n_features_in_ == P
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    assert not hasattr(copy, "n_features_in_")
    loaded = pickle.loads(pickle.dumps(est))
    known = _mask(3, (1,))
    assert np.array_equal(loaded.sample(X_fit[:3], known, 4, 0),
                          est.sample(X_fit[:3], known, 4, 0))


@pytest.mark.parametrize("cls", SAMPLERS)
def test_fit_on_a_frame_and_a_failed_refit(cls, X_fit):
    frame = pd.DataFrame(X_fit, columns=list("abcd"))
    est = cls().fit(frame)
    assert list(est.feature_names_in_) == list("abcd")
    before = {k: v for k, v in vars(est).items() if k.endswith("_")}
    bad = X_fit.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        est.fit(bad)
    assert set(before) == {k for k in vars(est) if k.endswith("_")}
    assert est.n_features_in_ == P


# -- the contract on every conditional path ----------------------------------------
class _Joint(GaussianCopulaSampler):
    """Draws every column from the joint and puts the known ones back."""

    def sample(self, X, known, n_draws, random_state=None):
        draws = super().sample(X, np.zeros_like(known), n_draws, random_state)
        return np.where(known[:, None, :], X[:, None, :], draws)


class _JointLeavesKnown(GaussianCopulaSampler):
    """The draws of ``_Joint`` without the known columns put back."""

    def sample(self, X, known, n_draws, random_state=None):
        return super().sample(X, np.zeros_like(known), n_draws, random_state)


class _Scribbles(GaussianCopulaSampler):
    """Well-behaved draws, then it writes over the arrays it was given."""

    def fit(self, X, y=None):
        super().fit(X)
        X[:] = -1e6
        return self

    def sample(self, X, known, n_draws, random_state=None):
        draws = super().sample(X, known, n_draws, random_state)
        X[:] = 1e6
        known[:] = ~known
        return draws


@pytest.fixture(scope="module")
def problem():
    from sklearn.linear_model import LinearRegression

    X = _gaussian(40, seed=3, p=3)
    y = X @ np.array([1.0, 2.0, -1.0]) + X[:, 0] * X[:, 1]
    return X, y, LinearRegression().fit(X, y)


def _every_path(sampler, X, y, model):
    from skdecomp import AdaptiveGrouper, Explainer
    from skdecomp.inspection import (
        disagreement_sources,
        partial_dependence,
        permutation_importance,
    )

    explainer = Explainer(model, imputer=sampler, background=4, random_state=0).fit(X)
    sources = disagreement_sources(model, X, sampler=sampler, max_samples=20,
                                   random_state=0)
    grouper = AdaptiveGrouper(model, imputer=sampler, max_samples=20, n_groups=2,
                              random_state=0).fit(X)
    return {
        "explainer": explainer.transform(X[:3]),
        "pfi": permutation_importance(model, X, y, imputer=sampler, n_repeats=2,
                                      random_state=0).importances,
        "pdp": partial_dependence(model, X, 0, grid=[[2.0], [-1.0]], imputer=sampler,
                                  random_state=0).average,
        "sources": np.array([sources.interaction, sources.dependence]),
        "grouper": np.append(grouper.labels_, grouper.loss_),
    }


def _assert_same_results(got, want):
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12, atol=1e-12,
                                   err_msg=key)


class _ScribblesOnDraw(GaussianCopulaSampler):
    """Fitted as it should be; writes over the rows it is given to draw from."""

    def sample(self, X, known, n_draws, random_state=None):
        X[:] = 1e6
        return super().sample(X, known, n_draws, random_state)


@pytest.mark.parametrize("sampler, method", [(_Scribbles, "fit"),
                                             (_ScribblesOnDraw, "sample")])
def test_sampler_writing_into_its_input_is_refused(problem, sampler, method):
    # the sampler is given read-only copies: writing into them is refused,
    # with the fix, and the user's data is left as it was
    X, y, model = problem
    before = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=rf"{sampler.__name__}\.{method}: the "
                                             "sampler wrote into its input"):
            _every_path(sampler(), X, y, model)
    np.testing.assert_array_equal(X, before)


def test_known_columns_are_put_back_on_every_path(problem):
    X, y, model = problem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        left = _every_path(_JointLeavesKnown(), X, y, model)
        _assert_same_results(left, _every_path(_Joint(), X, y, model))
    # the other columns drawn alike at both grid points (the draws ignore the
    # known ones): the M-plot of the linear model moves by its coefficient
    slope = (left["pdp"][0, 0] - left["pdp"][0, 1]) / 3.0
    np.testing.assert_allclose(slope, model.coef_[0], rtol=1e-9)


def test_a_frame_is_not_modified_by_a_sampler_that_writes_into_its_input(problem):
    from skdecomp import Explainer

    X = problem[0]
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    before = frame.copy()
    for sampler in (_Scribbles(), _ScribblesOnDraw()):
        with pytest.raises(ValueError, match="the sampler wrote into its input"):
            Explainer(lambda D: D.to_numpy().sum(axis=1), imputer=sampler,
                      background=4, random_state=0).fit(frame).transform(frame.iloc[:2])
    pd.testing.assert_frame_equal(frame, before)
