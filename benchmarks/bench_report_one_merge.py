"""Wall time of the report's analysis on a wide table one AGREED merge from its columns.

A table of ``--n-columns`` columns (more than exact enumeration takes) and a
fitted model of ``4 x0 x1 + 0.3 (x2 + ... )``: AGREED merges ``x0`` and
``x1`` and nothing else. The report then no longer explains the rows a
second time over those groups. The reference run, in the same process,
explains them again (the previous behaviour); the script prints both wall
times and their ratio, and checks that the per-column results are the same.

Run: ``python benchmarks/bench_report_one_merge.py [--n-columns 24] [--repeat 1]``.
"""

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from skdecomp._report import _analysis, _common, analyse


class ProductModel(RegressorMixin, BaseEstimator):
    """``4 x0 x1 + 0.3 * (sum of the other columns)``, fitted as it is."""

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X):
        a = np.asarray(X, dtype=float)
        return 4.0 * a[:, 0] * a[:, 1] + 0.3 * a[:, 2:].sum(axis=1)


def run(X, y, model, wide_columns):
    saved = _analysis.WIDE_COLUMNS
    _analysis.WIDE_COLUMNS = wide_columns
    try:
        start = time.perf_counter()
        res = analyse(X, y, model=model, n_rows=50, background=50, random_state=0,
                      log=lambda msg: None)
        return time.perf_counter() - start, res
    finally:
        _analysis.WIDE_COLUMNS = saved


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-columns", type=int, default=24)
    parser.add_argument("--n-samples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(args.n_samples, args.n_columns)),
                     columns=[f"x{j}" for j in range(args.n_columns)])
    model = ProductModel().fit(X)
    y = pd.Series(model.predict(X), name="y")
    run(X.iloc[:100], y.iloc[:100], model, _common.WIDE_COLUMNS)  # warm-up
    new, old = [], []
    for _ in range(args.repeat):
        t_old, res_old = run(X, y, model, wide_columns=10**9)
        t_new, res_new = run(X, y, model, wide_columns=_common.WIDE_COLUMNS)
        old.append(t_old)
        new.append(t_new)
    assert res_new["agreed"]["n_groups"] == args.n_columns - 1, res_new["agreed"]["groups"]
    assert "agreed" in res_old["partitions"] and "agreed" not in res_new["partitions"]
    a, b = res_new["partitions"]["columns"], res_old["partitions"]["columns"]
    for m in a["methods"]:
        np.testing.assert_allclose(a["attributions"][m], b["attributions"][m])
    print(f"{args.n_columns} columns, {args.n_samples} rows, AGREED merged "
          f"{res_new['agreed']['groups'][0]}")
    print(f"explaining the AGREED groups again (reference): {min(old):7.1f} s")
    print(f"per-column explanation only:                    {min(new):7.1f} s")
    print(f"ratio reference / new: {min(old) / min(new):.2f}")


if __name__ == "__main__":
    main()
