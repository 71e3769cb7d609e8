"""Tests of wrkreport.runs.directory with ab: a hand-laid run directory of real `ab -k` captures (go-http and
node-http, 3 repeats each) is read like a wrk run and builds a report whose ratio is the
one worked out from ab's printed req/s."""

from __future__ import annotations

import json
import math
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

from wrkreport.report import build
from wrkreport.runs.directory import load_run

AB = Path(__file__).parent / "fixtures" / "ab"
RUN = AB / "runs" / "go-node-gomaxprocs-1"
WHEN = datetime(2026, 11, 23, 10, 30, tzinfo=timezone.utc)


def printed_rate(path: Path) -> float:
    """Return the `Requests per second:` ab printed in one file."""
    return float(re.search(r"^Requests per second:\s+([0-9.]+)", path.read_text(), re.M)[1])


def test_ab_files_are_measurements(tmp_path):
    run = load_run(shutil.copytree(RUN, tmp_path / "run"))
    table = run.measurements
    assert len(table) == 6 and set(table["tool"]) == {"ab"} and not run.problems
    assert set(table["setup"]) == {"go-http", "node-http"} and sorted(set(table["repeat"])) == [1, 2, 3]
    assert set(table["bytes_per_response"]) == {153.0}
    assert set(run.texts) == {p.name for p in RUN.glob("*.ab.txt")}


def test_report_of_an_ab_run(tmp_path):
    built = build(shutil.copytree(RUN, tmp_path / "run"), tmp_path / "reports", WHEN)
    assert built.exit_code == 0
    results = json.loads((tmp_path / "reports" / "results.json").read_text())
    (node,) = [r for r in results["ratios"] if r["setup"] == "node-http"]
    logs = [
        math.log(printed_rate(RUN / f"node-http.gomaxprocs-1.run-{k}.ab.txt") / printed_rate(RUN / f"go-http.gomaxprocs-1.run-{k}.ab.txt"))
        for k in (1, 2, 3)
    ]
    assert node["n"] == 3 and math.isclose(node["ratio"], math.exp(sum(logs) / 3), rel_tol=1e-9)
    assert node["ci_low"] < node["ratio"] < node["ci_high"]
    checks = {(c["name"], c["status"]) for c in results["checks"] if c.get("setup") == "node-http"}
    assert ("header-bytes", "pass") in checks and ("same-response", "pass") in checks
    page = (tmp_path / "reports" / "index.html").read_text()
    assert "node-http.gomaxprocs-1.run-1.ab.txt" in page
    # node-http is Go's alternative, not an nginx setup; its row carries the 2012 study, ab (this run's tool) first.
    assert f"{node['ratio']:.3f} ({node['ci_low']:.3f}-{node['ci_high']:.3f})" in page
    assert "2012 study: 0.903 (ab, 1 CPU), 0.942 (webbench, 1 CPU)" in page
    assert "At GOMAXPROCS=1, Node.js&#39;s http module does " in page and "no nginx setup was measured" not in page
    assert "At GOMAXPROCS=1, Node.js's http module does " in " ".join(built.summary.split())  # the terminal says the page's sentence
    assert [r["mode"] for r in results["reference"]["study_2012"]] == ["1", "all", "1", "all"]


def test_ab_files_named_with_their_block_are_read(make_run):
    run = load_run(
        make_run(
            {
                "go-http.gomaxprocs-1.block-2.run-4.ab.txt": RUN / "go-http.gomaxprocs-1.run-1.ab.txt",
                "node-http.gomaxprocs-1.block-2.run-4.ab.txt": RUN / "node-http.gomaxprocs-1.run-1.ab.txt",
            }
        )
    )
    assert not run.problems
    assert list(run.measurements["block"]) == [2, 2] and list(run.measurements["repeat"]) == [4, 4]
    assert list(run.measurements["tool"]) == ["ab", "ab"]


def test_an_ab_twin_of_a_wrk_file_is_ignored_with_a_warning(make_run):
    wrk = next((Path(__file__).parent / "fixtures" / "runs" / "quick-1-repeat").glob("go-http.gomaxprocs-1.run-1.wrk.txt"))
    run = load_run(
        make_run(
            {
                "go-http.gomaxprocs-1.run-1.wrk.txt": wrk,
                "go-http.gomaxprocs-1.run-1.ab.txt": RUN / "go-http.gomaxprocs-1.run-1.ab.txt",
                "node-http.gomaxprocs-1.run-1.ab.txt": RUN / "node-http.gomaxprocs-1.run-1.ab.txt",
            }
        )
    )
    assert list(run.measurements["tool"]) == ["wrk", "ab"]
    messages = [p.message for p in run.problems]
    assert messages == [
        "go-http.gomaxprocs-1.run-1.ab.txt: the same measurement as go-http.gomaxprocs-1.run-1.wrk.txt; the ab output is ignored",
        "this run mixes wrk and ab outputs (1 of 2 by ab): ratios may pair two load generators",
    ]


def test_a_failed_ab_run_is_a_parse_problem(make_run):
    run = load_run(
        make_run(
            {
                "go-http.gomaxprocs-1.run-1.ab.txt": RUN / "go-http.gomaxprocs-1.run-1.ab.txt",
                "node-http.gomaxprocs-1.run-1.ab.txt": AB / "captured" / "ab-2.3__node-died-mid-run.txt",
            }
        )
    )
    (problem,) = run.problems
    assert (problem.name, problem.status, problem.setup) == ("parse", "fail", "node-http")
    assert problem.message.endswith(
        ":7: ab failed after 2998 requests and printed no report: 'apr_socket_recv: Connection reset by peer (104)'"
    )
