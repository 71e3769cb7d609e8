"""The capacity's stopping rule (bench/capacity_rule.py) and the helper's `capacity-more`, replayed on a real run of the ladder (4 blocks)."""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from helpers import CAPACITY_LADDER, read_rate_run
from wrkreport.analysis.capacities import capacities
from wrkreport.bench.capacity_rule import Width, decide, half_width, widest
from wrkreport.bench.commands import capacity_search, rate_phase
from wrkreport.bench.values import iso, utc_now
from wrkreport.core.capacity import Estimate, slo_of
from wrkreport.parsers.vegeta import read_vegeta_file

FULL = json.loads((CAPACITY_LADDER / "manifest.json").read_text())
TEN_SECONDS = Path(__file__).parent / "fixtures" / "vegeta" / "ten-seconds.rate-500.vegeta.csv.gz"
PARAMS = {"rate_blocks": 4, "rate_blocks_max": 8, "capacity_precision_pct": 15.0, "max_time_s": None}

pytestmark = pytest.mark.usefixtures("vegeta_parsed_once")  # copies of one run's files: each read once per process


@pytest.fixture()
def ask(tmp_path, capsys):
    """Return ask(blocks, **parameters) -> (capacity-more's line, its manifest record) on a copy of the run cut to its first `blocks` blocks' searches."""
    run = tmp_path / "run"
    shutil.copytree(CAPACITY_LADDER, run)
    full = json.loads((CAPACITY_LADDER / "manifest.json").read_text())
    rate_phase.STEPS.clear()  # once: the copy's files (its steps, kept by path) stay the same; only the manifest changes

    def asking(blocks: int, going: int = 1, **parameters) -> tuple[str, dict]:
        entries = [e for e in full["fixed_rate_measurements"] if e["block"] <= blocks and not e.get("capacity_check")]
        cut = {
            **full,
            "parameters": {**full["parameters"], **PARAMS, **parameters},
            "fixed_rate_passes": [p for p in full["fixed_rate_passes"] if p["block"] <= blocks],
            "fixed_rate_measurements": entries,
        }
        (run / "manifest.json").write_text(json.dumps(cut))
        assert (
            capacity_search.cmd_capacity_more(argparse.Namespace(run=str(run), gomaxprocs=1, setups="nginx-http,go-http", going=going)) == 0
        )
        return capsys.readouterr().out.strip(), json.loads((run / "manifest.json").read_text())["capacity_precision"]["1"]

    return asking


def report_widths() -> dict[str, float]:
    """Return every capacity's and ratio's half-width as `wrkreport build` finds them in the whole run."""
    measurements, _ = read_rate_run(CAPACITY_LADDER)
    slo = slo_of(json.loads((CAPACITY_LADDER / "manifest.json").read_text())["parameters"]["slo"])
    found = {}
    for c in capacities(measurements, slo):
        found[c.setup] = half_width(c.estimate)
        if c.baseline is not None:
            found[f"{c.setup}/{c.baseline}"] = half_width(c.ratio)
    return found


def test_capacity_more_judges_the_widths_the_report_gives(ask):
    widths = report_widths()
    name = max(widths, key=widths.get)
    line, record = ask(4, capacity_precision_pct=80 * widths[name])  # wider than the target, within reach of the ceiling
    assert set(widths) == {"go-http", "nginx-http", "nginx-http/go-http"}
    assert (record["worst"], record["worst_half_width_pct"], record["blocks"]) == (name, round(100 * widths[name], 2), 4)
    assert line == "more" and record["stop_reason"] is None  # wider than the target, 4 of 8 blocks, no time limit


def test_capacity_more_stops_once_every_interval_is_within_the_target(ask):
    worst = max(report_widths().values())
    line, record = ask(4, capacity_precision_pct=100 * worst + 0.01)
    assert line.startswith("stop target met: every capacity and capacity ratio within") and record["stop_reason"] == line[len("stop ") :]
    assert ask(4, capacity_precision_pct=100 * worst - 0.5)[0] == "more"


def test_capacity_more_takes_the_least_blocks_first_and_stops_at_the_ceiling_or_the_time(ask):
    assert ask(3, capacity_precision_pct=99.0)[0] == "more"  # +/-99% met, but 3 of the least 4 blocks
    assert ask(4, capacity_precision_pct=1.0, rate_blocks_max=4)[0].startswith("stop block ceiling: 4 fixed-rate blocks (")
    within_reach = 80 * max(report_widths().values())
    line, _ = ask(4, going=2, capacity_precision_pct=within_reach, max_time_s=60)  # the run started long ago: its time is up
    assert line.startswith("stop time limit: 2 more fixed-rate blocks (~") and "would end after --max-time 60s" in line


def test_a_setup_known_to_scatter_is_judged_by_its_usual_spread_too(ask):
    """The run's capacity_spreads (profiles.CAPACITY_SPREAD): a setup there does not stop because its blocks happened to agree."""
    target = 100 * max(report_widths().values()) + 0.01
    assert ask(4, capacity_precision_pct=target)[0].startswith("stop target met")
    assert ask(4, capacity_precision_pct=target, capacity_spreads={"nginx-http": 0.12})[0] == "more"
    line, record = ask(4, capacity_precision_pct=target, rate_blocks_max=4, capacity_spreads={"nginx-http": 0.12})
    assert line.startswith("stop block ceiling: 4 fixed-rate blocks (nginx-http") and line.endswith("at its usual spread)"), line
    assert record["worst_half_width_pct"] < target  # the record keeps the interval's own width
    assert ask(4, capacity_precision_pct=target, capacity_spreads={"nginx-http": 0.01})[0].startswith(
        "stop target met"
    )  # narrower: no effect


def test_a_target_the_ceiling_cannot_reach_stops_after_the_least_blocks(ask):
    """Out of reach: an interval that, its spread the same, would still be more than REACH times the target after the ceiling's
    blocks ends the search after the least blocks (a noisy host's), and says how wide it would be; within reach it goes on."""
    worst = max(report_widths().values())
    line, record = ask(4, capacity_precision_pct=100 * worst / 4)  # at 8 blocks the interval would be about half as wide: not a quarter
    assert line.startswith("stop out of reach: ") and "after 4 blocks would still be at +/-" in line and "after the ceiling of 8" in line
    assert record["stop_reason"] == line[len("stop ") :]
    assert ask(3, capacity_precision_pct=100 * worst / 4)[0] == "more"  # never before the least blocks
    target = 100 * worst + 0.01  # met by the intervals, but a usual spread of 0.3 (log sd) stays out of reach at 8 blocks, not at 24
    line, _ = ask(4, capacity_precision_pct=target, capacity_spreads={"nginx-http": 0.3})
    assert line.startswith("stop out of reach: nginx-http") and "at its usual spread after 4 blocks" in line, line
    assert ask(4, capacity_precision_pct=target, capacity_spreads={"nginx-http": 0.3}, rate_blocks_max=24)[0] == "more"


def test_without_an_objective_the_planned_blocks_run(ask):
    assert ask(3, slo=None)[0] == "more"
    assert ask(4, slo=None)[0] == "stop no objective: the planned 4 block(s) ran"


def test_a_bound_asks_for_no_more_blocks():
    bound = Width("nginx-http", half_width(Estimate(40_000.0, None, None, "at_least", 4)))
    assert bound.half_width is None and widest([bound]) is None
    assert decide([bound], 4, PARAMS, 0.0, 30.0, 1).startswith("no capacity interval to narrow after 4 blocks")
    assert decide([bound, Width("go-http", 0.2)], 4, PARAMS, 0.0, 30.0, 1) is None


@pytest.fixture()
def check(tmp_path, capsys):
    """Return check(checks=True, started_at=None, capacity_precision=None, fixed_rate_passes=None, **parameters) -> capacity-check's
    lines on a copy of the whole run (its checks kept, or left out; its rule's verdicts and blocks replaced); check.err is what it said
    on stderr."""
    run = tmp_path / "check-run"
    shutil.copytree(CAPACITY_LADDER, run)
    full = json.loads((CAPACITY_LADDER / "manifest.json").read_text())
    rate_phase.STEPS.clear()  # once: the copy's files (its steps, kept by path) stay the same; only the manifest's parameters change

    def checking(
        checks: bool = True,
        started_at: str | None = None,
        capacity_precision: dict | None = None,
        fixed_rate_passes: list | None = None,
        **parameters,
    ) -> list[str]:
        entries = [e for e in full["fixed_rate_measurements"] if checks or not e.get("capacity_check")]
        (run / "manifest.json").write_text(
            json.dumps(
                {
                    **full,
                    "parameters": {**full["parameters"], **parameters},
                    "fixed_rate_measurements": entries,
                    "started_at": started_at or full["started_at"],
                    "capacity_precision": capacity_precision,
                    "fixed_rate_passes": fixed_rate_passes or full["fixed_rate_passes"],
                }
            )
        )
        assert capacity_search.cmd_capacity_check(argparse.Namespace(run=str(run), gomaxprocs=1, block=4, setups="nginx-http,go-http")) == 0
        said = capsys.readouterr()
        checking.err = said.err
        return sorted(said.out.split("\n")[:-1])

    return checking


def test_a_missed_check_is_measured_again_lower_until_one_meets_the_objective_or_the_tries_are_spent(check):
    # The real run's checks after its 4th block: go-http at 3,700 req/s not held, nginx-http at 3,280 within its objective.
    first = check(checks=False, check_tries=3)
    assert [line.split()[0] for line in first] == ["go-http", "nginx-http"]
    assert first[1] == "nginx-http 3280"  # at the capacity, as the run measured it
    assert check(check_tries=3) == ["go-http 3330"]  # 0.9 of the missed 3,700; nginx-http's met: none more
    assert check(check_tries=1) == [] and check() == []  # one try (the quick profile, and runs before check_tries): none after a miss


def test_a_lower_check_starts_only_when_it_ends_before_max_time(check, tmp_path):
    # The run started 100 s ago; the lower check of go-http takes rate_duration_s 1 + vegeta's overhead. A --max-time with
    # room for it lets it run; one without (a run given 585 s took 615 s when its checks went lower) leaves it out, said.
    started = iso(utc_now() - timedelta(seconds=100))
    assert check(check_tries=3, max_time_s=110, started_at=started) == ["go-http 3330"]
    assert "no lower check" not in check.err
    assert check(check_tries=3, max_time_s=101, started_at=started) == []
    err = check.err
    assert err.startswith(
        "[run_bench] capacity check GOMAXPROCS=1: no lower check of go-http: 1 more check of 1s would end after --max-time 101s"
    ), err
    cut = json.loads((tmp_path / "check-run" / "manifest.json").read_text())["capacity_checks_cut"]
    assert cut == [{"gomaxprocs": 1, "setups": ["go-http"], "reason": "1 more check of 1s would end after --max-time 101s"}]
    assert check(checks=False, check_tries=3, max_time_s=101, started_at=started) == [
        "go-http 3700",
        "nginx-http 3280",
    ]  # the first checks: planned for


def test_a_lower_check_leaves_the_time_of_a_block_already_granted_to_another_gomaxprocs_value(check):
    # As above, with room for the lower check (110 s) but not for it and a block the rule granted GOMAXPROCS=2 before these checks
    # (its 4 blocks run, its verdict after them `more`; this run's blocks took about 14 s each): the block's time is not the check's.
    started = iso(utc_now() - timedelta(seconds=100))
    granted = {"2": {"blocks": 4, "stop_reason": None}, "1": {"blocks": 4, "stop_reason": "target met"}}
    passes = FULL["fixed_rate_passes"] + [{**p, "gomaxprocs": 2} for p in FULL["fixed_rate_passes"]]
    assert check(check_tries=3, max_time_s=110, started_at=started, capacity_precision=granted, fixed_rate_passes=passes) == []
    assert "would end after --max-time 110s (after the 1 fixed-rate block still to run)" in check.err, check.err
    started_block = passes + [{**FULL["fixed_rate_passes"][0], "gomaxprocs": 2, "block": 5}]  # it has started: nothing to leave
    assert check(check_tries=3, max_time_s=110, started_at=started, capacity_precision=granted, fixed_rate_passes=started_block) == [
        "go-http 3330"
    ]
    stopped = {**granted, "2": {"blocks": 4, "stop_reason": "target met"}}  # or the rule stopped it
    assert check(check_tries=3, max_time_s=110, started_at=started, capacity_precision=stopped, fixed_rate_passes=passes) == [
        "go-http 3330"
    ]


def test_a_blocks_capacity_checks_are_not_counted_in_its_duration():
    # Two finished blocks of 30 s and 50 s, the second holding two 5.2-s checks and one search step: the capacity rule's
    # mean block is 30 and 50 - 10.4 (checks_left_seconds counts the checks still to come apart).
    passes = [
        {"gomaxprocs": 1, "block": 1, "started_at": "2026-11-29T04:00:00Z", "ended_at": "2026-11-29T04:00:30Z"},
        {"gomaxprocs": 2, "block": 1, "started_at": "2026-11-29T04:00:30Z", "ended_at": "2026-11-29T04:01:20Z"},
    ]
    entries = [
        {
            "gomaxprocs": 2,
            "block": 1,
            "capacity_check": True,
            "started_at": f"2026-11-29T04:01:{s:02d}Z",
            "ended_at": f"2026-11-29T04:01:{s + 5}.2Z",
        }
        for s in (5, 12)
    ]
    entries.append({"gomaxprocs": 2, "block": 1, "started_at": "2026-11-29T04:00:40Z", "ended_at": "2026-11-29T04:00:41.5Z"})
    assert capacity_search.rate_block_seconds({"fixed_rate_passes": passes, "fixed_rate_measurements": entries}) == pytest.approx(
        (30 + 50 - 10.4) / 2
    )
    assert capacity_search.rate_block_seconds({"fixed_rate_passes": passes}) == pytest.approx(40)


def slow_seconds_file(tmp_path, slow: tuple[int, ...]) -> Path:
    """Return the real 10-s attack (tests/fixtures/vegeta/ten-seconds) made by hand into one whose seconds `slow` had 2% of their
    requests at 20 ms: each of those seconds' p99 over 10 ms, the whole attack's within it (0.6% slow)."""
    lines = gzip.decompress(TEN_SECONDS.read_bytes()).decode().splitlines()
    first = min(int(line.split(",", 1)[0]) for line in lines)
    made = []
    for i, line in enumerate(lines):
        cells = line.split(",")
        if (int(cells[0]) - first) // 10**9 in slow and i % 50 == 0:
            cells[2] = str(20_000_000)
        made.append(",".join(cells))
    path = tmp_path / "go-http.gomaxprocs-1.block-4.run-4.rate-500.vegeta.csv.gz"
    path.write_bytes(gzip.compress(("\n".join(made) + "\n").encode()))
    return path


@pytest.mark.parametrize("slow", [(2, 5), (2, 5, 7)], ids=["two-slow-seconds", "three-slow-seconds"])
def test_the_helper_judges_a_check_by_its_seconds_when_the_run_gives_a_share(tmp_path, slow):
    """capacity-check reads a check as `wrkreport build` does (rate_phase.judged_step): with the run's check_share, two slow seconds
    of ten leave it met, three miss it (8 of 10 needed), though the whole attack's p99 is within 10 ms either way; a run without
    check_share (before 2026-12-07) judges the whole attack."""
    path = slow_seconds_file(tmp_path, slow)
    result = read_vegeta_file(path, 500)
    assert result.percentile_ms(99) < 10.0 and result.seconds_within(99.0, 10.0) == (10, 10 - len(slow))
    entry = {"setup": "go-http", "gomaxprocs": 1, "block": 4, "rate": 500, "file": path.name, "capacity_check": True}
    manifest = {"parameters": {**FULL["parameters"], "check_share": 0.9}}
    step = rate_phase.judged_step(entry, result, manifest, slo_of(FULL["parameters"]["slo"]))
    assert (step.seconds, step.seconds_met, step.verdict) == (10, 10 - len(slow), "pass" if len(slow) < 3 else "fail")
    before = rate_phase.judged_step(entry, result, {"parameters": FULL["parameters"]}, slo_of(FULL["parameters"]["slo"]))
    assert before.seconds is None and before.verdict == "pass"
    search = rate_phase.judged_step({**entry, "capacity_check": False}, result, manifest, slo_of(FULL["parameters"]["slo"]))
    assert search.seconds is None and search.verdict == "pass"  # a step of the search is judged as a whole, as before
