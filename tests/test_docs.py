"""The documentation builds without warnings and reads offline.

The full build does not execute the gallery examples (``tests/test_examples.py``
runs them); the output shown under gallery cells is checked on a small
gallery built with the documentation's own sphinx-gallery configuration.
"""

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

# the documentation is built once, by one worker when the suite runs in parallel
pytestmark = pytest.mark.xdist_group("docs")

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"
NEEDED = ["sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "matplotlib"]


def _skip_without_doc_dependencies():
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f'building the docs needs {", ".join(missing)}: pip install -e ".[doc]"'
        )


def _sphinx(srcdir, outdir, doctrees, *options):
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        *options,
        "-b",
        "html",
        "-d",
        str(doctrees),
        str(srcdir),
        str(outdir),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    """The documentation built once (warnings are errors, gallery not run)."""
    _skip_without_doc_dependencies()
    tmp = tmp_path_factory.mktemp("docs")
    proc = _sphinx(
        DOC, tmp / "html", tmp / "doctrees", "-W", "--keep-going",
        "-D", "plot_gallery=0",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return tmp / "html"


def _pages(html):
    return {
        str(path.relative_to(html)): path.read_text(encoding="utf-8")
        for path in sorted(html.rglob("*.html"))
    }


# Scripts, styles and code may hold a backslash and a bracket (regular
# expressions), and a typeset formula is labelled with its LaTeX source.
_NOT_PROSE = re.compile(
    r"<(script|style|pre|code|svg)\b.*?</\1>", re.DOTALL | re.IGNORECASE
)
_DELIMITER = re.compile(r"\\[\[\]()]")


@pytest.mark.slow
def test_docs_build_without_warnings(html):
    for page in [
        "index.html",
        "install.html",
        "user_guide.html",
        "api.html",
        "auto_examples/index.html",
        "generated/skdecomp.plot.AttributionDisplay.html",
    ]:
        assert (html / page).is_file(), page


@pytest.mark.slow
def test_maths_is_typeset_when_building(html):
    # Formulas are SVG in the page: no MathJax (a script from a CDN, so raw
    # ``\[ ... \]`` offline) and no LaTeX source left for a script to typeset.
    pages = _pages(html)
    prose = {name: _NOT_PROSE.sub("", text) for name, text in pages.items()}
    unrendered = {
        name: sorted(set(_DELIMITER.findall(text)))
        for name, text in prose.items()
        if _DELIMITER.search(text)
    }
    assert not unrendered, f"LaTeX delimiters left in the pages: {unrendered}"
    scripts = [name for name, text in pages.items() if "mathjax" in text.lower()]
    assert not scripts, f"pages loading MathJax: {scripts}"
    fallbacks = [name for name, text in pages.items() if '<code class="math">' in text]
    assert not fallbacks, f"formulas shown as source: {fallbacks}"

    guide = pages["user_guide.html"]
    formulas = re.findall(r'<svg class="math"[^>]*>.*?</svg>', guide)
    assert len(formulas) >= 60
    for svg in formulas:
        # glyphs drawn as paths in the colour of the text, LaTeX as the label
        assert re.search(r'aria-label="[^"]+"', svg)
        assert re.search(r'<path fill="currentColor" d="M[^"]+"', svg)
    assert 'aria-label="F_U(x) = \\sum_{S \\subseteq U}' in guide
    # display maths is a block of its own
    assert guide.count('<div class="math-display"') >= 5


@pytest.mark.slow
def test_pages_cite_no_internal_documents(html):
    # the paper is cited by authors and venue, not by an internal name
    internal = "-".join(["paper", "spec"])
    offenders = [
        name for name, text in _pages(html).items() if internal in text.lower()
    ]
    assert not offenders, offenders


def _gallery_conf():
    """``sphinx_gallery_conf`` of doc/conf.py, read without running conf.py."""
    tree = ast.parse((DOC / "conf.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "sphinx_gallery_conf" for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError("doc/conf.py sets no sphinx_gallery_conf")


GALLERY_EXAMPLE = '''"""
Cell outputs
============

The last expression of a cell is shown under it.
"""

# %%
# A display: its figure is shown, not its repr.
import matplotlib.pyplot as plt
import numpy as np

from skdecomp.plot import AttributionDisplay

AttributionDisplay.from_result(
    {"shapley": np.array([[1.0, -0.5]])}, group_names=["a", "b"]
)

# %%
# A matplotlib object: the figure shows it.
fig, ax = plt.subplots()
ax.bar(["a", "b"], [1.0, -0.5], label="shapley")
ax.legend()

# %%
# A value: its repr is shown.
np.array([1.25, -0.5])
'''


@pytest.mark.slow
def test_gallery_shows_no_object_reprs(tmp_path):
    _skip_without_doc_dependencies()
    src = tmp_path / "src"
    (src / "examples").mkdir(parents=True)
    (src / "examples" / "README.txt").write_text("Gallery\n=======\n")
    (src / "examples" / "plot_outputs.py").write_text(GALLERY_EXAMPLE)
    (src / "index.rst").write_text(
        "Docs\n====\n\n.. toctree::\n\n   auto_examples/index\n"
    )
    conf = dict(_gallery_conf(), examples_dirs="examples", gallery_dirs="auto_examples")
    (src / "conf.py").write_text(
        'import matplotlib\nmatplotlib.use("Agg")\n'
        'extensions = ["sphinx_gallery.gen_gallery"]\n'
        f"sphinx_gallery_conf = {conf!r}\n"
    )
    proc = _sphinx(src, tmp_path / "html", tmp_path / "doctrees")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]

    page = (tmp_path / "html" / "auto_examples" / "plot_outputs.html").read_text(
        encoding="utf-8"
    )
    assert page.count("sphx-glr-single-img") == 2  # both figures drawn
    assert " object at 0x" not in page
    assert "array([ 1.25, -0.5 ])" in page  # values are still shown
