"""Tests of wrkreport.report: results.json against its published JSON Schema, src/wrkreport/data/results.schema.json (version 2).

Every fixture run's results.json meets the schema (draft 2020-12); the schema is itself a valid
draft 2020-12 schema, names every top-level field in results_json's order with a description,
every results.csv column as a measurement's property, and ships as package data; made-up wrong
variants of a real results.json (a string for a number, a key missing, version 1) fail it.

Cost: each fixture run's results.json once per process (functools.cache): read from the
session's built reports when the browser tests built that run (browser_pages.BuiltReports,
shared_root), else computed as `build` writes it (load_analysis -> results_json -> json_text)
without drawing the page: about 6 s of CPU for the 32 runs, spread over the xdist workers.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import json
import re
import shutil
from importlib import resources
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from browser_pages import BUILT_AT, shared_root
from helpers import REPO, RUNS
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.report import files
from wrkreport.report.files import CSV_COLUMNS, json_text, results_json

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # analyses the fixture runs the other report modules analyse too

RUN_NAMES = tuple(sorted(p.name for p in RUNS.iterdir() if p.is_dir()))
SCHEMA_FILE = "results.schema.json"
SCHEMA = json.loads(resources.files("wrkreport").joinpath("data", SCHEMA_FILE).read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
DOC = REPO / "docs" / "results-format.md"
RICH_RUN = "every-phase"  # every part of results.json filled: blocks, CPU, TLS, --variant, fixed rates, capacity


@pytest.fixture(scope="module")
def pages_root(tmp_path_factory) -> Path:
    """Return where the session's browser tests build the fixture runs' reports (browser_pages.shared_root)."""
    return shared_root(tmp_path_factory)


@functools.cache
def results_of(run: Path, root: Path | None = None) -> str:
    """Return results.json's text for a run: the session's built copy when BuiltReports built it, else results_json of the run as build makes it."""
    if root is not None and (root / "built" / run.name).exists():
        return (root / "reports" / run.name / "results.json").read_text(encoding="utf-8")
    return json_text(results_json(analyze.load_analysis(run, None), BUILT_AT))


def errors(data: dict) -> list[str]:
    """Return each place where data breaks the schema: 'measurements/0/requests_per_sec: ...'."""
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in VALIDATOR.iter_errors(data)]


@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_fixture_runs_results_json_meets_the_schema(name, pages_root):
    data = json.loads(results_of(RUNS / name, pages_root))
    assert data["schema"] == 2
    assert errors(data) == []


def test_a_run_without_a_manifest_meets_the_schema(tmp_path):
    run = shutil.copytree(RUNS / "quick-1-repeat", tmp_path / "no-manifest", ignore=shutil.ignore_patterns("manifest.json"))
    data = json.loads(results_of(run))
    assert data["run"]["status"] is None and data["precision"] is None and set(data["environment"].values()) == {None}
    assert errors(data) == []


def test_the_schema_is_a_valid_draft_2020_12_schema_of_version_2():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["properties"]["schema"] == {"description": SCHEMA["properties"]["schema"]["description"], "const": 2}
    assert re.search(r'^\s+"schema": 2,$', Path(files.__file__).read_text(), re.M), "report/files.py writes another version"


def test_the_schema_names_every_top_level_field_in_order_each_with_a_description(pages_root):
    data = json.loads(results_of(RUNS / RICH_RUN, pages_root))
    assert list(SCHEMA["properties"]) == list(data) == SCHEMA["required"]
    assert [name for name, field in SCHEMA["properties"].items() if not field.get("description", "").strip()] == []


def test_a_measurement_has_every_results_csv_column_and_the_docs_name_each():
    measurement = SCHEMA["$defs"]["measurement"]
    assert tuple(measurement["properties"]) == CSV_COLUMNS == tuple(measurement["required"])
    text = DOC.read_text()
    assert [c for c in CSV_COLUMNS if not re.search(rf"^\| `{c}` \|", text, re.M)] == []
    assert SCHEMA_FILE in text and "version 2" in text


def test_the_schema_ships_in_the_wheel_as_package_data():
    section = (REPO / "pyproject.toml").read_text().split("[tool.setuptools.package-data]", 1)[1]
    shipped = re.findall(r'"([^"]+)"', re.search(r"^wrkreport = \[(.*)\]$", section, re.M)[1])  # tomllib is Python 3.11+
    assert any(fnmatch.fnmatch(f"data/{SCHEMA_FILE}", pattern) for pattern in shipped)


def broken(data: dict, change) -> dict:
    """Return a copy of data changed by change(copy)."""
    found = copy.deepcopy(data)
    change(found)
    return found


BREAKS = {
    "a measurement's requests_per_sec as text": lambda d: d["measurements"][0].update(requests_per_sec="28000.5"),
    "a measurement's gomaxprocs as a float": lambda d: d["measurements"][0].update(gomaxprocs=1.5),
    "a measurement without a column": lambda d: d["measurements"][0].pop("check_status"),
    "a top-level key missing": lambda d: d.pop("ratios"),
    "version 1": lambda d: d.update(schema=1),
    "the run's status not a check status": lambda d: d.update(status="ok"),
    "a ratio's interval as text": lambda d: d["ratios"][0].update(ci_low="0.91"),
    "a fixed-rate cell's held as text": lambda d: d["fixed_rate"][0].update(held="yes"),
    "a capacity's bound not a bound": lambda d: d["capacity"][0].update(bound="about"),
    "a cell's metric a number, not a spread": lambda d: d["cells"][0]["metrics"].update(requests_per_sec=28000.5),
    "checks an object": lambda d: d.update(checks={}),
    "generated_at in local time": lambda d: d.update(generated_at="2026-11-22 12:00:00"),
    "precision's target as text": lambda d: d["precision"].update(target_pct="5"),
    "the variant's options as text": lambda d: d["variant"].update(options="no-upstream-keepalive"),
}


@pytest.mark.parametrize("what", BREAKS)
def test_a_wrong_results_json_fails_the_schema(what, pages_root):
    data = json.loads(results_of(RUNS / RICH_RUN, pages_root))
    assert errors(data) == []
    assert errors(broken(data, BREAKS[what])) != []


def test_what_the_code_may_write_as_null_passes(pages_root):
    data = json.loads(results_of(RUNS / RICH_RUN, pages_root))
    nulls = broken(data, lambda d: d["measurements"][0].update(requests_per_sec=None, cpu_go_s=None, block=None, excluded="a reason"))
    nulls["variant"] = nulls["precision"] = None
    nulls["fixed_rate"][1].update(p50_ms=None, added_p99_ms=None)
    assert errors(nulls) == []
