"""Tests of wrkreport.analysis.rate_latency: planned rates and the search's steps told apart, each cell's p50/p99 interval over blocks and the servers' CPU at its rate, recomputed from a real run's files."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from helpers import SLO_RUN, read_rate_run, slo_variant
from wrkreport.analysis.rate_latency import rate_cells
from wrkreport.runs.rate_measurements import planned_rates

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # reads quick-rates-slo and variants of it

T_975_DF1 = 12.706  # two blocks: one degree of freedom


def cells_of(run, measurements=None):
    """Return the run's fixed-rate cells as load_analysis makes them (its plan read from the manifest)."""
    measurements = measurements if measurements is not None else read_rate_run(run)[0]
    return rate_cells(measurements, None, planned_rates(json.loads((run / "manifest.json").read_text())))


def test_only_the_planned_rates_are_planned(tmp_path):
    cells = cells_of(slo_variant(tmp_path / "run", plan=[12000]))
    assert {c.offered_rps for c in cells if c.planned} == {12000}
    assert {c.offered_rps for c in cells if not c.planned} == {18000, 24000, 32000}
    assert len(cells) == 32 and [r["planned"] for r in (c.record() for c in cells)].count(False) == 24


def test_without_a_plan_every_rate_is_planned(tmp_path):
    run = slo_variant(tmp_path / "run")
    manifest = json.loads((run / "manifest.json").read_text())
    del manifest["fixed_rate_plan"]
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert all(c.planned for c in cells_of(run)) and planned_rates(manifest) is None


def test_a_cell_measured_in_two_blocks_has_its_interval_over_them_and_one_measured_once_none(tmp_path):
    run = slo_variant(tmp_path / "run", two_blocks=True)
    measurements, _ = read_rate_run(run)
    cells = cells_of(run, measurements)
    with_interval = 0
    for cell in cells:
        used = [m for m in measurements if (m.setup, m.gomaxprocs, m.rate) == (cell.setup, cell.gomaxprocs, cell.offered_rps) and m.usable]
        for name, p in (("p50", 50), ("p99", 99)):
            interval = getattr(cell, f"{name}_interval")
            record = cell.record()
            if len(used) < 2:
                assert interval is None and record[f"{name}_ci_low"] is None and record[f"{name}_ci_high"] is None
                continue
            logs = [math.log(m.result.percentile_ms(p)) for m in sorted(used, key=lambda m: m.block)]  # one per block
            half = T_975_DF1 * statistics.stdev(logs) / math.sqrt(len(logs))
            centre = statistics.mean(logs)
            assert (interval.unit, interval.blocks) == ("block", 2)
            assert math.isclose(interval.estimate, math.exp(centre)) and 0 < interval.low
            assert math.isclose(interval.low, math.exp(centre - half)) and math.isclose(interval.high, math.exp(centre + half))
            assert record[f"{name}_ci_low"] == round(interval.low, 4) and record[f"{name}_ci_high"] == round(interval.high, 4)
            with_interval += 1
    assert with_interval >= 16  # most cells held in both blocks


def test_each_cell_has_the_servers_cpu_at_its_rate_from_its_cpu_record():
    found, _ = read_rate_run(SLO_RUN)
    cells = {(c.setup, c.gomaxprocs, c.offered_rps): c for c in cells_of(SLO_RUN, found)}
    manifest = json.loads((SLO_RUN / "manifest.json").read_text())
    measurements = {(m.setup, m.gomaxprocs, m.rate): m for m in found}
    checked = 0
    for entry in manifest["fixed_rate_measurements"]:
        key = (entry["setup"], entry["gomaxprocs"], entry["rate"])
        cell, m = cells[key], measurements[key]
        record = cell.record()
        if not m.usable:  # held in none: no figure at that rate
            assert record["server_cores_busy"] is None and record["cpu_server_ms_per_1k"] is None
            continue
        cpu = json.loads((SLO_RUN / entry["cpu_file"]).read_text())
        servers = sum(p["user_s"] + p["system_s"] for name, p in cpu["processes"].items() if name != "wrk" and p)
        assert math.isclose(cell.server_cores, servers / cpu["wall_s"])
        assert math.isclose(cell.cpu_ms_per_1k, servers * 1000 / (m.result.requests / 1000))
        assert record["server_cores_busy"] == round(servers / cpu["wall_s"], 3)
        checked += 1
    assert checked == sum(m.usable for m in found) == 22  # the measurements that held their rate with every answer right
    go, nginx = cells[("go-http", 1, 12000)], cells[("nginx-http", 1, 12000)]
    assert nginx.cpu_ms_per_1k > go.cpu_ms_per_1k  # nginx in front costs CPU at a light load too
