#!/usr/bin/env python3
"""Show that two trees build the same outputs from every fixture run; print what differs.

Usage: python benchmarks/same_outputs.py OLD_TREE [NEW_TREE] [--keep DIR] [--control] [--schema-raised]

    git archive main | tar -x -C /tmp/main && python benchmarks/same_outputs.py /tmp/main

Each tree (a checkout or an unpacked `git archive`; NEW_TREE defaults to this checkout) is
installed with `pip install --no-deps TREE` (not editable: the wheel's packages and package
data) into its own virtualenv beside this Python's packages. Then, in one working
directory per tree, every run under NEW_TREE's tests/fixtures/runs/ is built by the CLI
(`wrkreport build raw/<run> --out reports/<run>`) and a few pairs are compared
(`wrkreport compare`), with the clock fixed (2026-11-22 12:00 UTC) so the pages do not
differ by the time they were made. Compared byte for byte: every file written
(index.html, results.json, results.csv, compare.html, compare.json), the terminal
output (stdout, stderr) and the exit status. --control builds OLD_TREE a second time
first, for what differs between two builds of one tree (nothing, when the build is
deterministic). --schema-raised is for comparing across a raise of an output's version:
a results.json or compare.json whose only difference is its top-level `"schema": N` line
counts as identical and is listed as "identical except the schema version"; any other
difference in it still counts. Exit status 0 when everything is identical and no command
died of a signal, 1 otherwise.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
# The pairs `wrkreport compare` is run on (RUN_B absent: one run's --variant).
COMPARE_PAIRS = (
    ("default-run-1", "default-run-2"),
    ("keepalive-on", "keepalive-on-again"),
    ("variant-nokeep", None),
    ("tls-quick", "tls-both-modes"),
)
# Runs the CLI with the time it hands the report fixed, so two builds of one run are byte-comparable
# (the commands take `build` and `build_compare` from wrkreport.report when they run).
DRIVER = """
import datetime, sys
import wrkreport.cli, wrkreport.report
WHEN = datetime.datetime(2026, 11, 22, 12, 0, 0, tzinfo=datetime.timezone.utc)
def at_when(real, index):
    return lambda *args, **named: real(*args[:index], WHEN, *args[index + 1:], **named)
wrkreport.report.build = at_when(wrkreport.report.build, 2)  # (raw, out_dir, generated_at, ...)
wrkreport.report.build_compare = at_when(wrkreport.report.build_compare, 3)  # (raw_a, raw_b, out_dir, generated_at, ...)
sys.argv = ["wrkreport", *sys.argv[1:]]
wrkreport.cli.main()
"""


def install(tree: Path, venv: Path) -> Path:
    """Install tree (not editable) into a new virtualenv; return its python."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(tree)], check=True)
    where = subprocess.run(
        [str(python), "-c", "import wrkreport.cli, wrkreport; print(wrkreport.__file__)"],
        cwd=venv,
        check=True,
        capture_output=True,
        text=True,
    )
    assert str(venv) in where.stdout, f"wrkreport imported from {where.stdout.strip()}, not the install"
    return python


def build_all(python: Path, runs: Path, work: Path) -> None:
    """Build every fixture run and compare the pairs in work/, keeping each command's terminal output."""
    env = {**os.environ, "WRKREPORT_NO_TEMPLATE_CACHE": "1", "MPLCONFIGDIR": str(work / ".mpl"), "PYTHONHASHSEED": "0"}
    env.pop("PYTHONPATH", None)
    shutil.copytree(runs, work / "raw", ignore=shutil.ignore_patterns("*.py", "README.md"))
    commands = {
        f"build-{run.name}": ["build", f"raw/{run.name}", "--out", f"reports/{run.name}"]
        for run in sorted((work / "raw").iterdir())
        if run.is_dir()
    }
    for a, b in COMPARE_PAIRS:
        commands[f"compare-{a}-{b or 'variant'}"] = [
            "compare",
            f"raw/{a}",
            *([f"raw/{b}"] if b else []),
            "--out",
            f"compared/{a}-{b or 'variant'}",
        ]
    (work / "terminal").mkdir()
    for name, argv in commands.items():
        done = subprocess.run([str(python), "-c", DRIVER, *argv], cwd=work, env=env, capture_output=True, text=True)
        (work / "terminal" / f"{name}.txt").write_text(f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}")
    shutil.rmtree(work / ".mpl", ignore_errors=True)


def outputs(work: Path) -> dict[str, Path]:
    """Return every output file under work (raw/ aside), by its path relative to work."""
    return {p.relative_to(work).as_posix(): p for p in sorted(work.rglob("*")) if p.is_file() and p.relative_to(work).parts[0] != "raw"}


# The files whose version line --schema-raised sets aside, and that line: a top-level key of json.dumps(indent=2).
VERSIONED = ("results.json", "compare.json")
SCHEMA_LINE = re.compile(rb'  "schema": [0-9]+,?')


def only_the_schema_differs(left: Path, right: Path) -> bool:
    """Return True when two JSON outputs differ only in their top-level `"schema": N` line (line for line otherwise)."""
    a, b = left.read_bytes().split(b"\n"), right.read_bytes().split(b"\n")
    if len(a) != len(b):
        return False
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    return len(changed) == 1 and all(SCHEMA_LINE.fullmatch(line) for line in changed[0])


def differences(a: Path, b: Path, schema_raised: bool = False) -> tuple[int, list[str], list[str]]:
    """Return how many files were compared, what differs between two working directories, and (with schema_raised) the
    results.json and compare.json files that differ only in their schema version (counted identical)."""
    left, right = outputs(a), outputs(b)
    differ = [f"only in {a.name}: {n}" for n in sorted(left.keys() - right.keys())] + [
        f"only in {b.name}: {n}" for n in sorted(right.keys() - left.keys())
    ]
    versioned = []
    for n in sorted(left.keys() & right.keys()):
        if filecmp.cmp(left[n], right[n], shallow=False):
            continue
        if schema_raised and Path(n).name in VERSIONED and only_the_schema_differs(left[n], right[n]):
            versioned.append(f"identical except the schema version: {n}")
        else:
            differ.append(f"differs: {n}")
    return len(left.keys() | right.keys()), differ, versioned


def summary(work: Path) -> str:
    """Return counts of what one working directory holds, by kind."""
    files = outputs(work)
    kinds: dict[str, int] = {}
    for name in files:
        kind = "terminal output" if name.startswith("terminal/") else Path(name).name
        kinds[kind] = kinds.get(kind, 0) + 1
    size = sum(p.stat().st_size for p in files.values())
    statuses: dict[str, int] = {}
    for name, path in files.items():
        if name.startswith("terminal/"):
            status = path.read_text().split("\n", 1)[0].removeprefix("exit ")
            statuses[status] = statuses.get(status, 0) + 1
    exits = ", ".join(f"{count} x {status}" for status, count in sorted(statuses.items()))
    return ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items())) + f"; {size:,} bytes; exit statuses: {exits}"


def crashed(work: Path) -> list[str]:
    """Return the commands that died of a signal (a negative exit status): their outputs prove nothing."""
    return [p.stem for p in sorted((work / "terminal").glob("*.txt")) if p.read_text().startswith("exit -")]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=HERE)
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary directory, removed)")
    parser.add_argument("--control", action="store_true", help="build OLD twice first: what differs between two builds of one tree")
    parser.add_argument(
        "--schema-raised",
        action="store_true",
        help='count a results.json or compare.json that differs only in its top-level "schema": N line as identical (said so)',
    )
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="same-outputs-"))
    root.mkdir(parents=True, exist_ok=True)
    runs = args.new.resolve() / "tests" / "fixtures" / "runs"
    try:
        pythons = {"old": install(args.old.resolve(), root / "venv-old"), "new": install(args.new.resolve(), root / "venv-new")}
        sides = ["old", "old-again", "new"] if args.control else ["old", "new"]
        for side in sides:
            build_all(pythons[side.split("-")[0]], runs, root / side)
            print(f"{side}: {summary(root / side)}")
        status = 0
        for side in sides:
            if died := crashed(root / side):
                print(f"{side}: killed by a signal: {', '.join(died)}")
                status = 1
        pairs = [("old", "old-again"), ("old", "new")] if args.control else [("old", "new")]
        for a, b in pairs:
            count, differ, versioned = differences(root / a, root / b, args.schema_raised)
            aside = f" ({len(versioned)} of them except the schema version)" if args.schema_raised else ""
            print(f"{a} vs {b}: {count} files compared, {count - len(differ)} identical{aside}, {len(differ)} different")
            for line in versioned + differ:
                print(f"  {line}")
            status |= bool(differ)
        return status
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
