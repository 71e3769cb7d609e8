"""Tests of wrkreport.bench.stopping_rule: the driver's stopping rule, its time estimates and the gaps between measurements."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from wrkreport.bench.allocation import plan_next
from wrkreport.bench.commands.finish import precision_lines
from wrkreport.bench.stopping_plan import interval_plan
from wrkreport.bench.stopping_rule import assess, cpu_per_request_of, decide, gap_record, gaps, more_blocks_needed, ratio_blocks
from wrkreport.core import stats
from wrkreport.core.sequential import DEFAULT_LAST_LOOK, FIRST_LOOK


def measurement(setup: str, n: int, block: int, k: int, start: str = "", end: str = "") -> dict:
    return {
        "setup": setup,
        "gomaxprocs": n,
        "connections": 100,
        "repeat": k,
        "block": block,
        "file": f"{setup}.{n}.{block}.{k}",
        "exit_code": 0,
        "started_at": start,
        "ended_at": end,
    }


def blocked_run(blocks: int, rounds: int, ratio_of_block, gomaxprocs=(1,)) -> tuple[dict, dict]:
    """Return (manifest, parsed req/s by file) of a run: go-http at 1000 req/s, nginx-http at 1000 x ratio_of_block(b, r)."""
    manifest = {
        "parameters": {
            "gomaxprocs": list(gomaxprocs),
            "connections_levels": [100],
            "precision_pct": 5.0,
            "max_time_s": 360,
            "max_blocks": 3333,
        },
        "passes": [],
        "measurements": [],
    }
    cache = {}
    for b in range(1, blocks + 1):
        for n in gomaxprocs:
            manifest["passes"].append(
                {
                    "gomaxprocs": n,
                    "block": b,
                    "started_at": f"2026-11-23T10:00:{2 * b:02d}.000Z",
                    "ended_at": f"2026-11-23T10:00:{2 * b + 1:02d}.500Z",
                }
            )
            for r in range(1, rounds + 1):
                k = (b - 1) * rounds + r
                for setup, rate in (("go-http", 1000.0), ("nginx-http", 1000.0 * ratio_of_block(b, r))):
                    m = measurement(setup, n, b, k)
                    manifest["measurements"].append(m)
                    cache[m["file"]] = SimpleNamespace(requests_per_sec=rate, requests=int(rate))  # a 1-second wrk's totals
    return manifest, cache


def with_cpu(run_dir: Path, manifest: dict, cpu_s_of) -> None:
    """Write a .cpu.json beside every measurement: Go and nginx busy for cpu_s_of(measurement) seconds together, wrk apart."""
    for m in manifest["measurements"]:
        m["cpu_file"] = f"{m['file']}.cpu.json"
        busy = cpu_s_of(m)
        processes = {
            "go": {"user_s": busy / 2, "system_s": 0.0},
            "nginx": {"user_s": busy / 4, "system_s": busy / 4},
            "wrk": {"user_s": 5.0, "system_s": 5.0},
        }
        (run_dir / m["cpu_file"]).write_text(json.dumps({"processes": processes}))


def test_ratio_blocks_pair_round_k_with_go_http_round_k_within_each_block():
    manifest, cache = blocked_run(2, 2, lambda b, r: 0.5 + 0.1 * b + 0.01 * r)
    cache["nginx-http.1.2.4"] = None  # a measurement that does not count (a failed wrk): its pair is left out
    found = ratio_blocks(Path("."), manifest, cache)
    assert list(found) == [(1, 100, "nginx-http")]
    assert found[(1, 100, "nginx-http")] == [[(610.0, 1000.0), (620.0, 1000.0)], [(710.0, 1000.0)]]


def test_cpu_ratio_blocks_pair_the_servers_cpu_per_request_and_leave_wrk_out(tmp_path):
    manifest, cache = blocked_run(2, 2, lambda b, r: 0.5)
    with_cpu(tmp_path, manifest, lambda m: 0.2 if m["setup"] == "go-http" else 0.25 * m["block"])
    (tmp_path / manifest["measurements"][-1]["cpu_file"]).write_text("{not json")  # unreadable: its pair is left out
    found = ratio_blocks(tmp_path, manifest, cache, cpu_per_request_of)
    # go-http: 0.2 s over 1000 requests; nginx-http: 0.25 s x block over 500 requests
    assert found[(1, 100, "nginx-http")] == [[(0.0005, 0.0002)] * 2, [(0.001, 0.0002)]]


def test_the_target_covers_the_cpu_cost_ratios(tmp_path):
    steady = lambda b, r: 0.6 * (1 + 0.01 * ((b % 3) - 1))  # the throughput ratio within +/-1%
    manifest, cache = blocked_run(stats.MIN_BLOCKS, 2, steady)
    with_cpu(tmp_path, manifest, lambda m: 0.1 if m["setup"] == "go-http" else 0.15 * (1 + 0.2 * ((m["block"] % 3) - 1)))
    record = assess(tmp_path, manifest, cache, 100.0)
    assert (record["ratios"], record["cpu_ratios"]) == (1, 1)
    assert (
        record["met"] is False
        and record["cpu_worst_half_width_pct"] > 5
        and record["worst_half_width_pct"] == record["cpu_worst_half_width_pct"]
    )
    with_cpu(tmp_path, manifest, lambda m: 0.1 if m["setup"] == "go-http" else 0.15)
    cached = {name for name in cache if name.endswith(" cpu")}
    assert len(cached) == len(manifest["measurements"])  # each .cpu.json read once (a written one never changes) ...
    cache = {name: value for name, value in cache.items() if name not in cached}  # ... so the rewritten ones need a new cache
    record = assess(tmp_path, manifest, cache, 100.0)
    assert record["met"] is True and record["cpu_worst_half_width_pct"] < 5
    assert decide(record, manifest["parameters"]).startswith("target met: every throughput and CPU-cost ratio within +/-5%")


def test_assess_meets_the_target_only_with_narrow_intervals_and_enough_blocks():
    wobble = lambda b, r: 0.6 * (1 + 0.01 * ((b % 3) - 1))  # block effects of +/-1%: a narrow interval
    short, cache = blocked_run(stats.MIN_BLOCKS - 1, 2, wobble)
    record = assess(Path("."), short, cache, 100.0)
    assert record["worst_half_width_pct"] < 5 and record["met"] is False  # narrow, but too few blocks
    assert record["more_blocks_estimate"] == 1 and record["block_s"] == 1.5 and record["more_time_estimate_s"] == 2
    enough, cache = blocked_run(stats.MIN_BLOCKS, 2, wobble)
    record = assess(Path("."), enough, cache, 100.0)
    assert record["met"] is True and record["more_time_estimate_s"] == 0 and record["blocks"] == {"1": stats.MIN_BLOCKS}
    assert decide(record, enough["parameters"]).startswith("target met: every ratio within +/-5%")


def test_wide_intervals_go_on_until_the_next_block_would_pass_the_time_limit():
    noisy = lambda b, r: 0.6 * (1 + 0.2 * ((b % 3) - 1))  # +/-20% from block to block
    manifest, cache = blocked_run(stats.MIN_BLOCKS, 2, noisy)
    record = assess(Path("."), manifest, cache, 100.0)
    assert record["met"] is False and record["worst_half_width_pct"] > 5
    assert decide(record, manifest["parameters"]) is None
    late = {**record, "elapsed_s": 359.0}
    assert decide(late, manifest["parameters"]) == "time limit: another block (~2s) would end after --max-time 360s"
    # half-width = t(b-1) sd / sqrt(b): the first b where it is within the target, from the sd the worst implies
    worst = record["worst_half_width_pct"] / 100
    sd = worst * math.sqrt(stats.MIN_BLOCKS) / stats.t_975(stats.MIN_BLOCKS - 1)
    needed = next(b for b in range(stats.MIN_BLOCKS, 10_000) if stats.t_975(b - 1) * sd / math.sqrt(b) <= 0.05)
    assert record["more_blocks_estimate"] == needed - stats.MIN_BLOCKS
    assert needed < math.ceil(stats.MIN_BLOCKS * (worst / 0.05) ** 2)  # 1/sqrt(b) alone would overstate it


def test_one_block_has_no_interval_yet_and_needs_the_minimum():
    manifest, cache = blocked_run(1, 3, lambda b, r: 0.6 + 0.01 * r, gomaxprocs=(1, 2))
    record = assess(Path("."), manifest, cache, 10.0)
    assert record["worst_half_width_pct"] is not None  # one block: an interval over its rounds (unit repeat) ...
    assert record["met"] is False  # ... which never meets the target
    assert record["more_blocks_estimate"] == 2 * (stats.MIN_BLOCKS - 1)


@pytest.mark.parametrize(
    ("blocks", "worst", "target", "expected"),
    [
        ({"1": 7, "2": 7}, 0.10, 0.05, 28),
        ({"1": 7}, 0.05, 0.05, 0),
        ({"1": 3, "2": 2}, math.inf, 0.05, 9),
        ({"1": 10}, 0.06, 0.05, 4),
        ({"1": 2}, 0.30, 0.05, 5),
        ({"1": 20}, 0.02, 0.05, 0),
    ],
)
def test_more_blocks_needed(blocks, worst, target, expected):
    assert more_blocks_needed(blocks, worst, target, 7) == expected


def test_gaps_are_measured_within_a_block_from_millisecond_timestamps():
    ms = [
        measurement("go-http", 1, 1, 1, "2026-11-23T10:00:00.000Z", "2026-11-23T10:00:01.000Z"),
        measurement("nginx-http", 1, 1, 1, "2026-11-23T10:00:01.050Z", "2026-11-23T10:00:02.050Z"),
        measurement("go-http", 1, 1, 2, "2026-11-23T10:00:02.250Z", "2026-11-23T10:00:03.250Z"),
        measurement("go-http", 1, 2, 3, "2026-11-23T10:00:09.000Z", "2026-11-23T10:00:10.000Z"),  # next block: after a restart, not a gap
        measurement("nginx-http", 1, 2, 3, "2026-11-23T10:00:10.100Z", "2026-11-23T10:00:11.100Z"),
        measurement("go-http", 2, 1, 1, "2026-11-23T10:00:20Z", "2026-11-23T10:00:21Z"),  # whole seconds (before blocks): not timed
        measurement("go-http", 2, 1, 2, "2026-11-23T10:00:21Z", "2026-11-23T10:00:22Z"),
    ]
    assert sorted(gaps({"measurements": ms})) == pytest.approx([0.05, 0.1, 0.2])
    assert gap_record({"measurements": ms}) == {"median": 0.1, "max": 0.2, "count": 3}
    assert gap_record({"measurements": ms[:1]}) is None


# --- The verdict rule: stop when each GOMAXPROCS value's answer is decided -------------------------------------------------


def verdict_run(blocks: int, ratio_of: dict, gomaxprocs=(1, 2), rounds: int = 3) -> tuple[dict, dict]:
    """Return (manifest, parsed req/s by file) of a default run under the verdict rule: go-http at 1000 req/s, each other setup at 1000 x
    ratio_of[setup](block, round), `blocks` blocks per GOMAXPROCS value."""
    setups = ["go-http", *ratio_of]
    params = {
        "gomaxprocs": list(gomaxprocs),
        "connections_levels": [100],
        "setups": setups,
        "precision_pct": 10.0,
        "max_time_s": 600,
        "min_blocks": FIRST_LOOK,
        "max_blocks": DEFAULT_LAST_LOOK,
        "precision_given": False,
    }
    params["intervals"] = interval_plan({**params, "adaptive": True})
    manifest = {"parameters": params, "passes": [], "measurements": []}
    cache = {}
    for b in range(1, blocks + 1):
        for n in gomaxprocs:
            manifest["passes"].append(
                {"gomaxprocs": n, "block": b, "started_at": "2026-12-07T10:00:00.000Z", "ended_at": "2026-12-07T10:00:10.000Z"}
            )
            for r in range(1, rounds + 1):
                k = (b - 1) * rounds + r
                for setup in setups:
                    m = measurement(setup, n, b, k)
                    manifest["measurements"].append(m)
                    rate = 1000.0 if setup == "go-http" else 1000.0 * ratio_of[setup](b, r)
                    cache[m["file"]] = SimpleNamespace(requests_per_sec=rate, requests=int(rate))
    return manifest, cache


def wobble(ratio: float, size: float = 0.01):
    return lambda b, r: ratio * (1 + size * (((b + r) % 3) - 1))


CLEAR = {"nginx-http": wobble(0.6), "nginx-fcgi-tcp": wobble(0.27), "nginx-fcgi-unix": wobble(0.35)}


def test_no_verdict_is_decided_before_the_first_look():
    manifest, cache = verdict_run(FIRST_LOOK - 1, CLEAR)
    record = assess(Path("."), manifest, cache, 30.0)
    assert record["rule"] == "verdict" and record["met"] is False and record["worst_half_width_pct"] is None
    assert {k: v["kind"] for k, v in record["verdicts"].items()} == {"1": "open", "2": "open"}
    assert decide(record, manifest["parameters"]) is None


def test_a_clear_leader_is_named_at_the_first_look_and_the_run_stops():
    manifest, cache = verdict_run(FIRST_LOOK, CLEAR)
    record = assess(Path("."), manifest, cache, 60.0)
    group = record["verdicts"]["1"]
    assert (group["kind"], group["best"], group["beaten"], group["deciding"], group["answered"]) == (
        "named",
        "nginx-http",
        ["nginx-fcgi-tcp", "nginx-fcgi-unix"],
        ["nginx-http"],
        True,
    )
    assert record["met"] and record["worst_half_width_pct"] <= 10
    assert decide(record, manifest["parameters"]) == (
        "answer decided: GOMAXPROCS=1: nginx-http cheapest; GOMAXPROCS=2: nginx-http cheapest, their ratios within +/-10%"
    )


def test_a_decided_leader_with_a_wide_ratio_goes_on_measuring_only_it_beside_go_http():
    noisy = {**CLEAR, "nginx-http": lambda b, r: 0.6 * (1 + 0.15 * (((b * 7 + r) % 5) - 2) / 2)}  # +/-15% round to round
    manifest, cache = verdict_run(FIRST_LOOK, noisy)
    record = assess(Path("."), manifest, cache, 60.0)
    group = record["verdicts"]["2"]
    assert group["kind"] == "named" and not group["precise"] and not record["met"] and decide(record, manifest["parameters"]) is None
    plan = plan_next(Path("."), manifest, cache, record)
    assert plan["gomaxprocs"] == 1 and plan["setups"] == ["go-http", "nginx-http"]  # the beaten connections are settled
    assert "settled: nginx-fcgi-tcp, nginx-fcgi-unix" in plan["why"]


def test_an_a_a_pair_measured_tightly_is_tied_and_a_noisy_one_stays_open_until_the_block_ceiling():
    same = {"nginx-http": wobble(0.6, 0.02), "nginx-http-unix": wobble(0.6, 0.02), "nginx-fcgi-tcp": wobble(0.27)}
    manifest, cache = verdict_run(FIRST_LOOK + 2, same)
    record = assess(Path("."), manifest, cache, 60.0)
    assert (
        record["verdicts"]["1"]["kind"] == "tied"
        and record["met"]
        and "nginx-http-unix, nginx-http tied" in decide(record, manifest["parameters"])
    )
    noisy = {**same, "nginx-http-unix": lambda b, r: 0.6 * (1 + 0.2 * (((b * 7 + r) % 5) - 2) / 2)}
    manifest, cache = verdict_run(DEFAULT_LAST_LOOK - 1, noisy)
    record = assess(Path("."), manifest, cache, 60.0)
    assert record["verdicts"]["1"]["kind"] == "open" and decide(record, manifest["parameters"]) is None
    # how many blocks would settle it, from the width of the open comparison: more than it has, and said as time
    assert record["verdicts"]["1"]["blocks_to_decide"] > DEFAULT_LAST_LOOK - 1 and record["more_time_estimate_s"] > 0
    manifest, cache = verdict_run(DEFAULT_LAST_LOOK, noisy)
    record = assess(Path("."), manifest, cache, 60.0)
    assert not record["met"] and decide(record, manifest["parameters"]).startswith(
        "block ceiling: 10 blocks per GOMAXPROCS (GOMAXPROCS=1: "
    )


def test_an_open_verdict_that_needs_more_than_the_ceiling_says_so_at_the_end():
    close = {
        "nginx-http": wobble(0.6, 0.08),
        "nginx-http-unix": lambda b, r: 0.59 * (1 + 0.2 * (((b * 7 + r) % 5) - 2) / 2),
        "nginx-fcgi-tcp": wobble(0.27),
    }
    manifest, cache = verdict_run(DEFAULT_LAST_LOOK, close)
    record = assess(Path("."), manifest, cache, 60.0)
    assert record["verdicts"]["1"]["kind"] == "open" and record["ceiling"] == DEFAULT_LAST_LOOK
    assert record["verdicts"]["1"]["blocks_to_decide"] > DEFAULT_LAST_LOOK and record["beyond_ceiling"] is True
    manifest["precision"] = {**record, "stop_reason": decide(record, manifest["parameters"])}
    line = precision_lines(manifest)[0]
    assert line.startswith("answer NOT decided everywhere: GOMAXPROCS=1: nginx-http leads, open against nginx-http-unix")
    assert line.endswith("more would likely decide it, past this run's ceiling of 10 blocks per GOMAXPROCS (--precision allows 40)")
