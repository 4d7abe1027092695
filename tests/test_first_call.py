"""The default first call of a new process compiles no Numba kernel.

Each case runs in a subprocess with an empty ``NUMBA_CACHE_DIR`` and counts
compiled signatures (not seconds, which depend on the machine): a default
``Explainer`` on a tree model, ``fit`` then ``transform`` of a few rows, is
served by the numpy tree path, so a change that adds compile work to it fails
here; a first call served by the Numba kernels, serial or parallel,
compiles each kernel once. ``benchmarks/bench_first_call.py`` measures the
seconds. The kernels take explained rows in cache-sized blocks, which change
no result.
"""

import json
import os
import subprocess
import sys

import pytest

PROBE = r"""
import json, sys
import numpy as np
from numba.core import event
from sklearn.datasets import load_diabetes
import skdecomp

compiled = []


class Record(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


X, y = load_diabetes(return_X_y=True)
case = sys.argv[1]
if case == "hgb_wide":
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 80))
    y = X[:, 0] * X[:, 1] + X[:, :10].sum(axis=1)
if case in ("hgb", "hgb_wide"):
    from sklearn.ensemble import HistGradientBoostingRegressor
    model = HistGradientBoostingRegressor(max_iter=30, random_state=0)
elif case == "hgb_classifier":
    from sklearn.ensemble import HistGradientBoostingClassifier
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0)
    y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
elif case == "rf":
    from sklearn.ensemble import RandomForestRegressor
    model = RandomForestRegressor(n_estimators=30, random_state=0)
elif case == "xgboost":
    from xgboost import XGBRegressor
    model = XGBRegressor(n_estimators=30, max_depth=4)
else:
    from lightgbm import LGBMRegressor
    model = LGBMRegressor(n_estimators=30, verbose=-1)
model.fit(X, y)
event.register("numba:compile", Record())
if len(sys.argv) > 2:  # the grouper: the tree path's sums compile nothing
    grouper = skdecomp.AdaptiveGrouper(model, random_state=0).fit(X)
    compiled = [name for name in compiled if name.startswith("_tree")]
else:
    explainer = skdecomp.Explainer(model, random_state=0).fit(X)
    explainer.transform(X[:5])
    assert explainer.algorithm_ == "tree", explainer.algorithm_
print(json.dumps(compiled))
"""


@pytest.mark.parametrize(
    "case", ["hgb", "hgb_classifier", "rf", "hgb_wide", "xgboost", "lightgbm"]
)
def test_default_first_call_compiles_nothing(case, tmp_path):
    if case in ("xgboost", "lightgbm"):
        pytest.importorskip(case)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", PROBE, case], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_grouper_first_call_compiles_no_tree_kernel(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", PROBE, "hgb", "grouper"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


KERNELS_ONCE = r"""
import json, sys
from collections import Counter
import numpy as np
from numba.core import event
from sklearn.ensemble import HistGradientBoostingRegressor
import skdecomp
from skdecomp._tree import numba_only

compiled = []


class Record(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


rng = np.random.default_rng(0)
X = rng.normal(size=(300, 6))
y = X[:, 0] * X[:, 1] + X.sum(axis=1)
model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
event.register("numba:compile", Record())
for imputer in ("marginal", "path_dependent"):
    explainer = skdecomp.Explainer(model, imputer=imputer, n_jobs=2,
                                   random_state=0).fit(X)
    with numba_only():
        explainer.transform(X[:50])
mine = [name for name in compiled if name.startswith(("_tree", "_pd"))]
print(json.dumps([name for name, n in Counter(mine).items() if n > 1]))
"""


def test_parallel_first_calls_compile_each_kernel_once(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", KERNELS_ONCE], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_row_blocks_change_no_result(monkeypatch):
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skdecomp._decomposition import size_weights
    from skdecomp._tree import _dispatch, extract_tree_model, tree_attributions
    from skdecomp._tree._pathdep import path_dependent_attributions

    rng = np.random.default_rng(1)
    X = rng.normal(size=(700, 5))
    y = X[:, 0] * X[:, 1] + X.sum(axis=1)
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    tree_model = extract_tree_model(model)
    labels = np.arange(5)
    weights = {"shapley": size_weights("shapley", 5)}

    def results():
        out = [path_dependent_attributions(tree_model, X, labels, 5, weights)]
        for kernel in ("patterns", "hashed"):
            out.append(tree_attributions(tree_model, X, X[:40], labels, 5, weights,
                                         kernel=kernel))
        return [r["shapley"] for r in out]

    whole = results()
    monkeypatch.setattr(_dispatch, "_BLOCK_BYTES", 1)  # blocks of _MIN_BLOCK_ROWS
    assert _dispatch._cache_block_rows(5, 8, 5, 1) < X.shape[0]
    for a, b in zip(whole, results()):
        np.testing.assert_array_equal(a, b)
