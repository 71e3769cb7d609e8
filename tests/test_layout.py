"""The package's rooms: small modules, imports flowing one way, one place per rule, a map that is true.

Every module under src/wrkreport is at most MAX_MODULE_LINES long; src/wrkreport holds the
stage packages of STAGES and bench/, and only LOOSE beside them; the import graph of
wrkreport's modules (every `import` and `from ... import` in a file, at module level or
inside a function, under TYPE_CHECKING too) has no cycle and runs down STAGES, never up, each
module at the stage of its package; the driver's helper (bench/) reaches the rest only through
core/, parsers/ and the few modules it reads the fixed-rate phase with (BENCH_MAY_IMPORT);
core/ is standard library only; every setup rule is defined once, in core/setups.py; the
README's development map names every module; pyproject.toml ships every package; and no
two source files under src/ share a file name (`__init__.py` and `__main__.py` aside).
Each rule has a test that plants a breach in a made-up tree and sees it found.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "wrkreport"
MAX_MODULE_LINES = 500
SOURCE_SUFFIXES = (".py", ".sh", ".lua")
README = SRC.parent / "README.md"
PYPROJECT = SRC.parent / "pyproject.toml"

# The pipeline's stages, lowest first: a module imports only modules of its own stage or below.
# A stage is a package of src/wrkreport (its every module); "cli" is the command line at the top
# (cli.py, __main__.py), and the package's own __init__ (its __version__) is core. Read off the
# imports: parsers read through core's records; runs/ reads a run with the parsers; checks/ judge
# a run; analysis/ works on the checked table; compare/ sets two analyses side by side and
# charts/ draws one (neither imports the other); report/ puts them into words and pages.
STAGES = ("core", "parsers", "runs", "checks", "analysis", "compare", "charts", "report", "cli")
LOOSE = ("wrkreport", "wrkreport.cli", "wrkreport.__main__")  # the only modules at the top of src/wrkreport
TOP_STAGES = {"wrkreport": "core", "wrkreport.cli": "cli", "wrkreport.__main__": "cli"}
BENCH = "wrkreport.bench"
# What the driver's helper may import of the rest of wrkreport (run_bench.sh runs it before any pip install).
BENCH_MAY_IMPORT = (
    "wrkreport.core",
    "wrkreport.parsers",
    # The fixed-rate phase read as `wrkreport build` reads it, for the helper's steps and its closing
    # summary; standard library only like the rest of the helper (tests/test_bench_stdlib.py runs it so).
    "wrkreport.runs.rate_measurements",
    "wrkreport.analysis.rate_latency",
    "wrkreport.analysis.capacities",
    "wrkreport.report.rate_summary",
)
CORE = "wrkreport.core"
CORE_MODULES = (
    "setups",
    "records",
    "stats",
    "between_runs",
    "rate_result",
    "rate_checks",
    "capacity",
    "units",
    "errors",
    "cpucost",
    "cpus",
    "display",
    "latency_histogram",
)
FORBIDDEN_IN_CORE = ("pandas", "matplotlib", "jinja2", "click", "wrkreport.report", "wrkreport.bench")
# The setup rules (core/setups.py): a module-level name in this list defined anywhere else is a second copy.
SETUP_RULES = (
    "Setup",
    "SETUPS",
    "SETUP_IDS",
    "SETUP_BY_ID",
    "SetupTable",
    "DEFAULT_SETUP_IDS",
    "TLS_SETUP_IDS",
    "TLS_SETUPS",
    "PLAIN_SETUP_IDS",
    "NGINX_SETUPS",
    "NEW_CONNECTION_SETUPS",
    "BASELINE",
    "BASELINES",
    "TLS_BASELINE",
    "SETUP_DESCRIPTIONS",
    "DEFAULT_PORTS",
    "BACKEND_PORTS",
    "TWIN",
    "TWIN_ID",
    "TWIN_SEPARATOR",
    "SETUP_NAME",
    "VARIANT_NAME",
    "VARIANT_PORT_OFFSET",
    "VARIANT_SERVER",
    "split_twin",
    "twin_id",
    "twin_of",
    "baseline_of",
    "setup_order",
    "setup_description",
    "is_app",
)
SETUP_TABLE = PACKAGE / "core" / "setups.py"
# A twin's or a setup name's pattern written out again (its variant part) rather than read from the table.
TWIN_PATTERN = re.compile(r"~\[a-z\]\[a-z0-9\]")


def module_name(path: Path, src: Path = SRC) -> str:
    """Return the dotted module name of a file under src (a package is its __init__)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str], src: Path = SRC) -> set[str]:
    """Return the wrkreport modules a file imports (`from .x import y` counts x.y when that is a module)."""
    name = module_name(path, src)
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
    """Return every wrkreport module and the wrkreport modules it imports (root: the package, under its src/)."""
    files = sorted(root.rglob("*.py"))
    known = {module_name(f, root.parent) for f in files}
    return {module_name(f, root.parent): imported_modules(f, known, root.parent) for f in files}


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
    graph = import_graph(package)
    assert find_cycle(graph) in (
        ["wrkreport.analyze", "wrkreport.noise", "wrkreport.analyze"],
        ["wrkreport.parse", "wrkreport.parse_ab", "wrkreport.parse"],
    )
    del graph["wrkreport.noise"]
    assert find_cycle(graph) == ["wrkreport.parse", "wrkreport.parse_ab", "wrkreport.parse"]


# --- Stages: imports run down, never up --------------------------------------------------


def in_bench(module: str) -> bool:
    """Return True for the driver's helper, bench/, and its modules."""
    return module == BENCH or module.startswith(BENCH + ".")


def stage_of(module: str) -> int | None:
    """Return the index in STAGES of module's stage (None: bench/, or a module of no stage)."""
    parts = module.split(".")
    if module in TOP_STAGES:
        name = TOP_STAGES[module]
    elif len(parts) > 2 or (len(parts) == 2 and parts[1] in STAGES):
        name = parts[1]
    else:
        return None
    return STAGES.index(name) if name in STAGES else None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Return every import that runs against the stages, or breaks bench's rules, as 'a -> b (why)'."""
    found = []
    for module, imports in sorted(graph.items()):
        for target in sorted(imports):
            if in_bench(module) and not in_bench(target) and not any(target == p or target.startswith(p + ".") for p in BENCH_MAY_IMPORT):
                found.append(f"{module} -> {target} (bench/ imports only core, parsers and BENCH_MAY_IMPORT)")
            elif not in_bench(module) and in_bench(target):
                found.append(f"{module} -> {target} (nothing outside bench/ imports the driver's helper)")
            elif None not in (stage_of(module), stage_of(target)) and stage_of(target) > stage_of(module):
                found.append(f"{module} -> {target} ({STAGES[stage_of(module)]} below {STAGES[stage_of(target)]})")
    return found


def out_of_place(root: Path = PACKAGE) -> list[str]:
    """Return every module at the top of root that is not LOOSE, and every module of no stage outside bench/."""
    graph = import_graph(root)
    loose = sorted(m for m in graph if m.count(".") == 1 and m not in LOOSE and not (root / m.split(".")[1]).is_dir())
    return [f"{m} (loose at the top)" for m in loose] + sorted(
        f"{m} (in no stage)" for m in graph if stage_of(m) is None and not in_bench(m) and m not in loose
    )


def test_only_the_command_line_is_loose_and_every_module_has_a_stage():
    assert out_of_place() == []


def test_no_module_imports_upward():
    assert upward_imports(import_graph()) == []


def undocumented_packages(root: Path = PACKAGE) -> list[str]:
    """Return every package under root whose __init__ has no docstring."""
    return [p.parent.name for p in sorted(root.rglob("__init__.py")) if not ast.get_docstring(ast.parse(p.read_text()))]


def test_every_package_says_what_it_holds():
    assert undocumented_packages() == []


def made_up_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """Write a wrkreport package under tmp_path: every stage package, and files (path under wrkreport/ -> text); return the package."""
    package = tmp_path / "wrkreport"
    for name in ("", *STAGES[:-1], "bench"):
        (package / name).mkdir(parents=True, exist_ok=True)
        (package / name / "__init__.py").write_text('"""A stage."""\n')
    for path, text in {"cli.py": "", **files}.items():
        (package / path).parent.mkdir(exist_ok=True)
        (package / path).write_text(text)
    return package


def test_the_stage_rule_finds_a_check_importing_a_chart_and_a_parser_importing_a_run_reader(tmp_path):
    package = made_up_tree(
        tmp_path,
        {
            "charts/saturation.py": "",
            "checks/measurements.py": "from ..charts.saturation import fill\n",
            "runs/directory.py": "from ..parsers import wrk\n",  # down: fine
            "parsers/wrk.py": "def f():\n    from ..runs.directory import load_run\n",
            "parsers/ab.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..runs.directory import Run\n",
            "core/stats.py": "import wrkreport.report\n",
            "report/page.py": "from ..charts.saturation import fill\nfrom ..cli import main\n",
        },
    )
    assert upward_imports(import_graph(package)) == [
        "wrkreport.checks.measurements -> wrkreport.charts.saturation (checks below charts)",
        "wrkreport.core.stats -> wrkreport.report (core below report)",
        "wrkreport.parsers.ab -> wrkreport.runs.directory (parsers below runs)",
        "wrkreport.parsers.wrk -> wrkreport.runs.directory (parsers below runs)",
        "wrkreport.report.page -> wrkreport.cli (report below cli)",
    ]


def test_the_stage_rule_finds_a_reach_into_bench_and_out_of_it(tmp_path):
    package = made_up_tree(
        tmp_path,
        {
            "charts/parallel.py": "from ..bench.machine import facts\n",
            "bench/machine.py": "",
            "bench/progress.py": (
                "from ..report.fmt import fmt_ms\nfrom ..core.stats import mean\nfrom ..report.rate_summary import lines\n"
                "from ..runs.directory import load_run\n"
            ),
            "report/fmt.py": "",
            "runs/directory.py": "",
            "core/stats.py": "",
            "report/rate_summary.py": "",
        },
    )
    assert upward_imports(import_graph(package)) == [
        "wrkreport.bench.progress -> wrkreport.report.fmt (bench/ imports only core, parsers and BENCH_MAY_IMPORT)",
        "wrkreport.bench.progress -> wrkreport.runs.directory (bench/ imports only core, parsers and BENCH_MAY_IMPORT)",
        "wrkreport.charts.parallel -> wrkreport.bench.machine (nothing outside bench/ imports the driver's helper)",
    ]


def test_the_place_rule_finds_a_loose_module_and_a_package_of_no_stage(tmp_path):
    package = made_up_tree(
        tmp_path,
        {
            "noise.py": "",
            "extras/__init__.py": "",
            "extras/tools.py": "",
            "fixedrate/new_step.py": "",
            "fixedrate/__init__.py": '"""Once a package."""\n',
        },
    )
    assert out_of_place(package) == [
        "wrkreport.noise (loose at the top)",
        "wrkreport.extras (in no stage)",
        "wrkreport.extras.tools (in no stage)",
        "wrkreport.fixedrate (in no stage)",
        "wrkreport.fixedrate.new_step (in no stage)",
    ]
    assert undocumented_packages(package) == ["extras"]


# --- core/: the standard library only -------------------------------------------------------


def test_the_core_holds_its_modules_and_imports_only_the_standard_library():
    core = PACKAGE / "core"
    assert sorted(m for m in CORE_MODULES if not (core / f"{m}.py").is_file()) == []
    graph = import_graph()
    for path in sorted(core.glob("*.py")):
        assert core_problems(path, graph) == [], path.name


def core_problems(path: Path, graph: dict[str, set[str]]) -> list[str]:
    """Return what a core module imports that it may not: a package outside the standard library, or wrkreport outside core."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module]
            if isinstance(node, ast.ImportFrom) and not node.level
            else []
        )
        for name in names:
            top = (name or "").split(".")[0]
            if top != "wrkreport" and top not in sys.stdlib_module_names:
                found.append(name)
    own = module_name(path) if path.is_relative_to(SRC) else path.stem
    found += [m for m in graph.get(own, ()) if not m.startswith(CORE) or any(m.startswith(f) for f in FORBIDDEN_IN_CORE)]
    return found


def test_the_core_rule_finds_pandas_and_an_import_of_report(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import pandas as pd\nfrom matplotlib import pyplot\nimport os\n")
    assert core_problems(bad, {}) == ["pandas", "matplotlib"]
    good = tmp_path / "stats.py"
    good.write_text("import math\nfrom . import units\n")
    assert core_problems(good, {"stats": {"wrkreport.report.fmt", "wrkreport.core.units"}}) == ["wrkreport.report.fmt"]


# --- One setup table ---------------------------------------------------------------------


def setup_rule_copies(root: Path = PACKAGE, table: Path = SETUP_TABLE) -> list[str]:
    """Return every module-level definition of a setup rule outside the table, and every twin pattern written out again."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == table:
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            targets = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    targets += [t.id for t in ast.walk(target) if isinstance(t, ast.Name)]
            found += [f"{path.relative_to(root)}: {name}" for name in targets if name in SETUP_RULES]
        found += [
            f"{path.relative_to(root)}: a twin pattern {n.value!r}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and TWIN_PATTERN.search(n.value)
        ]
    return found


def test_every_setup_rule_is_defined_once_in_the_setup_table():
    assert SETUP_TABLE.is_file()
    assert setup_rule_copies() == []
    table = ast.parse(SETUP_TABLE.read_text())
    defined = {n.name for n in table.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for n in table.body if isinstance(n, (ast.Assign, ast.AnnAssign)) for t in ast.walk(n) if isinstance(t, ast.Name)}
    assert {"SETUPS", "BASELINES", "TWIN", "split_twin", "baseline_of", "DEFAULT_PORTS"} <= defined


def test_the_copy_finder_finds_a_second_baseline_and_a_twin_regex(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "setups.py").write_text('BASELINE = "go-http"\n')
    (tmp_path / "analysis.py").write_text('BASELINE = "go-http"\nimport re\nT = re.compile(r"(?P<o>[a-z-]+)~[a-z][a-z0-9]{0,15}")\n')
    assert setup_rule_copies(tmp_path, tmp_path / "core" / "setups.py") == [
        "analysis.py: BASELINE",
        "analysis.py: a twin pattern '(?P<o>[a-z-]+)~[a-z][a-z0-9]{0,15}'",
    ]


# --- The README's map names every module -----------------------------------------------------


def readme_map(text: str) -> dict[str, str]:
    """Return the README development map's entries: a package's path under src/wrkreport ('' for the top level) -> its text."""
    block = text.split("## Development", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        head = line.split()[0] if line.strip() else ""
        if line[:1] != " " and head:
            current = head.removeprefix("src/wrkreport/").rstrip("/") if head.startswith("src/wrkreport/") else None
        elif line.startswith("  ") and not line.startswith("   ") and head.endswith("/"):
            current = head.rstrip("/")
        if current is not None:
            entries[current] = entries.get(current, "") + " " + line
    return entries


def missing_from_map(entries: dict[str, str], root: Path = PACKAGE) -> list[str]:
    """Return every package and module under root that its package's map entry does not name."""
    missing = []
    for path in sorted(root.rglob("*.py")):
        package = path.parent.relative_to(root).as_posix().replace(".", "")
        text = entries.get(package)
        if text is None:
            missing.append(f"{package}/ (no entry)")
        elif path.stem not in ("__init__",) and not re.search(rf"(?<![\w/]){re.escape(path.stem)}(?!\w)", text):
            missing.append(path.relative_to(root).as_posix())
    return sorted(set(missing))


def test_the_readme_map_names_every_package_and_module():
    assert missing_from_map(readme_map(README.read_text())) == []


def test_the_map_check_finds_a_missing_module_and_package(tmp_path):
    (tmp_path / "core").mkdir()
    for name in ("cli.py", "run.py", "core/setups.py", "core/stats.py"):
        (tmp_path / name).write_text("")
    text = "## Development\n\n```\nsrc/wrkreport/   the pipeline: cli\n  core/          setups\n```\n"
    assert missing_from_map(readme_map(text), tmp_path) == ["core/stats.py", "run.py"]


# --- The wheel ships every package --------------------------------------------------------------


def unshipped(pyproject: str, root: Path = PACKAGE) -> list[str]:
    """Return every package under root (a folder with an __init__.py) missing from pyproject's setuptools `packages`."""
    listed = set(re.findall(r'"([\w.]+)"', re.search(r"^packages = \[(.*?)\]", pyproject, re.S | re.M).group(1)))
    found = {".".join(p.parent.relative_to(root.parent).parts) for p in root.rglob("__init__.py")}
    return sorted(found - listed)


def test_pyproject_ships_every_package():
    assert unshipped(PYPROJECT.read_text()) == []


def test_the_shipping_check_finds_a_package_left_out(tmp_path):
    package = made_up_tree(tmp_path, {})
    listed = ", ".join(f'"wrkreport.{name}"' for name in STAGES[:-1] if name != "charts")
    pyproject = f'[tool.setuptools]\npackages = [\n    "wrkreport", {listed},\n]\n'
    assert unshipped(pyproject, package) == ["wrkreport.bench", "wrkreport.charts"]


ISSUE_NUMBER = re.compile(r"\bissue [0-9]", re.I)


def issue_numbers(roots: list[Path]) -> list[str]:
    """Return 'path:line' of every line under roots (files of any kind) that names an issue by its number."""
    return [
        f"{path}:{number}"
        for root in roots
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if ISSUE_NUMBER.search(line)
    ]


def test_no_source_file_or_template_names_the_issue_that_brought_it():
    """A file says what it does, not which issue brought it: the reader of src/ and templates/ has no tracker open."""
    assert issue_numbers([SRC, SRC.parent / "templates"]) == []


def test_the_issue_number_finder_finds_one_in_a_comment(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n# the front ends (Issue 44)\n")
    (tmp_path / "b.html").write_text("<p>an issue tracker, issues 4</p>\n")
    assert issue_numbers([tmp_path]) == [f"{tmp_path / 'a.py'}:2"]


# --- One run record: the manifest is read as a dict only in runs/ ------------------------------

sys.path.insert(0, str(SRC.parent / "benchmarks"))
from manifest_reads import reads  # noqa: E402 - the same count the benchmark prints for any tree


def test_no_module_outside_runs_reads_the_manifest_as_a_dict():
    """runs/record.py reads manifest.json once into frozen dataclasses; every later stage reads attributes (bench/ writes the file)."""
    assert reads(SRC.parent) == []


def test_the_manifest_read_finder_finds_a_key_read_after_runs(tmp_path):
    package = made_up_tree(
        tmp_path / "src",
        {
            "report/page.py": 'def f(run):\n    return run.manifest.get("status"), run.parameters["threads"]\n',
            "checks/tls.py": 'def f(manifest):\n    return (manifest or {}).get("tls")\n',
            "analysis/design.py": "def f(record):\n    return record.parameters.threads, record.machine.get('cpu_model')\n",  # attributes: fine
            "runs/record.py": 'def f(manifest):\n    return manifest.get("status")\n',  # runs/ reads it
            "bench/manifest.py": 'def f(manifest):\n    return manifest["parameters"]\n',  # bench/ writes it
        },
    )
    assert [f"{path}:{line}" for path, line in reads(package.parent.parent)] == ["checks/tls.py:2", "report/page.py:2", "report/page.py:2"]
