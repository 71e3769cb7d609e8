#!/usr/bin/env python3
"""Count the places that read the run's manifest as a dict, outside runs/ (which reads it once) and bench/ (which writes it).

Usage: python benchmarks/manifest_reads.py [TREE ...]   (a checkout or an unpacked `git archive`; default: this one)

A read is a subscript with a constant key or a `.get(...)` call on a value named `manifest`,
`params` or `parameters`, or on any `.manifest` or `.parameters` attribute, alone or as the
first of an `or` (run.manifest.get(...), (manifest or {}).get(...), done.run.parameters["app"]); each is listed as path:line with the counts per stage.
tests/test_layout.py holds the same rule at zero.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
NAMES = ("manifest", "params", "parameters")
EXEMPT = ("runs", "bench")  # runs/ reads the manifest once into runs/record.py; bench/ writes it


def dict_reads(source: str) -> list[int]:
    """Return the line of every manifest-dict read in a module's source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        target = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target = node.func.value
        if isinstance(target, ast.BoolOp):  # (manifest or {}).get(...)
            target = target.values[0]
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
        if name in NAMES:
            found.append(node.lineno)
    return sorted(found)


def reads(tree: Path) -> list[tuple[str, int]]:
    """Return (path under src/wrkreport, line) of every read outside runs/ and bench/."""
    package = tree / "src" / "wrkreport"
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] in EXEMPT:
            continue
        found += [(relative.as_posix(), line) for line in dict_reads(path.read_text())]
    return found


def main(argv: list[str]) -> int:
    for tree in [Path(a) for a in argv] or [HERE]:
        found = reads(tree)
        stages = Counter(path.split("/")[0] if "/" in path else "(top)" for path, _ in found)
        print(
            f"{tree}: {len(found)} manifest dict reads outside runs/ and bench/ ({', '.join(f'{s} {n}' for s, n in sorted(stages.items())) or 'none'})"
        )
        for path, line in found:
            print(f"  {path}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
