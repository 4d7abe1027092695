"""Every public object has a valid numpydoc docstring.

Modelled on scikit-learn's ``sklearn/tests/test_docstrings.py``: each public
function, class and public method is checked with
:func:`numpydoc.validate.validate`, one test per object.
"""

import importlib
import inspect
import re
from pathlib import Path

import pytest

numpydoc_validation = pytest.importorskip("numpydoc.validate")

ROOT = Path(__file__).resolve().parents[1]

PUBLIC_MODULES = [
    "skdecomp",
    "skdecomp.datasets",
    "skdecomp.inspection",
    "skdecomp.interactions",
    "skdecomp.metrics",
    "skdecomp.plot",
]

# Error codes ignored everywhere (all codes:
# https://numpydoc.readthedocs.io/en/latest/validation.html):
# - GL01, GL02: where the summary starts and blank lines around it (layout only);
# - RT02: the first line of Returns may name the returned object, not only its type;
# - ES01, SA01, SA04, EX01: an extended summary, a See Also section (with a
#   description for each entry) and an Examples section are not required.
IGNORED = {"GL01", "GL02", "RT02", "ES01", "SA01", "SA04", "EX01"}

# Methods that scikit-learn defines and documents; the metadata-routing setters
# (``set_{method}_request``) are skipped by pattern.
SKLEARN_METHODS = {
    "fit_transform",
    "get_metadata_routing",
    "get_params",
    "set_output",
    "set_params",
}


def _defining_class(klass, name):
    for base in klass.__mro__:
        if name in vars(base):
            return base
    return None


def _public_methods(klass):
    """Public methods and properties that skdecomp itself defines on ``klass``."""
    for name in sorted(dir(klass)):
        if name.startswith("_") or name in SKLEARN_METHODS:
            continue
        if re.fullmatch(r"set_\w+_request", name):
            continue
        owner = _defining_class(klass, name)
        if owner is None or not owner.__module__.startswith("skdecomp"):
            continue  # inherited from scikit-learn (e.g. ``score`` of a regressor)
        attr = inspect.getattr_static(klass, name)
        if isinstance(attr, (staticmethod, classmethod, property)) or callable(attr):
            yield name


def public_objects():
    """Import path, class (or None) and method name (or None) of each public object."""
    seen = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                continue  # submodules and constants (``__version__``, ...)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            path = f"{module_name}.{name}"
            yield path, None, None
            if inspect.isclass(obj):
                for method in _public_methods(obj):
                    yield f"{path}.{method}", obj, method


PUBLIC_OBJECTS = list(public_objects())


def filter_errors(errors, klass=None, method=None):
    for code, message in errors:
        if code in IGNORED:
            continue
        # A property is documented like an attribute: it has no parameters, and
        # numpydoc cannot read a signature from it.
        if code in {"PR02", "GL08"} and method is not None:
            if isinstance(inspect.getattr_static(klass, method), property):
                continue
        yield code, message


def test_public_objects_are_collected():
    paths = [path for path, _, _ in PUBLIC_OBJECTS]
    assert "skdecomp.Explainer" in paths
    assert "skdecomp.Explainer.fit" in paths
    assert "skdecomp.metrics.infidelity" in paths
    assert "skdecomp.plot.AttributionDisplay.from_estimator" in paths
    assert not any(path.endswith((".set_params", ".get_params")) for path in paths)


@pytest.mark.parametrize(
    "path, klass, method",
    PUBLIC_OBJECTS,
    ids=[path for path, _, _ in PUBLIC_OBJECTS],
)
def test_docstring(path, klass, method):
    result = numpydoc_validation.validate(path)
    errors = list(filter_errors(result["errors"], klass, method))
    if errors:
        lines = [f"{path} (in {result['file']}:{result['file_line']}):"]
        lines += [f"  {code}: {message}" for code, message in errors]
        raise AssertionError("\n".join(lines))


# -- no references to internal documents ---------------------------------------

DOC_BUILD_DIRS = {"_build", "auto_examples", "generated"}
TEXT_SUFFIXES = {".py", ".rst", ".md", ".txt", ".html", ".css", ".js", ".cfg"}
NOT_SCANNED = {
    # this file names the internal document to look for it
    Path(__file__).resolve(),
}


def _repository_files():
    yield ROOT / "README.md"
    for top in ["skdecomp", "doc", "examples", "tests", "benchmarks"]:
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
                continue
            rel = path.relative_to(ROOT / top).parts
            if top == "doc" and rel[0] in DOC_BUILD_DIRS:
                continue
            if path.resolve() in NOT_SCANNED:
                continue
            yield path


def test_no_internal_spec_references():
    # The repository speaks of the product alone: docstrings, pages, tests and
    # benchmarks cite the papers and the user guide, not an internal
    # specification that users cannot read.
    offenders = [
        str(path.relative_to(ROOT))
        for path in _repository_files()
        if "paper-spec" in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert not offenders, "files mentioning 'paper-spec':\n" + "\n".join(offenders)
