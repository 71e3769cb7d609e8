"""shellcheck over every shell script in the repository (run_bench.sh, .ci/run, ...)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", ".venv", "build", "dist", "node_modules", ".pytest_cache", ".hypothesis", "raw", "reports"}
REQUIRED = ("run_bench.sh", ".ci/run")


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


@pytest.mark.parametrize("script", shell_scripts(), ids=lambda p: str(p.relative_to(REPO)))
def test_shellcheck_is_clean(script):
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck not found: it comes with the test extra (pip install -e '.[test]')"
    done = subprocess.run([shellcheck, "--external-sources", str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
