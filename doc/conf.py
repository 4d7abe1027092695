"""Sphinx configuration of the skdecomp documentation.

Build: ``python -m sphinx -W -b html doc doc/_build/html``; add
``-D plot_gallery=0`` to skip running the gallery examples.
"""

import os
import re
import sys
from datetime import date

import matplotlib

matplotlib.use("Agg")

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("_ext"))  # local Sphinx extensions
import skdecomp  # noqa: E402

project = "skdecomp"
author = "skdecomp developers"
copyright = f"{date.today().year}, {author}"
release = skdecomp.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "mathtext_svg",  # maths typeset at build time, no script or network
    "sphinx.ext.doctest",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "matplotlib.sphinxext.plot_directive",
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.codeobj.json",
]
root_doc = "index"
default_role = "literal"

# -- API reference ------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- gallery ------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "backreferences_dir": "generated/backreferences",
    "doc_module": ("skdecomp",),
    "reset_modules": ("matplotlib",),
    # The last expression of a cell is shown under it, except for displays and
    # matplotlib objects: the figure already shows them, and their repr is only
    # "<... object at 0x...>".
    "ignore_repr_types": r"Display'>$|^<class 'matplotlib\.",
    # the timing page loads scripts from a CDN; the docs work offline
    "write_computation_times": False,
}

# -- figures made by the plot directive ----------------------------------------
plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]

# -- maths --------------------------------------------------------------------
# Formulas are typeset by matplotlib's mathtext when the pages are built and
# written into them as SVG (doc/_ext/mathtext_svg.py): the pages show them
# offline, and building needs no LaTeX. mathtext reads a subset of LaTeX.
html_math_renderer = "mathtext_svg"
mathtext_svg_fontset = "cm"

# -- HTML ---------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skdecomp {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_sidebars = {"install": [], "user_guide": []}


# -- plain-text formulas in docstrings -------------------------------------------
# Docstrings write formulas in plain text (``|S|``, ``n_features_in_``,
# ``*shape``). Outside literal text these are reStructuredText markup
# (substitutions, references, emphasis), so they are escaped after numpydoc
# has turned the docstring into reStructuredText.
_LITERAL_SPAN = re.compile(r"(``.+?``|:[\w:-]+:`[^`]+`|`[^`]+`_{0,2})")
_TRAILING_UNDERSCORE = re.compile(
    r"(?<![\w`*\\|])([A-Za-z]\w*_)(?=$|[\s\-.,:;!?/'\")\]}>])"
)


def _escape_plain(text):
    parts = _LITERAL_SPAN.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside literal spans
        part = parts[i].replace("|", r"\|")
        if part.count("*") % 2:
            part = part.replace("*", r"\*")
        parts[i] = _TRAILING_UNDERSCORE.sub(r"``\1``", part)
    return "".join(parts)


def _escape_docstring(app, what, name, obj, options, lines):
    out = []
    literal_indent = None
    in_doctest = False
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                out.append(line)
                continue
            literal_indent = None
        if in_doctest:
            if stripped:
                out.append(line)
                continue
            in_doctest = False
        if stripped.startswith(">>>"):
            in_doctest = True
            out.append(line)
            continue
        if stripped.startswith(".. "):
            if "::" in stripped:
                literal_indent = indent
            out.append(line)
            continue
        if stripped.endswith("::"):
            literal_indent = indent
        out.append(_escape_plain(line))
    lines[:] = out


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing setters are documented by scikit-learn
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _escape_docstring, priority=900)
    app.connect("autodoc-skip-member", _skip_member)
