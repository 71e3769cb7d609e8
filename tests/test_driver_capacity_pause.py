"""End-to-end test of the capacity search's robustness to a pause (issue 42): ./run_bench.sh with real vegeta and the Go server stopped during one search step.

go-http with a 2 ms handler on 10 connections has its knee near 3,700 req/s
(tests/fixtures/runs/capacity-ladder), so a run with the default 4 fixed-rate blocks takes
about 40 s with its build. The test stops the Go server (SIGSTOP) for PAUSE_S during the second
search step of block 2 (the ladder's second rung, near the capacity), as a long GC pause or a
descheduled process would: that step fails (its p99 is the pause), and its failure must not
end the block's search: the ladder goes on to its rungs above it, a rung above that passes
makes the failure bound nothing, and when none passes the block's bracket is the rung below
the paused one and the paused rate, one step of the ladder. Before the ladder, a bisection's
failed step bounded its block for good: nothing above it was measured again.

What it does not judge: the paused block's value against the run's other blocks. The pause
can cost a block up to two steps of the ladder (its bracket one rung lower, and the crossing
anywhere in it: CI once saw 3,057 req/s beside 3,316-3,705), and whether that lies within
the other blocks' spread depends on how close this machine's blocks fell (the
capacity-ladder fixture's four lie within 3%). What pauses do to the interval over blocks is
a coverage claim, simulated with pauses in tests/test_core_capacity_coverage.py. (The
test once compared with a second, unpaused run; two runs drift apart by more than either's
interval: in CI the unpaused run found 1,057 req/s, 694-1,610, the paused one 1,146-1,505.)
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from helpers import SCRIPT, free_ports, latest_run, port_args, script_env, slow
from rate_servers import vegeta_or_skip
from wrkreport.analysis.capacities import block_steps
from wrkreport.core.capacity import LADDER_STEP, PASS, Step, slo_of
from wrkreport.runs.rate_measurements import read_rate_measurements

pytestmark = [*slow, pytest.mark.alone]  # a capacity is a rate: the machine must be the runs'

ARGS = [
    "--setups",
    "go-http",
    "--gomaxprocs",
    "1",
    "--blocks",
    "2",
    "--connections",
    "10",
    "--handler-delay",
    "2ms",
    "--slo",
    "p99=10ms",
    "--rounds-per-block",
    "1",
    "--warmup",
    "0",
]  # the throughput blocks at their least: only the fixed-rate phase is judged
PAUSE_S = 0.2
STEP = re.compile(r"\[rate \d+\] go-http GOMAXPROCS=1 block 2 at ([0-9,]+) req/s \.\.\. $")


def capacity(top: Path, name: str) -> tuple[dict, int | None, list[Step]]:
    """Return (go-http's capacity record, the rate paused or None, block 2's steps as the search read them) of one run, with SIGSTOP to Go during block 2's second search step."""
    out, tmp, report = top / name, top / f"{name}-tmp", top / f"{name}-report"
    tmp.mkdir()
    proc = subprocess.Popen(
        [str(SCRIPT), *ARGS, "--out", str(out), *port_args(free_ports())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=script_env(tmp),
    )
    paused, seen, line, err = None, 0, b"", b""
    deadline = time.monotonic() + 300
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 0.05)
            chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
            err += chunk
            line = (line + chunk).rsplit(b"\n", 1)[-1]
            match = STEP.search(line.decode(errors="replace"))
            if paused is None and match:
                rate = int(match[1].replace(",", ""))
                planned = {r for p in json.loads((out / "latest" / "manifest.json").read_text())["fixed_rate_plan"] for r in p["rates"]}
                seen += rate not in planned
                if seen == 2:  # block 2's second search step: the ladder, near the capacity
                    go = [p for p in json.loads((out / "latest" / "manifest.json").read_text())["fixed_rate_passes"] if p["block"] == 2][
                        -1
                    ]["pids"]["go"]
                    time.sleep(0.3)  # into the measurement (1 s)
                    os.kill(go, signal.SIGSTOP)
                    time.sleep(PAUSE_S)
                    os.kill(go, signal.SIGCONT)
                    paused = rate
                line = b"" if match else line
        err += proc.stderr.read()
        assert proc.wait(timeout=60) == 0, err.decode(errors="replace")[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    run, manifest = latest_run(out)
    built = subprocess.run(["wrkreport", "build", str(run), "--out", str(report)], capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr[-2000:]
    data = json.loads((report / "results.json").read_text())
    if paused is not None:  # the pause hit the step: it failed on it (a backlog: not held, no figures; or held with the pause in its p99)
        step = next(r for r in data["fixed_rate"] if r["setup"] == "go-http" and r["offered_rps"] == paused)
        assert not step["held"] or step["p99_ms"] >= 100, step
    found = next(c for c in data["capacity"] if c["setup"] == "go-http")
    measurements, _ = read_rate_measurements(run, manifest)
    return found, paused, block_steps(measurements, slo_of(found["slo"]))[("go-http", 1)][2]  # judged by the run's own objective


@pytest.fixture(scope="module")
def paused_run():
    """Yield (the paused run's go-http capacity record, the rate paused)."""
    vegeta_or_skip()
    top = Path(tempfile.mkdtemp(prefix="rbp", dir="/tmp"))
    top.chmod(0o711)  # nginx's workers reach the run's sockets through it (as test_driver's workdirs)
    try:
        yield capacity(top, "paused")
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_paused_search_step_fails_and_costs_its_block_at_most_a_ladder_step(paused_run):
    record, rate, steps = paused_run
    assert rate is not None, "the second search step of block 2 was never seen"
    assert record["bound"] is None and record["blocks"] == 4
    # after the last block's search, the driver measured the capacity again (capacity-check), at the capacity to 3 figures
    assert (
        abs(record["check"]["offered_rps"] - record["capacity_rps"]) <= 0.01 * record["capacity_rps"]
        and record["check"]["percentile_ms"] > 0
    )
    mine = next(b for b in record["block_capacities"] if b["block"] == 2)
    print(
        f"\npaused at {rate}: {record['capacity_rps']} ({record['ci_low']}-{record['ci_high']}); block 2 {mine}; its steps {steps}; "
        f"blocks: {[b['capacity_rps'] for b in record['block_capacities']]}"
    )
    at = [s.rate for s in steps].index(rate)
    assert steps[at].verdict != PASS, steps[at]
    # the search went on above the failed step: the ladder's rungs above it (a bisection's failure ended its block's climb there)
    above = [s for s in steps[at + 1 :] if s.rate > rate]
    assert above, steps
    passed_above = [s.rate for s in above if s.verdict == PASS]
    if passed_above:  # a rung above passed: the failure bounds nothing, the pause cost the block nothing
        assert mine["bracket"][0] >= max(passed_above), (mine, steps)
    elif not [s for s in steps if s.verdict != PASS and s.rate < rate]:  # the pause bounds the block: the rung below it and the paused rate
        assert mine["bracket"][1] == rate and mine["bracket"][0] * LADDER_STEP * 1.02 >= rate, (mine, steps)
        assert mine["bracket"][0] <= mine["capacity_rps"] <= rate, mine
