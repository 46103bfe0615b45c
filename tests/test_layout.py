"""Tests of the package layout (docs/contributing.md, "Layout"): import cycles, streamlit,
private names.

The import graph is read with :mod:`ast`, not by importing anything: every ``import`` and
``from ... import`` of a module counts, at module level and inside functions (a lazy import is
still a dependency); imports under ``if TYPE_CHECKING:`` do not. ``from . import x`` is an edge
to the submodule ``x`` when ``x`` is a module, else to the package ``__init__``. Importing
``pkg.mod`` is an edge to ``pkg.mod`` only: the parent packages Python runs on the way are not
counted, so a package ``__init__`` that imports its submodules is no cycle by itself. A
submodule that imports a name from its package's face (``from . import name``, ``from pkg import
name``) is an edge back to ``pkg/__init__``, and with the ``__init__`` importing that submodule
it is reported as a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIBRARY = "s3kg_core"
# The first-party code that must not import private names across modules (tests may).
APP_SOURCES = ("s3kg_core", "dashboard", "pages", "app.py")
FIRST_PARTY = ("s3kg_core", "dashboard")


# --- reading imports ------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportRef:
    """One imported thing: ``module`` (absolute, resolved), and ``name`` for ``from`` imports."""

    module: str
    name: str | None
    lineno: int


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (a folder under ``root``) by dotted name; ``__init__`` -> pkg."""
    modules: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST, type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``; ``if TYPE_CHECKING:`` bodies only if asked."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test) and not type_checking:
            for other in child.orelse:
                yield from _import_nodes(ast.Module(body=[other], type_ignores=[]), type_checking)
        else:
            yield from _import_nodes(child, type_checking)


def _base_package(module: str, is_package: bool, level: int) -> str:
    """The package that a relative import of ``level`` dots in ``module`` starts from."""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    drop = level - 1
    if drop > len(parts) - 1:
        raise ValueError(f"{module}: relative import beyond the top-level package")
    return ".".join(parts[: len(parts) - drop])


def imports_of(module: str, path: Path, type_checking: bool = False) -> list[ImportRef]:
    """The imports of one module, relative ones resolved to absolute module names.

    Imports under ``if TYPE_CHECKING:`` are left out unless ``type_checking`` is true.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    refs: list[ImportRef] = []
    for node in _import_nodes(tree, type_checking):
        if isinstance(node, ast.Import):
            refs.extend(ImportRef(alias.name, None, node.lineno) for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            start = _base_package(module, is_package, node.level)
            base = f"{start}.{base}" if base else start
        refs.extend(ImportRef(base, alias.name, node.lineno) for alias in node.names)
    return refs


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """``name`` or its longest prefix that is a module of the graph, else None."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def target_of(ref: ImportRef, modules: dict[str, Path]) -> str | None:
    """The module of the graph that ``ref`` depends on (None: outside the graph)."""
    if ref.name is not None and ref.name != "*":
        submodule = f"{ref.module}.{ref.name}"
        if submodule in modules:
            return submodule
    return _known(ref.module, modules)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (self-imports left out)."""
    modules = module_files(root, package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for ref in imports_of(name, path):
            target = target_of(ref, modules)
            if target is not None and target != name:
                graph[name].add(target)
    return graph


# --- finding cycles -------------------------------------------------------------------------


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def _cycle_through(start: str, members: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path ``start -> ... -> start`` inside one strongly connected component."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph[node]):
                if succ not in members:
                    continue
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    raise AssertionError(f"{start} is on no cycle of its component")  # pragma: no cover


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per group of modules that import each other, as ``[a, b, ..., a]``."""
    return [
        _cycle_through(component[0], set(component), graph)
        for component in _strongly_connected(graph)
        if len(component) > 1
    ]


def _format_cycles(cycles: list[list[str]], graph: dict[str, set[str]] | None = None) -> str:
    """One line per cycle; with ``graph``, every module of the cycle's group is named too."""
    lines = []
    groups = [set(c) for c in _strongly_connected(graph)] if graph is not None else []
    for cycle in cycles:
        line = " -> ".join(cycle)
        group = next((g for g in groups if cycle[0] in g), set(cycle))
        if len(group) > len(set(cycle)):
            line += f"  (one cycle of a group of {len(group)}: {', '.join(sorted(group))})"
        lines.append(line)
    return "\n".join(lines)


# --- the cycle finder on small fake packages --------------------------------------------------


def _write_package(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_finds_the_old_cli_cycle_of_a_flat_layout(tmp_path):
    # The flat layout before the move: cli.py added the commands of cli_bench.py, whose
    # commands imported the group (and a helper) back from cli.py inside a function.
    _write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/cli.py": "import click\n\n\ndef cli():\n    pass\n\n\nfrom . import cli_bench\n",
            "fake/cli_bench.py": "def bench():\n    from .cli import cli\n    return cli\n",
            "fake/wl.py": "from fake.s3kg import score\n",
            "fake/s3kg.py": "from .align import align\n\n\ndef score():\n    pass\n",
            "fake/align.py": "def align():\n    from fake import s3kg\n",
        },
    )
    cycles = find_cycles(import_graph(tmp_path, "fake"))
    assert sorted(cycles) == [
        ["fake.align", "fake.s3kg", "fake.align"],
        ["fake.cli", "fake.cli_bench", "fake.cli"],
    ]
    assert "fake.cli -> fake.cli_bench -> fake.cli" in _format_cycles(cycles)


def test_a_longer_cycle_is_reported_with_its_whole_path(tmp_path):
    _write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/a.py": "from . import b\n",
            "fake/b.py": "from .c import thing\n",
            "fake/c.py": "import fake.a\nthing = 1\n",
        },
    )
    assert find_cycles(import_graph(tmp_path, "fake")) == [["fake.a", "fake.b", "fake.c", "fake.a"]]


def test_a_package_init_importing_its_submodules_is_no_cycle(tmp_path):
    # The submodules import each other's modules (their parent packages run on the way), never
    # the package face: no edge back to fake/__init__ or fake/sub/__init__.
    _write_package(
        tmp_path,
        {
            "fake/__init__.py": "from .sub.one import f\nfrom .two import g\n",
            "fake/sub/__init__.py": "from . import one\n",
            "fake/sub/one.py": "from ..two import g\n\n\ndef f():\n    pass\n",
            "fake/two.py": "import os\n\n\ndef g():\n    pass\n",
            "fake/three.py": "import fake.sub.one\nfrom fake.sub import one\n",
        },
    )
    graph = import_graph(tmp_path, "fake")
    assert graph["fake"] == {"fake.sub.one", "fake.two"}
    assert graph["fake.sub"] == {"fake.sub.one"}
    assert graph["fake.sub.one"] == {"fake.two"}
    assert graph["fake.three"] == {"fake.sub.one"}
    assert find_cycles(graph) == []


def test_a_submodule_importing_its_package_face_is_a_cycle(tmp_path):
    # fake/__init__.py exports f from fake/mod.py; fake/mod.py takes a name from fake/__init__:
    # that is an edge to the package's __init__, and a cycle.
    _write_package(
        tmp_path,
        {
            "fake/__init__.py": "from .mod import f\nVERSION = '1'\n",
            "fake/mod.py": "from . import VERSION\n\n\ndef f():\n    return VERSION\n",
            "fake/deep/__init__.py": "from .leaf import h\n",
            "fake/deep/leaf.py": "def h():\n    from fake.deep import h as again\n",
        },
    )
    graph = import_graph(tmp_path, "fake")
    assert graph["fake.mod"] == {"fake"}
    assert sorted(find_cycles(graph)) == [
        ["fake", "fake.mod", "fake"],
        ["fake.deep", "fake.deep.leaf", "fake.deep"],
    ]


def test_type_checking_imports_are_not_dependencies(tmp_path):
    _write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/a.py": "from .b import B\n",
            "fake/b.py": (
                "from typing import TYPE_CHECKING\nimport typing\n\n"
                "if TYPE_CHECKING:\n    from .a import A\nelse:\n    A = None\n\n"
                "if typing.TYPE_CHECKING:\n    import fake.a\n\n"
                "B = 1\n"
            ),
        },
    )
    graph = import_graph(tmp_path, "fake")
    assert graph["fake.b"] == set()
    assert find_cycles(graph) == []


def test_relative_imports_resolve_from_packages_and_modules(tmp_path):
    _write_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/x.py": "",
            "fake/sub/__init__.py": "from . import leaf\nfrom .. import x\n",
            "fake/sub/leaf.py": "from .. import x\nfrom ..sub import leaf as me\nfrom . import *\n",
        },
    )
    graph = import_graph(tmp_path, "fake")
    assert graph["fake.sub"] == {"fake.sub.leaf", "fake.x"}
    # ``from ..sub import leaf`` inside leaf is a self-import; ``from . import *`` is the package.
    assert graph["fake.sub.leaf"] == {"fake.x", "fake.sub"}


# --- the real package -----------------------------------------------------------------------


# Cycles that exist today, each with why it is tolerated until someone removes it. The test
# fails on any other cycle, on a known group that grows, and on a known one that is gone (then
# delete its entry).
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def test_s3kg_core_has_no_import_cycles():
    graph = import_graph(REPO, LIBRARY)
    assert len(graph) > 50, "the walk found too few modules: is the layout where it should be?"
    groups = [frozenset(c) for c in _strongly_connected(graph) if len(c) > 1]
    new = [
        _cycle_through(min(group), set(group), graph)
        for group in groups
        if group not in KNOWN_CYCLES
    ]
    assert not new, "import cycles between modules of s3kg_core:\n" + _format_cycles(new, graph)
    gone = set(KNOWN_CYCLES) - set(groups)
    assert not gone, f"these cycles are gone: remove them from KNOWN_CYCLES: {gone}"


def test_s3kg_core_never_imports_streamlit():
    # Every import counts here, those under ``if TYPE_CHECKING:`` too.
    offenders = [
        f"{path.relative_to(REPO)}:{ref.lineno}"
        for name, path in module_files(REPO, LIBRARY).items()
        for ref in imports_of(name, path, type_checking=True)
        if ref.module.split(".")[0] == "streamlit"
    ]
    assert not offenders, f"s3kg_core imports streamlit: {offenders}"


def _app_modules() -> dict[str, Path]:
    """The modules of s3kg_core, dashboard, pages/*.py and app.py by (importable) name."""
    modules: dict[str, Path] = {}
    for package in FIRST_PARTY:
        modules.update(module_files(REPO, package))
    for path in sorted((REPO / "pages").glob("*.py")):
        modules[f"pages.{path.stem}"] = path
    modules["app"] = REPO / "app.py"
    return modules


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_imports(modules: dict[str, Path], root: Path = REPO) -> list[str]:
    """``file:line: from X import _name`` for every private name taken from another module.

    A private name is one with a single leading underscore. A private *module* (``_common``)
    may be imported from inside the package that holds it, not from outside.
    """
    found = []
    for name, path in modules.items():
        for ref in imports_of(name, path):
            if ref.module.split(".")[0] not in FIRST_PARTY:
                continue
            where = f"{path.relative_to(root)}:{ref.lineno}"
            shown = f"from {ref.module} import {ref.name}" if ref.name else f"import {ref.module}"
            dotted = ref.module
            if ref.name is not None and ref.name != "*":
                if f"{ref.module}.{ref.name}" in modules:
                    dotted = f"{ref.module}.{ref.name}"
                elif _private(ref.name):
                    found.append(f"{where}: {shown}")
                    continue
            parts = dotted.split(".")
            for i, part in enumerate(parts):
                owner = ".".join(parts[:i])
                if _private(part) and not (name == owner or name.startswith(owner + ".")):
                    found.append(f"{where}: {shown}")
                    break
    return found


def test_private_import_finder(tmp_path):
    root = _write_package(
        tmp_path,
        {
            "s3kg_core/__init__.py": "from ._version import __version__\n",
            "s3kg_core/_version.py": "__version__ = '1'\n",
            "s3kg_core/a.py": "from .b import _helper, public\n",
            "s3kg_core/b.py": "def _helper():\n    pass\n\n\npublic = 1\n",
            "s3kg_core/cli/__init__.py": "from . import _common\nfrom ._common import ok\n",
            "s3kg_core/cli/_common.py": "ok = 1\n",
            "s3kg_core/cli/x.py": "def f():\n    from s3kg_core.b import _helper\n",
            "dashboard/__init__.py": "",
            "dashboard/data.py": "from s3kg_core.cli._common import ok\n",
        },
    )
    modules = {**module_files(root, "s3kg_core"), **module_files(root, "dashboard")}
    found = [line.split(": ", 1)[1] for line in private_imports(modules, root)]
    assert sorted(found) == [
        "from s3kg_core.b import _helper",
        "from s3kg_core.b import _helper",
        "from s3kg_core.cli._common import ok",
    ]


def test_no_private_names_imported_across_modules():
    found = private_imports(_app_modules())
    assert not found, "private names imported across modules:\n" + "\n".join(found)
