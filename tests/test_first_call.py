"""The default first call of a new process compiles no Numba kernel.

Each case runs in a subprocess with an empty ``NUMBA_CACHE_DIR`` and counts
compiled signatures (not seconds, which depend on the machine): a default
``Explainer`` on a tree model, ``fit`` then ``transform`` of a few rows, is
served by the numpy tree path, so a change that adds compile work to it fails
here. ``benchmarks/bench_first_call.py`` measures the seconds.
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
