"""The package's layering and encapsulation, checked on its source."""

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "skdecomp"


def test_import_layers():
    """Data flows one way; the contracts live in setup.cfg."""
    cli = pytest.importorskip("importlinter.cli")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        code = cli.lint_imports(config_filename=str(ROOT / "setup.cfg"), no_cache=True)
    finally:
        os.chdir(cwd)
    assert code == 0, "import-linter contracts are broken; run `lint-imports` to see which"


def _private_names_of_explainer():
    tree = ast.parse((PACKAGE / "_explainer.py").read_text())
    cls = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Explainer"
    )
    names = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_"):
            names.add(node.name)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr.startswith("_")
        ):
            names.add(node.attr)
    return {n for n in names if not (n.startswith("__") and n.endswith("__"))}


def test_no_module_reads_private_state_of_the_explainer():
    """Consumers use the fitted game (``game_``) and public attributes only."""
    private = _private_names_of_explainer()
    assert "_check_X" in private
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "_explainer.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and not (
                    isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name)
                    and node.value.func.id == "super"
                )
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert not offenders, "private state of Explainer read from outside:\n" + "\n".join(offenders)
