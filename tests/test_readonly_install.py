"""skdecomp imports and explains from a read-only install without a writable home."""

import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from skdecomp import _numba

SCRIPT = textwrap.dedent(
    """
    import warnings
    warnings.simplefilter("error", RuntimeWarning)
    import numpy as np
    from sklearn.ensemble import RandomForestRegressor
    import skdecomp
    assert skdecomp.__file__.startswith({root!r}), skdecomp.__file__
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = X[:, 0] * X[:, 1] + X[:, 2]
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    e = skdecomp.Explainer(model, background=10, random_state=0).fit(X)
    phi = e.transform(X[:4])
    # efficiency: base value plus attributions give the model's prediction
    assert np.allclose(phi.sum(axis=1) + e.expected_value_, model.predict(X[:4]))
    print("cache:", skdecomp._numba.CACHE_DIR)
    """
)


def _unprivileged(cmd):
    """``cmd`` run as nobody, allowed to read (not write) anything.

    CAP_DAC_READ_SEARCH lets the process read the interpreter wherever it is
    installed (e.g. under /root) but gives no right to write, which is what
    the test is about.
    """
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", *cmd]


@pytest.mark.slow
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to switch to an unprivileged user",
)
def test_import_and_explain_read_only_as_unprivileged_user(tmp_path):
    root = tmp_path / "site"
    package = os.path.dirname(_numba.__file__)
    shutil.copytree(package, root / "skdecomp",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path, dirs, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(path, name), 0o444)
        for name in dirs:
            os.chmod(os.path.join(path, name), 0o555)
    os.chmod(root, 0o555)
    os.chmod(tmp_path, 0o755)
    parent = tmp_path
    while str(parent) != parent.root:  # the copy must be reachable by nobody
        parent = parent.parent
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IXOTH)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NUMBA_") and k not in ("PYTHONPATH", "HOME")}
    env.update(HOME="/nonexistent", PYTHONPATH=str(root))
    cache = os.path.join("/tmp", "skdecomp-numba-cache-65534")
    for run in range(2):  # the second run loads what the first one cached
        out = subprocess.run(
            _unprivileged([sys.executable, "-c", SCRIPT.format(root=str(root))]),
            env=env, cwd="/", capture_output=True, text=True, timeout=600,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert f"cache: {cache}" in out.stdout
    assert not any(p.name == "__pycache__" for p in root.rglob("*"))
    assert os.stat(cache).st_uid == 65534
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


def test_cache_dir_writable_by_others_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert _numba._private_dir(str(shared)) is None
    os.chmod(shared, 0o700)
    assert _numba._private_dir(str(shared)) == str(shared)
    target = tmp_path / "file"
    target.write_text("")
    assert _numba._private_dir(str(target)) is None
    link = tmp_path / "link"
    link.symlink_to(shared)
    assert _numba._private_dir(str(link)) is None


def test_cache_is_configured_in_this_process():
    assert _numba.CACHE_DIR is not None
    assert _numba._can_cache()
