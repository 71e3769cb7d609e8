"""Tests of wrkreport.analysis.design: the run's design and precision target, from the manifest into results.json, the page's method paragraph and the terminal summary."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from helpers import BLOCK_OF_ROUND, BLOCKS_SOURCE, RUNS, block_files
from wrkreport.analysis.analyze import BLOCK_METHOD, NO_BLOCKS_METHOD, load_analysis
from wrkreport.analysis.design import design_of, precision_of, precision_sentence
from wrkreport.report import build
from wrkreport.runs.record import Parameters, record_of

pytestmark = pytest.mark.usefixtures(
    "parsed_and_drawn_once"
)  # its builds read the session's analyses and charts of a run; its own load_analysis calls are real

WHEN = datetime(2026, 11, 23, 12, tzinfo=timezone.utc)
NOT_MET = {
    "target_pct": 5.0, "max_time_s": 360, "met": False, "worst_half_width_pct": 6.8, "median_half_width_pct": 3.1, "ratios": 6,
    "blocks": {"1": 2, "2": 2}, "block_s": 21.0, "elapsed_s": 352.0,
    "stop_reason": "time limit: another block (~21s) would end after --max-time 360s", "more_blocks_estimate": 8, "more_time_estimate_s": 170,
}  # fmt: skip


def blocked_manifest(precision: dict | None) -> dict:
    """Return default-2cores' manifest as a run in two blocks per GOMAXPROCS records it, with a precision record."""
    manifest = json.loads((BLOCKS_SOURCE / "manifest.json").read_text())
    for entry in manifest["measurements"]:
        entry["block"] = BLOCK_OF_ROUND[entry["repeat"]]
        entry["file"] = entry["file"].replace(".run-", f".block-{entry['block']}.run-")
    manifest["passes"] = [{**p, "block": b} for b in (1, 2) for p in manifest["passes"]]
    manifest["parameters"].update(rounds_per_block=3, adaptive=True, smoke_test=False)
    if precision is not None:
        manifest["precision"] = precision
    return manifest


def test_a_target_not_met_is_in_results_json_the_method_paragraph_and_the_summary(make_run, tmp_path):
    run = make_run(block_files(), blocked_manifest(NOT_MET))
    built = build(run, tmp_path / "out", WHEN)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["design"] == {
        "rounds_per_block": 3,
        "blocks": {"1": 2, "2": 2},
        "duration_s": 6,
        "stopping_rule": True,
        "smoke_test": False,
    }
    assert data["precision"] == {
        **{
            k: NOT_MET.get(k)
            for k in (
                "target_pct",
                "met",
                "worst_half_width_pct",
                "median_half_width_pct",
                "stop_reason",
                "more_time_estimate_s",
                "cpu_ratios",
            )
        },
        "rule": "precision",
        "verdicts": {},
        "ceiling": None,
        "beyond_ceiling": False,
    }  # from before the verdict rule
    sentence = (
        "Precision target: every overhead ratio within +/-5%: NOT met (worst +/-6.8%; stopped: time limit: another block (~21s) "
        "would end after --max-time 360s); about 3 minutes more would likely meet it."
    )
    assert data["method"] == f"{BLOCK_METHOD} {sentence}"
    assert built.closing.endswith("precision target NOT met)")  # the terminal names it; the page's method says why and what more would do
    assert max(map(len, built.summary.splitlines())) <= 80
    html = (tmp_path / "out" / "index.html").read_text().replace("&#x27;", "'")
    after = html[html.index("</section>", html.index('<section class="answer"')) + len("</section>") :]
    assert after.lstrip().startswith(f'<p class="note precision">{sentence}</p>')  # right under the answer box, not only in the method
    ratio = next(r for r in data["ratios"] if r["setup"] == "nginx-http")
    assert (ratio["unit"], ratio["blocks"], ratio["measurements"]) == ("block", 2, 10)


def test_a_target_met_says_so(make_run):
    met = {**NOT_MET, "met": True, "worst_half_width_pct": 4.2, "more_time_estimate_s": 0, "stop_reason": "target met: ..."}
    analysed = load_analysis(make_run(block_files(), blocked_manifest(met)))
    assert analysed.analysis.precision_note == "Precision target: every overhead ratio within +/-5%: met (worst +/-4.2%)."


def test_runs_recorded_before_blocks_have_no_design_blocks_and_no_precision(tmp_path):
    built = build(RUNS / "default-2cores", tmp_path / "out", WHEN)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["precision"] is None and data["design"]["blocks"] is None and data["design"]["rounds_per_block"] is None
    assert data["method"] == NO_BLOCKS_METHOD and "Precision target" not in built.summary


def test_a_smoke_test_says_it_makes_no_interval_claims():
    manifest = {
        "parameters": {"smoke_test": True, "rounds_per_block": 1, "duration_s": 1},
        "passes": [{"gomaxprocs": 1, "block": 1}],
        "precision": NOT_MET,
    }
    assert precision_sentence(record_of(manifest)).startswith("This run is a smoke test (--quick)")
    assert design_of(record_of(manifest))["smoke_test"] is True


@pytest.mark.parametrize("record", [None, "x", {"met": True}, {"target_pct": "5"}, {"target_pct": True}, {"target_pct": float("nan")}])
def test_a_missing_or_broken_precision_record_is_no_record(record):
    assert precision_of(record_of({"precision": record})) is None
    assert precision_sentence(record_of({"precision": record})) == ""


def test_odd_values_in_a_precision_record_are_left_out_not_shown():
    record = precision_of(
        record_of(
            {
                "precision": {
                    "target_pct": 5,
                    "met": "yes",
                    "worst_half_width_pct": "6%",
                    "stop_reason": 3,
                    "more_time_estimate_s": float("inf"),
                    "cpu_ratios": "6",
                }
            }
        )
    )
    assert record == {
        "target_pct": 5,
        "met": False,
        "worst_half_width_pct": None,
        "median_half_width_pct": None,
        "stop_reason": None,
        "more_time_estimate_s": None,
        "cpu_ratios": None,
        "rule": "precision",
        "verdicts": {},
        "ceiling": None,
        "beyond_ceiling": False,
    }
    assert (
        precision_sentence(record_of({"precision": {"target_pct": 5, "met": False}}))
        == "Precision target: every overhead ratio within +/-5%: NOT met (no interval yet)."
    )


def test_a_verdict_run_builds_the_repeated_intervals_its_driver_stopped_by():
    """verdict-default (a real default run under the verdict rule): the page reads every interval with the manifest's design, so each
    throughput and CPU-cost ratio is the interval the driver's helper judged (the same boundary, recomputed), and it says how it stopped."""
    from wrkreport.bench.stopping_rule import all_intervals
    from wrkreport.core.records import CPU_METRIC, THROUGHPUT
    from wrkreport.report.answer import answer

    run = RUNS / "verdict-default"
    manifest = json.loads((run / "manifest.json").read_text())
    analysed = load_analysis(run)
    judged = all_intervals(run, manifest, {})
    assert len(judged) == 12  # 3 connections x 2 GOMAXPROCS values x throughput and CPU
    for (n, c, setup, kind), interval in judged.items():
        ratio = analysed.analysis.ratio(n, c, setup, THROUGHPUT if kind == "rps" else CPU_METRIC)
        assert (ratio.ratio, ratio.ci_low, ratio.ci_high) == pytest.approx((interval.estimate, interval.low, interval.high), rel=1e-9)
        assert ratio.blocks == interval.blocks >= 4
    # the settled FastCGI connections stopped at GOMAXPROCS=2's first look; the HTTP proxy went on to the ceiling beside go-http
    assert {s: analysed.analysis.ratio(2, 100, s).blocks for s in ("nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix")} == {
        "nginx-http": 10,
        "nginx-fcgi-tcp": 4,
        "nginx-fcgi-unix": 4,
    }
    assert analysed.analysis.precision_note == (
        "The answer was decided at every GOMAXPROCS value, with the cheapest connection's throughput "
        "and CPU-cost ratios within +/-10% (widest +/-9.16%)."
    )
    assert "a repeated 95% confidence interval (Jennison and Turnbull)" in analysed.analysis.method
    assert "each a repeated 99.2% interval (Bonferroni over every pair in every group)" in analysed.analysis.method
    said = answer(analysed.analysis, list(analysed.rates), list(analysed.capacities), Parameters.of(manifest["parameters"]))
    assert said.sentence.startswith("The cheapest connection is the HTTP proxy: it adds ")
    assert not analysed.capacities  # no capacity search without --slo
