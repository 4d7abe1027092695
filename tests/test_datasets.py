"""Synthetic functions with known partitions."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from skdecomp.datasets import make_agreed_example, make_block_function


def second_difference(f, x, z, i, j):
    """f(x_i, x_j) - f(z_i, x_j) - f(x_i, z_j) + f(z_i, z_j), others from x."""
    def at(a, b):
        h = x.copy()
        h[:, i] = a[:, i]
        h[:, j] = b[:, j]
        return f(h)

    return at(x, x) - at(z, x) - at(x, z) + at(z, z)


def test_agreed_example_closed_form():
    data = make_agreed_example(50, random_state=0)
    X = data.data
    expected = X[:, 0] * X[:, 1] + np.sin(X[:, 2] * X[:, 3]) + X[:, 4] + X[:, 5] ** 2
    np.testing.assert_allclose(data.target, expected)
    np.testing.assert_allclose(data.function.predict(X), expected)
    assert data.groups == [[0, 1], [2, 3], [4], [5]]
    assert X.min() >= -1 and X.max() <= 1
    noisy = make_agreed_example(2000, noise=0.5, random_state=0)
    assert np.std(noisy.target - noisy.function(noisy.data)) == pytest.approx(0.5, rel=0.1)


@pytest.mark.parametrize("seed", range(6))
def test_block_function_has_exactly_its_partition(seed):
    data = make_block_function(40, n_features=9, max_block_size=3, random_state=seed)
    f = data.function
    assert sorted(j for g in data.groups for j in g) == list(range(9))
    assert all(1 <= len(g) <= 3 for g in data.groups)
    np.testing.assert_allclose(data.target, f(data.data))
    block = {j: k for k, g in enumerate(data.groups) for j in g}
    x, z = data.data[:20], data.data[20:]
    for i in range(9):
        for j in range(i + 1, 9):
            diff = np.abs(second_difference(f, x, z, i, j)).max()
            if block[i] != block[j]:
                assert diff < 1e-12
            else:  # every pair of a block interacts
                assert diff > 1e-3


def test_reproducible_picklable_clonable():
    a = make_block_function(10, n_features=7, random_state=3)
    b = make_block_function(10, n_features=7, random_state=3)
    np.testing.assert_array_equal(a.data, b.data)
    assert a.groups == b.groups
    g = pickle.loads(pickle.dumps(a.function))
    np.testing.assert_array_equal(g(a.data), a.target)
    np.testing.assert_array_equal(clone(a.function)(a.data), a.target)
    assert "BlockFunction(" in repr(a.function)


def test_bad_input():
    with pytest.raises(ValueError, match="n_features"):
        make_block_function(10, n_features=0)
    with pytest.raises(ValueError, match="noise"):
        make_agreed_example(10, noise=-1.0)
    with pytest.raises(ValueError, match="shape"):
        make_agreed_example(5).function(np.zeros((3, 4)))


# -- correlated features ---------------------------------------------------------------
# sha256 of data and target before ``correlation`` existed (rows of 20, 6 columns, noise 0.1)
BEFORE_CORRELATION = {
    0: "44d7ea21c8c5cb879e6c48ac8c743e8b2190f62e6b4c729d6e22ac3a844855b2",
    7: "ca86ec6ff43dd5ec0bdd319117603e24d39fc098317c67e385c4161c42de05a3",
}


@pytest.mark.parametrize("seed", sorted(BEFORE_CORRELATION))
def test_no_correlation_keeps_earlier_rows_bit_identical(seed):
    import hashlib

    for kwargs in ({}, {"correlation": 0.0}):
        data = make_block_function(20, n_features=6, noise=0.1, random_state=seed, **kwargs)
        digest = hashlib.sha256(data.data.tobytes() + data.target.tobytes()).hexdigest()
        assert digest == BEFORE_CORRELATION[seed]


def test_correlated_features_are_uniform_with_copula_correlation():
    from scipy.stats import kstest, spearmanr

    rho = 0.6
    data = make_block_function(20000, n_features=4, correlation=rho, random_state=0)
    X = data.data
    assert X.min() >= -1 and X.max() <= 1
    for j in range(4):  # each margin is Uniform(-1, 1)
        assert kstest(X[:, j], "uniform", args=(-1, 2)).pvalue > 1e-3
    spearman = spearmanr(X).statistic[np.triu_indices(4, 1)]
    # Spearman correlation of a Gaussian copula: (6 / pi) arcsin(rho / 2)
    np.testing.assert_allclose(spearman, 6 / np.pi * np.arcsin(rho / 2), atol=0.02)
    # the blocks are drawn before the rows: same function as without correlation
    plain = make_block_function(50, n_features=4, random_state=0)
    assert data.groups == plain.groups and repr(data.function) == repr(plain.function)


@pytest.mark.parametrize("seed", range(3))
def test_correlated_block_function_keeps_its_partition(seed):
    data = make_block_function(40, n_features=7, correlation=0.8, random_state=seed)
    f = data.function
    block = {j: k for k, g in enumerate(data.groups) for j in g}
    x, z = data.data[:20], data.data[20:]
    for i in range(7):
        for j in range(i + 1, 7):
            if block[i] != block[j]:
                assert np.abs(second_difference(f, x, z, i, j)).max() < 1e-12


def test_correlation_out_of_range():
    with pytest.raises(ValueError, match="correlation"):
        make_block_function(10, correlation=1.0)
    with pytest.raises(ValueError, match="correlation"):
        make_block_function(10, correlation=-0.1)
