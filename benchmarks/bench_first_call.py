"""What the first call costs: a cold Numba cache against a warm one.

Each case runs in a fresh Python process with ``NUMBA_CACHE_DIR`` pointed at
one temporary folder: first empty (cold: every kernel the call needs is
compiled), then again with the cache the first run wrote (warm). Five
sections:

``default``
    The default call, ``Explainer(model).fit(X).transform(X[:5])``
    (``method="auto"``, 100 background rows) on the diabetes table (10
    columns) for HistGradientBoostingRegressor, RandomForestRegressor (100
    trees), XGBRegressor and LGBMRegressor (when installed, 100 trees each),
    the same on a 200-column table for HistGradientBoosting (any K), a Ridge
    model (model calls), and ``AdaptiveGrouper(hgb).fit(X)``. Printed: the
    import time and the CPU time of the first call beyond the import, cold
    and warm, the number of Numba compilations of that first call, and the
    CPU time of the same call run a second time in the same process.
``tree``
    The tree paths on 1,000 explained rows: ``transform`` of a
    HistGradientBoostingRegressor of 100 trees on a 10-column table, with
    the marginal game (100 background rows) and the path-dependent game,
    ``n_jobs=1`` and ``n_jobs=2`` (both served by the Numba kernels). Printed:
    the wall and CPU time of the first ``transform``, cold and warm, and of
    the second one in the same process.
``paths``
    The other tree paths on 1,000 explained rows, cold, ``n_jobs=1`` and
    ``n_jobs=2``: 20 columns (the kernel for any number of groups), a forest
    and XGBoost, four methods on five groups (the 3**K table), ``decompose``,
    k-SII of order 2 and Owen values, each under both games where it
    applies. CPU seconds of the first call, ``n_jobs=1`` / ``n_jobs=2``,
    before and after the kernels were compiled once for any ``n_jobs``:

    ==============================  ==========  =========
    1,000 rows, cold cache          before      after
    ==============================  ==========  =========
    20 columns                      4.8 / 10.5  3.7 / 3.4
    RandomForest                    5.7 / 7.6   2.9 / 2.8
    XGBoost                         5.8 / 7.3   2.7 / 2.6
    XGBoost, path-dependent         5.0 / 6.5   3.3 / 3.2
    4 methods, 5 groups             7.1 / 10.8  3.1 / 3.1
    decompose                       7.6 / 11.2  3.6 / 3.8
    decompose, path-dependent       3.7 / 5.2   3.1 / 3.3
    k-SII, order 2                  7.0 / 13.1  4.1 / 3.8
    k-SII, path-dependent           8.5 / 10.9  4.8 / 4.7
    Owen                            6.1 / 8.4   4.4 / 4.1
    Owen, path-dependent            5.8 / 7.7   4.2 / 4.1
    ==============================  ==========  =========

    Besides the threads, the interaction terms' support is read in numpy
    (it compiled Numba's set, hashing and sort: 2 s) and the index kernels
    look up term keys with a plain binary search (np.searchsorted: 0.4 s).
``blocks``
    One ``transform`` of 100,000 rows against the same rows in blocks of
    2,000 to 25,000 rows (warm cache, serial, best of two), both games.
``summary``
    The background summary of the marginal game on forests of 100-300 trees
    (depth 5-12, 100-300 background rows): numpy against the Numba kernel,
    warm, and the kernel's first call. numpy takes 0.035-0.053 us per (leaf,
    background row) key, the kernel 6-9 ns after compiling for 2.4 s: at the
    bound of 10 million keys numpy takes about 0.5 s.

CPU seconds of the first ``transform`` of 1,000 rows on 2 cores (AMD EPYC,
load about 1):

========================  ============  ============  ==========  ===========
tree path, 1,000 rows     cold, before  cold, after   warm cache  second call
========================  ============  ============  ==========  ===========
marginal, n_jobs=1        6.1           2.8           0.27        0.03
marginal, n_jobs=2        7.9           2.6           0.26        0.02
path-dependent, n_jobs=1  5.3           3.3           0.26        0.03
path-dependent, n_jobs=2  7.1           3.1           0.26        0.02
========================  ============  ============  ==========  ===========

Before, ``n_jobs=2`` compiled a ``parallel=True`` twin of every kernel (its
whole body a second time, with Numba's parallel machinery: 5.7 s for the
marginal kernel against 3.5 s serially), the marginal game's background
summary compiled a kernel of its own (2.6 s) and every kernel body compiled
its set-up and the adding of the chunk sums. Now each kernel is compiled
once, serially, with ``nogil=True``; ``n_jobs`` threads run it on chunks of
the trees or parts of the rows, and the set-up, the chunk sums and the
background summary (below ``numpy_max_summary`` leaves x background rows)
are numpy. The warm first call is the load of the cached kernel and Numba's
own first-use set-up (0.25 s, paid once per process). In the ``default``
section (5 explained rows, served in numpy) nothing changed: 0.04-0.16 s for
the tree models, 1.4-1.5 s for a model called through ``predict``, 0.66 s for
AdaptiveGrouper, cold.

Blocks, CPU seconds for 100,000 rows (serial): before, one call took 2.81
against 2.04-2.5 in blocks of 1,000-32,000 rows for the marginal game and
1.77 against 1.42-2.2 for the path-dependent one (1.25-1.4 times the best
blocking); after, 1.99 against 1.88-2.27 (blocks of 2,000-25,000) and 1.62
against 1.32-1.71, and in a profile the kernels of one call and of blocks of
12,500 rows took the same 1.59 s. The kernels now take the rows in blocks
whose per-row buffers fit the caches (``_BLOCK_BYTES`` in
``skdecomp/_tree/_dispatch.py``). With the kernels run on threads: 2.00
against 2.01-2.31 and 1.39 against 1.34-1.85.

Run: ``python benchmarks/bench_first_call.py [default] [tree] [paths]
[blocks] [summary]`` (all five without arguments).
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



TREE_CASE = r"""
import json, sys, time
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
import skdecomp
imputer, n_jobs = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
X = rng.normal(size=(5000, 10))
y = X[:, 0] * X[:, 1] + X[:, :5].sum(axis=1) + rng.normal(size=5000)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
explainer = skdecomp.Explainer(model, imputer=imputer, n_jobs=n_jobs,
                               random_state=0).fit(X)
rows = X[:1000]
def timed():
    w, c = time.perf_counter(), time.process_time()
    explainer.transform(rows)
    return time.perf_counter() - w, time.process_time() - c
first, second = timed(), timed()
print(json.dumps({"first": first, "second": second,
                  "algorithm": explainer.algorithm_}))
"""

BLOCKS_CASE = r"""
import json, sys, time
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
import skdecomp
imputer = sys.argv[1]
rng = np.random.default_rng(0)
X = rng.normal(size=(100_000, 10))
y = X[:, 0] * X[:, 1] + X[:, :5].sum(axis=1) + rng.normal(size=100_000)
model = HistGradientBoostingRegressor(max_iter=100, random_state=0)
model.fit(X[:5000], y[:5000])
explainer = skdecomp.Explainer(model, imputer=imputer, random_state=0).fit(X[:5000])
explainer.transform(X[:2000])
def best(block):
    times = []
    for _ in range(2):
        c = time.process_time()
        out = [np.asarray(explainer.transform(X[i:i + block]))
               for i in range(0, len(X), block)]
        times.append(time.process_time() - c)
    return min(times), np.concatenate(out)
one, ref = best(len(X))
res = {"one": one}
for block in (2000, 5000, 12500, 25000):
    t, out = best(block)
    res[str(block)] = t
    assert np.array_equal(out, ref)
print(json.dumps(res))
"""


def run_script(script, args, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", script, *args], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


PATHS_CASE = r"""
import json, sys, time
import numpy as np
import skdecomp
case, n_jobs = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
X = rng.normal(size=(5000, 20 if case == "20 columns" else 10))
y = X[:, 0] * X[:, 1] + X[:, :5].sum(axis=1) + rng.normal(size=5000)
if case == "RandomForest":
    from sklearn.ensemble import RandomForestRegressor
    model = RandomForestRegressor(n_estimators=100, max_depth=8, random_state=0)
elif case.startswith("XGBoost"):
    from xgboost import XGBRegressor
    model = XGBRegressor(n_estimators=100, max_depth=6)
else:
    from sklearn.ensemble import HistGradientBoostingRegressor
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0)
model.fit(X, y)
rows = X[:1000]
kw = dict(n_jobs=n_jobs, random_state=0,
          imputer="path_dependent" if case.endswith("path-dependent") else "marginal")
if case.startswith("4 methods"):
    e = skdecomp.Explainer(model, groups=[[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]], **kw)
    call = lambda: e.explain(rows, methods=["shapley", "banzhaf", "occlusion", "arch"])
elif case.startswith("decompose"):
    e = skdecomp.Explainer(model, **kw)
    call = lambda: e.decompose(rows)
elif case.startswith("k-SII"):
    e = skdecomp.Explainer(model, **kw)
    call = lambda: e.interactions(rows, index="k-SII", max_order=2)
elif case.startswith("Owen"):
    e = skdecomp.Explainer(model, method="owen", **kw,
                           hierarchy=[[[0, 1], [2, 3]], [[4, 5, 6], [7, 8, 9]]])
    call = lambda: e.transform(rows)
else:
    e = skdecomp.Explainer(model, **kw)
    call = lambda: e.transform(rows)
e.fit(X)
t = time.process_time()
call()
first = time.process_time() - t
t = time.process_time()
call()
print(json.dumps({"first": first, "second": time.process_time() - t,
                  "algorithm": e.algorithm_}))
"""

PATHS = ["20 columns", "RandomForest", "XGBoost", "XGBoost, path-dependent",
         "4 methods, 5 groups", "decompose", "decompose, path-dependent",
         "k-SII, order 2", "k-SII, order 2, path-dependent", "Owen", "Owen, path-dependent"]


def other_paths():
    print(f"\n{'1,000 rows, cold cache':<32} {'n_jobs=1':>9} {'n_jobs=2':>9} "
          f"{'second call':>12}   (CPU seconds)")
    for case in PATHS:
        cells = []
        for n_jobs in (1, 2):
            with tempfile.TemporaryDirectory() as cache:
                r = run_script(PATHS_CASE, [case, str(n_jobs)], cache)
            cells.append(r)
        if any(r is None or r["algorithm"] != "tree" for r in cells):
            print(f"{case:<32} skipped (library not installed?)")
            continue
        print(f"{case:<32} {cells[0]['first']:>9.2f} {cells[1]['first']:>9.2f} "
              f"{cells[0]['second']:>12.2f}", flush=True)


SUMMARY_CASE = r"""
import json, time
import numpy as np
from sklearn.ensemble import RandomForestRegressor
from skdecomp._tree import extract_tree_model
from skdecomp._tree._dispatch import _by_node
from skdecomp._tree._kernels import _tree_background_leaves
from skdecomp._tree._vectorized import background_leaves_vectorized
rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 10))
y = X[:, 0] * X[:, 1] + X.sum(axis=1) + rng.normal(size=3000)
def best(fn):
    times = []
    for _ in range(2):
        t = time.process_time()
        out = fn()
        times.append(time.process_time() - t)
    return min(times), out
rows, compile_s = [], None
for n_trees, depth, n_bg in [(100, 5, 100), (100, 8, 100), (200, 10, 200),
                             (300, 12, 300)]:
    model = RandomForestRegressor(n_estimators=n_trees, max_depth=depth,
                                  max_features=0.5, random_state=0).fit(X, y)
    tm = extract_tree_model(model)
    Zm = tm.prepare(X[:n_bg])
    args = (Zm, tm.column_groups(np.arange(10)), tm.roots, tm.node_int,
            tm.threshold, tm.cat_bits, 10)
    def kernel():
        ptr, ids, pats, counts = _tree_background_leaves(*args, tm.max_depth)
        return _by_node(ptr, ids, pats, counts, tm.node_int.shape[0])
    if compile_s is None:
        t = time.process_time()
        kernel()
        compile_s = time.process_time() - t
    t_np, a = best(lambda: background_leaves_vectorized(*args))
    t_k, b = best(kernel)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    rows.append([tm.n_leaves * n_bg, t_np, t_k])
print(json.dumps({"compile": compile_s, "rows": rows}))
"""


def summary():
    with tempfile.TemporaryDirectory() as cache:
        r = run_script(SUMMARY_CASE, [], cache)
    if r is None:
        print("summary failed")
        return
    print(f"\nbackground summary: the kernel's first call {r['compile']:.2f} s "
          "(compiled)")
    print(f"{'leaves x background':>20} {'numpy (s)':>10} {'kernel (s)':>11} "
          f"{'numpy / key (us)':>17}   (CPU seconds, warm)")
    for keys, t_np, t_k in r["rows"]:
        print(f"{keys:>20,} {t_np:>10.3f} {t_k:>11.3f} {1e6 * t_np / keys:>17.3f}")


def tree_paths():
    print(f"\n{'tree path, 1,000 rows':<26} {'cache':<5} {'first wall':>10} "
          f"{'first CPU':>10} {'second wall':>12}   (seconds)")
    for imputer in ("marginal", "path_dependent"):
        for n_jobs in (1, 2):
            label = f"{imputer}, n_jobs={n_jobs}"
            with tempfile.TemporaryDirectory() as cache:
                for state in ("cold", "warm"):
                    r = run_script(TREE_CASE, [imputer, str(n_jobs)], cache)
                    if r is None:
                        print(f"{label:<26} failed")
                        break
                    print(f"{label:<26} {state:<5} {r['first'][0]:>10.2f} "
                          f"{r['first'][1]:>10.2f} {r['second'][0]:>12.2f}", flush=True)


def blocks():
    print(f"\n{'100,000 rows':<16} {'one call':>9} "
          + " ".join(f"{b:>7}" for b in ("2000", "5000", "12500", "25000"))
          + "   (CPU seconds, blocks of that many rows)")
    for imputer in ("marginal", "path_dependent"):
        with tempfile.TemporaryDirectory() as cache:
            r = run_script(BLOCKS_CASE, [imputer], cache)
        if r is None:
            print(f"{imputer:<16} failed")
            continue
        print(f"{imputer:<16} {r['one']:>9.2f} "
              + " ".join(f"{r[b]:>7.2f}" for b in ("2000", "5000", "12500", "25000")),
              flush=True)


def default_calls():
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


def main(sections):
    sections = sections or ["default", "tree", "paths", "blocks", "summary"]
    if "default" in sections:
        default_calls()
    if "summary" in sections:
        summary()
    if "tree" in sections:
        tree_paths()
    if "paths" in sections:
        other_paths()
    if "blocks" in sections:
        blocks()


if __name__ == "__main__":
    main(sys.argv[1:])
