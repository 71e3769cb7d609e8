"""Files: the run's data -> results.json and results.csv, and every output written atomically into the output directory."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

import pandas as pd

from .. import __version__
from ..analysis import reference
from ..analysis.analyze import Analysed
from ..analysis.design import design_of, precision_of
from ..analysis.latency import CellLatency
from ..analysis.variant_ratio import variant_of, variant_ratio_record, variant_record
from ..core.errors import OutputError
from ..core.records import Ratio
from ..runs.directory import COLUMNS
from ..runs.record import ENVIRONMENT
from .fmt import none_if_nan

CSV_COLUMNS = (*COLUMNS, "check_status", "excluded")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may read as a formula (OWASP CSV injection)
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def results_json(done: Analysed, generated_at: datetime) -> dict:
    """Return results.json: measurements, ratios, checks, environment, reference; every figure as load_analysis computed it."""
    run, report, table, analysis = done.run, done.checks, done.table, done.analysis
    return {
        # results.json's version: 1, the fields before a published schema; 2, the same fields, first published as
        # data/results.schema.json (its `schema` is const 2). Raise it, and the schema's, when a field changes meaning or type.
        "schema": 2,
        "generated_at": generated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wrkreport_version": __version__,
        "run": {"run_id": run.run_id, "status": run.status, "path": str(run.path)},
        "status": report.status,
        "measurements": measurement_records(table),
        "ratios": [ratio_record(r) for r in analysis.ratios],
        "latency_ratios": [ratio_record(r) for r in analysis.latency_ratios],
        "cpu_ratios": [ratio_record(r) for r in analysis.cpu_ratios],  # server CPU per request / go-http's
        "variant": variant_record(variant_of(run.record, analysis.setups)),  # --variant; null without
        "variant_ratios": [variant_ratio_record(r) for r in analysis.variant_ratios],  # twin / original, paired per block
        "variant_cpu_ratios": [variant_ratio_record(r) for r in analysis.variant_cpu_ratios],  # server CPU per request, twin / original
        "comparisons": [asdict(c) | {"distinguishable": c.distinguishable} for c in analysis.comparisons],
        "cells": [cell_record(c) for c in analysis.cells],
        "latency_histograms": [latency_record(c) for c in done.latencies],
        "fixed_rate": [c.record() for c in done.rates],  # open loop (analysis/rate_latency.py)
        "capacity": [c.record() for c in done.capacities],  # at the run's latency objective (analysis/capacities.py); [] without one
        "capacity_floor": floor_records(done.capacities),  # the machine's own floor per GOMAXPROCS (analysis/capacity_floor.py)
        "checks": [asdict(c) for c in report.checks],
        "expected_header_bytes": report.expected_header_bytes,
        "response_bytes_agreed": report.response_bytes,
        "noise": [asdict(w) for w in analysis.noise],
        "method": analysis.method,
        "design": design_of(run.record),  # rounds per block, blocks, duration (design.py)
        "precision": precision_of(run.record),  # the target, met or not, half-widths, stop reason, more-time estimate
        "environment": dict(run.record.environment) if run.record else dict.fromkeys(ENVIRONMENT),
        "reference": {
            "article_2013": [asdict(r) for r in reference.article_ratios()],
            "study_2012": [asdict(r) for r in reference.study_ratios()],
        },
    }


def ratio_record(ratio: Ratio) -> dict:
    """Return a ratio as results.json has it (the documented keys first)."""
    return {
        "gomaxprocs": ratio.gomaxprocs,
        "setup": ratio.setup,
        "ratio": ratio.ratio,
        "ci_low": ratio.ci_low,
        "ci_high": ratio.ci_high,
        "n": ratio.n,
        "excluded": ratio.excluded,
        "metric": ratio.metric,
        "connections": ratio.connections,
        "includes_one": ratio.includes_one,
        "unit": ratio.unit,  # "block" (server starts) or "repeat"
        "blocks": ratio.blocks,
        "measurements": ratio.measurements,
        "baseline": ratio.baseline,  # the setup divided by: go-http; go-https for nginx-https and nginx-https-unix
    }


def cell_record(cell) -> dict:
    """Return one cell's spreads as plain numbers."""
    metrics = {}
    for name, spread in cell.metrics.items():
        if spread is None:
            metrics[name] = None
            continue
        metrics[name] = {
            "n": spread.n,
            "median": spread.median,
            "min": spread.minimum,
            "max": spread.maximum,
            "mad": spread.mad,
            "mean": spread.interval.estimate,
            "mean_ci_low": spread.interval.low,
            "mean_ci_high": spread.interval.high,
            "values": list(spread.values),
        }
    return {
        "gomaxprocs": cell.gomaxprocs,
        "connections": cell.connections,
        "setup": cell.setup,
        "repeats": list(cell.repeats),
        "excluded": [{"repeat": r, "reason": why} for r, why in cell.excluded],
        "metrics": metrics,
    }


def latency_record(cell: CellLatency) -> dict:
    """Return one cell's exact percentiles from its merged histograms."""
    return {
        "gomaxprocs": cell.gomaxprocs,
        "connections": cell.connections,
        "setup": cell.setup,
        "measurements": cell.measurements,
        "latencies": cell.histogram.count,
        "requests": cell.histogram.requests,
        "percentiles_ms": {f"{p:g}": value for p, value in cell.percentiles},
        "max_ms": cell.max_ms,
    }


def measurement_records(table: pd.DataFrame) -> list[dict]:
    """Return the measurement rows as JSON-ready dicts (NaN as None)."""
    records = []
    for row in table[list(CSV_COLUMNS)].to_dict(orient="records"):
        records.append({k: none_if_nan(v) if not isinstance(v, (int, str)) else v for k, v in row.items()})
    for record in records:
        for key in ("exit_code",):
            if record[key] is not None:
                record[key] = int(record[key])
    return records


def write_outputs(out_dir: Path, html: str, table: pd.DataFrame, data: dict) -> dict[str, Path]:
    """Write index.html, results.csv and results.json into out_dir (each via a temporary file)."""
    return write_texts(out_dir, {"index.html": html, "results.csv": csv_text(table), "results.json": json_text(data)}, "the report")


def json_text(data: dict) -> str:
    """Return results.json's text: indented, no NaN, numpy scalars as plain numbers."""
    return json.dumps(data, indent=2, allow_nan=False, default=json_default) + "\n"


def csv_text(table: pd.DataFrame) -> str:
    """Return results.csv: one row per measurement, text cells a spreadsheet would run as formulas neutralised."""
    frame = table[list(CSV_COLUMNS)].copy()
    for name in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[name]):
            frame[name] = frame[name].map(csv_cell)
    return frame.to_csv(index=False, lineterminator="\n")


def csv_cell(value):
    """Return a text cell that starts like a formula with a leading ' (OWASP); numbers, plain or as text, unchanged.

    >>> csv_cell("=1+2"), csv_cell("@SUM(A1)"), csv_cell("-1.5"), csv_cell(-1.5), csv_cell("wrk -t2")
    ("'=1+2", "'@SUM(A1)", '-1.5', -1.5, 'wrk -t2')
    """
    if isinstance(value, str) and value.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_texts(out_dir: Path, texts: dict[str, str], what: str) -> dict[str, Path]:
    """Write each named text into out_dir (each via a temporary file); return name -> path."""
    paths = {name: out_dir / name for name in texts}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            write_atomic(paths[name], text)
    except OSError as exc:
        raise OutputError(f"cannot write {what} to {out_dir}: {exc.strerror or exc}") from None
    return paths


def json_default(value):
    """Convert numpy scalars for json.dumps."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {value!r}")


def write_atomic(path: Path, text: str) -> None:
    """Write text to path through a temporary file in the same directory."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def floor_records(capacities) -> list[dict]:
    """Return the machine's floor of each GOMAXPROCS value with capacities, in order ([] without an objective or a light-load second)."""
    floors = {c.gomaxprocs: c.floor for c in capacities if c.floor is not None}
    return [floor.record() for floor in floors.values()]
