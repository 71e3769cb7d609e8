"""The package's rooms (issue 19): small modules, imports flowing one way, names that say their role.

Every module under src/wrkreport is at most MAX_MODULE_LINES long; the import graph of
wrkreport's modules (every `import` and `from ... import` in a file, at module level or
inside a function, under TYPE_CHECKING too) has no cycle; and no two source files under
src/ share a file name (`__init__.py` and `__main__.py` aside).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "wrkreport"
MAX_MODULE_LINES = 500
SOURCE_SUFFIXES = (".py", ".sh", ".lua")


def module_name(path: Path) -> str:
    """Return the dotted module name of a file under src/ (a package is its __init__)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """Return the wrkreport modules a file imports (`from .x import y` counts x.y when that is a module)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known)
    return {m for m in found if m in known and m != name}


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Return every wrkreport module and the wrkreport modules it imports."""
    files = sorted(root.rglob("*.py"))
    known = {module_name(f) for f in files}
    return {module_name(f): imported_modules(f, known) for f in files}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Return one import cycle as a list of modules (first repeated last), None when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_is_over_the_limit():
    long = {str(f.relative_to(SRC)): n for f in PACKAGE.rglob("*.py") if (n := len(f.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_the_imports_have_no_cycle():
    assert find_cycle(import_graph()) is None


def test_no_two_source_files_share_a_name():
    names = Counter(f.name for f in SRC.rglob("*") if f.suffix in SOURCE_SUFFIXES and f.name not in ("__init__.py", "__main__.py"))
    assert [name for name, count in names.items() if count > 1] == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_and_a_type_checking_import(tmp_path):
    # The shape issue 19 found: noise took Cell from analyze under TYPE_CHECKING, analyze imports noise.
    package = tmp_path / "wrkreport"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "analyze.py").write_text("from .noise import warnings\n")
    (package / "noise.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .analyze import Cell\n")
    (package / "parse.py").write_text("def f():\n    from . import parse_ab\n")
    (package / "parse_ab.py").write_text("from .parse import Cursor\n")
    graph = {name.replace(str(tmp_path), ""): deps for name, deps in _graph_under(tmp_path).items()}
    assert find_cycle(graph) in (["wrkreport.analyze", "wrkreport.noise", "wrkreport.analyze"], ["wrkreport.parse", "wrkreport.parse_ab", "wrkreport.parse"])
    del graph["wrkreport.noise"]
    assert find_cycle(graph) == ["wrkreport.parse", "wrkreport.parse_ab", "wrkreport.parse"]


def _graph_under(src: Path) -> dict[str, set[str]]:
    """Return the import graph of a wrkreport package laid out under src (for the finder's own test)."""
    global SRC
    saved, SRC = SRC, src
    try:
        return import_graph(src / "wrkreport")
    finally:
        SRC = saved
