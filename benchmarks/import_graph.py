#!/usr/bin/env python3
"""Print the figures of wrkreport's import graph in one or more trees; assert nothing.

Usage: python benchmarks/import_graph.py [TREE ...]      (default: this checkout)

    git archive main | tar -x -C /tmp/main && python benchmarks/import_graph.py /tmp/main .

Each TREE is a checkout (or an unpacked `git archive`) of the project. Its own
tests/test_layout.py reads the graph (every import of a wrkreport module, at module level,
in a function or under TYPE_CHECKING) and judges it, so each tree is held to its own
layers. Printed per tree: modules, loose modules at the top of src/wrkreport, internal
import edges, upward imports (against the tree's layers), the top-level rooms (packages and
loose modules) and the imports between them, the longest module, each package's files and
lines (`wc -l`) and, for a tree with stages, the lower stages each stage imports.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def layout_of(tree: Path):
    """Return the tree's tests/test_layout.py as a module (its SRC is the tree's src/)."""
    spec = importlib.util.spec_from_file_location(f"layout_{abs(hash(tree))}", tree / "tests" / "test_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def room_of(module: str) -> str:
    """Return the top-level room of a module: its package under wrkreport, or itself when loose."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def figures(tree: Path) -> dict:
    """Return the import graph's figures of one tree."""
    layout = layout_of(tree)
    package = tree / "src" / "wrkreport"
    graph = layout.import_graph(package)
    files = sorted(package.rglob("*.py"))
    lines = {layout.module_name(f): len(f.read_text().splitlines()) for f in files}
    loose = sorted(f.stem for f in package.glob("*.py"))
    packages = sorted(p.name for p in package.iterdir() if (p / "__init__.py").is_file())
    rooms = {room_of(m) for m in graph}
    room_edges = {
        (room_of(a), room_of(b))
        for a, deps in graph.items()
        for b in deps
        if room_of(a) != room_of(b) and "wrkreport" not in (room_of(a), room_of(b))
    }
    room_graph = {r: {b for a, b in room_edges if a == r} for r in rooms}
    per_package = {}
    for name in packages + ["(top)"]:
        chosen = [f for f in files if (f.parent == package if name == "(top)" else package / name in f.parents)]
        per_package[name] = (len(chosen), sum(len(f.read_text().splitlines()) for f in chosen))
    longest = max(lines.items(), key=lambda item: item[1])
    return {
        "modules": len(graph),
        "loose at the top": len(loose),
        "packages": len(packages),
        "internal import edges": sum(len(deps) for deps in graph.values()),
        "upward imports": len(layout.upward_imports(graph)),
        "cycles": "none" if layout.find_cycle(graph) is None else " -> ".join(layout.find_cycle(graph)),
        "rooms (packages + loose modules)": len(rooms - {"wrkreport"}),
        "imports between rooms": len(room_edges),
        "a cycle between rooms": "none" if (c := layout.find_cycle(room_graph)) is None else " -> ".join(c),
        "longest module": f"{longest[0]} ({longest[1]} lines)",
        "per package": per_package,
        "loose": loose,
        "stages": stage_graph(layout, graph),
    }


def stage_graph(layout, graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Return, for a tree whose test_layout has STAGES, each stage and the lower stages it imports ({} for older trees)."""
    if not hasattr(layout, "stage_of"):
        return {}
    below: dict[str, set[int]] = {name: set() for name in layout.STAGES}
    for module, imports in graph.items():
        for target in imports:
            a, b = layout.stage_of(module), layout.stage_of(target)
            if None not in (a, b) and a != b:
                below[layout.STAGES[a]].add(b)
    return {name: [layout.STAGES[i] for i in sorted(found)] for name, found in below.items()}


def main(argv: list[str]) -> int:
    trees = [Path(a).resolve() for a in argv] or [HERE]
    for tree in trees:
        found = figures(tree)
        print(f"== {tree}")
        for key, value in found.items():
            if key == "per package":
                print("  package           files   lines")
                for name, (count, total) in value.items():
                    print(f"    {name:<16}{count:>6}{total:>8}")
            elif key == "loose":
                print(f"  loose modules: {', '.join(value)}")
            elif key == "stages":
                for name, below in value.items():
                    print(f"  stage {name} imports: {', '.join(below) or '-'}")
            else:
                print(f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
