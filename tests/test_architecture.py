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


# -- one list of methods, accessors instead of private reads, small modules ----------
def _sources(exclude=()):
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not any(rel.startswith(e) for e in exclude):
            yield rel, ast.parse(path.read_text())


def _method_name_lists():
    """Literal lists, tuples, sets and dict keys naming two or more methods."""
    from skdecomp._methods._registry import ALIASES, REGISTRY

    names = set(REGISTRY) | set(ALIASES)
    found = []
    for rel, tree in _sources(exclude=("skdecomp/_methods/",)):
        for node in ast.walk(tree):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                elts = node.elts
            elif isinstance(node, ast.Dict):
                elts = [k for k in node.keys if k is not None]
            else:
                continue
            hits = [e.value for e in elts
                    if isinstance(e, ast.Constant) and e.value in names]
            if len(hits) >= 2:
                found.append(f"{rel}:{node.lineno} {hits}")
    return found


def test_method_lists_come_from_the_registry():
    """Defaults, choices, colours and labels are registry data.

    Outside ``skdecomp/_methods`` only the weight functions of the exact
    methods (``_decomposition``, below the registry) name methods: their
    table and their aliases.
    """
    found = _method_name_lists()
    assert all(f.startswith("skdecomp/_decomposition/") for f in found), found
    assert len(found) <= 2, found


def test_the_counter_of_method_lists_finds_a_list(tmp_path, monkeypatch):
    # the counter is not vacuous: a hand-written default list is found
    fake = tmp_path / "skdecomp"
    fake.mkdir()
    (fake / "mod.py").write_text("DEFAULT = ['shapley', 'pfi']\nOTHER = ['a', 'shapley']\n")
    monkeypatch.setitem(globals(), "PACKAGE", fake)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert _method_name_lists() == ["skdecomp/mod.py:1 ['shapley', 'pfi']"]


def _private_reads():
    """Reads ``obj._name`` of a private attribute that the module does not define.

    Attributes of ``self``, ``cls`` and ``super()``, and of imported modules,
    are not counted, nor names the module defines itself (its classes'
    attributes and methods); the scikit-learn tree extractor
    (``_tree/_extract.py``) reads scikit-learn's private tree state by
    design and is left out.
    """
    found = []
    for rel, tree in _sources(exclude=("skdecomp/_tree/_extract.py",)):
        modules, own = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                modules |= {a.asname or a.name for a in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id == "self"):
                own.add(node.attr)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
                continue
            attr, value = node.attr, node.value
            if not attr.startswith("_") or attr.endswith("__") or attr in own:
                continue
            if isinstance(value, ast.Name) and (value.id in ("self", "cls")
                                                or value.id in modules):
                continue
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id == "super"):
                continue
            if (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                    and value.value.id in modules):
                continue
            found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    return found


def test_few_reads_of_another_objects_private_attributes():
    found = _private_reads()
    assert len(found) <= 3, found


def test_the_counter_of_private_reads_finds_a_read(tmp_path, monkeypatch):
    fake = tmp_path / "skdecomp"
    fake.mkdir()
    (fake / "mod.py").write_text(
        "import numpy as np\n\nclass A:\n    def f(self, other):\n"
        "        self._x = np._core\n        return other._v + other._x\n"
    )
    monkeypatch.setitem(globals(), "PACKAGE", fake)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    # other._x is A's own attribute; other._v is not
    assert _private_reads() == ["skdecomp/mod.py:6 other._v"]


def test_modules_are_small():
    """No module over 1,000 lines, apart from Numba kernel files."""
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for path in PACKAGE.rglob("*.py")
        if path.name != "_kernels.py"
        and (n := len(path.read_text().splitlines())) > 1000
    ]
    assert not long, long


def test_report_modules_are_under_600_lines():
    long = [
        f"{path.name}: {n} lines"
        for path in (PACKAGE / "_report").glob("*.py")
        if (n := len(path.read_text().splitlines())) > 600
    ]
    assert not long, long


def _import_cycles():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("skdecomp", cache_dir=None)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for m in sorted(edges):
        if m not in index:
            visit(m)
    return cycles


def test_no_import_circle():
    cycles = _import_cycles()
    assert not cycles, cycles
