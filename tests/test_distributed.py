"""skdecomp on a dask cluster through joblib gives the local numbers."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import Explainer

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2] * X[:, 3]) + X[:, 4]
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    return X, model


@pytest.mark.slow
def test_explainer_under_dask_backend(client, problem):
    import joblib

    X, model = problem
    # the model-agnostic path is the one that sends model calls through joblib
    kw = dict(background=30, batch_size=2000, random_state=0, algorithm="model_agnostic")
    local = Explainer(model, **kw).fit(X)
    expected = local.explain(X[:6])
    with joblib.parallel_backend("dask"):
        remote = Explainer(model, n_jobs=-1, **kw).fit(X)
        got = remote.explain(X[:6])
    assert np.array_equal(remote.background_, local.background_)
    for method in expected:
        np.testing.assert_array_equal(got[method], expected[method])


@pytest.mark.slow
def test_adaptive_grouper_under_dask_backend(client, problem):
    import joblib

    from skdecomp import AdaptiveGrouper

    X, model = problem
    local = AdaptiveGrouper(model, max_samples=20, random_state=0, n_jobs=1).fit(X)
    with joblib.parallel_backend("dask"):
        remote = AdaptiveGrouper(model, max_samples=20, random_state=0, n_jobs=-1).fit(X)
    assert remote.groups_ == local.groups_
    assert remote.loss_ == pytest.approx(local.loss_, rel=1e-12, abs=1e-12)
