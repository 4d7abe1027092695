"""The plan of ``skdecomp report`` against the run: estimated and measured seconds.

For a few tables, the plan's estimate (made before any model work) is set
against the wall time of the command line in the same process, and the
ratio estimate / measured is printed: the plan is meant to be right within a
small factor, so that a report of hours is told from one of seconds before
the hours start. The wide table (30 rows, 5,000 columns, a target of noise)
took 31 million model evaluations (an estimated 17 minutes) before the plan;
it must now end within 2 minutes on two cores.

Run: ``python benchmarks/bench_plan.py``.
"""

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from skdecomp.__main__ import main
from skdecomp._plan import plan_report
from skdecomp.datasets import make_mixed_table


def wide(n=30, d=5000):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"c{j}" for j in range(d)])
    return X, pd.Series(rng.normal(size=n), name="y")


def mixed():
    X, y = make_mixed_table(2000, return_X_y=True, random_state=0)
    return X, pd.Series(y, name="y")


def run(name, X, y, estimator, tmp):
    path = Path(tmp) / f"{name}.csv"
    X.assign(y=y.to_numpy()).to_csv(path, index=False)
    X_read = pd.read_csv(path)
    y_read = X_read.pop("y")
    plan = plan_report(X_read, y_read, estimator=estimator)
    start = time.perf_counter()
    code = main(["report", str(path), "--target", "y", "--estimator", estimator,
                 "--out", str(Path(tmp) / name)])
    seconds = time.perf_counter() - start
    print(f"{name:<22}{estimator:<8}{X.shape[0]:>6} x {X.shape[1]:<6}"
          f"{plan.seconds:>10.0f}{seconds:>10.0f}{plan.seconds / seconds:>8.2f}"
          f"{code:>6}  {len(plan.changes)} change(s)", flush=True)


def main_():
    print(f"{'table':<22}{'model':<8}{'shape':>15}{'plan s':>10}{'run s':>10}"
          f"{'ratio':>8}{'exit':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        X, y = wide()
        run("wide noise", X, y, "hgb", tmp)
        run("wide noise", X, y, "linear", tmp)
        X, y = mixed()
        run("make_mixed_table", X, y, "hgb", tmp)


if __name__ == "__main__":
    main_()
