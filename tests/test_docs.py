"""The documentation builds without warnings (gallery examples not executed)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "doc"
NEEDED = ["sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "matplotlib"]


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f'building the docs needs {", ".join(missing)}: pip install -e ".[doc]"'
        )
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-b",
        "html",
        "-D",
        "plot_gallery=0",
        "-d",
        str(tmp_path / "doctrees"),
        str(DOC),
        str(tmp_path / "html"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    html = tmp_path / "html"
    for page in [
        "index.html",
        "install.html",
        "user_guide.html",
        "api.html",
        "auto_examples/index.html",
        "generated/skdecomp.plot.AttributionDisplay.html",
    ]:
        assert (html / page).is_file(), page
