"""Tests of wrkreport.bench.fixed_rate with the real pinned vegeta against the real Go server on 127.0.0.1: one measurement's files, read back by the parser, judged by the checks."""

from __future__ import annotations

import doctest
import gzip
import json
import os
import subprocess

import pytest

from rate_servers import Staller, build_gohello, gohello, vegeta_or_skip
from wrkreport.bench import fixed_rate
from wrkreport.bench.fixed_rate import Attack, attack_argv, measure_rate, rate_stem
from wrkreport.core.rate_checks import Expected, rate_checks, rate_held_check
from wrkreport.parsers.vegeta import read_vegeta_file

HELLO = Expected(200, 12)  # the hello world's answer: 200 with a 12-byte body

pytestmark = pytest.mark.alone  # its real measurements judge whether a rate was held and how long requests took


def test_the_doctests_hold():
    assert doctest.testmod(fixed_rate).failed == 0


def test_the_command_is_an_open_loop_attack_at_the_rate(tmp_path):
    attack = Attack(
        url="http://127.0.0.1:8080/", rate=2000, duration_s=1.5, connections=100, timeout_s=2, expect_body_bytes=12, client_pin="0"
    )
    argv = attack_argv("/c/vegeta", attack, tmp_path / "t")
    assert argv == [
        "taskset",
        "-c",
        "0",
        "/c/vegeta",
        "attack",
        "-targets",
        str(tmp_path / "t"),
        "-rate",
        "2000/1s",
        "-duration",
        "1.5s",
        "-timeout",
        "2s",
        "-connections",
        "100",
        "-keepalive=true",
        "-http2=false",
        "-laddr",
        "127.0.0.2",
        "-max-body",
        "13",
    ]
    # Off loopback (a --server-host target) vegeta keeps its default source address.
    assert "-laddr" not in attack_argv("v", Attack(url="http://10.200.0.2:8080/", rate=1, duration_s=1), tmp_path / "t")
    assert rate_stem("go-http", 1, 2, 5, 2000, connections=100) == "go-http.gomaxprocs-1.c100.block-2.run-5.rate-2000"
    assert attack_argv("v", Attack(url="u", rate=1, duration_s=1, max_connections=50), tmp_path / "t")[-2:] == ["-max-connections", "50"]
    # an h2 setup's: Go's HTTP/2 client, h2 offered by ALPN, the run's self-signed certificate taken
    h2 = attack_argv("v", Attack(url="https://127.0.0.1:8447/", rate=1, duration_s=1, http2=True), tmp_path / "t")
    assert "-http2=true" in h2 and "-http2=false" not in h2 and "-insecure" in h2
    with pytest.raises(ValueError, match="rate must be a positive whole number"):
        Attack(url="u", rate=2.5, duration_s=1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Yield (URL, process) of a real gohello on 127.0.0.1, GOMAXPROCS=1."""
    binary = build_gohello(tmp_path_factory.mktemp("gohello"))
    with gohello(binary, gomaxprocs=1) as running:
        yield running


@pytest.mark.slow
def test_one_measurement_keeps_every_request_and_its_cpu_and_passes_the_checks(server, tmp_path):
    url, proc = server
    vegeta = vegeta_or_skip()
    run_dir, work = tmp_path / "run", tmp_path / "work"
    run_dir.mkdir()
    work.mkdir()
    stem = rate_stem("go-http", 1, 1, 1, 1000)
    ids = {"setup": "go-http", "gomaxprocs": 1, "block": 1, "round": 1, "repeat": 1}
    attack = Attack(url=url, rate=1000, duration_s=2, expect_body_bytes=12)
    ran = measure_rate(vegeta, attack, run_dir, work, stem, ids, {"go": proc.pid})

    assert ran.problem is None and ran.exit_code == 0 and ran.signal is None
    assert sorted(p.name for p in run_dir.iterdir()) == [f"{stem}.cpu.json", f"{stem}.vegeta.csv.gz"]
    assert list(work.iterdir()) == []  # the gob, the targets and the stderr are gone
    result = read_vegeta_file(run_dir / ran.file)  # the offered rate from the name
    # vegeta stops once 2 s have passed (lib/attack.go: `elapsed > du`); the 2,000th hit is due at 1.999 s, so on a
    # busy machine it can be the one not sent: one fewer is vegeta's rule, any other count is ours
    assert result.offered_rps == 1000 and result.requests in (1999, 2000)
    checks = rate_checks(result, HELLO, json.loads((run_dir / ran.cpu_file).read_text()))
    assert [(c.name, c.status) for c in checks][:3] == [("rate-held", "pass"), ("rate-response", "pass"), ("rate-errors", "pass")], checks
    assert 0.05 < result.p50_ms < result.p99_ms <= result.max_ms < 100

    cpu = json.loads((run_dir / ran.cpu_file).read_text())
    assert cpu["file"] == ran.file and cpu["setup"] == "go-http" and cpu["block"] == 1
    assert cpu["processes"]["go"]["pids"] == [proc.pid] and cpu["processes"]["go"]["user_s"] + cpu["processes"]["go"]["system_s"] > 0
    generator = cpu["processes"]["wrk"]
    assert generator["user_s"] + generator["system_s"] == pytest.approx(ran.generator_cpu_s, abs=0.002) and ran.generator_cpu_s > 0
    assert 2.0 <= cpu["wall_s"] < 10

    entry = ran.entry(ids, attack)
    assert entry["rate"] == 1000 and entry["file"] == ran.file and entry["command"].startswith(f"{vegeta} attack -targets ")
    # vegeta's own report reads the kept file too, and counts the same requests and bytes
    report = subprocess.run(
        [str(vegeta), "report", "-type", "json"], input=gzip.decompress((run_dir / ran.file).read_bytes()), capture_output=True, check=True
    )
    metrics = json.loads(report.stdout)
    assert metrics["requests"] == result.requests and metrics["status_codes"] == {"200": result.requests}
    assert metrics["bytes_in"]["total"] == 12 * result.requests and metrics["latencies"]["max"] == result.latencies_ns[-1]
    assert metrics["rate"] == pytest.approx(result.achieved_rps * result.requests / (result.requests - 1))  # vegeta: n / span


@pytest.mark.slow
def test_a_failed_attack_keeps_nothing_and_says_why(tmp_path):
    vegeta = vegeta_or_skip()
    attack = Attack(url="not a url", rate=10, duration_s=0.5)
    ran = measure_rate(vegeta, attack, tmp_path, tmp_path, "bad.rate-10", {})
    assert ran.file is None and ran.cpu_file is None and ran.exit_code != 0
    assert ran.problem.startswith(f"vegeta attack exit {ran.exit_code}: ")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_closed_port_is_measured_and_fails_the_errors_check(tmp_path):
    vegeta = vegeta_or_skip()
    from helpers import free_port_block

    port = free_port_block(("closed",), 32000, 32700)["closed"]
    attack = Attack(url=f"http://127.0.0.1:{port}/", rate=50, duration_s=0.5)
    ran = measure_rate(vegeta, attack, tmp_path, tmp_path, "refused.rate-50", {})
    result = read_vegeta_file(tmp_path / ran.file)
    checks = {c.name: c for c in rate_checks(result, HELLO)}
    assert result.errors == result.requests and result.requests in (24, 25) and result.timeouts == 0  # vegeta's cut-off, as above
    assert checks["rate-errors"].status == "fail" and "connection refused" in checks["rate-errors"].message
    assert checks["rate-response"].message == f"none of the {result.requests} requests was answered"
    assert os.path.exists(tmp_path / ran.cpu_file)


# --- Held means the rate was sustained: a pause is held, a backlog is not ------------------------


def attack_once(vegeta, url: str, attack: Attack, tmp_path, name: str):
    """Run one real fixed-rate measurement into tmp_path/name; return its parsed record."""
    run_dir, work = tmp_path / name, tmp_path / f"{name}-work"
    run_dir.mkdir()
    work.mkdir()
    ran = measure_rate(vegeta, attack, run_dir, work, f"{name}.rate-{attack.rate}", {})
    assert ran.problem is None, ran.problem
    return read_vegeta_file(run_dir / ran.file)


@pytest.mark.slow
def test_a_server_paused_in_short_spells_is_held_and_its_p99_shows_the_pauses(tmp_path):
    # 150 ms SIGSTOPs every 0.7 s from just before the attack: at about 0.55, 1.25 and 1.95 s, so the
    # 2-second attack ends inside a pause. Before, its last answer coming 100+ ms after its last request
    # called such a server overloaded at 1,000 req/s (it serves ~60,000) and left its latency out.
    vegeta = vegeta_or_skip()
    binary = build_gohello(tmp_path / "bin")
    with gohello(binary, gomaxprocs=1) as (url, proc), Staller(proc.pid, stall_s=0.15, period_s=0.7) as staller:
        result = attack_once(vegeta, url, Attack(url=url, rate=1000, duration_s=2, expect_body_bytes=12), tmp_path, "paused")
    held = rate_held_check(result)
    print(
        f"paused: {len(staller.stalls)} stalls; p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.1f} ms; wait {1000 * result.wait_s:.1f} ms; "
        f"windows {[round(w, 1) for w in result.window_p50_ms]}; {held.message}"
    )
    assert staller.stalls and held.status == "pass", held.message
    assert result.p99_ms >= 0.6 * 150  # a quarter of the requests met a pause: p99 is near its length
    assert result.p50_ms < 10  # most did not


@pytest.mark.slow
def test_a_rate_well_above_the_servers_capacity_is_not_held(tmp_path):
    # gohello sleeps 20 ms per request and vegeta may open 10 connections: at most ~500 req/s; 1,500 offered.
    vegeta = vegeta_or_skip()
    binary = build_gohello(tmp_path / "bin")
    with gohello(binary, "-handler-delay", "20ms") as (url, _):
        attack = Attack(url=url, rate=1500, duration_s=2, max_connections=10, timeout_s=5, expect_body_bytes=12)
        result = attack_once(vegeta, url, attack, tmp_path, "overloaded")
    held = rate_held_check(result)
    print(
        f"overloaded: achieved {result.achieved_rps:,.0f} req/s; p50 {result.p50_ms:.1f} ms; windows "
        f"{[round(w, 1) for w in result.window_p50_ms]}; {held.message}"
    )
    assert held.status == "fail" and held.message.startswith("rate not held"), held.message
