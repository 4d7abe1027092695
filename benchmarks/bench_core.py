"""Overhead of the exact Explainer over the model's own predict, and its memory.

K = 10 groups, 100 background rows, 20 explained rows, a fitted
HistGradientBoostingRegressor, explained through model calls
(``algorithm="model_agnostic"``; the exact tree path has its own benchmark).
Prints

* time of ``Explainer.transform`` / time of ``model.predict`` on the same
  2**K * 100 * 20 hybrid rows (built beforehand, one predict call);
* peak traced memory of ``transform`` for two batch sizes.

Run: ``python benchmarks/bench_core.py``
"""

import time
import tracemalloc

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import Explainer


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    n, d = 2000, 10
    X = rng.normal(size=(n, d))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 3:].sum(axis=1)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
    explainer = Explainer(
        model, background=100, random_state=0, algorithm="model_agnostic"
    ).fit(X)
    Xe = X[:20]
    explainer.transform(Xe[:1])  # compile kernels once

    # the same hybrid rows, built once outside the timed region
    bg = explainer.background_
    masks = np.arange(1 << d)
    colmask = ((masks[:, None] >> np.arange(d)) & 1).astype(bool)
    hybrids = np.where(
        colmask[None, :, None, :], Xe[:, None, None, :], bg[None, None, :, :]
    ).reshape(-1, d)
    t_predict = best_of(lambda: model.predict(hybrids))
    t_explain = best_of(lambda: explainer.transform(Xe))
    print(f"hybrid rows: {hybrids.shape[0]:,}")
    print(f"model.predict on the hybrid rows: {t_predict:.3f} s")
    print(f"Explainer.transform:             {t_explain:.3f} s")
    print(f"ratio transform / predict:       {t_explain / t_predict:.3f}  (target <= 1.15)")

    for batch_size in (8192, 131072):
        e = Explainer(
            model, background=100, batch_size=batch_size, random_state=0,
            algorithm="model_agnostic",
        ).fit(X)
        tracemalloc.start()
        e.transform(Xe)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"peak traced memory, batch_size={batch_size:>6}: {peak / 2**20:7.1f} MiB")
    print(f"(all hybrid rows at once would be {hybrids.nbytes / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
