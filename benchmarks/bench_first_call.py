"""What the first call costs: a cold Numba cache against a warm one.

Each case runs in a fresh Python process with ``NUMBA_CACHE_DIR`` pointed at
one temporary folder: first empty (cold: every kernel the call needs is
compiled), then again with the cache the first run wrote (warm). The script
prints, per case, the import time and the CPU time of the first call beyond
the import, cold and warm, the number of Numba compilations of that first
call, and the CPU time of the same call run a second time in the same process
(steady state).

The call is the default one: ``Explainer(model).fit(X).transform(X[:5])``
(``method="auto"``, 100 background rows) on the diabetes table (10 columns)
for HistGradientBoostingRegressor, RandomForestRegressor (100 trees),
XGBRegressor and LGBMRegressor (when installed, 100 trees each), the same on
a 200-column table for HistGradientBoosting (any K), a Ridge model (model
calls), and ``AdaptiveGrouper(hgb).fit(X)``.

Run: ``python benchmarks/bench_first_call.py``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import json
import os
import subprocess
import sys
import tempfile

CASE = r"""
import json, sys, time
t0 = time.process_time()
import numpy as np
from numba.core import event
from sklearn.datasets import load_diabetes
import skdecomp
t_import = time.process_time() - t0
compiles = []
class Count(event.Listener):
    def on_start(self, e):
        pass
    def on_end(self, e):
        compiles.append(e.data["dispatcher"].py_func.__qualname__)
event.register("numba:compile", Count())
case = sys.argv[1]
X, y = load_diabetes(return_X_y=True)
if case == "hgb_wide":
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 200))
    y = X[:, 0] * X[:, 1] + X[:, :20].sum(axis=1)
if case in ("hgb", "hgb_wide", "grouper"):
    from sklearn.ensemble import HistGradientBoostingRegressor
    model = HistGradientBoostingRegressor(random_state=0)
elif case == "rf":
    from sklearn.ensemble import RandomForestRegressor
    model = RandomForestRegressor(random_state=0)
elif case == "xgboost":
    from xgboost import XGBRegressor
    model = XGBRegressor(n_estimators=100, max_depth=6)
elif case == "lightgbm":
    from lightgbm import LGBMRegressor
    model = LGBMRegressor(n_estimators=100, verbose=-1)
else:
    from sklearn.linear_model import Ridge
    model = Ridge()
model.fit(X, y)
if case == "grouper":
    def call():
        skdecomp.AdaptiveGrouper(model, random_state=0).fit(X)
else:
    def call():
        skdecomp.Explainer(model, random_state=0).fit(X).transform(X[:5])
t1 = time.process_time(); call(); first = time.process_time() - t1
n_first = len(compiles)
t2 = time.process_time(); call(); second = time.process_time() - t2
print(json.dumps({"import": t_import, "first": first, "second": second,
                  "compiles": n_first}))
"""

CASES = [
    ("hgb", "HistGradientBoosting"),
    ("rf", "RandomForest"),
    ("xgboost", "XGBoost"),
    ("lightgbm", "LightGBM"),
    ("hgb_wide", "HGB, 200 columns"),
    ("agnostic", "Ridge (model calls)"),
    ("grouper", "AdaptiveGrouper"),
]


def run(case, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CASE, case], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    print(f"{'case':<22} {'cache':<5} {'import (s)':>10} {'first call (s)':>15} "
          f"{'compiles':>9} {'steady (s)':>11}   (CPU seconds)")
    for case, label in CASES:
        with tempfile.TemporaryDirectory() as cache:
            for state in ("cold", "warm"):
                r = run(case, cache)
                if r is None:
                    print(f"{label:<22} skipped (library not installed?)")
                    break
                print(f"{label:<22} {state:<5} {r['import']:>10.2f} {r['first']:>15.2f} "
                      f"{r['compiles']:>9} {r['second']:>11.2f}", flush=True)


if __name__ == "__main__":
    main()
