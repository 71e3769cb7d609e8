"""End-to-end tests of ./run_bench.sh with node-http (real Node.js) and --load-generator ab
(real ApacheBench), on 127.0.0.1, then `wrkreport build` on what they wrote.

Same rules as tests/test_driver.py: private ports, --out and TMPDIR per test; slow tests
skip with a reason when a tool is missing (a failure under CI=true).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import (
    BASE_PORT_NAMES,
    SCRIPT,
    USED_PORTS,
    alive_as,
    assert_nothing_left,
    copy_of_driver,
    default_sigint,
    free_port_block,
    latest_run,
    missing_tools,
    port_args,
    processes_mentioning,
    script_env,
    wait_for_wrk,
)
from wrkreport.parsers import parse_file

PORT_NAMES = (*BASE_PORT_NAMES, "node-http")
NODE_MISSING = missing_tools("wrk", "curl", "go", "node")
AB_MISSING = missing_tools("nginx", "ab", "curl", "go")
needs_node = pytest.mark.skipif(bool(NODE_MISSING), reason=f"needs wrk, curl, go and node; missing: {', '.join(NODE_MISSING)}")
needs_ab = pytest.mark.skipif(bool(AB_MISSING), reason=f"needs nginx, ab, curl and go; missing: {', '.join(AB_MISSING)}")


def free_ports() -> dict[str, int]:
    """Return a free block of ports for the default setups, Go's FastCGI port and node-http."""
    return free_port_block(PORT_NAMES, 19100, 19900, USED_PORTS)


def run_script(args: list[str], tmp: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=script_env(tmp), timeout=timeout, check=False)


def build(run: Path, out: Path) -> tuple[subprocess.CompletedProcess, dict, str]:
    """Run `wrkreport build` (a real subprocess) and return it, results.json and the page."""
    done = subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(out)], capture_output=True, text=True, check=False
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done, json.loads((out / "results.json").read_text()), (out / "index.html").read_text()


def assert_no_node_left(manifest: dict) -> None:
    """No nodehello process of the run (primary or cluster worker) is alive."""
    for entry in manifest["passes"]:
        pids = entry["pids"]
        assert not alive_as(pids["node"], "server.js"), f"Node server {pids['node']} still running"
        for worker in pids["node_workers"]:
            assert not alive_as(worker, "server.js"), f"Node cluster worker {worker} still running"


@pytest.mark.slow
@needs_node
def test_quick_go_and_node_http_answer_141_bytes_and_build_shows_the_2012_study(workdirs, tmp_path):
    out, tmp = workdirs
    ports = free_ports()
    done = run_script(
        ["--quick", "--setups", "go-http,node-http", "--gomaxprocs", "1,2", "--seed", "5", "--out", str(out), *port_args(ports)], tmp
    )
    assert done.returncode == 0, done.stderr
    assert "the Node server (one process)" in done.stderr and "the Node server (cluster of 2 workers)" in done.stderr
    run, manifest = latest_run(out)
    headers = sorted(run.glob("*.headers.txt"))
    assert [p.name for p in headers] == [f"{s}.gomaxprocs-{n}.headers.txt" for s in ("go-http", "node-http") for n in (1, 2)]
    for path in headers:
        assert len(path.read_bytes()) == 141 and path.read_bytes().startswith(b"HTTP/1.1 200 OK\r\n"), path.name
    assert manifest["versions"]["node"] and manifest["parameters"]["ports"]["node-http"] == ports["node-http"]
    assert not (run / "nginx.conf").exists()  # no nginx setup: no nginx started
    for n in (1, 2):
        assert (
            (run / "logs" / f"node.gomaxprocs-{n}.log")
            .read_text()
            .startswith(f"nodehello: workers={n} http=127.0.0.1:{ports['node-http']} ")
        )
        cpu = json.loads((run / f"node-http.gomaxprocs-{n}.block-1.run-1.cpu.json").read_text())
        node = cpu["processes"]["node"]
        assert len(node["pids"]) == (1 if n == 1 else 3)  # the primary and its 2 cluster workers
        assert node["user_s"] + node["system_s"] > 0
        assert parse_file(run / f"node-http.gomaxprocs-{n}.block-1.run-1.wrk.txt").bytes_per_response == pytest.approx(153, abs=1)
    workers = {p["gomaxprocs"]: p["pids"]["node_workers"] for p in manifest["passes"]}
    assert len(workers[1]) == 0 and len(workers[2]) == 2
    assert_nothing_left(manifest, ports, tmp)
    assert_no_node_left(manifest)

    built, results, page = build(run, tmp_path / "report")
    assert built.returncode == 0, built.stderr
    ratios = {(r["gomaxprocs"], r["setup"]): r for r in results["ratios"]}
    assert ratios[(1, "node-http")]["ratio"] > 0 and ratios[(2, "node-http")]["ratio"] > 0
    assert [r["load_generator"] for r in results["reference"]["study_2012"]] == ["ab", "ab", "webbench", "webbench"]
    assert "2012 study: 0.903 (ab, 1 CPU), 0.942 (webbench, 1 CPU)" in page
    assert "2012 study: 0.885 (ab, all CPUs), 1.051 (webbench, all CPUs)" in page
    assert 'id="reference-2012"' in page and "about 110 bytes per response and Node about 88" in page
    share = f"{ratios[(1, 'node-http')]['ratio']:.0%}"  # the terminal's first sentence: Node's share of Go's req/s, as the page's
    assert f"At GOMAXPROCS=1, Node.js's http module does {share} of Go's req/s" in " ".join(built.stdout.split())  # wrapped at 80 columns
    assert "no nginx setup was measured" not in page


@pytest.mark.slow
@needs_node
def test_two_blocks_give_node_http_a_ratio_with_its_interval(workdirs, tmp_path):
    out, tmp = workdirs
    ports = free_ports()
    # --rates off: the default profile's 4 fixed-rate blocks were 25 of its 36 s; the quick test above runs node-http's fixed rate
    args = [
        "--setups",
        "go-http,node-http",
        "--gomaxprocs",
        "1",
        "--blocks",
        "2",
        "--rounds-per-block",
        "1",
        "--warmup",
        "0",
        "--rates",
        "off",
    ]
    done = run_script([*args, "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    assert sorted(p.name for p in run.glob("node-http.*.wrk.txt")) == [f"node-http.gomaxprocs-1.block-{b}.run-{b}.wrk.txt" for b in (1, 2)]
    assert (run / "logs" / "node.gomaxprocs-1.block-2.log").is_file()  # restarted for block 2
    assert len({p["pids"]["node"] for p in manifest["passes"]}) == 2
    assert_no_node_left(manifest)
    built, results, page = build(run, tmp_path / "report")
    assert built.returncode == 0, built.stderr
    ratio = next(r for r in results["ratios"] if r["setup"] == "node-http")
    assert (ratio["unit"], ratio["blocks"], ratio["n"]) == ("block", 2, 2)
    assert ratio["ci_low"] < ratio["ratio"] < ratio["ci_high"]
    assert f"{ratio['ratio']:.3f} ({ratio['ci_low']:.3f}-{ratio['ci_high']:.3f})" in page  # the ratios table, with its interval
    assert "2012 study: 0.903 (ab, 1 CPU)" in page


@pytest.mark.slow
@needs_node
def test_sigint_during_a_node_cluster_measurement_leaves_no_node_process(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    args = [
        str(SCRIPT),
        "--quick",
        "--setups",
        "node-http",
        "--gomaxprocs",
        "2",
        "--duration",
        "4",
        "--warmup",
        "0",
        "--out",
        str(out),
        *port_args(ports),
    ]
    proc = subprocess.Popen(args, env=script_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        wait_for_wrk(proc, ports["node-http"])  # loading the cluster: 4 s to go
        proc.send_signal(signal.SIGINT)  # to the script only: it must stop node and its workers itself
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    run, manifest = latest_run(out)
    assert manifest["status"] == "interrupted" and len(manifest["passes"][0]["pids"]["node_workers"]) == 2
    assert list(run.glob("*.wrk.txt")) == []  # the interrupted measurement's partial output is gone
    assert_no_node_left(manifest)
    assert processes_mentioning([f"--port {ports['node-http']}"]) == []


@pytest.mark.slow
@needs_ab
def test_quick_with_ab_keeps_ab_txt_and_builds(workdirs, tmp_path):
    out, tmp = workdirs
    ports = free_ports()
    done = run_script(["--quick", "--load-generator", "ab", "--gomaxprocs", "1", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    assert manifest["parameters"]["load_generator"] == "ab" and manifest["parameters"]["threads"] == 1
    assert manifest["versions"]["ab"] == "2.3"
    assert all(len(p.read_bytes()) == 141 for p in run.glob("*.headers.txt")) and len(list(run.glob("*.headers.txt"))) == 4
    assert list(run.glob("*.wrk.txt")) == [] and len(list(run.glob("*.ab.txt"))) == 4
    for m in manifest["measurements"]:
        assert m["file"].endswith(".ab.txt") and m["cpu_file"] == m["file"].replace(".ab.txt", ".cpu.json")
        assert m["command"] == f"ab -k -c100 -t 1 -n 500000 -s 2 {m['url']}" and m["exit_code"] == 0
        result = parse_file(run / m["file"])
        assert result.tool == "ab" and result.keepalive_requests == result.requests > 0
        assert result.duration_s >= 1.0 and result.requests < 500000  # -t ended it, not -n (ab's -t alone would mean -n 50000)
        assert result.bytes_per_response == pytest.approx(153, abs=1)
        cpu = json.loads((run / m["cpu_file"]).read_text())
        assert cpu["processes"]["wrk"]["threads"] == 1
    assert_nothing_left(manifest, ports, tmp)
    built, results, _ = build(run, tmp_path / "report")
    assert built.returncode == 0, built.stderr
    assert {m["tool"] for m in results["measurements"]} == {"ab"}
    assert {r["setup"] for r in results["ratios"] if r["ratio"] is not None} >= {"nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"}


# --- the preflight: ab and node only when the run needs them ---------------------------------

PREFLIGHT_TOOLS = ("bash", "env", "dirname", "mktemp", "rm", "cat", "curl", "go", "grep", "sed", "head", "tail", "id", "apt-get")


def restricted_path(tmp_path: Path) -> Path:
    """Return a PATH directory with the tools the preflight looks for, but no wrk, ab or node."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    bin_dir.chmod(0o755)
    for tool in PREFLIGHT_TOOLS:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    (bin_dir / "python3").symlink_to(sys.executable if os.geteuid() else shutil.which("python3", path="/usr/bin:/bin") or sys.executable)
    return bin_dir


def preflight(args: list[str], bin_dir: Path, tmp: Path, script: Path = SCRIPT) -> subprocess.CompletedProcess:
    """Run the script as a user that is not root (nobody, when the tests run as root) with only bin_dir on PATH."""
    env = ["env", "-i", f"PATH={bin_dir}", f"TMPDIR={tmp}", "HOME=/tmp"]
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *env, str(script), *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="as root, needs setpriv to run the script as nobody")
def test_preflight_asks_for_ab_and_nodejs_only_when_chosen():
    top = Path(tempfile.mkdtemp(prefix="rbp", dir="/tmp"))  # pytest's tmp_path is private to root: nobody must traverse this one
    try:
        top.chmod(0o755)
        # nobody may not reach the checkout (a clone under root's home, mode 700): it runs a copy of the script's parts
        check_preflight(restricted_path(top), top, script=copy_of_driver(top / "checkout"))
    finally:
        shutil.rmtree(top, ignore_errors=True)


def check_preflight(bin_dir: Path, top: Path, script: Path) -> None:
    """Assert what the preflight asks for with and without ab and node-http."""
    tmp = top / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    out = f"--out={tmp}/out"
    plain = preflight(["--quick", "--setups", "go-http", out], bin_dir, tmp, script)
    assert plain.returncode == 2, plain.stderr
    assert plain.stderr.strip().endswith("error: missing: wrk. Install with: sudo apt-get update && sudo apt-get install -y wrk")
    chosen = preflight(["--quick", "--setups", "go-http,node-http", "--load-generator", "ab", out], bin_dir, tmp, script)
    assert chosen.returncode == 2, chosen.stderr
    assert chosen.stderr.strip().endswith(
        "error: missing: ab node. Install with: sudo apt-get update && sudo apt-get install -y apache2-utils nodejs "
        "(ab, for --load-generator ab, comes with apache2-utils)"
    )  # wrk is not needed with ab
    assert not (tmp / "out").exists() and list(tmp.iterdir()) == []  # nothing started, the work dir removed
