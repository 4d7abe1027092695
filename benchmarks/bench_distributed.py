"""Speed-up of Explainer.transform on a 2-worker dask LocalCluster.

Prints the time of a local run (n_jobs=1), of the same run under
``joblib.parallel_backend("dask")`` on 2 worker processes, their ratio, and
checks that the numbers are identical.

Run: ``python benchmarks/bench_distributed.py`` (needs ``skdecomp[distributed]``).
"""

import time

import joblib
import numpy as np
from distributed import Client, LocalCluster
from sklearn.ensemble import RandomForestRegressor

from skdecomp import Explainer


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 8))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2] * X[:, 3]) + X[:, 4:].sum(axis=1)
    model = RandomForestRegressor(n_estimators=100, max_depth=12, n_jobs=1, random_state=0).fit(X, y)
    kwargs = dict(
        background=100, batch_size=50000, random_state=0, algorithm="model_agnostic"
    )
    rows = X[:60]

    local = Explainer(model, n_jobs=1, **kwargs).fit(X)
    t0 = time.perf_counter()
    expected = local.transform(rows)
    t_local = time.perf_counter() - t0

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        with Client(cluster):
            remote = Explainer(model, n_jobs=-1, **kwargs).fit(X)
            with joblib.parallel_backend("dask"):
                remote.transform(rows[:2])  # ship the model once
                t0 = time.perf_counter()
                got = remote.transform(rows)
                t_dask = time.perf_counter() - t0
    print(f"hybrid rows: {len(rows) * 2**8 * 100:,}")
    print(f"local, n_jobs=1:        {t_local:.2f} s")
    print(f"dask, 2 workers:        {t_dask:.2f} s")
    print(f"speed-up:               {t_local / t_dask:.2f}x")
    print(f"identical numbers:      {np.array_equal(expected, got)}")


if __name__ == "__main__":
    main()
