"""Tests of wrkreport.runs.directory with several wrk clients per measurement: the real two-client run, and hand-broken variants of it.

tests/fixtures/runs/two-clients/ is a real run: two wrk processes at once per
measurement (tests/fixtures/runs/README.md). Each test copies it and breaks one thing.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from click.testing import CliRunner

from helpers import PERCENTILE_FIELDS, RUNS, brute_percentile_ms, run_wrkreport
from wrkreport.cli import cli
from wrkreport.parsers import parse_file
from wrkreport.runs.directory import load_run

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds copies of the clients' runs, one field changed

TWO = RUNS / "two-clients"
STEMS = [
    "go-http.gomaxprocs-1.block-1.run-1",
    "go-http.gomaxprocs-1.block-1.run-2",
    "nginx-http.gomaxprocs-1.block-1.run-1",
    "nginx-http.gomaxprocs-1.block-1.run-2",
]
FIRST = "nginx-http.gomaxprocs-1.block-1.run-2"


@pytest.fixture
def copy(tmp_path):
    """Return a fresh copy of the two-client run (optionally without some files) and a function to edit its manifest."""
    run = tmp_path / "raw" / "two-clients"
    shutil.copytree(TWO, run)
    return run


def edit_manifest(run, change) -> None:
    """Apply change(manifest) to the run's manifest.json."""
    manifest = json.loads((run / "manifest.json").read_text())
    change(manifest)
    (run / "manifest.json").write_text(json.dumps(manifest))


def row_of(run, stem):
    """Return the measurement row of one stem (its first client's file)."""
    table = run.measurements
    rows = table[table["file"] == f"{stem}.client-1.wrk.txt"]
    return rows.iloc[0] if len(rows) else None


def build(run, out):
    """Run `wrkreport build` in-process; return (result, status)."""
    result = CliRunner().invoke(cli, ["build", str(run), "--out", str(out)], standalone_mode=False, catch_exceptions=False)
    return result, result.return_value


def test_each_measurement_is_one_row_the_sum_of_its_two_clients():
    run = load_run(TWO)
    assert len(run.measurements) == 4 and set(run.measurements["clients"]) == {2}
    assert [c for c in run.problems if c.status != "pass"] == []
    for stem in STEMS:
        row = row_of(run, stem)
        parts = [parse_file(TWO / f"{stem}.client-{i}.wrk.txt") for i in (1, 2)]
        assert row["requests"] == sum(p.requests for p in parts)
        assert row["bytes_read"] == pytest.approx(sum(p.bytes_read for p in parts))
        assert row["requests_per_sec"] == pytest.approx(sum(p.requests_per_sec for p in parts))
        assert row["transfer_bytes_per_sec"] == pytest.approx(sum(p.transfer_bytes_per_sec for p in parts))
        for counter in ("errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx_3xx"):
            assert row[counter] == sum(getattr(p, counter) for p in parts)
        assert row["latency_avg_ms"] == pytest.approx(sum(p.latency_avg_ms * p.requests for p in parts) / row["requests"])
        assert (row["threads"], row["connections"]) == (2, 100)
        assert row["cpu_wrk_s"] == pytest.approx(sum(c["user_s"] + c["system_s"] for c in cpu_clients(stem)))
        assert "==> client-1 (local)" in run.texts[row["file"]] and "==> client-2 (local)" in run.texts[row["file"]]


def cpu_clients(stem):
    """Return the per-client wrk CPU entries of a stem's cpu.json."""
    return json.loads((TWO / f"{stem}.cpu.json").read_text())["processes"]["wrk"]["clients"]


def test_percentiles_are_exact_over_the_union_of_both_histograms():
    run = load_run(TWO)
    for stem in STEMS:
        row = row_of(run, stem)
        hists = [TWO / f"{stem}.client-{i}.hist.json" for i in (1, 2)]
        for p, name in PERCENTILE_FIELDS.items():
            assert row[name] == brute_percentile_ms(hists, p), (stem, name)
        assert run.histograms[row["file"]].count == sum(c for h in hists for _, c in json.loads(h.read_text())["histogram"])


def test_a_missing_histogram_leaves_no_percentiles_and_a_warned_check(copy):
    (copy / f"{FIRST}.client-2.hist.json").unlink()
    run = load_run(copy)
    row = row_of(run, FIRST)
    assert all(math.isnan(row[name]) for name in PERCENTILE_FIELDS.values())
    assert row["requests"] == sum(parse_file(copy / f"{FIRST}.client-{i}.wrk.txt").requests for i in (1, 2))
    assert f"{FIRST}.client-1.wrk.txt" not in run.histograms
    (check,) = [c for c in run.problems if c.name == "clients"]
    assert check.status == "warn" and "client-2" in check.message and "no percentiles" in check.message
    assert not math.isnan(row_of(run, STEMS[0])["latency_p99_ms"])  # the others keep theirs


def test_a_rejected_histogram_is_the_same_as_a_missing_one(copy):
    (copy / f"{FIRST}.client-1.hist.json").write_text('{"format": "something else"}')
    run = load_run(copy)
    assert math.isnan(row_of(run, FIRST)["latency_p99_ms"])
    assert {c.name: c.status for c in run.problems} == {"histogram": "warn", "clients": "warn"}


@pytest.mark.parametrize("damage", ["delete", "garble", "fifo"])
def test_a_missing_or_broken_client_file_fails_the_measurement_instead_of_summing_fewer_clients(copy, tmp_path, damage):
    target = copy / f"{FIRST}.client-2.wrk.txt"
    target.unlink()
    if damage == "garble":
        target.write_text("Running 1s test @ http://127.0.0.1:18711/\n  half a wrk output\n")
    elif damage == "fifo":
        import os

        os.mkfifo(target)
    run = load_run(copy)
    assert row_of(run, FIRST) is None and len(run.measurements) == 3
    (check,) = [c for c in run.problems if c.name == "clients"]
    assert check.status == "fail" and "client-2" in check.message and check.file == f"{FIRST}.client-1.wrk.txt"
    assert (check.setup, check.gomaxprocs, check.repeat) == ("nginx-http", 1, 2)
    result, status = build(copy, tmp_path / "out")
    assert status == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "check failed: clients: client-2" in lines[0]


def test_without_a_manifest_the_client_files_group_by_name(copy):
    (copy / "manifest.json").unlink()
    bare, full = load_run(copy), load_run(TWO)
    assert list(bare.measurements["file"]) == list(full.measurements["file"])
    assert list(bare.measurements["requests"]) == list(full.measurements["requests"])
    assert list(bare.measurements["latency_p99_ms"]) == list(full.measurements["latency_p99_ms"])
    assert set(bare.measurements["clients"]) == {2}


def test_without_a_manifest_a_gap_in_the_client_numbers_fails(copy):
    (copy / "manifest.json").unlink()
    (copy / f"{FIRST}.client-2.wrk.txt").rename(copy / f"{FIRST}.client-3.wrk.txt")
    run = load_run(copy)
    assert row_of(run, FIRST) is None
    (check,) = [c for c in run.problems if c.name == "clients"]
    assert check.status == "fail" and "client 2 of 3 has no wrk file" in check.message


def test_a_client_file_the_manifest_does_not_list_is_ignored_with_a_warning(copy):
    shutil.copy(copy / f"{FIRST}.client-2.wrk.txt", copy / f"{FIRST}.client-3.wrk.txt")
    run = load_run(copy)
    assert row_of(run, FIRST)["clients"] == 2
    (check,) = [c for c in run.problems if c.status != "pass"]
    assert check.name == "file-name" and f"{FIRST}.client-3.wrk.txt: not among the clients" in check.message


def test_a_manifest_entry_pointing_outside_its_measurement_fails(copy):
    def point_away(manifest):
        manifest["measurements"][-1]["clients"][1]["file"] = "../../../../etc/passwd"

    edit_manifest(copy, point_away)
    run = load_run(copy)
    assert row_of(run, FIRST) is None
    (check,) = [c for c in run.problems if c.name == "clients"]
    assert "clients[1].file: '../../../../etc/passwd' is not a plain file name" in check.message  # the one gate (rawfile.name_problem)


@pytest.mark.parametrize(
    "change, name, text",
    [
        (
            lambda m: m["measurements"][-1].update(clients="both"),
            "clients",
            "manifest.json: measurements[3].clients: expected a list, found 'both'",
        ),
        (
            lambda m: m["measurements"][-1]["clients"][0].update(client="bob"),
            "clients",
            "measurements[3].clients[0].client: expected a client label",
        ),
        (lambda m: m["measurements"][-1]["clients"][1].pop("file"), "clients", "measurements[3].clients[1].file: missing"),
        (lambda m: m["measurements"][-1].update(client="client-one"), "clients", "measurements[3].client: expected a client label"),
        (
            lambda m: m["client_hosts"][0]["machine"].update(usable_cores="many"),
            "machines",
            "client_hosts[0].machine.usable_cores: expected an integer",
        ),
        (lambda m: m.update(server_host={"ssh": 7}), "machines", "server_host.ssh: expected a string, found 7"),
        (lambda m: m["network"]["rtt"][0].update(median_ms=-1), "machines", "network.rtt[0].median_ms: expected a number from 0"),
        (lambda m: m.update(network={"rtt": [{"from": "local"}]}), "machines", "network.rtt[0].to: missing"),
        (lambda m: m["parameters"].update(client_hosts="local"), "machines", "parameters.client_hosts: expected a list"),
    ],
)
def test_a_hand_edited_wrong_shape_is_one_line_and_exit_1(copy, tmp_path, change, name, text):
    edit_manifest(copy, change)
    run = load_run(copy)
    (check,) = [c for c in run.problems if c.status != "pass"]
    assert check.name == name and check.status == "fail" and text in check.message
    if name == "clients":
        assert row_of(run, FIRST) is None  # which files make up the measurement is not known
    result, status = build(copy, tmp_path / "out")  # in-process: an exception would fail the test (test_cli_build runs the process)
    assert status == 1 and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert f"check failed: {name}: " in line and text in line


def test_a_hand_edited_wrong_shape_as_a_real_process_is_one_line_and_exit_1(copy, tmp_path):
    edit_manifest(copy, lambda m: m["measurements"][-1].update(clients="both"))
    proc = run_wrkreport("build", str(copy), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "check failed: clients: " in line and "measurements[3].clients: expected a list, found 'both'" in line


def test_the_cpu_file_of_several_clients_is_checked_too(copy):
    path = copy / f"{FIRST}.cpu.json"
    record = json.loads(path.read_text())
    record["processes"]["wrk"]["clients"][0]["user_s"] = -1
    path.write_text(json.dumps(record))
    run = load_run(copy)
    (check,) = [c for c in run.problems if c.status != "pass"]
    assert check.name == "cpu" and "processes.wrk.clients[0].user_s: expected a number from 0" in check.message
    assert math.isnan(row_of(run, FIRST)["cpu_go_s"])


def test_a_remote_clients_unread_cpu_is_null_and_the_rest_is_kept(copy):
    path = copy / f"{FIRST}.cpu.json"
    record = json.loads(path.read_text())
    record["processes"]["wrk"].update(user_s=None, system_s=None)
    record["processes"]["wrk"]["clients"][1].update(user_s=None, system_s=None)
    path.write_text(json.dumps(record))
    run = load_run(copy)
    row = row_of(run, FIRST)
    assert [c for c in run.problems if c.status != "pass"] == []
    assert row["cpu_go_s"] > 0 and math.isnan(row["cpu_wrk_s"])
    loads = run.client_loads[row["file"]]
    assert [load.cpu_s is None for load in loads] == [False, True]
