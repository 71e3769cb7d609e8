"""The fixed-rate phase on several machines at once (--client-hosts): vegeta copied to two lab clients, run at rate / 2 each through their agents.

As test_driver_clients' helper layer: gohello (behind tests/tcp_relay.py) in the lab's
controller namespace, two client hosts reached over ssh masters opened as run_bench.sh
opens them, the helper's `clients-vegeta`, `rate-warm-up`, `measure-rate --clients` and
`clients-down` run for real. The merged percentiles must be those of both clients' rows
together, the clients' rates must add up to the rate, and nothing may be left running.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

import netlab
from helpers import HIST_SCRIPT, Serve, wait_for
from rate_servers import vegeta_or_skip
from wrkreport.core.latency_histogram import rank_of
from wrkreport.parsers.vegeta import read_vegeta_file
from wrkreport.runs.rate_measurements import read_rate_measurements
from wrkreport.runs.sidecars import read_manifest

RATE = 501  # odd: the shares are 251 and 250
pytestmark = [pytest.mark.slow, pytest.mark.alone, pytest.mark.skipif(netlab.missing() is not None, reason=str(netlab.missing()))]
assert HIST_SCRIPT.is_file()


def vegeta_pids(bench) -> dict[str, list[int]]:
    """Return the vegeta processes running in each client's namespace."""
    return {h.name: [p for p in bench.lab.pids(h.netns) if "/vegeta attack " in netlab.command_line(p)] for h in bench.clients}


def measure_rate(run: Path, state: Path, tmp_path: Path, vegeta: Path, block: int) -> list[str]:
    return [
        "measure-rate",
        "--run",
        str(run),
        "--gomaxprocs",
        "1",
        "--setup",
        "go-http",
        "--block",
        str(block),
        "--rate",
        str(RATE),
        "--vegeta",
        str(vegeta),
        "--work-dir",
        str(tmp_path),
        "--clients",
        str(state),
    ]


def with_duration(run: Path, seconds: float) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["parameters"]["rate_duration_s"] = seconds
    (run / "manifest.json").write_text(json.dumps(manifest))


def test_two_clients_at_half_the_rate_each_merge_exactly_and_leave_nothing(bench, tmp_path):
    vegeta = vegeta_or_skip()
    run, state = bench.prepared_run(tmp_path)
    dirs = [c["dir"] for c in json.loads(state.read_text())["clients"]]
    try:
        copied = bench.helper("clients-vegeta", "--state", str(state), "--plan", str(tmp_path / "plan.json"), "--vegeta", str(vegeta))
        assert copied.returncode == 0, copied.stderr
        for host, path in zip(bench.clients, dirs):  # the static copy runs there, from the client's private dir
            assert bench.lab.ssh(host, f"{path}/vegeta -version").stdout.startswith("Version: v12.13.0")
        warm = bench.helper(
            "rate-warm-up",
            "--run",
            str(run),
            "--setup",
            "go-http",
            "--rate",
            str(RATE),
            "--vegeta",
            str(vegeta),
            "--work-dir",
            str(tmp_path),
            "--clients",
            str(state),
        )
        assert warm.returncode == 0 and warm.stdout == "", warm.stdout + warm.stderr
        done = bench.helper(*measure_rate(run, state, tmp_path, vegeta, 1))
        assert done.returncode == 0, done.stderr
        print(done.stderr.strip().splitlines()[-1])

        # client-2's vegeta now fails: the measurement fails with one line naming it.
        bench.lab.ssh(
            bench.clients[1],
            f"mv {dirs[1]}/vegeta {dirs[1]}/vegeta.kept && printf '#!/bin/sh\\necho broken >&2\\nexit 3\\n' > {dirs[1]}/vegeta && chmod +x {dirs[1]}/vegeta",
        )
        try:
            failed = bench.helper(*measure_rate(run, state, tmp_path, vegeta, 2))
        finally:
            bench.lab.ssh(bench.clients[1], f"mv {dirs[1]}/vegeta.kept {dirs[1]}/vegeta")
        assert failed.returncode == 0, failed.stderr

        # SIGINT while both clients attack for 30 s: every vegeta stopped, nothing recorded.
        with_duration(run, 30)
        proc = bench.helper_bg(*measure_rate(run, state, tmp_path, vegeta, 3))
        try:
            wait_for(lambda: all(vegeta_pids(bench).values()))
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=20) == 128 + signal.SIGINT, proc.communicate()
            assert vegeta_pids(bench) == {h.name: [] for h in bench.clients}, "every client's vegeta is stopped"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        down = bench.helper("clients-down", "--state", str(state))
    assert down.returncode == 0 and down.stdout == "", down.stdout + down.stderr

    manifest = json.loads((run / "manifest.json").read_text())
    first, second = manifest["fixed_rate_measurements"]  # the interrupted one is not recorded
    stem = f"go-http.gomaxprocs-1.block-1.run-1.rate-{RATE}"
    assert [(c["client"], c["host"], c["rate"], c["file"], c["exit_code"]) for c in first["clients"]] == [
        ("client-1", bench.clients[0].ssh, 251, f"{stem}.client-1.vegeta.csv.gz", 0),
        ("client-2", bench.clients[1].ssh, 250, f"{stem}.client-2.vegeta.csv.gz", 0),
    ]
    assert sum(c["rate"] for c in first["clients"]) == first["rate"] == RATE
    assert first["file"] == first["clients"][0]["file"] and "problem" not in first
    assert all(
        c["command"].startswith(f"{d}/vegeta attack ") and f"-rate {c['rate']}/1s" in c["command"] for c, d in zip(first["clients"], dirs)
    )
    assert not (run / f"{stem}.vegeta.csv.gz").exists() and not list(run.glob(".*tmp*"))

    # The merged percentiles are those of both clients' rows together, exactly.
    parts = [read_vegeta_file(run / c["file"], c["rate"]) for c in first["clients"]]
    assert all(p.requests > 0 for p in parts)
    together = sorted(x for p in parts for x in p.latencies_ns)
    problems: list = []
    found, rate_problems = read_rate_measurements(run, read_manifest(run, problems))
    merged = found[0].result
    assert problems == [] and merged.latencies_ns == tuple(together)
    for p in (50, 99, 99.9):
        assert merged.percentile_ns(p) == together[rank_of(p, len(together)) - 1]
    assert merged.achieved_rps == pytest.approx(sum(p.achieved_rps for p in parts))
    print(
        f"{RATE} req/s over 2 clients: achieved {merged.achieved_rps:.1f} ({parts[0].achieved_rps:.1f} + {parts[1].achieved_rps:.1f}), "
        f"p50 {merged.p50_ms:.3f} ms, p99 {merged.p99_ms:.3f} ms"
    )
    assert found[0].held, [c.message for c in found[0].checks]

    cpu = json.loads((run / first["cpu_file"]).read_text())
    wrk = cpu["processes"]["wrk"]
    assert [c["client"] for c in wrk["clients"]] == ["client-1", "client-2"] and wrk["pids"] == []
    assert all(c["user_s"] + c["system_s"] > 0 for c in wrk["clients"]), wrk  # vegeta's CPU, read on each client
    assert cpu["processes"]["go"]["pids"] == [bench.go_pid]

    # The failed client: the measurement has no file and says why in one line; the reader fails it.
    assert second["file"] is None and second["cpu_file"] is None and second["exit_code"] == 3
    assert (
        second["problem"].startswith("client-2 (") and "vegeta attack exit 3: broken" in second["problem"] and "\n" not in second["problem"]
    )
    assert second["clients"][0]["file"] is not None and second["clients"][1]["file"] is None
    assert not found[1].usable and any("vegeta attack exit 3" in c.message for c in rate_problems)

    # Nothing left on any host: no vegeta, no agent, no work dir.
    wait_for(lambda: bench.leftovers() == {}, timeout=10)
    for host, path in zip(bench.clients, dirs):
        assert bench.lab.ssh(host, f"test -e {path} && echo left || echo gone").stdout.strip() == "gone"


def test_serve_runs_the_rate_on_the_agents_it_keeps(bench, tmp_path):
    vegeta = vegeta_or_skip()
    run, state = bench.prepared_run(tmp_path)
    serve = Serve(bench, run)
    try:
        assert (
            bench.helper("clients-vegeta", "--state", str(state), "--plan", str(tmp_path / "plan.json"), "--vegeta", str(vegeta)).returncode
            == 0
        )
        assert serve.ask(measure_rate(run, state, tmp_path, vegeta, 1)[:1] + measure_rate(run, state, tmp_path, vegeta, 1)[3:]) == 0
        agents = bench.agent_pids()
        assert all(len(pids) == 1 for pids in agents.values()), agents
        started = time.monotonic()
        assert serve.ask(measure_rate(run, state, tmp_path, vegeta, 2)[:1] + measure_rate(run, state, tmp_path, vegeta, 2)[3:]) == 0
        print(f"second fixed-rate measurement on the kept agents: {time.monotonic() - started:.2f}s")
        assert bench.agent_pids() == agents, "the same agents ran both measurements"
        assert serve.close() == 0
    finally:
        serve.close()
        down = bench.helper("clients-down", "--state", str(state))
    assert down.returncode == 0 and down.stdout == ""
    entries = json.loads((run / "manifest.json").read_text())["fixed_rate_measurements"]
    assert [[c["exit_code"] for c in e["clients"]] for e in entries] == [[0, 0], [0, 0]]
    wait_for(lambda: bench.leftovers() == {}, timeout=10)
