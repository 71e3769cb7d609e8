"""Tests of wrkreport.compare.rate_changes: the change of the added latency over go-http between two runs, Welch's interval over their blocks; and `wrkreport compare` showing it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import (
    FIXTURES,
    VEGETA_BEHIND,
    VEGETA_HELD,
    make_rate_run,
    rate_entry,
    read_rate_run,
    run_wrkreport,
    shifted_vegeta,
    slo_variant,
)
from wrkreport.analysis.rate_latency import rate_cells
from wrkreport.compare.rate_changes import TOO_FEW_BLOCKS, planned_only, rate_change_lines, rate_changes, rate_only_lines
from wrkreport.runs.rate_measurements import planned_rates

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # compares variants of quick-rates-slo

SETUPS = ("go-http", "nginx-http")


def rate_dir(path: Path, nginx_shifts_us: list[int | None]) -> Path:
    """Write a run whose nginx-http is the fixture shifted per block (None: the fell-behind file); go-http the fixture."""
    entries = [rate_entry(s, b) for b in range(1, len(nginx_shifts_us) + 1) for s in SETUPS]
    files = {}
    for b, shift in enumerate(nginx_shifts_us, 1):
        files[rate_entry("go-http", b)["file"]] = VEGETA_HELD
        files[rate_entry("nginx-http", b)["file"]] = VEGETA_BEHIND if shift is None else shifted_vegeta(shift)
    return make_rate_run(path, entries, files)


def test_a_latency_added_in_b_is_flagged_with_its_size(tmp_path):
    a = read_rate_run(rate_dir(tmp_path / "a", [0, 10, 0, 10]))[0]
    b = read_rate_run(rate_dir(tmp_path / "b", [200, 210, 190, 200]))[0]
    changes = rate_changes(a, b)
    assert [(c.setup, c.gomaxprocs, c.offered_rps, c.percentile) for c in changes] == [
        ("nginx-http", 1, 500, "p50"),
        ("nginx-http", 1, 500, "p99"),
    ]
    for c in changes:
        assert c.flagged and (c.blocks_a, c.blocks_b) == (4, 4)
        assert c.a_ms == pytest.approx(0.005, abs=1e-6) and c.b_ms == pytest.approx(0.200, abs=1e-6)
        assert c.change_ms == pytest.approx(0.195, abs=1e-6) and c.ci_low < 0.195 < c.ci_high and c.ci_low > 0
    assert (
        rate_change_lines(changes)[0]
        == "GOMAXPROCS=1 at 500 req/s offered, open loop: nginx-http added p50 0.005 -> 0.200 ms, +0.195 ms (+0.122 to +0.268) WORSE"
    )  # Welch, widened by each run's shift: 1.96 x sqrt(2.5e-5 + 2 x (0.13 x 0.2)^2)


def test_runs_at_different_rates_compare_nothing_and_say_why(tmp_path):
    a = read_rate_run(rate_dir(tmp_path / "a", [0, 10]))[0]
    entries = [rate_entry(s, b, rate=700) for b in (1, 2) for s in SETUPS]
    b = read_rate_run(make_rate_run(tmp_path / "b", entries, {e["file"]: VEGETA_HELD for e in entries}))[0]
    assert rate_changes(a, b) == []
    assert rate_only_lines(a, b) == [
        "fixed rate GOMAXPROCS=1: only in A: 500 req/s; only in B: 700 req/s; added latencies compare only at the same offered rate: "
        "run both with one rate, e.g. ./run_bench.sh --rates 500"
    ]  # the lower: both more likely hold it
    assert rate_only_lines(a, a) == [] and rate_only_lines(a, []) == [
        "fixed rate GOMAXPROCS=1: only in A: 500 req/s; added latencies compare only at the same offered rate: run both with one rate, e.g. ./run_bench.sh --rates 500"
    ]


def test_noise_alone_is_not_flagged(tmp_path):
    a = read_rate_run(rate_dir(tmp_path / "a", [0, 40, 20, 60]))[0]
    b = read_rate_run(rate_dir(tmp_path / "b", [50, 10, 30, 20]))[0]
    assert all(not c.flagged and c.ci_low < 0 < c.ci_high for c in rate_changes(a, b))


def test_one_block_gives_the_change_without_an_interval_and_a_cell_not_held_none(tmp_path):
    one = read_rate_run(rate_dir(tmp_path / "one", [100]))[0]
    two = read_rate_run(rate_dir(tmp_path / "two", [0, 0]))[0]
    (p50, _) = rate_changes(two, one)
    assert (p50.change_ms, p50.ci_low, p50.note, p50.flagged) == (pytest.approx(0.1, abs=1e-6), None, TOO_FEW_BLOCKS, False)
    behind = read_rate_run(rate_dir(tmp_path / "behind", [0, None]))[0]  # nginx-http did not hold the rate in block 2
    assert rate_changes(two, behind) == [] and rate_changes(behind, two) == []


def test_compare_prints_and_records_the_change(tmp_path):
    runs = []
    for side, shifts in (("a", [0, 10, 0]), ("b", [300, 310, 290])):
        run = tmp_path / side
        shutil.copytree(FIXTURES / "runs" / "default-run-1", run)
        manifest = json.loads((run / "manifest.json").read_text())
        rates = rate_dir(tmp_path / f"rates-{side}", shifts)
        manifest["fixed_rate_measurements"] = json.loads((rates / "manifest.json").read_text())["fixed_rate_measurements"]
        (run / "manifest.json").write_text(json.dumps(manifest))
        for e in manifest["fixed_rate_measurements"]:
            shutil.copy(rates / e["file"], run / e["file"])
        runs.append(str(run))
    done = run_wrkreport("compare", *runs, "--out", str(tmp_path / "cmp"))
    assert "Traceback" not in done.stderr, done.stderr
    assert "GOMAXPROCS=1 at 500 req/s offered, open loop: nginx-http added p99 0.003 -> 0.300 ms, +0.297 ms" in done.stdout, done.stdout
    records = json.loads((tmp_path / "cmp" / "compare.json").read_text())["fixed_rate"]
    assert [(r["percentile"], r["flagged"]) for r in records] == [("p50", True), ("p99", True)]
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert '<h2 id="fixed-rate">Latency added at a fixed load</h2>' in page
    section = page.split('<h2 id="fixed-rate">')[1].split("</table>")[0]
    assert section.count('<tr><td>GOMAXPROCS=1, 500 req/s</td><td class="setup">nginx-http</td>') == 2, section
    assert 'added p99</td><td class="num">0.003 (n=3)</td><td class="num">0.300 (n=3)</td><td class="num">+0.297 (' in section, section
    assert section.count("WORSE: more added in B") == 2, section


def test_a_comparison_without_a_fixed_rate_phase_has_no_fixed_rate_section(tmp_path):
    runs = [str(FIXTURES / "runs" / name) for name in ("default-run-1", "default-run-2")]
    done = run_wrkreport("compare", *runs, "--out", str(tmp_path / "cmp"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert "Changes per cell" in page and 'id="fixed-rate"' not in page


def test_the_capacity_searchs_steps_are_left_out_of_a_comparison(tmp_path):
    run = slo_variant(tmp_path / "run", plan=[12000])  # 18,000-32,000 req/s become search steps, each at a rate of its own in a real run
    measurements, _ = read_rate_run(run)
    cells = rate_cells(measurements, None, planned_rates(json.loads((run / "manifest.json").read_text())))
    kept, planned = planned_only(measurements, cells)
    assert {m.rate for m in kept} == {c.offered_rps for c in planned} == {12000} and len(kept) == 8
    other = [m for m in measurements if m.rate != 18000]  # a second run whose search never tried 18,000 req/s
    assert rate_only_lines(kept, planned_only(other, rate_cells(other, None, {1: frozenset({12000}), 2: frozenset({12000})}))[0]) == []
    assert {c.offered_rps for c in rate_changes(kept, kept, planned, planned)} == {12000}
