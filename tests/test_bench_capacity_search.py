"""The driver's capacity search (the helper's `capacity-next`, bench/commands/capacity_search.py) replayed on a real run.

tests/fixtures/runs/capacity-ladder is a run whose fixed-rate blocks searched every setup's
capacity at p99 within 10 ms: a bisection in block 1, the ladder in blocks 2-4. Replaying it, the manifest cut back to what the driver had
recorded when it asked, `capacity-next` must name exactly the measurements the driver then
made, in the order it made them, round after round, and nothing once a block's search was
over: the search is a function of the run's seed and its recorded measurements alone, so a
run can be audited, and the report (analysis/capacities.py) reads the same steps.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from helpers import CAPACITY_LADDER, read_rate_run
from wrkreport.analysis.capacities import capacities
from wrkreport.bench.commands import capacity_search, rate_phase
from wrkreport.core.capacity import HEADROOM, LADDER, MAX_EDGE, round_step, search_steps, slo_of

RUN = CAPACITY_LADDER

pytestmark = pytest.mark.usefixtures("vegeta_parsed_once")  # copies of one run's files: each read once per process


@pytest.fixture()
def replay(tmp_path):
    """Yield (run copy, its full manifest, ask(entries, gomaxprocs, block, setups) -> the lines capacity-next prints)."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    full = json.loads((RUN / "manifest.json").read_text())
    rate_phase.STEPS.clear()  # each file is read once here, then judged from the helper's own cache: a step's verdict depends on its file alone

    def ask(entries: list[dict], n: int, block: int, setups: list[str], capsys) -> list[str]:
        cut = {**full, "fixed_rate_measurements": entries}
        (run / "manifest.json").write_text(json.dumps(cut))
        assert capacity_search.cmd_capacity_next(argparse.Namespace(run=str(run), gomaxprocs=n, block=block, setups=",".join(setups))) == 0
        return capsys.readouterr().out.splitlines()

    yield run, full, ask


def test_capacity_next_names_every_step_the_driver_made_in_order(replay, capsys):
    run, full, ask = replay
    entries = [e for e in full["fixed_rate_measurements"] if not e.get("capacity_check")]  # the checks come after every search
    setups = full["parameters"]["setups"]
    blocks = sorted({(e["gomaxprocs"], e["block"]) for e in entries})
    assert len(blocks) == 4 and full["parameters"]["slo"] == {"percentile": 99, "ms": 10.0}
    done = 0
    for n, block in blocks:
        mine = [i for i, e in enumerate(entries) if (e["gomaxprocs"], e["block"]) == (n, block)]
        planned = [i for i in mine if "search_high" not in entries[i]]
        assert planned == mine[: len(planned)] and len(planned) == len(setups), "the planned rate first, every setup once"
        at = planned[-1] + 1
        rounds = 0
        while True:
            lines = ask(entries[:at], n, block, setups, capsys)
            if not lines:
                break
            made = entries[at : at + len(lines)]
            assert lines == [f"{e['setup']} {e['rate']} {e['search_high']}" for e in made], (n, block, rounds)
            at += len(lines)
            rounds += 1
        assert at == mine[-1] + 1, "nothing asked after the block's last step, and every step was asked for"
        if block == 1:  # a bisection: at most its steps
            assert 1 <= rounds <= max(search_steps(entries[planned[0]]["rate"], e["search_high"]) for e in made or entries[at - 1 : at])
        else:  # the ladder, then its edges
            assert len(LADDER) <= rounds <= len(LADDER) + MAX_EDGE
        done += len(mine) - len(planned)
    assert done == sum(1 for e in entries if "search_high" in e) > 0


def test_the_upper_end_is_headroom_over_the_setups_closed_loop_rate(replay, capsys):
    run, full, ask = replay
    entries = full["fixed_rate_measurements"]
    first = [e for e in entries if (e["gomaxprocs"], e["block"]) == (1, 1) and "search_high" not in e]
    lines = ask(first, 1, 1, full["parameters"]["setups"], capsys)
    for line in lines:
        setup, rate, high = line.split()
        closed = rate_phase.setup_rate(run, full, setup, 1, {})
        assert int(high) == round(closed * HEADROOM) and first[0]["rate"] < int(rate) < int(high)


def test_no_search_without_an_objective_or_for_a_setup_left_out(replay, capsys):
    run, full, ask = replay
    entries = [e for e in full["fixed_rate_measurements"] if (e["gomaxprocs"], e["block"]) == (1, 1) and "search_high" not in e]
    assert [line.split()[0] for line in ask(entries, 1, 1, ["nginx-http"], capsys)] == ["nginx-http"]
    full["parameters"]["slo"] = None
    assert ask(entries, 1, 1, full["parameters"]["setups"], capsys) == []


def test_an_app_run_searches_past_its_light_load_judged_by_the_apps_own_body(tmp_path, capsys):
    """tests/fixtures/runs/app-flask (--app, a Flask app whose answer is 5,949 bytes): the search once held every app answer
    to the hello world's 12-byte body, so its light-load step 'failed', one retry 2% above it 'failed' too, and every block
    ended there (capacity 'at least 747 req/s' of a server doing 3,500 req/s closed loop). Now the step passes and the next
    rate is drawn between it and 1.2x the setup's closed-loop req/s."""
    app_run = Path(__file__).parent / "fixtures" / "runs" / "app-flask"
    run = tmp_path / "run"
    shutil.copytree(app_run, run)
    full = json.loads((app_run / "manifest.json").read_text())
    planned = [e for e in full["fixed_rate_measurements"] if (e["gomaxprocs"], e["block"]) == (1, 1) and "search_high" not in e]
    assert {e["setup"] for e in planned} == {"app", "nginx-app"} and {e["rate"] for e in planned} == {740}
    rate_phase.STEPS.clear()
    assert [rate_phase.measured_step(run, e, full).verdict for e in planned] == ["pass", "pass"]  # p99 3.6 and 4.7 ms, within 10 ms
    (run / "manifest.json").write_text(json.dumps({**full, "fixed_rate_measurements": planned}))
    rate_phase.STEPS.clear()
    assert capacity_search.cmd_capacity_next(argparse.Namespace(run=str(run), gomaxprocs=1, block=1, setups="app,nginx-app")) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert sorted(setup for setup, _, _ in lines) == ["app", "nginx-app"]
    assert all(740 * 1.1 < int(rate) < int(high) for _, rate, high in lines), lines  # a bisection step, not a 2% retry


def test_capacity_check_names_the_check_the_driver_made_at_the_capacity_over_every_block(replay, capsys):
    run, full, ask = replay
    entries = full["fixed_rate_measurements"]
    checks = [i for i, e in enumerate(entries) if e.get("capacity_check")]
    assert len(checks) == 2 and checks == list(range(len(entries) - 2, len(entries))), "one per setup, after the last block's search"
    assert all(entries[i]["block"] == 4 and "search_high" not in entries[i] for i in checks)
    cut = {**full, "fixed_rate_measurements": entries[: checks[0]]}
    (run / "manifest.json").write_text(json.dumps(cut))
    rate_phase.STEPS.clear()
    assert capacity_search.cmd_capacity_check(argparse.Namespace(run=str(run), gomaxprocs=1, block=4, setups="go-http,nginx-http")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{entries[i]['setup']} {entries[i]['rate']}" for i in checks]
    # the rate is the capacity the report gives (wrkreport build reads the same steps), to three figures
    measurements, _ = read_rate_run(RUN)
    found = {c.setup: c for c in capacities(measurements, slo_of(full["parameters"]["slo"]))}
    for i in checks:
        assert entries[i]["rate"] == round_step(found[entries[i]["setup"]].estimate.value)
        assert found[entries[i]["setup"]].check.offered_rps == entries[i]["rate"]


def test_capacity_next_ignores_the_checks(replay, capsys):
    run, full, ask = replay
    entries = full["fixed_rate_measurements"]
    assert ask(entries, 1, 4, full["parameters"]["setups"], capsys) == []  # the block's search was over before its checks
