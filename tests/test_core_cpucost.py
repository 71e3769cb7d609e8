"""Tests of wrkreport.core.cpucost: one formula, and the driver's summary and the analysis agree on real runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from wrkreport.analysis.analyze import derive
from wrkreport.bench.cpu import cpu_ms_per_1k_requests
from wrkreport.core.cpucost import ms_per_1k_requests
from wrkreport.parsers import parse_file
from wrkreport.runs.directory import load_run

RUNS = Path(__file__).parent / "fixtures" / "runs"


def test_ms_per_1k_requests_of_numbers_and_of_columns():
    assert ms_per_1k_requests(1.5, 100_000) == pytest.approx(15.0)
    assert ms_per_1k_requests(0.0, 5) == 0.0
    column = ms_per_1k_requests(pd.Series([1.5, 2.0, float("nan")]), pd.Series([100_000.0, float("nan"), 1000.0]))
    assert column[0] == pytest.approx(15.0) and math.isnan(column[1]) and math.isnan(column[2])


@pytest.mark.parametrize("run_name", ["sweep-all-setups", "pinned-quick"])
def test_the_driver_summary_and_the_analysis_give_the_same_cpu_per_1k_requests(run_name):
    run_dir = RUNS / run_name
    table = derive(load_run(run_dir).measurements).set_index("file")
    compared = 0
    for cpu_file in sorted(run_dir.glob("*.cpu.json")):
        wrk_file = cpu_file.name.replace(".cpu.json", ".wrk.txt")
        driver = cpu_ms_per_1k_requests(json.loads(cpu_file.read_text()), parse_file(run_dir / wrk_file).requests)
        row = table.loc[wrk_file]
        go = sum(driver[name] for name in ("go", "fasthttp") if name in driver)
        assert row["cpu_go_ms_per_1k"] == pytest.approx(go, rel=1e-12)
        assert row["cpu_nginx_ms_per_1k"] == pytest.approx(driver["nginx"], rel=1e-12)
        compared += 1
    assert compared >= 2
