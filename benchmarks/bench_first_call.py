"""What the first call costs: a cold Numba cache against a warm one.

Each case runs in a fresh Python process with ``NUMBA_CACHE_DIR`` pointed at
one temporary folder: first empty (cold: every kernel the call needs is
compiled), then again with the cache the first run wrote (warm). The script
prints, per case, the import time and the time of the first call beyond
the import, cold and warm, next to the time of the same call run a second
time in the same process (steady state):

- tree path: ``Explainer(HistGradientBoostingRegressor).fit(X).transform(X[:20])``;
- model-agnostic path: the same with a Ridge model;
- AdaptiveGrouper: ``AdaptiveGrouper(HistGradientBoostingRegressor).fit(X)``.

Run: ``python benchmarks/bench_first_call.py``.
"""

import json
import os
import subprocess
import sys
import tempfile

CASE = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge
import skdecomp
t_import = time.perf_counter() - t0
X, y = load_diabetes(return_X_y=True)
case = sys.argv[1]
if case == "grouper":
    model = HistGradientBoostingRegressor(max_iter=50, random_state=0).fit(X, y)
    def call():
        skdecomp.AdaptiveGrouper(model, max_samples=50, random_state=0).fit(X)
else:
    model = (HistGradientBoostingRegressor(max_iter=50, random_state=0) if case == "tree"
             else Ridge()).fit(X, y)
    def call():
        skdecomp.Explainer(model, background=50, random_state=0).fit(X).transform(X[:20])
t1 = time.perf_counter(); call(); first = time.perf_counter() - t1
t2 = time.perf_counter(); call(); second = time.perf_counter() - t2
print(json.dumps({"import": t_import, "first": first, "second": second}))
"""


def run(case, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CASE, case], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    print(f"{'case':<16} {'cache':<5} {'import (s)':>10} {'first call (s)':>15} "
          f"{'steady (s)':>11}")
    for case, label in [("tree", "tree path"), ("agnostic", "model-agnostic"),
                        ("grouper", "AdaptiveGrouper")]:
        with tempfile.TemporaryDirectory() as cache:
            for state in ("cold", "warm"):
                r = run(case, cache)
                print(f"{label:<16} {state:<5} {r['import']:>10.2f} {r['first']:>15.2f} "
                      f"{r['second']:>11.2f}", flush=True)


if __name__ == "__main__":
    main()
