"""The driver's helper imports nothing outside the standard library: run_bench.sh runs it before any pip install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
RUN = REPO / "tests" / "fixtures" / "runs" / "pinned-quick"

# In an isolated interpreter (-I -S: no site-packages, no PYTHONPATH, no .pth hooks), import
# every module of the package and run a subcommand that reaches the lazy imports (summary
# parses wrk files), then list the top-level names of every module loaded.
PROBE = """
import contextlib, io, json, pkgutil, sys
sys.path.insert(0, {src!r})
import wrkreport.bench
for info in pkgutil.walk_packages(wrkreport.bench.__path__, "wrkreport.bench."):
    __import__(info.name)
from wrkreport.bench.__main__ import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    status = main(["summary", "--run", {run!r}])
print(json.dumps({{"status": status, "summary": out.getvalue(), "modules": sorted({{name.split(".")[0] for name in sys.modules}})}}))
"""


def test_the_bench_package_imports_only_the_standard_library():
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE.format(src=str(SRC), run=str(RUN))], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == 0 and "req/s (median of 1)" in report["summary"]  # the lazy imports ran
    outside = [name for name in report["modules"] if name not in sys.stdlib_module_names and name not in ("wrkreport", "__main__")]
    assert outside == [], f"wrkreport.bench needs {outside}, which run_bench.sh cannot count on"
    assert "wrkreport" in report["modules"]
