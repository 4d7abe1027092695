"""Synthetic functions with known partitions."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skdecomp.datasets import make_agreed_example, make_block_function, make_mixed_table


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


def test_mixed_table_columns_levels_and_missing_values():
    n = 2000
    data = make_mixed_table(n, random_state=0)
    X, y = data.data, data.target
    numeric = [f"num{j}" for j in range(8)]
    categorical = [f"cat{j:02d}" for j in range(40)]
    assert list(X.columns) == numeric + categorical + ["date"]
    assert data.categorical_columns == categorical
    assert all(isinstance(X[c].dtype, pd.CategoricalDtype) for c in categorical)
    assert all(pd.api.types.is_float_dtype(X[c]) for c in numeric)
    # every tenth categorical column has 100+ levels, most of them seen in the rows
    assert data.high_cardinality_columns == ["cat00", "cat10", "cat20", "cat30"]
    for c in categorical:
        seen = X[c].nunique()
        if c in data.high_cardinality_columns:
            assert seen >= 100
        else:
            assert 2 <= seen <= 12
    # missing values: a share of about `missing` in every other column, none elsewhere
    for k, c in enumerate(numeric + categorical):
        share = X[c].isna().mean()
        if k % 2:
            assert abs(share - 0.05) < 4 * np.sqrt(0.05 * 0.95 / n), (c, share)
        else:
            assert share == 0, c
    assert pd.api.types.is_datetime64_any_dtype(X["date"])
    assert X["date"].min() >= pd.Timestamp("2018-01-01")
    assert X["date"].max() <= pd.Timestamp("2023-12-31")
    assert y.name == "y" and y.shape == (n,) and np.isfinite(y).all()
    assert data.frame.shape == (n, 50)


def test_mixed_table_flags_and_tasks():
    X, y = make_mixed_table(500, n_numeric=4, n_categorical=12, id_column=True,
                            constant_column=True, leak=True, return_X_y=True,
                            random_state=1)
    assert X.columns[0] == "id" and X["id"].tolist() == list(range(1, 501))
    assert (X["constant"] == 1.0).all()
    assert np.corrcoef(X["target_copy"], y)[0, 1] > 0.999
    X, y = make_mixed_table(500, n_categorical=3, task="classification", leak=True,
                            return_X_y=True, random_state=1)
    assert set(y) == {"no", "yes"} and 0.3 < (y == "yes").mean() < 0.7
    # the leak is the class plus a little noise: a threshold at 0.5 recovers it
    assert ((X["target_copy"] > 0.5) == (y == "yes")).mean() > 0.99


def test_mixed_table_noise_and_seed():
    a = make_mixed_table(3000, n_categorical=5, noise=0.0, random_state=3)
    b = make_mixed_table(3000, n_categorical=5, noise=2.0, random_state=3)
    pd.testing.assert_frame_equal(a.data, b.data)
    # the same draws; only the noise term differs
    assert np.std(b.target - a.target) == pytest.approx(2.0, rel=0.05)
    c = make_mixed_table(3000, n_categorical=5, noise=0.0, random_state=4)
    assert not a.data["num0"].equals(c.data["num0"])
    # without noise the target is a sum of terms of the informative columns: a
    # linear term in num0 and an interaction num1 * num2 among them
    assert {"num0", "num1", "num2", "num3", "cat00", "cat01", "cat02", "date"} == \
        set(a.informative_columns)
    assert np.corrcoef(a.data["num4"], a.target)[0, 1] ** 2 < 0.01
    resid = a.target - a.data["num1"] * a.data["num2"]
    ok = a.data[["num1", "num2"]].notna().all(axis=1)
    # removing the product leaves nothing that depends on num1 * num2
    prod = (a.data["num1"] * a.data["num2"])[ok]
    assert abs(np.corrcoef(prod, resid[ok])[0, 1]) < 0.05
    assert np.corrcoef(prod, a.target[ok])[0, 1] > 0.2
