"""End-to-end tests of ./run_bench.sh: real nginx, real wrk, the real Go server, on 127.0.0.1.

Each test picks its own free block of ports and writes into temporary directories (--out
and TMPDIR, where the script makes its private work dir), so it never meets a user's run
or another test. Slow tests skip with a reason when a tool is missing; under CI=true that
skip is a failure (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import (
    BASE_PORT_NAMES,
    PORT_NAMES,
    SCRIPT,
    USED_PORTS,
    alive_as,
    assert_nothing_left,
    default_sigint,
    free_port_block,
    free_ports,
    latest_run,
    needs_tools,
    port_args,
    processes_mentioning,
    run_script,
    script_env,
    wait_for_wrk,
)
from wrkreport.bench.commands import rate_phase
from wrkreport.bench.manifest import shuffled_orders
from wrkreport.bench.profiles import RATE_PHASE
from wrkreport.core.capacity import round_step
from wrkreport.core.cpus import cpu_count
from wrkreport.core.rate_checks import rate_held_check
from wrkreport.core.sequential import FIRST_LOOK, PRECISION_LAST_LOOK
from wrkreport.core.setups import DEFAULT_SETUP_IDS, FRONT_END_SETUP_IDS, PLAIN_SETUP_IDS
from wrkreport.parsers import parse_file
from wrkreport.parsers.histogram import hist_file_name, parse_histogram
from wrkreport.parsers.vegeta import read_vegeta_file

# --- fast: options only, nothing started --------------------------------------------------


def test_help_documents_options_and_exit_statuses():
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("Usage: ./run_bench.sh [options]")
    for text in (
        "--quick",
        "--profile NAME",
        "--tune",
        "Exit status:",
        "130",
        "143",
        "--connections LIST",
        "--pin-client CPUS",
        "--setups LIST",
        "all",
        "--rounds-per-block N",
        "--blocks N",
        "--precision PCT",
        "--max-time DURATION",
        "BENCH_ROUNDS_PER_BLOCK",
        "BENCH_BLOCKS",
        "BENCH_PRECISION",
        "BENCH_MAX_TIME",
        "smoke test",
        "--load-generator NAME",
        "BENCH_LOAD_GENERATOR",
        "node-http",
        "apache2-utils",
        "nodejs",
    ):
        assert text in done.stdout


def test_bad_option_is_exit_2_with_a_message(workdirs):
    out, tmp = workdirs
    done = run_script(["--threads", "many", "--out", str(out)], tmp, timeout=30)
    assert done.returncode == 2
    assert "run_bench.sh: --threads must be a whole number, not 'many'" in done.stderr
    assert not out.exists() and list(tmp.iterdir()) == []


def test_a_negative_value_reaches_its_check_and_is_exit_2(workdirs):
    out, tmp = workdirs
    done = run_script(["--quick", "--handler-delay", "-1ms", "--out", str(out)], tmp, timeout=30)
    assert done.returncode == 2
    assert done.stderr == "run_bench.sh: --handler-delay must be a duration like 1ms, 500us or 0, not '-1ms' (see ./run_bench.sh --help)\n"
    assert not out.exists() and list(tmp.iterdir()) == []


@pytest.mark.parametrize("bad_out", ["/proc/1/x", 'OUT/a"b', "OUT/a;b", "OUT/$HOME"])
def test_an_unusable_out_is_exit_2_before_anything_is_built_or_started(workdirs, bad_out):
    out, tmp = workdirs
    target = bad_out.replace("OUT", str(out))
    done = run_script(["--quick", "--out", target], tmp, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"run_bench.sh: --out {target if bad_out == '/proc/1/x' else repr(target)}: ")
    assert done.stderr.count("\n") == 1 and "building" not in done.stderr
    assert not out.exists() and list(tmp.iterdir()) == []


# --- slow: the real thing ----------------------------------------------------------------------


@pytest.mark.slow
@needs_tools
def test_quick_run_measures_all_four_setups_at_two_gomaxprocs(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    done = run_script(["--quick", "--gomaxprocs", "1,2", "--seed", "11", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    run, manifest = latest_run(out)

    headers = sorted(run.glob("*.headers.txt"))
    assert len(headers) == 8
    for path in headers:
        data = path.read_bytes()
        assert data.startswith(b"HTTP/1.1 200 "), f"{path.name}: {data[:40]!r}"
        assert len(data) == 141, f"{path.name}: {len(data)} bytes"

    wrk_files = sorted(run.glob("*.wrk.txt"))
    assert len(wrk_files) == 8
    for path in wrk_files:
        result = parse_file(path)
        assert result.requests > 0, path.name
        assert result.non_2xx_3xx == 0 and "Non-2xx" not in path.read_text(), path.name
    throughput_cpu = sorted(p.name for p in run.glob("*.cpu.json") if ".rate-" not in p.name)
    assert throughput_cpu == sorted(p.name.replace(".wrk.txt", ".cpu.json") for p in wrk_files)
    # the default fixed-rate phase (one rate per GOMAXPROCS; the capacity search is off here: helpers.script_env, test_driver_rate's):
    # each vegeta file with its CPU record
    rate_files = sorted(run.glob("*.vegeta.csv.gz"))
    assert len(rate_files) == 8 and {p.name.split(".")[0] for p in rate_files} == {
        "go-http",
        "nginx-http",
        "nginx-fcgi-tcp",
        "nginx-fcgi-unix",
    }
    assert sorted(p.name for p in run.glob("*.rate-*.cpu.json")) == sorted(
        p.name.replace(".vegeta.csv.gz", ".cpu.json") for p in rate_files
    )
    for path in wrk_files:  # every measurement's wrk wrote its full latency histogram (histogram.lua)
        histogram = parse_histogram(path.name, (run / hist_file_name(path.name)).read_bytes())
        result = parse_file(path)
        assert histogram.requests == result.requests and histogram.bytes_read > 0 and histogram.count >= result.requests
        assert histogram.wrk_percentiles_us == {p: histogram.percentile_us(p) for p in histogram.wrk_percentiles_us}

    assert manifest["status"] == "complete" and manifest["reason"] is None
    assert manifest["started_at"] and manifest["ended_at"]
    assert manifest["parameters"]["ports"] == {name: ports[name] for name in BASE_PORT_NAMES}
    assert manifest["parameters"]["profile"] == "quick" and manifest["parameters"]["connections_levels"] == [100]
    assert manifest["versions"]["nginx"] and manifest["versions"]["wrk"] and manifest["versions"]["go"]
    assert manifest["nginx_V"].startswith("nginx version:")
    assert "net.core.somaxconn" in manifest["sysctl"] and manifest["sysctl_changes"] is None
    assert [p["gomaxprocs"] for p in manifest["passes"]] == [1, 2]
    for entry in manifest["passes"]:
        n = entry["gomaxprocs"]
        assert entry["go_reported_gomaxprocs"] == n
        assert entry["order"] == shuffled_orders(list(DEFAULT_SETUP_IDS), 1, 11, n)
        for setup in DEFAULT_SETUP_IDS:
            cell = entry["cells"][setup]
            assert cell["ready"] and cell["headers_captured"] and cell["error"] is None, cell
            assert cell["status_line"] == "HTTP/1.1 200 OK" and cell["header_bytes"] == 141
    measured = {(m["setup"], m["gomaxprocs"], m["repeat"]) for m in manifest["measurements"]}
    assert measured == {(s, n, 1) for s in DEFAULT_SETUP_IDS for n in (1, 2)}
    assert all(m["exit_code"] == 0 and (run / m["file"]).is_file() for m in manifest["measurements"])
    assert all(m["connections"] == 100 and m["cpu_file"] == m["file"].replace(".wrk.txt", ".cpu.json") for m in manifest["measurements"])
    assert all(m["hist_file"] == hist_file_name(m["file"]) and " -s " in m["command"] for m in manifest["measurements"])
    conf = (run / "nginx.conf").read_text()
    assert f"listen 127.0.0.1:{ports['nginx-fcgi-unix']};" in conf
    for n in (1, 2):
        assert (run / "logs" / f"go.gomaxprocs-{n}.log").read_text().startswith(f"gohello: GOMAXPROCS={n} ")
        assert (run / "logs" / f"nginx-error.gomaxprocs-{n}.log").is_file()
    assert "[8/8] " in done.stderr and " req/s" in done.stderr
    assert done.stderr.count("smoke test (--quick)") == 2 and manifest["parameters"]["smoke_test"] is True  # no interval claims
    assert [(p["gomaxprocs"], p["block"], p["rounds"]) for p in manifest["passes"]] == [(1, 1, [1]), (2, 1, [1])]
    assert all((m["block"], m["round"]) == (1, 1) and ".block-1.run-1." in m["file"] for m in manifest["measurements"])
    assert all(re.fullmatch(r"[0-9T:-]+\.[0-9]{3}Z", m[key]) for m in manifest["measurements"] for key in ("started_at", "ended_at"))
    assert set(manifest["gaps_s"]) == {"median", "max", "count"} and manifest["gaps_s"]["count"] == 6  # 3 per block
    assert manifest["precision"]["met"] is False and manifest["precision"]["stop_reason"].startswith("fixed design")
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_go_only_run_starts_no_nginx(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    done = run_script(["--quick", "--setups", "go-http", "--gomaxprocs", "1", "--warmup", "0", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    assert manifest["status"] == "complete"
    assert [p.name for p in sorted(run.glob("*.txt"))] == ["go-http.gomaxprocs-1.block-1.run-1.wrk.txt", "go-http.gomaxprocs-1.headers.txt"]
    cpu = json.loads((run / "go-http.gomaxprocs-1.block-1.run-1.cpu.json").read_text())
    assert cpu["processes"]["nginx"] is None and cpu["processes"]["fasthttp"] is None and cpu["processes"]["go"]["user_s"] >= 0
    assert not (run / "nginx.conf").exists() and manifest["passes"][0]["pids"]["nginx"] is None
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_a_pass_without_go_setups_starts_no_go_server_and_needs_none_of_its_ports(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    with socket.socket() as squatter, socket.socket() as squatter2:  # gohello's ports, busy: they must not matter
        squatter.bind(("127.0.0.1", ports["go-http"]))
        squatter2.bind(("127.0.0.1", ports["go-fcgi-tcp"]))
        squatter.listen()
        squatter2.listen()
        args = ["--quick", "--duration", "1", "--warmup", "0", "--setups", "nginx-static", "--gomaxprocs", "1"]
        done = run_script([*args, "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    assert "starting nginx\n" in done.stderr and "Go server" not in done.stderr
    run, manifest = latest_run(out)
    assert manifest["passes"][0]["pids"]["go"] is None and manifest["passes"][0]["go_reported_gomaxprocs"] is None
    assert [p.name for p in (run / "logs").iterdir()] == ["nginx-error.gomaxprocs-1.log"]
    cpu = json.loads((run / "nginx-static.gomaxprocs-1.block-1.run-1.cpu.json").read_text())
    assert cpu["processes"]["go"] is None and busy_s(cpu["processes"]["nginx"]) > 0
    assert parse_file(run / "nginx-static.gomaxprocs-1.block-1.run-1.wrk.txt").requests > 0
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_a_setup_answering_502_for_a_whole_measurement_leaves_a_capped_error_log(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    # 6 s of 502s: 15.5 MB of error lines here (14.5 MB dropped), far over the 1 MiB cap even on a loaded machine.
    args = [str(SCRIPT), "--quick", "--duration", "6", "--warmup", "0", "--setups", "nginx-fcgi-unix", "--gomaxprocs", "1"]
    proc = subprocess.Popen(
        [*args, "--out", str(out), *port_args(ports)],
        env=script_env(tmp),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        # Once the measurement has started (its file exists: the driver checked the servers just
        # before), take the upstream away for good: no new connection to the socket (mode 0:
        # connect() ... (13: Permission denied), logged at crit) and no old one either (the Go
        # server killed, so the FastCGI connections nginx keeps alive close). A chmod alone
        # raced with those kept-alive connections (issue 23).
        wait_for_measurement_file(out, proc, "nginx-fcgi-unix.gomaxprocs-1.block-1.run-1.wrk.txt")
        (socket_path,) = tmp.glob("wrkreport.*/go.sock")
        socket_path.chmod(0)
        go_pid = json.loads((out / "latest" / "manifest.json").read_text())["passes"][0]["pids"]["go"]
        assert alive_as(go_pid, "gohello")
        os.kill(go_pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    run, manifest = latest_run(out)
    assert parse_file(run / "nginx-fcgi-unix.gomaxprocs-1.block-1.run-1.wrk.txt").non_2xx_3xx > 0
    log = (run / "logs" / "nginx-error.gomaxprocs-1.log").read_bytes()
    assert b"(13: Permission denied) while connecting to upstream" in log
    assert len(log) <= (1 << 20) + 200
    note = re.search(rb"\[wrkreport\] log capped at 1048576 bytes: ([0-9]+) bytes of later lines dropped\n$", log)
    assert note and int(note[1]) > 0, log[-300:]
    print(f"\n502 for 6 s: error log kept {len(log)} bytes, dropped {int(note[1])} bytes")
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_two_blocks_of_two_rounds_restart_the_servers_and_build_with_block_unit_ratios(workdirs):
    from wrkreport.analysis.analyze import BLOCK_METHOD, load_analysis

    out, tmp = workdirs
    ports = free_ports()
    # --rates off: the default profile's 4 fixed-rate blocks per GOMAXPROCS were about 40 of its 72 s, and nothing here reads them
    # (test_the_stopping_rule_stops_once_the_target_is_met_with_the_minimum_blocks judges that phase of a blocked run)
    args = [
        "--blocks",
        "2",
        "--rounds-per-block",
        "2",
        "--duration",
        "1",
        "--warmup",
        "1",
        "--setups",
        "go-http,nginx-http",
        "--gomaxprocs",
        "1,2",
        "--rates",
        "off",
    ]
    done = run_script([*args, "--seed", "5", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    # Blocks alternate GOMAXPROCS; each block holds its own rounds; the global round k is unique per cell.
    assert [(p["gomaxprocs"], p["block"], p["rounds"]) for p in manifest["passes"]] == [
        (1, 1, [1, 2]),
        (2, 1, [1, 2]),
        (1, 2, [3, 4]),
        (2, 2, [3, 4]),
    ]
    go_pids = [p["pids"]["go"] for p in manifest["passes"]]
    assert len(set(go_pids)) == 4 and all(go_pids), "the Go server must be started again for every block"
    assert len({p["pids"]["nginx"] for p in manifest["passes"]}) == 4
    for entry in manifest["passes"]:
        assert entry["order"] == shuffled_orders(["go-http", "nginx-http"], 2, 5, entry["gomaxprocs"], entry["block"])
        assert all(cell["error"] is None for cell in entry["cells"].values())  # every block's answers are checked
    expected = {
        f"{s}.gomaxprocs-{n}.block-{b}.run-{k}.wrk.txt"
        for s in ("go-http", "nginx-http")
        for n in (1, 2)
        for b in (1, 2)
        for k in (2 * b - 1, 2 * b)
    }
    assert {p.name for p in run.glob("*.wrk.txt")} == expected
    assert {m["file"] for m in manifest["measurements"]} == expected
    assert all(m["round"] == m["repeat"] - 2 * (m["block"] - 1) for m in manifest["measurements"])
    assert sorted(p.name for p in run.glob("*.headers.txt")) == [
        f"{s}.gomaxprocs-{n}.headers.txt" for s in ("go-http", "nginx-http") for n in (1, 2)
    ]
    assert (run / "logs" / "go.gomaxprocs-1.block-2.log").read_text().startswith("gohello: GOMAXPROCS=1 ")
    assert manifest["gaps_s"]["count"] == 4 * 3 and 0 <= manifest["gaps_s"]["median"] <= manifest["gaps_s"]["max"]
    assert "gap between measurements: median " in done.stderr
    assert manifest["precision"]["blocks"] == {"1": 2, "2": 2} and manifest["precision"]["ratios"] == 2
    analysed = load_analysis(run)
    ratios = [r for r in analysed.analysis.ratios if r.setup == "nginx-http"]
    assert len(ratios) == 2 and all((r.unit, r.blocks, r.n) == ("block", 2, 4) for r in ratios)
    note = analysed.analysis.precision_note  # a fixed design is held to the target too, and says it stopped by design
    assert analysed.analysis.method == f"{BLOCK_METHOD} {note}" and "stopped: fixed design: the planned blocks ran" in note
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@pytest.mark.alone  # how many blocks fit in 30 s
@needs_tools
def test_the_stopping_rule_stops_at_the_time_limit_and_says_how_much_longer_it_would_take(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    args = [
        "--rounds-per-block",
        "1",
        "--duration",
        "1",
        "--warmup",
        "0",
        "--setups",
        "go-http,nginx-http",
        "--gomaxprocs",
        "1",
        "--rates",
        "off",
    ]
    # 30 s: room for 6-9 blocks of one round (3-5 s each), past the first look (4 blocks: the first with an interval); +/-2% is
    # met by none (it was 45 s with blocks of 2 rounds, 6-7 blocks). How long the run took is not asserted (timings are the
    # benchmark scripts' business), the recorded stop reason is.
    done = run_script([*args, "--max-time", "30s", "--precision", "2", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    record = manifest["precision"]
    assert manifest["parameters"]["adaptive"] is True and manifest["parameters"]["max_time_s"] == 30
    assert manifest["parameters"]["intervals"]["rule"] == "precision" and record["rule"] == "precision"  # --precision given
    assert record["stop_reason"].startswith("time limit: another block") and record["met"] is False
    blocks = record["blocks"]["1"]
    assert FIRST_LOOK < blocks < PRECISION_LAST_LOOK and len(manifest["passes"]) == blocks
    assert record["more_time_estimate_s"] > 0 and record["more_blocks_estimate"] >= 1
    assert "precision target +/-2% NOT met" in done.stderr and "more would meet it" in done.stderr
    assert f"after block {FIRST_LOOK - 1} GOMAXPROCS=1: no interval yet (target +/-2%)" in done.stderr  # below the first look: none
    assert re.search(rf"after block {FIRST_LOOK} GOMAXPROCS=1: worst ratio \+/-[0-9.]+% \(target \+/-2%\)", done.stderr)
    assert "% so far" in done.stderr  # the progress line shows the current worst half-width
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@pytest.mark.alone  # the ratios' spread decides when +/-90% is met
@needs_tools
def test_the_stopping_rule_stops_once_the_target_is_met_at_the_first_look(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    args = ["--rounds-per-block", "1", "--duration", "1", "--warmup", "0", "--setups", "go-http,nginx-http", "--gomaxprocs", "1"]
    done = run_script([*args, "--max-time", "2m", "--precision", "90", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    _, manifest = latest_run(out)
    record = manifest["precision"]
    # the fixed-rate phase without an objective (the default): its 4 blocks, then no more
    assert manifest["capacity_precision"]["1"]["stop_reason"] == "no objective: the planned 4 block(s) ran"
    assert len(manifest["fixed_rate_passes"]) == 4 and manifest["parameters"]["rate_blocks_max"] == RATE_PHASE["default"]["rate_blocks"]
    # +/-90% is met as soon as there is an interval over blocks: at the first look of the repeated intervals.
    assert record["met"] is True and record["stop_reason"].startswith("target met")
    assert record["blocks"] == {"1": FIRST_LOOK} and record["worst_half_width_pct"] <= 90
    assert record["more_time_estimate_s"] == 0 and "precision target +/-90% met" in done.stderr
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@pytest.mark.alone  # how many fixed-rate blocks fit before --max-time depends on the machine being the run's
@needs_tools
def test_the_capacity_rule_takes_more_fixed_rate_blocks_while_an_interval_is_wider_than_its_target(workdirs):
    """Issue 42: past its least 4 blocks the phase goes on while a capacity is wider than --capacity-precision (here +/-1%, rarely
    met) until --max-time, and the capacity checks (5 s each, lower after a miss while one fits before --max-time) follow the search
    of the last block it ran."""
    out, tmp = workdirs
    ports = free_ports()
    # go-http with a 2 ms handler on 10 connections (test_driver_capacity_pause's shape): its p99 is the handler's 2 ms at
    # the light load and crosses 10 ms where a queue forms (near 3,700 req/s here), whatever the machine's speed. CPU-bound
    # shapes crossed inside the search's range on one machine only: go-http's p99 at its default connections was 9-14 ms
    # already at the light load (bounds, which ask for no more blocks: 4 blocks), and its p50 within 1 ms, crossed near
    # 19,900 req/s here, was a bound in CI (4 blocks again)
    args = [
        "--rounds-per-block",
        "1",
        "--duration",
        "1",
        "--warmup",
        "0",
        "--setups",
        "go-http",
        "--gomaxprocs",
        "1",
        "--connections",
        "10",
        "--handler-delay",
        "2ms",
        "--slo",
        "p99=10ms",
    ]
    # 85 s: 7 throughput blocks of go-http alone (no ratio to aim at) take about 20 s, a fixed-rate block of this shape 6-8 s
    # (9 of them in 90 s), and the blocks leave room for two 10-s checks, so 5-6 fixed-rate blocks and a check fit (it was
    # 120 s, then 90 s, then 70 s with 5-s checks, for the same assertions)
    # +/-1%: go-http's capacity after 4 blocks was +/-2.8% and +/-8.6% in two runs of 2026-12-07. Wider than the target, it
    # takes more blocks when the ceiling can reach it (+/-4% or less after 4 carries to +/-1.5% or less after 12) until
    # --max-time, else it stops after the least 4, said ("out of reach"); within it, it stops there (target met).
    done = run_script([*args, "--capacity-precision", "1", "--max-time", "85s", "--out", str(out), *port_args(ports)], tmp, timeout=300)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    record = manifest["capacity_precision"]["1"]
    blocks = len(manifest["fixed_rate_passes"])
    ceiling = RATE_PHASE["default"]["rate_blocks_max"]
    print(f"\n{blocks} fixed-rate blocks: {record}")
    reason, width = record["stop_reason"], record["worst_half_width_pct"]
    assert blocks == record["blocks"] <= ceiling and record["worst"] == "go-http", (record, done.stderr[-3000:])
    if reason.startswith("out of reach"):  # judged after each block from the least 4 on (5 in one run: its spread grew)
        carried = re.search(r"would still be at \+/-([\d.]+)% after the ceiling of (\d+) \(target \+/-1%\)$", reason)
        assert blocks >= 4 and carried and float(carried[1]) > 1.5 * 1.0 and int(carried[2]) == ceiling, record
        assert width > float(carried[1]), record  # more blocks narrow it
    elif reason.startswith("target met"):
        assert width <= 1.0, record
    else:
        assert 4 < blocks and reason.startswith(("time limit: 1 more fixed-rate block", f"block ceiling: {ceiling}")), record
    checks = [e for e in manifest["fixed_rate_measurements"] if e.get("capacity_check")]
    assert 1 <= len(checks) <= 3 and {(e["setup"], e["block"]) for e in checks} == {("go-http", blocks)}
    # each check an attack of 10 s (a step's is 1 s) judged by its seconds (8 of 10 within), the next one 0.9 of a missed one's
    # rate, none after one that met
    results = [read_vegeta_file(run / e["file"], e["rate"]) for e in checks]
    assert all(9.9 <= r.span_s <= 10.1 for r in results), [r.span_s for r in results]  # vegeta's last start can fall past -duration
    rate_phase.STEPS.clear()
    steps = [rate_phase.measured_step(run, e, manifest) for e in checks]
    assert [s.seconds for s in steps] == [10] * len(steps) and manifest["parameters"]["check_share"] == 0.9
    assert [s.seconds_met for s in steps] == [r.seconds_within(99.0, 10.0)[1] for r in results]
    met = [s.verdict == "pass" for s in steps]
    held = [rate_held_check(r).status == "pass" for r in results]
    assert all(m == (s.seconds_met >= 8 and h) for m, s, h in zip(met, steps, held)), (met, steps, held)
    cut = manifest.get("capacity_checks_cut", [])  # a lower check that would have ended after --max-time did not start, said
    assert not any(met[:-1]) and (met[-1] or len(checks) == 3 or [(c["gomaxprocs"], c["setups"]) for c in cut] == [(1, ["go-http"])])
    for c in cut:
        assert c["reason"].endswith("would end after --max-time 85s") and f"no lower check of go-http: {c['reason']}" in done.stderr
    # 0.9 of the missed rate, to three figures; a rate this block measured already (the ladder's rungs are 10% apart) gives way
    # to the next one below it, a file name of its own (capacity_check.next_check_rate)
    taken = {e["rate"] for e in manifest["fixed_rate_measurements"] if (e["setup"], e["block"]) == ("go-http", blocks)}
    for earlier, later in zip(checks, checks[1:]):
        rate = round_step(0.9 * earlier["rate"])
        while rate in taken - {later["rate"]}:
            rate -= 1
        assert later["rate"] == rate, (earlier["rate"], later["rate"], sorted(taken))
    met = "met" if reason.startswith("target met") else "NOT met"
    assert f"capacity target +/-1% {met} at GOMAXPROCS=1: widest go-http" in done.stderr
    assert f"fixed rate GOMAXPROCS=1: no more blocks after block {blocks}: " in done.stderr
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_sigint_mid_measurement_stops_everything_and_keeps_completed_files(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    args = [str(SCRIPT), "--quick", "--duration", "4", "--gomaxprocs", "1", "--warmup", "0", "--out", str(out), *port_args(ports)]
    proc = subprocess.Popen(args, env=script_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        in_progress = wait_for_second_measurement(out, proc)
        setup = in_progress.split(".", 1)[0]
        wait_for_wrk(proc, ports[setup])  # loading: 4 s to go
        proc.send_signal(signal.SIGINT)  # to the script only: it must stop its children itself
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    run, manifest = latest_run(out)
    assert manifest["status"] == "interrupted", manifest["reason"]
    assert manifest["reason"].startswith("interrupted by SIGINT during ")
    assert manifest["ended_at"]
    completed = [m["file"] for m in manifest["measurements"]]
    assert len(completed) >= 1 and in_progress not in completed
    assert not (run / in_progress).exists(), "the interrupted measurement's partial output must go"
    assert sorted(p.name for p in run.glob("*.wrk.txt")) == sorted(completed)
    assert sorted(p.name for p in run.glob("*.cpu.json")) == sorted(m["cpu_file"] for m in manifest["measurements"])
    assert sorted(p.name for p in run.glob("*.hist.json")) == sorted(m["hist_file"] for m in manifest["measurements"])
    for name in completed:
        assert parse_file(run / name).requests > 0
    assert len(list(run.glob("*.headers.txt"))) == 4
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_a_default_run_stopped_by_sigint_after_its_third_block_builds_the_verdict_as_it_stood(workdirs, tmp_path):
    """A default run (the verdict rule, the four default setups) interrupted right after its third block: exit 130, its files
    kept, and a page that says who leads so far, that there is no interval below the first look, and that it was stopped."""
    out, tmp = workdirs
    ports = free_ports()
    # the default design as it is, warm-up included (script_env's runs have none): with blocks of one round and no warm-up
    # (17-29 s, not 69 s) the two GOMAXPROCS values were once led by two setups, a sentence of its own
    args = [str(SCRIPT), "--gomaxprocs", "1,2", "--warmup", "1", "--out", str(out), *port_args(ports)]
    proc = subprocess.Popen(args, env=script_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    said = []
    try:
        for line in proc.stderr:  # blocks 1 and 2 at GOMAXPROCS=1, block 1 at GOMAXPROCS=2: the third is GOMAXPROCS=1's second
            said.append(line)
            if line.startswith("[run_bench] after block 2 GOMAXPROCS=1: ") and "next:" in line:
                proc.send_signal(signal.SIGINT)
                break
        _, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = "".join(said) + rest
    assert proc.returncode == 130, stderr[-3000:]
    assert "repeated 95% intervals, valid at whichever block from 4 to 10" in stderr
    run, manifest = latest_run(out)
    assert manifest["status"] == "interrupted" and manifest["parameters"]["intervals"]["rule"] == "verdict"
    finished = [p for p in manifest["passes"] if p.get("ended_at")]
    assert [(p["gomaxprocs"], p["block"]) for p in finished] == [(1, 1), (2, 1), (1, 2)]
    reports = tmp_path / "reports"
    built = subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(reports)], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    page = (reports / "index.html").read_text().replace("&#x27;", "'")
    assert "Stopped by you after 3 blocks." in page
    assert "GOMAXPROCS=1 has 2 blocks and GOMAXPROCS=2 has 1: intervals start at 4 blocks (repeated intervals)" in page
    assert re.search(
        r"(The HTTP proxy|FastCGI over TCP|FastCGI over a Unix socket) leads so far, from too few blocks for an interval "
        r"\(they start at 4\)",
        page,
    ), page[:4000]
    data = json.loads((reports / "results.json").read_text())
    ratios = [r for r in data["ratios"] if r["setup"] != "go-http" and r["ratio"] is not None]
    assert ratios and all(r["ci_low"] is None and r["ci_high"] is None for r in ratios)  # no interval below the first look
    assert_nothing_left(manifest, ports, tmp)


def wait_for_measurement_file(out: Path, proc: subprocess.Popen, name: str, timeout: float = 60) -> None:
    """Wait until the latest run's measurement file name exists (the measurement has started)."""
    deadline = time.monotonic() + timeout
    while not (out / "latest" / name).exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"{name} never appeared"
        time.sleep(0.02)


def wait_for_second_measurement(out: Path, proc: subprocess.Popen, timeout: float = 60) -> str:
    """Wait until one measurement is recorded and the next one's file exists; return its name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        manifest_path = out / "latest" / "manifest.json"
        if manifest_path.exists():
            manifest = json.loads(manifest_path.read_text())
            done = {m["file"] for m in manifest["measurements"]}
            running = [p.name for p in manifest_path.parent.glob("*.wrk.txt") if p.name not in done]
            if done and running:
                return running[0]
        time.sleep(0.1)
    raise AssertionError("the second measurement never started")


@pytest.mark.slow
@needs_tools
def test_busy_port_is_named_and_nothing_is_started(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", ports["nginx-fcgi-tcp"]))
        squatter.listen()
        done = run_script(["--quick", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 2, done.stderr
    expected = f"port {ports['nginx-fcgi-tcp']} (nginx-fcgi-tcp) on 127.0.0.1 is in use by pid {os.getpid()} ("
    assert expected in done.stderr
    assert "nothing was started" in done.stderr
    assert not out.exists() or list(out.iterdir()) == []
    assert processes_mentioning([f"127.0.0.1:{p}" for p in ports.values()] + [str(tmp)]) == []
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
@needs_tools
def test_connections_beyond_the_open_files_limit_are_refused(workdirs):
    out, tmp = workdirs
    done = run_script(["--quick", "--connections", "600000", "--out", str(out), *port_args(free_ports())], tmp)
    assert done.returncode == 2, done.stderr
    assert "--connections 600000 needs about 1200256 open files" in done.stderr
    assert not out.exists() and list(tmp.iterdir()) == []


def test_pinning_to_a_cpu_that_is_not_there_is_refused(workdirs):
    out, tmp = workdirs
    done = run_script(["--quick", "--pin-client", "0", "--pin-server", "4095", "--out", str(out)], tmp, timeout=30)
    assert done.returncode == 2
    assert "run_bench.sh: --pin-server 4095: CPU 4095 is not available here (this machine lets the benchmark use CPU " in done.stderr
    assert not out.exists() and list(tmp.iterdir()) == []


def cpu_of(run: Path, measurement: dict) -> dict:
    """Return a measurement's .cpu.json, checked against its manifest entry."""
    assert measurement["cpu_file"] == measurement["file"].replace(".wrk.txt", ".cpu.json")
    cpu = json.loads((run / measurement["cpu_file"]).read_text())
    assert cpu["file"] == measurement["file"]
    assert (cpu["setup"], cpu["gomaxprocs"], cpu["connections"], cpu["repeat"]) == tuple(
        measurement[k] for k in ("setup", "gomaxprocs", "connections", "repeat")
    )
    return cpu


def busy_s(usage: dict | None) -> float:
    """Return user + system seconds of a .cpu.json process entry."""
    assert usage is not None
    return usage["user_s"] + usage["system_s"]


@pytest.mark.slow
@needs_tools
def test_sweep_of_two_levels_names_the_level_and_records_cpu(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    args = [
        "--connections",
        "10,50",
        "--duration",
        "1",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--setups",
        "go-http,nginx-http",
        "--gomaxprocs",
        "1",
        "--rates",
        "off",
    ]
    done = run_script([*args, "--seed", "5", "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and " GOMAXPROCS=1 c=50 run 1/1 " in done.stderr
    run, manifest = latest_run(out)
    stems = [f"{s}.gomaxprocs-1.c{c}.block-1.run-1" for s in ("go-http", "nginx-http") for c in (10, 50)]
    assert sorted(p.name for p in run.glob("*.wrk.txt")) == sorted(f"{stem}.wrk.txt" for stem in stems)
    assert sorted(p.name for p in run.glob("*.cpu.json")) == sorted(f"{stem}.cpu.json" for stem in stems)
    assert sorted(p.name for p in run.glob("*.headers.txt")) == ["go-http.gomaxprocs-1.headers.txt", "nginx-http.gomaxprocs-1.headers.txt"]

    params = manifest["parameters"]
    assert params["connections_levels"] == [10, 50] and params["connections"] is None
    entry = manifest["passes"][0]
    assert entry["order"] == shuffled_orders(["go-http", "nginx-http"], 2, 5, 1) and entry["order_connections"] == [10, 50]
    assert [m["connections"] for m in manifest["measurements"]] == [10, 10, 50, 50]  # level by level
    for m in manifest["measurements"]:
        result = parse_file(run / m["file"])
        assert result.connections == m["connections"] and result.requests > 0 and f"-c{m['connections']} " in m["command"]
        cpu = cpu_of(run, m)
        assert busy_s(cpu["processes"]["go"]) > 0 and busy_s(cpu["processes"]["wrk"]) > 0
        assert cpu["processes"]["wrk"]["threads"] == 2 and cpu["processes"]["fasthttp"] is None
        assert cpu["processes"]["nginx"]["pids"][0] == entry["pids"]["nginx"] and len(cpu["processes"]["nginx"]["pids"]) >= 2
        if m["setup"] == "nginx-http":
            assert busy_s(cpu["processes"]["nginx"]) > 0
        assert 0.9 <= cpu["wall_s"] < 5 and cpu["pinning"] is None
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@pytest.mark.alone  # compares CPU at two loads
@needs_tools
@pytest.mark.skipif(cpu_count() < 2, reason="pinning wrk and the servers apart needs 2 CPUs")
def test_go_uses_more_cpu_at_higher_load_and_pinning_is_recorded(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    # With a 10 ms handler delay the load is set by the connections, not by how much CPU is
    # free: about 100 requests/s at 1 connection, 5,000 at 50, however busy the machine is.
    args = ["--threads", "1", "--connections", "1,50", "--handler-delay", "10ms", "--duration", "2", "--repeats", "1", "--warmup", "0"]
    args += ["--setups", "go-http", "--gomaxprocs", "1", "--pin-client", "0", "--pin-server", "1"]
    done = run_script([*args, "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    assert (manifest["parameters"]["pin_client"], manifest["parameters"]["pin_server"]) == ("0", "1")
    go, requests = {}, {}
    for m in manifest["measurements"]:
        assert m["command"].startswith("taskset -c 0 wrk --latency -s ") and "histogram.lua -t1 " in m["command"]
        cpu = cpu_of(run, m)
        assert cpu["pinning"] == {"client": "0", "server": "1"}
        go[m["connections"]] = busy_s(cpu["processes"]["go"])
        requests[m["connections"]] = parse_file(run / m["file"]).requests
        assert busy_s(cpu["processes"]["wrk"]) > 0
    assert requests[50] > 10 * requests[1] > 0, requests
    assert go[50] > go[1], (go, requests)
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_the_three_new_setups_answer_141_bytes_and_are_measured(workdirs):
    out, tmp = workdirs
    ports = free_ports()
    new = ["nginx-http-unix", "go-fasthttp", "nginx-static"]
    args = ["--quick", "--duration", "1", "--warmup", "0", "--setups", ",".join(new), "--gomaxprocs", "1"]
    done = run_script([*args, "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    assert manifest["parameters"]["setups"] == new
    assert manifest["parameters"]["ports"] == {name: ports[name] for name in (*BASE_PORT_NAMES, *new)}
    for setup in new:
        data = (run / f"{setup}.gomaxprocs-1.headers.txt").read_bytes()
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and len(data) == 141, data
        assert manifest["passes"][0]["cells"][setup]["header_bytes"] == 141
        path = run / f"{setup}.gomaxprocs-1.block-1.run-1.wrk.txt"
        result = parse_file(path)
        assert result.requests > 0 and result.non_2xx_3xx == 0 and "Non-2xx" not in path.read_text(), path.name
    assert b"Server: gophr" in (run / "go-fasthttp.gomaxprocs-1.headers.txt").read_bytes()
    cpu = {m["setup"]: cpu_of(run, m)["processes"] for m in manifest["measurements"]}
    assert busy_s(cpu["go-fasthttp"]["fasthttp"]) > 0 and busy_s(cpu["nginx-static"]["nginx"]) > 0
    assert busy_s(cpu["nginx-http-unix"]["go"]) > 0 and busy_s(cpu["nginx-http-unix"]["nginx"]) > 0
    assert (run / "logs" / "fasthttp.gomaxprocs-1.log").read_text().startswith("gofasthttp: GOMAXPROCS=1 ")
    assert manifest["passes"][0]["pids"]["fasthttp"]
    assert_nothing_left(manifest, ports, tmp)


@pytest.mark.slow
@needs_tools
def test_body_bytes_handler_delay_and_no_upstream_keepalive_in_every_setup(workdirs):
    out, tmp = workdirs
    ports = free_port_block((*PORT_NAMES, "node-http", *FRONT_END_SETUP_IDS), 18100, 19000, USED_PORTS)  # every setup `all` has
    args = ["--quick", "--duration", "1", "--warmup", "0", "--setups", "all", "--gomaxprocs", "1"]
    knobs = ["--body-bytes", "4096", "--handler-delay", "1ms", "--no-upstream-keepalive"]
    done = run_script([*args, *knobs, "--out", str(out), *port_args(ports)], tmp)
    assert done.returncode == 0, done.stderr
    run, manifest = latest_run(out)
    params = manifest["parameters"]
    assert (params["body_bytes"], params["handler_delay_ms"], params["upstream_keepalive"]) == (4096, 1, False)
    assert params["expect_header_bytes"] == 143 and params["setups"] == list(PLAIN_SETUP_IDS)
    for setup in PLAIN_SETUP_IDS:
        data = (run / f"{setup}.gomaxprocs-1.headers.txt").read_bytes()
        assert data.startswith(b"HTTP/1.1 200 OK\r\n"), data
        if setup in FRONT_END_SETUP_IDS:  # HAProxy, Caddy, Apache httpd: their own header block, go-http's 4,096-byte body
            cell = manifest["passes"][0]["cells"][setup]
            assert cell["error"] is None and cell["body_bytes"] == 4096 and cell["response_bytes"] >= len(data) + 4096, (setup, cell)
        else:
            assert b"\r\nContent-Length: 4096\r\n" in data and len(data) == 143, f"{setup}: {len(data)} bytes: {data!r}"
        result = parse_file(run / f"{setup}.gomaxprocs-1.block-1.run-1.wrk.txt")
        assert result.requests > 0 and result.non_2xx_3xx == 0, setup
        assert result.bytes_read / result.requests > 4096, setup  # a body of 4096 bytes (wrk rounds "Read" to 0.01 MB)
    conf = "\n".join(line.split("#", 1)[0] for line in (run / "nginx.conf").read_text().splitlines())
    assert "keepalive 300;" not in conf and "fastcgi_keep_conn off;" in conf
    assert "delay=1ms body=4096 " in (run / "logs" / "go.gomaxprocs-1.log").read_text()
    assert "delay=1ms body=4096 " in (run / "logs" / "fasthttp.gomaxprocs-1.log").read_text()
    assert_nothing_left(manifest, ports, tmp)
