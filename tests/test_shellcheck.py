"""shellcheck over every shell script in the repository (run_bench.sh, .ci/run, ...), and the shell files' size (issue 19).

run_bench.sh sources its parts from src/driver/; shellcheck reports nothing inside a
sourced file, and a part checked alone lacks the settings and state run_bench.sh
declares. So the driver is checked as one script, its `source` lines replaced by the
parts' text: exactly what was checked when it was one file.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", ".venv", "build", "dist", "node_modules", ".pytest_cache", ".hypothesis", "raw", "reports"}
REQUIRED = ("run_bench.sh", ".ci/run")
DRIVER = REPO / "src" / "driver"
SOURCE_LINE = re.compile(r'^source "\$\{DRIVER\}/(?P<name>[a-z_]+\.sh)"$', re.M)
MAX_SHELL_LINES = 500
MAX_MAIN_LINES = 60  # run_bench.sh's main: the run's flow on one screen


def is_shell_script(path: Path) -> bool:
    """Return True for *.sh files and files whose first line is a sh/bash shebang."""
    if path.suffix == ".sh":
        return True
    try:
        with path.open("rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and any(shell in first for shell in (b"/sh", b"bash"))


def shell_scripts() -> list[Path]:
    """Return every shell script under the repository, outside generated directories."""
    found = []
    for path in sorted(REPO.rglob("*")):
        relative = path.relative_to(REPO)
        if any(part in SKIP_DIRS for part in relative.parts) or not path.is_file():
            continue
        if is_shell_script(path):
            found.append(path)
    return found


def test_the_known_scripts_are_found():
    names = {str(p.relative_to(REPO)) for p in shell_scripts()}
    assert set(REQUIRED) <= names


def driver_parts() -> list[Path]:
    """Return the parts run_bench.sh sources, in its order."""
    return [DRIVER / m["name"] for m in SOURCE_LINE.finditer((REPO / "run_bench.sh").read_text())]


def inlined(script: Path, parts_dir: Path = DRIVER) -> str:
    """Return run_bench.sh with each `source "${DRIVER}/x.sh"` line replaced by that part's text."""
    return SOURCE_LINE.sub(lambda m: (parts_dir / m["name"]).read_text(), script.read_text())


def shellcheck(path: Path) -> subprocess.CompletedProcess:
    found = shutil.which("shellcheck")
    assert found, "shellcheck not found: it comes with the test extra (pip install -e '.[test]')"
    return subprocess.run([found, "--external-sources", str(path)], capture_output=True, text=True, check=False)


@pytest.mark.slow  # starts shellcheck, a tool: the side tier's, not plain pytest's
@pytest.mark.parametrize("script", [s for s in shell_scripts() if s.parent != DRIVER], ids=lambda p: str(p.relative_to(REPO)))
def test_shellcheck_is_clean(script, tmp_path):
    if script.name == "run_bench.sh":
        script = tmp_path / "run_bench.sh"
        script.write_text(inlined(REPO / "run_bench.sh"))
    done = shellcheck(script)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_driver_part_is_sourced_and_so_checked():
    assert sorted(driver_parts()) == sorted(DRIVER.glob("*.sh")) and len(driver_parts()) >= 5


@pytest.mark.slow  # starts shellcheck, a tool: the side tier's, not plain pytest's
def test_the_inlined_check_finds_a_fault_planted_in_a_part(tmp_path):
    parts = tmp_path / "driver"
    parts.mkdir()
    for part in driver_parts():
        (parts / part.name).write_text(part.read_text())
    (parts / "servers.sh").write_text((parts / "servers.sh").read_text() + "planted() { echo $1; }\n")  # SC2086
    script = tmp_path / "run_bench.sh"
    script.write_text(inlined(REPO / "run_bench.sh", parts))
    done = shellcheck(script)
    assert done.returncode != 0 and "SC2086" in done.stdout


def test_no_shell_file_is_over_the_limit_and_the_driver_reads_on_one_screen():
    long = {str(s.relative_to(REPO)): n for s in shell_scripts() if (n := len(s.read_text().splitlines())) > MAX_SHELL_LINES}
    assert long == {}
    body = re.search(r"^main\(\) \{\n(.*?)^\}$", (REPO / "run_bench.sh").read_text(), re.M | re.S)[1]
    assert len(body.splitlines()) <= MAX_MAIN_LINES
