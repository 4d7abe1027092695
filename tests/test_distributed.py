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


@pytest.mark.slow
def test_dask_dataframe_explained_partition_by_partition(client, problem):
    import dask
    import dask.dataframe as dd
    import pandas as pd

    X, model = problem
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    fitted = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(
        frame, model.predict(X))
    explainer = Explainer(fitted, background=30, random_state=0).fit(frame)
    explainer.set_output(transform="pandas")
    expected = explainer.transform(frame)
    rows = dd.from_pandas(frame, npartitions=4)
    # the fitted explainer, background included, is one task shipped once to
    # each worker; every partition is explained against the same background
    shipped = dask.delayed(explainer, traverse=False)
    meta = expected.iloc[:0]
    got = rows.map_partitions(lambda part, e: e.transform(part), shipped,
                              meta=meta).compute()
    # bit for bit what the same partitions give locally; the whole frame at
    # once sums in another order (the tree path picks its kernel by size)
    bounds = rows.divisions
    local = pd.concat([explainer.transform(frame.loc[a:b - 1] if b != bounds[-1]
                                           else frame.loc[a:b])
                       for a, b in zip(bounds[:-1], bounds[1:])])
    pd.testing.assert_frame_equal(got, local, check_exact=True)
    pd.testing.assert_frame_equal(got, expected, rtol=1e-12, atol=1e-14)
    # a dask array of rows, block by block
    import dask.array as da

    explainer.set_output(transform="default")
    blocks = da.from_array(frame.to_numpy(), chunks=(50, X.shape[1]))
    arr = blocks.map_blocks(lambda b, e: e.transform(pd.DataFrame(b, columns=frame.columns)),
                            shipped, dtype=float,
                            chunks=(50, len(explainer.groups_))).compute()
    np.testing.assert_array_equal(
        arr, np.vstack([explainer.transform(frame.iloc[i:i + 50]) for i in range(0, 200, 50)]))
