"""The plan of ``skdecomp report`` against the run: estimated and measured seconds.

For every case, the plan's estimate (made before any model work) is set
against the wall time of the command line, run in a fresh process as a user
runs it, per step of the analysis (each step is timed from the log line that
opens it to its "done in") and overall; the ratio is estimate / measured.
The plan is meant to be within a factor of 2 of the run, so that a report of
hours is told from one of seconds before the hours start.

The cases: ``skdecomp demo`` (the diabetes data); a table like the diamonds
data (carat, cut, color, clarity, depth, table, x, y, z; target price;
numeric and text columns, generated here) of 3,000 and 30,000 rows, for
every ``--estimator``; the wide table (30 rows, 5,000 columns, a target of
noise), which took 31 million model evaluations (an estimated 17 minutes)
before the plan and must now end within 2 minutes on two cores; and
:func:`skdecomp.datasets.make_mixed_table`.

The timings are those of the machine the benchmark runs on; ``--threads``
sets the threads of OpenMP, BLAS and Numba in the runs (on a machine that
other work keeps busy, more threads than free cores slow the threaded model
code by far more than the number of threads).

Run: ``python benchmarks/bench_plan.py [--cases demo diamonds-3000 ...]
[--estimators hgb rf linear mlp] [--threads N]``.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from skdecomp._plan import STEPS, plan_report, step_of
from skdecomp.datasets import make_mixed_table


def diamonds(n, seed=0):
    """A table like the diamonds data: numeric and text columns, target price."""
    rng = np.random.default_rng(seed)
    cuts = ["Fair", "Good", "Very Good", "Premium", "Ideal"]
    colors = list("JIHGFED")
    clarities = ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]
    carat = np.round(rng.gamma(2.0, 0.4, n) + 0.2, 2)
    cut = rng.choice(len(cuts), n, p=[0.03, 0.09, 0.22, 0.26, 0.40])
    color = rng.integers(len(colors), size=n)
    clarity = rng.integers(len(clarities), size=n)
    x = np.round(6.5 * carat ** (1 / 3) + rng.normal(0, 0.05, n), 2)
    log_price = (7.8 + 1.7 * np.log(carat) + 0.08 * clarity + 0.06 * color + 0.03 * cut
                 + 0.02 * clarity * np.log(carat) + rng.normal(0, 0.12, n))
    X = pd.DataFrame({
        "carat": carat,
        "cut": np.asarray(cuts)[cut],
        "color": np.asarray(colors)[color],
        "clarity": np.asarray(clarities)[clarity],
        "depth": np.round(rng.normal(61.7, 1.4, n), 1),
        "table": np.round(rng.normal(57.4, 2.2, n), 0),
        "x": x,
        "y": np.round(x + rng.normal(0, 0.05, n), 2),
        "z": np.round(0.617 * x + rng.normal(0, 0.03, n), 2),
    })
    return X, pd.Series(np.round(np.exp(log_price)), name="price")


def wide(n=30, d=5000):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"c{j}" for j in range(d)])
    return X, pd.Series(rng.normal(size=n), name="y")


def mixed():
    X, y = make_mixed_table(2000, return_X_y=True, random_state=0)
    return X, pd.Series(y, name="y")


def timed(command, env):
    """Wall time of a command and of every step it logs, from its log lines."""
    start = time.perf_counter()
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, bufsize=1, env=env)
    steps, current, lines = {}, None, []
    for line in run.stdout:
        now = time.perf_counter() - start
        lines.append(line)
        _, tag, message = line.partition("[skdecomp] ")
        if not tag:
            continue
        if current and message.startswith(("done in", "fitted in")):
            steps[current[0]] = steps.get(current[0], 0.0) + now - current[1]
            current = None
        elif step_of(message):
            current = (step_of(message), now)
    code = run.wait()
    seconds = time.perf_counter() - start
    steps["other"] = seconds - sum(steps.values())
    return seconds, steps, code, lines


def show(name, model, shape, plan, seconds, steps, code):
    print(f"\n{name} ({shape[0]:,} x {shape[1]}), {model}: planned "
          f"{plan.seconds:.1f} s, measured {seconds:.1f} s, ratio "
          f"{plan.seconds / seconds:.2f}, exit {code}"
          + (f"; {len(plan.changes)} change(s) to fit the budget" if plan.changes else ""))
    for step in STEPS:
        if step in plan.steps or step in steps:
            p, m = plan.steps.get(step), steps.get(step)
            ratio = f"{p / m:8.2f}" if p is not None and m else "       -"
            print(f"  {step:<20}{'-' if p is None else f'{p:.1f}':>9}"
                  f"{'-' if m is None else f'{m:.1f}':>9}{ratio}")
    return plan.seconds / seconds


def report(name, X, y, estimator, tmp, env, budget=None):
    path = Path(tmp) / f"{name}.csv"
    X.assign(**{y.name: y.to_numpy()}).to_csv(path, index=False)
    X_read = pd.read_csv(path)
    y_read = X_read.pop(y.name)
    options = [] if budget == "default" else ["--budget", "none"]
    plan = plan_report(X_read, y_read, estimator=estimator,
                       **({} if budget == "default" else {"budget": None}))
    seconds, steps, code, lines = timed(
        [sys.executable, "-m", "skdecomp", "report", str(path), "--target", y.name,
         "--estimator", estimator, "--out", str(Path(tmp) / name), "--overwrite",
         *options], env)
    if code:
        print("".join(lines[-5:]))
    return show(name, estimator, X.shape, plan, seconds, steps, code)


def demo(tmp, env):
    from sklearn.datasets import load_diabetes

    from skdecomp.__main__ import demo_plan

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    plan = demo_plan(X, y)
    seconds, steps, code, _ = timed(
        [sys.executable, "-m", "skdecomp", "demo", "--out", str(Path(tmp) / "demo")], env)
    return show("demo", "hgb", X.shape, plan, seconds, steps, code)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=[
        "demo", "diamonds-3000", "diamonds-30000", "wide", "mixed"])
    parser.add_argument("--estimators", nargs="+", default=["hgb", "rf", "linear", "mlp"])
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.threads:
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                     "NUMBA_NUM_THREADS"):
            env[name] = str(args.threads)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
          + (f"; {args.threads} thread(s) per run" if args.threads else ""))
    print(f"  {'step':<20}{'plan s':>9}{'run s':>9}{'ratio':>8}")
    ratios = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases:
            if case == "demo":
                ratios["demo"] = demo(tmp, env)
            elif case.startswith("diamonds-"):
                X, y = diamonds(int(case.split("-")[1]))
                for estimator in args.estimators:
                    ratios[f"{case} {estimator}"] = report(case, X, y, estimator, tmp, env)
            elif case == "wide":
                X, y = wide()
                for estimator in ("hgb", "linear"):
                    ratios[f"wide {estimator}"] = report("wide", X, y, estimator, tmp, env,
                                                        budget="default")
            elif case == "mixed":
                X, y = mixed()
                ratios["mixed hgb"] = report("mixed", X, y, "hgb", tmp, env)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    print("planned / measured:", ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    outside = [k for k, v in ratios.items() if not 0.5 <= v <= 2.0]
    print("all within a factor of 2" if not outside else
          f"outside a factor of 2: {', '.join(outside)}")


if __name__ == "__main__":
    main()
