import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

EVIL = "<script>alert(1)</script>"


def run(args, cwd):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, "-m", "skdecomp", *args], cwd=cwd, env=env,
        capture_output=True, text=True,
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(0)
    n = 150
    df = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            EVIL: rng.normal(size=n),
            "city": rng.choice(["paris", "lyon", "nice"], n),
        }
    )
    df["y"] = df["a"] * df["b"] + (df["city"] == "lyon") * df[EVIL] + 0.1 * rng.normal(size=n)
    path = d / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_report_on_csv_with_categorical_and_escaping(table, tmp_path):
    out = tmp_path / "rep"
    r = run(["report", str(table), "--target", "y", "--out", str(out), "--n-rows", "5",
             "--estimator", "hgb"], tmp_path)
    assert r.returncode == 0, r.stderr
    page = (out / "index.html").read_text()
    res = json.loads((out / "results.json").read_text())
    assert EVIL not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert res["columns"] == ["a", "b", EVIL, "city"]
    assert set(res["partitions"]) == {"columns", "agreed"}
    part = res["partitions"]["columns"]
    assert len(part["group_names"]) == 4
    assert np.asarray(part["attributions"]["shapley"]).shape == (5, 4)
    assert "data:image/png;base64," in page
    assert any("category codes" in n for n in res["notes"])
    assert part["algorithm"] == "tree"  # the encoding keeps the exact tree path


def test_report_with_column_groups_from_json(table, tmp_path):
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"ab": ["a", "b"], "rest": [EVIL, "city"]}))
    out = tmp_path / "rep"
    r = run(["report", str(table), "--target", "y", "--groups", str(groups), "--out", str(out),
             "--n-rows", "3", "--estimator", "linear"], tmp_path)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["partitions"]["given"]["group_names"] == ["ab", "rest"]


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--target", "nope"], 1, "target column 'nope' is not in"),
        ([], 2, "--target"),
        (["--target", "y", "--estimator", "xgb"], 2, "invalid choice"),
    ],
)
def test_report_errors(table, tmp_path, args, code, message):
    r = run(["report", str(table), *args], tmp_path)
    assert r.returncode == code
    assert message in r.stderr


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    r = run(["report", str(empty), "--target", "y"], tmp_path)
    assert r.returncode == 1 and "is empty" in r.stderr
    r = run(["report", str(tmp_path / "none.csv"), "--target", "y"], tmp_path)
    assert r.returncode == 1 and "no such file" in r.stderr


def test_pickle_refused_and_skops_loaded(table, tmp_path):
    import joblib
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder
    skops_io = pytest.importorskip("skops.io")

    df = pd.read_csv(table)
    X, y = df.drop(columns="y"), df["y"]
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["city"]), remainder="passthrough"),
        LinearRegression(),
    ).fit(X, y)
    pkl = tmp_path / "model.pkl"
    joblib.dump(model, pkl)
    r = run(["report", str(table), "--target", "y", "--model", str(pkl)], tmp_path)
    assert r.returncode == 1
    assert "pickle" in r.stderr and "skops" in r.stderr
    sk = tmp_path / "model.skops"
    skops_io.dump(model, sk)
    out = tmp_path / "rep"
    r = run(["report", str(table), "--target", "y", "--model", str(sk), "--groups", "columns",
             "--out", str(out), "--n-rows", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    phi = np.asarray(res["partitions"]["columns"]["attributions"]["occlusion"])
    # a linear model: occlusion of a numeric column is coef * (x - mean of background)
    assert phi.shape == (3, 4) and np.isfinite(phi).all()


@pytest.mark.slow
def test_demo_writes_report(tmp_path):
    r = run(["demo", "--n-rows", "1"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Shapley" in r.stdout and "How far apart" in r.stdout
    # plain words: no notation, and a verdict at the end
    for notation in ("E_B f", "Var f", "sum_|U|", "F_U", "E["):
        assert notation not in r.stdout
    assert "In short:" in r.stdout.split("How far apart")[1]
    assert r.stdout.rstrip().splitlines()[-1].startswith("Report written to")
    res = json.loads((tmp_path / "skdecomp-report" / "results.json").read_text())
    assert res["agreed"] is not None
    assert res["task"] == "regression" and res["score"]["held_out"]
    assert res["verdict"] and all(s in r.stdout for s in res["verdict"])
    page = (tmp_path / "skdecomp-report" / "index.html").read_text()
    for notation in ("E_B f", "Var f", "sum_|U|"):
        assert notation not in page


@pytest.mark.slow
def test_report_renders_in_headless_chromium(table, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI; .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    out = tmp_path / "rep"
    r = run(["report", str(table), "--target", "y", "--out", str(out), "--n-rows", "3",
             "--groups", "columns"], tmp_path)
    assert r.returncode == 0, r.stderr
    shot = tmp_path / "shot.png"
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={shot}", "--window-size=1200,2000", (out / "index.html").as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    from PIL import Image

    img = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert img.std() > 5  # not blank: text and plots drawn
    assert (img < 128).mean() > 0.01


def test_verbose_progress_bars(capsys):
    from skdecomp import AdaptiveGrouper, Explainer
    from skdecomp.datasets import make_agreed_example

    data = make_agreed_example(n_samples=100, random_state=0)
    AdaptiveGrouper(data.function, max_samples=20, rel_tol=0, random_state=0).fit(data.data)
    Explainer(data.function, background=20, batch_size=200).fit(data.data).transform(
        data.data[:3]
    )
    assert capsys.readouterr().err == ""
    AdaptiveGrouper(data.function, max_samples=20, rel_tol=0, random_state=0,
                    verbose=1).fit(data.data)
    Explainer(data.function, background=20, batch_size=200, verbose=1).fit(
        data.data
    ).transform(data.data[:3])
    err = capsys.readouterr().err
    assert "AGREED merges" in err and "model calls" in err


def test_task_detection():
    from sklearn.linear_model import LinearRegression, LogisticRegression

    from skdecomp._report import is_classification

    rng = np.random.default_rng(0)
    assert not is_classification(rng.integers(25, 346, size=300))  # counts, many values
    assert not is_classification(rng.normal(size=50))
    assert is_classification(rng.integers(0, 3, size=50))
    assert is_classification(np.array(["a", "b"] * 10, dtype=object))
    assert is_classification(np.array([True, False] * 10))
    assert not is_classification(rng.integers(0, 3, size=50), LinearRegression())
    assert is_classification(rng.normal(size=50), LogisticRegression())


PROBE = r"""
import json
from numba.core import event
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge
import skdecomp

X, y = load_diabetes(return_X_y=True)
hgb = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
ridge = Ridge().fit(X, y)
compiled = []


class Record(event.Listener):
    def on_start(self, ev):
        compiled.append(str(ev.data.get("dispatcher")))

    def on_end(self, ev):
        pass


event.register("numba:compile", Record())
for model in (hgb, ridge):
    skdecomp.Explainer(model, background=30, random_state=0).fit(X).transform(X[:5])
skdecomp.AdaptiveGrouper(hgb, max_samples=30, random_state=0).fit(X)
print(json.dumps(compiled))
"""


@pytest.mark.slow
def test_compile_command_fills_the_cache(tmp_path):
    # after `skdecomp compile`, the first calls of a new process compile nothing
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "skdecomp", "compile"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "tree path, regressor" in out.stdout and "Compiled in" in out.stdout
    probe = subprocess.run([sys.executable, "-c", PROBE], env=env,
                           capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout.strip().splitlines()[-1]) == []
