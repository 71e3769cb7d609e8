"""The user's day, for real: `./run_bench.sh --quick && wrkreport build`, as one shell command line.

Real nginx, wrk and Go on 127.0.0.1 (ports from a free block, output in a temporary
directory), then the report: every check passes, every ratio has a number, nothing
prints a traceback.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from helpers import free_port_block, missing_tools

ROOT = Path(__file__).resolve().parents[1]
PORTS = ("go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "go-fcgi-tcp")
MISSING = missing_tools("nginx", "wrk", "curl", "go", "wrkreport")


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"needs {', '.join(MISSING)} (./run_tests.sh installs them as root)")
def test_run_bench_quick_then_wrkreport_build():
    top = Path(tempfile.mkdtemp(prefix="e2e", dir="/tmp"))
    top.chmod(0o711)  # as root, nginx's workers must traverse it to the Unix socket
    try:
        raw, reports, tmp = top / "raw", top / "reports", top / "tmp"
        tmp.mkdir()
        ports = " ".join(f"--port {name}={port}" for name, port in free_port_block(PORTS, 19100, 20000).items())
        line = f"./run_bench.sh --quick --out {shlex.quote(str(raw))} {ports} && wrkreport build {shlex.quote(str(raw))} --out {shlex.quote(str(reports))}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")} | {"TMPDIR": str(tmp)}
        done = subprocess.run(["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stdout + done.stderr
        lines = done.stdout.strip().splitlines()
        assert lines[-1].startswith(f"report: {reports / 'index.html'} (") and lines[-1].endswith(")")  # the warnings counted, last
        html = (reports / "index.html").read_text()
        sentence = html_lib.unescape(html.split('<p class="lead">')[1].split("</p>")[0]).replace("µs", "us")
        table = next(i for i, x in enumerate(lines) if x.startswith("setup "))
        assert " ".join(" ".join(lines[1:table]).split()) == sentence  # the page's sentence first, then its table
        # at most: the run line, a sentence of 3 lines, the header, per GOMAXPROCS a heading and 4 rows of 2 lines (a row's second
        # line: its intervals, or "held in 0 of 1" when the fixed load was not held, as beside other real runs in CI), the
        # conditions' 2 lines and the report line: 26 (a quick run on an idle machine prints 20)
        assert 8 <= len(lines) <= 1 + 3 + 1 + 2 * (1 + 4 * 2) + 2 + 1 and any(
            x.startswith("setup ") and x.split()[-1] == "share" for x in lines
        )
        assert max(len(x) for x in lines if not x.startswith(("run: ", "report: "))) <= 80, max(lines, key=len)  # the path lines aside
        assert "smoke test (--quick)" in done.stderr  # --quick says what it is
        data = json.loads((reports / "results.json").read_text())
        assert data["status"] == "pass", [c for c in data["checks"] if c["status"] != "pass"]
        assert data["run"]["status"] == "complete" and len(data["measurements"]) == 8
        assert data["response_bytes_agreed"] == 153
        assert all(r["ratio"] is not None and r["excluded"] is None for r in data["ratios"])
        assert {(r["gomaxprocs"], r["setup"]) for r in data["ratios"]} == {(g, s) for g in (1, os.cpu_count()) for s in PORTS[:4]}
        assert all(m["cpu_go_s"] > 0 and m["cpu_wrk_s"] > 0 for m in data["measurements"])
        assert all(m["cpu_nginx_s"] > 0 for m in data["measurements"] if m["setup"].startswith("nginx-"))
        # 7: throughput, ratios, CPU, the fixed-rate chart, then in How it was measured the saturation latencies, their CDF and the 2013 overlay
        assert html.count('class="layout-wide"') == 7 and "with nginx in front, the HTTP proxy keeps" in html
        assert "Latency at a fixed load" in html
        assert (
            'aria-labelledby="latency-cdf-title latency-cdf-desc"' in html
            and '<h3 id="latency">Exact latency percentiles at saturation</h3>' in html
        )
        assert len(data["latency_histograms"]) == 8 and all(r["percentiles_ms"]["99.9"] > 0 for r in data["latency_histograms"])
        assert "Server CPU per request" in html and "Client and servers shared the same CPUs" in html
    finally:
        shutil.rmtree(top, ignore_errors=True)
