"""Wall time of ``skdecomp report`` on a messy 2,000-row table, per estimator.

The table is :func:`skdecomp.datasets.make_mixed_table` at its defaults:
2,000 rows, 8 numeric and 40 categorical columns (four with 120 to 300
levels), missing values and a date column; with ``--bad-columns`` also an
identifier, a constant column and a noisy copy of the target. Each run is
the command line in a fresh process, timed from start to exit, for each
``--estimator`` (hgb, rf, linear, mlp) and each task (regression,
classification). The budget is 5 minutes per run on two cores.

Run: ``python benchmarks/bench_report.py [--n-samples 2000] [--bad-columns]``.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skdecomp.datasets import make_mixed_table

BUDGET = 300.0  # seconds per run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=2000)
    parser.add_argument("--n-categorical", type=int, default=40)
    parser.add_argument("--bad-columns", action="store_true")
    parser.add_argument("--estimators", nargs="+", default=["hgb", "rf", "linear", "mlp"])
    parser.add_argument("--tasks", nargs="+", default=["regression", "classification"])
    args = parser.parse_args()
    bad = args.bad_columns
    print(f"make_mixed_table({args.n_samples}, n_categorical={args.n_categorical}"
          f"{', id_column, constant_column, leak' if bad else ''})")
    print(f"{'task':<15}{'estimator':<10}{'seconds':>9}  {'score':<18}"
          f"{'explained with':<62}{'checks'}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for task in args.tasks:
            data = make_mixed_table(
                args.n_samples, n_categorical=args.n_categorical, task=task,
                id_column=bad, constant_column=bad, leak=bad, random_state=0,
            )
            csv = tmp / f"{task}.csv"
            data.frame.to_csv(csv, index=False)
            for estimator in args.estimators:
                out = tmp / f"{task}-{estimator}"
                start = time.perf_counter()
                run = subprocess.run(
                    [sys.executable, "-m", "skdecomp", "report", str(csv), "--target",
                     "y", "--estimator", estimator, "--out", str(out)],
                    capture_output=True, text=True,
                )
                seconds = time.perf_counter() - start
                if run.returncode != 0:
                    print(f"{task:<15}{estimator:<10}{seconds:9.1f}  failed: "
                          f"{run.stderr.strip().splitlines()[-1]}")
                    continue
                res = json.loads((out / "results.json").read_text())
                score = res["score"]
                shown = (f"R2 {score['r2']:.3f}" if score["metric"] == "r2"
                         else f"accuracy {score['accuracy']:.3f}")
                part = res["partitions"]["columns"]
                how = f"{part['algorithm'].split(' ')[0]}: {','.join(part['methods'])}"
                kinds = ",".join(sorted({c["kind"] for c in res["checks"]})) or "-"
                flag = "" if seconds <= BUDGET else "  OVER BUDGET"
                print(f"{task:<15}{estimator:<10}{seconds:9.1f}  {shown:<18}{how:<62}"
                      f"{kinds}{flag}", flush=True)


if __name__ == "__main__":
    main()
