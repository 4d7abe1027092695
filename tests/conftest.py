import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    # one thread per worker: the workers already use every core, and OpenMP
    # threads (scikit-learn's gradient boosting) that spin-wait for each
    # other across workers slow the suite down many times over
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np
import pytest


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def random_function(seed, n_features):
    """A random smooth nonlinear function with interactions of all orders."""
    r = np.random.default_rng(seed)
    a = r.normal(size=n_features)
    B = np.triu(r.normal(size=(n_features, n_features)), 1)
    c = r.normal(size=n_features)
    trip = r.choice(n_features, size=min(3, n_features), replace=False)

    def f(X):
        X = np.asarray(X, dtype=float)
        out = np.sin(X) @ a + np.einsum("ni,ij,nj->n", X, B, X)
        out += np.tanh(X @ c) + np.prod(X[:, trip], axis=1)
        return out

    return f


def random_partition(seed, n_features, n_groups):
    r = np.random.default_rng(seed)
    perm = r.permutation(n_features)
    cuts = np.sort(r.choice(np.arange(1, n_features), size=n_groups - 1, replace=False))
    return [sorted(int(c) for c in part) for part in np.split(perm, cuts)]
