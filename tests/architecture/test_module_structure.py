"""The package's structure rules, measured on its source (issue 13's acceptance checks).

* no import circle between the package's modules (function-level imports included), nor between
  its floors: no subpackage imports one that imports it back, directly or through others;
* no module imports another module's private (``_``-prefixed) names;
* protocol names are compared only inside the protocol registry (at most two such comparisons
  elsewhere, e.g. a deprecated alias);
* every public function of the metrics core has a doctested example.

Each check reads the source with :mod:`ast` (nothing is imported), so it fails the moment someone
adds such an import or comparison.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pansharp_iqa"
PROTOCOL_NAMES = {"toolbox2020", "toolbox2015", "qnr-paper", "reprojected2022"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> list[tuple[str, list[str]]]:
    """(imported module, names) pairs of a module, at any depth of its code."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path.name == "__init__.py", node)
            names = [a.name for a in node.names]
            submodules = [n for n in names if f"{target}.{n}" in MODULES]
            if len(submodules) < len(names):  # names defined by the module itself
                out.append((target, [n for n in names if n not in submodules]))
            out.extend((f"{target}.{n}", []) for n in submodules)  # `from pkg import submodule`
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _ in _imports(module):
            if target in MODULES and target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    # a package's __init__ re-exports its submodules (edges package -> submodule); a submodule
    # that imports names from its own package's __init__ (``from pansharp_iqa import x`` inside
    # the package) closes a circle and is reported
    assert _cycles(_graph()) == []


def _floor(module: str) -> str:
    """The package-level node of a module: its subpackage (``pansharp_iqa.tiled``), else itself."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else module


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {_floor(m): set() for m in graph}
    for module, targets in graph.items():
        out[_floor(module)] |= {_floor(t) for t in targets} - {_floor(module)}
    return out


def test_no_import_circle_between_subpackages():
    # e.g. indexes/ -> tensor/ (batched index functions) -> evaluate -> indexes/: a subpackage on two
    # floors; a package's own modules may import each other (the check above rules out circles)
    assert _cycles(_package_graph(_graph())) == []


def test_the_package_graph_sees_a_circle_through_a_subpackage():
    graph = {"pansharp_iqa.indexes.q2n": {"pansharp_iqa.tensor.inputs"},
             "pansharp_iqa.tensor.inputs": set(), "pansharp_iqa.tensor.metrics": {"pansharp_iqa.evaluation"},
             "pansharp_iqa.evaluation": {"pansharp_iqa.indexes.catalog"}, "pansharp_iqa.indexes.catalog": set()}
    assert _cycles(graph) == []  # no circle between modules ...
    assert _cycles(_package_graph(graph)) == [["pansharp_iqa.evaluation", "pansharp_iqa.indexes",
                                               "pansharp_iqa.tensor"]]  # ... but between floors


def test_no_private_names_imported_across_modules():
    offenders = []
    for module in MODULES:
        for target, names in _imports(module):
            if not target.startswith("pansharp_iqa"):
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                offenders.append(f"{module}: from {target} import {', '.join(private)}")
            last = target.rsplit(".", 1)[-1]
            if last.startswith("_") and not last.startswith("__") and target != "pansharp_iqa._version":
                offenders.append(f"{module}: imports the private module {target}")
    assert offenders == []


def _protocol_name_comparisons(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            consts = [o.value for o in operands if isinstance(o, ast.Constant)]
            for o in operands:  # `x in ("toolbox2015", ...)`
                if isinstance(o, (ast.Tuple, ast.List, ast.Set)):
                    consts += [e.value for e in o.elts if isinstance(e, ast.Constant)]
            if any(isinstance(c, str) and c.lower() in PROTOCOL_NAMES for c in consts):
                lines.append(node.lineno)
    return lines


def test_protocol_names_are_compared_only_in_the_registry():
    found = {
        str(path.relative_to(PACKAGE)): lines
        for module, path in MODULES.items()
        if module != "pansharp_iqa.protocols" and (lines := _protocol_name_comparisons(path))
    }
    assert sum(len(v) for v in found.values()) <= 2, found


CORE_PUBLIC = [
    "pansharp_iqa.validation", "pansharp_iqa.settings", "pansharp_iqa.protocols", "pansharp_iqa.borders",
    "pansharp_iqa.evaluation", "pansharp_iqa.indexes.q2n", "pansharp_iqa.indexes.uiqi", "pansharp_iqa.indexes.sam",
    "pansharp_iqa.indexes.ergas", "pansharp_iqa.indexes.scc", "pansharp_iqa.indexes.full_resolution",
    "pansharp_iqa.indexes.strips", "pansharp_iqa.indexes.catalog", "pansharp_iqa.indexes.psnr",
    "pansharp_iqa.indexes.cc", "pansharp_iqa.no_reference",
]


@pytest.mark.parametrize("module", CORE_PUBLIC)
def test_public_functions_have_a_doctest_example(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    exported = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            exported = {e.value for e in node.value.elts}  # type: ignore[attr-defined]
    missing = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            if exported is not None and node.name not in exported:
                continue
            doc = ast.get_docstring(node) or ""
            if ">>>" not in doc and "Deprecated" not in doc.split("\n")[0]:
                missing.append(node.name)
    assert missing == [], f"{module}: public functions without an example: {missing}"


# What docs/architecture.md says nlrnet may use of the core: the top-level API and these public
# modules (their documented names; never a `_private` one, which the check above enforces).
NLRNET_MAY_IMPORT = {
    "pansharp_iqa",
    "pansharp_iqa.io.arrays",
    "pansharp_iqa.io.geotiff",
    "pansharp_iqa.io.metadata",
    "pansharp_iqa.foreign",
    "pansharp_iqa.tensor.mindspore_adapter",
    "pansharp_iqa.validation",
}


def test_nlrnet_imports_only_what_the_architecture_page_lists():
    used = set()
    for module in MODULES:
        if module.startswith("pansharp_iqa.nlrnet"):
            used |= {t for t, _ in _imports(module)
                     if t.startswith("pansharp_iqa") and not t.startswith("pansharp_iqa.nlrnet")}
    assert used <= NLRNET_MAY_IMPORT, sorted(used - NLRNET_MAY_IMPORT)
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name in sorted(NLRNET_MAY_IMPORT - {"pansharp_iqa"}):
        assert f"`{name.removeprefix('pansharp_iqa.')}`" in page, name


def test_the_core_never_imports_nlrnet():
    for module in MODULES:
        if not module.startswith("pansharp_iqa.nlrnet"):
            assert not any(t.startswith("pansharp_iqa.nlrnet") for t, _ in _imports(module)), module
