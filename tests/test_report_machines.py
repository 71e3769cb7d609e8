"""Tests of wrkreport.report.machines: the report of a run on several machines, the Machines part, the RTT, the terminal line, saturation per client (issue 12).

server-host/ is a real single-machine run whose manifest got server_host, client_hosts
and network by hand; two-clients/ a real run with two wrk processes per measurement
(tests/fixtures/runs/README.md).
"""

from __future__ import annotations

import html
import json
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import RUNS
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.cli import cli
from wrkreport.report import build

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds real lab runs, some several times with one field changed

WHEN = datetime(2026, 11, 23, 12, tzinfo=timezone.utc)


def text_of(page: str, start: str, end: str) -> str:
    """Return the visible text of the page between two ids, tags removed, spaces collapsed."""
    part = page[page.index(f'id="{start}"') : page.index(f'id="{end}"')]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", part)).split())


@pytest.fixture
def copied(tmp_path):
    """Return a function copying a fixture run into tmp raw/."""

    def copy(name: str):
        run = tmp_path / "raw" / name
        shutil.copytree(RUNS / name, run)
        return run

    return copy


def built_page(run: Path, out: Path):
    """Build the run's report into out; return the build and the page's text."""
    built = build(run, out, WHEN)
    return built, (out / "index.html").read_text()


def test_the_page_shows_both_machines_and_the_round_trip(tmp_path):
    built, page = built_page(RUNS / "server-host", tmp_path / "out")  # the fixture itself: its analysis is shared
    machines = text_of(page, "machines", "environment")
    assert "controller: this machine Ran: run_bench.sh and wrk as client-1." in machines
    assert "target: root@10.231.0.2 (address 10.231.0.2) Ran: the servers (Go, nginx, ...), over ssh." in machines
    assert machines.count("kernel 6.18.44-fc-v782") == 2 and "ulimit -n 65536" in machines
    assert "memory 23.5 GiB" in machines and "memory bytes" not in machines  # the value carries its unit
    assert (
        "local to 10.231.0.2: round trip median 0.07 ms, min 0.05 ms, max 0.2 ms over 10 samples "
        "(ssh round trip over the open connection)"
    ) in machines
    environment = text_of(page, "environment", "setups")
    assert "machine: cpu model" not in environment and "run status complete" in environment  # machines moved, the rest stays
    assert "wrk ran on other machines than the servers, so they shared no CPUs" in page
    assert built.summary.splitlines()[0] == "machines: servers on root@10.231.0.2 (10.231.0.2); wrk on client-1 (this machine)"
    environment_json = json.loads((tmp_path / "out" / "results.json").read_text())["environment"]
    assert environment_json["server_host"]["ssh"] == "root@10.231.0.2" and environment_json["network"]["rtt"][0]["samples"] == 10


def test_the_two_client_page_names_both_clients_on_this_machine(tmp_path):
    built, page = built_page(RUNS / "two-clients", tmp_path / "out")  # the fixture itself: its analysis is shared
    machines = text_of(page, "machines", "environment")
    assert "controller: this machine Ran: run_bench.sh, the servers, wrk as client-1 and wrk as client-2." in machines
    assert "TCP connect() to 127.0.0.1:18710" in machines
    assert built.summary.splitlines()[0] == "machines: servers on this machine; wrk on client-1 (this machine), client-2 (this machine)"
    assert "==&gt; client-2 (local): nginx-http.gomaxprocs-1.block-1.run-2.client-2.wrk.txt &lt;==" in page  # the raw text of both clients


def test_a_single_machine_run_has_no_machines_part_and_no_extra_line(tmp_path):
    built, page = built_page(RUNS / "quick-hist", tmp_path / "out")  # the fixture itself: its analysis is shared
    assert 'id="machines"' not in page and "machine: cpu model" in page
    assert not built.summary.startswith("machines:")


def saturation(run, change_manifest=None, change_cpu=None):
    """Return the client noise warnings of a run after editing its manifest and cpu files."""
    manifest = json.loads((run / "manifest.json").read_text())
    if change_manifest:
        change_manifest(manifest)
        (run / "manifest.json").write_text(json.dumps(manifest))
    for path in run.glob("*.cpu.json"):
        record = json.loads(path.read_text())
        if change_cpu:
            change_cpu(record)
            path.write_text(json.dumps(record))
    return [w for w in analyze.load_analysis(run).analysis.noise if w.kind.startswith("client")]


def test_the_busy_warning_names_the_busy_client_with_its_own_threads(copied):
    def busy_client_2(record):
        record["processes"]["wrk"]["clients"][1].update(user_s=0.5 * record["wall_s"], system_s=0.45 * record["wall_s"])

    found = saturation(copied("two-clients"), change_cpu=busy_client_2)
    busy = [w.message for w in found if w.kind == "client-saturated"]
    assert busy == [
        f"{s} at GOMAXPROCS=1: wrk on client-2 (local: 2 cores, 2 wrk threads) used 95% of a CPU per thread (median): "
        "the load generator may have been the limit, not the setup"
        for s in ("go-http", "nginx-http")
    ]


def test_the_cores_warning_uses_the_client_machines_cores_not_the_targets(copied):
    run = copied("server-host")  # cpu.json's logical_cores (2) is the target's; the client's are in client_hosts

    def small_client(manifest):
        manifest["client_hosts"][0]["machine"]["usable_cores"] = 1

    found = saturation(run, small_client)
    assert [w.message for w in found] == [
        "In every one of the 8 cells a wrk client machine had fewer cores than wrk threads (0.50 cores per wrk thread, medians): "
        "the load generators were short of CPUs throughout"
    ]

    def big_client(manifest):
        manifest["client_hosts"][0]["machine"]["usable_cores"] = 64

    assert saturation(run, big_client) == []  # on the controller alone the same run warns in every cell (quick-hist)


def test_a_client_on_the_target_loses_the_servers_cores(copied):
    def client_on_target(manifest):
        manifest["client_hosts"][0].update(ssh="root@10.231.0.2")
        manifest["client_hosts"][0]["machine"]["usable_cores"] = 2

    found = saturation(copied("server-host"), client_on_target)
    assert len(found) == 1 and "than there were cores free of the servers" in found[0].message


def test_parse_prints_one_record_per_measurement_with_its_clients(tmp_path):
    stem = RUNS / "two-clients" / "go-http.gomaxprocs-1.block-1.run-1"
    single = RUNS / "quick-hist" / "go-http.gomaxprocs-1.block-1.run-1.wrk.txt"
    args = ["parse", "--json", f"{stem}.client-2.wrk.txt", str(single), f"{stem}.client-1.wrk.txt"]
    result = CliRunner().invoke(cli, args, standalone_mode=False, catch_exceptions=False)
    records = json.loads(result.stdout)
    assert [r["clients"] for r in records] == [2, 1] and result.return_value == 0
    text = CliRunner().invoke(cli, args[:1] + args[2:], standalone_mode=False, catch_exceptions=False).stdout
    assert text.count("  clients       2: ") == 1 and text.count("requests      ") == 2


@pytest.mark.parametrize("same_kernel", [True, False])
def test_a_target_with_this_machines_kernel_shares_its_cpus(copied, tmp_path, same_kernel):
    # Equal kernel boot ids: the "target" is a namespace or container of this machine, so wrk and the servers shared its CPUs.
    run = copied("server-host")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["boot_id"] = "0a6a2fd4-1f1e-4a9e-9a59-4b8b8a5f1c01"
    manifest["server_host"]["boot_id"] = manifest["boot_id"] if same_kernel else "5d0f3d0e-2a1b-4c2d-8e3f-9a8b7c6d5e4f"
    (run / "manifest.json").write_text(json.dumps(manifest))
    _, page = built_page(run, tmp_path / "out")
    assert ("wrk ran on other machines than the servers, so they shared no CPUs" in page) is not same_kernel
    assert ("Client and servers shared the same CPUs" in page) is same_kernel


@pytest.mark.parametrize("name, clients", [("lab-server-host", 1), ("lab-two-clients", 2)])
def test_real_lab_runs_build_with_their_machines_and_exact_merged_latency(tmp_path, name, clients):
    # Real runs of run_bench.sh over ssh into network-namespace hosts (tests/netlab.py; fixtures README).
    from wrkreport.parsers.histogram import merge_files
    from wrkreport.runs.directory import load_run

    run = RUNS / name  # read, never written: its analysis is the one the other modules make
    manifest = json.loads((run / "manifest.json").read_text())
    built, page = built_page(run, tmp_path / "out")
    target = manifest["server_host"]
    assert built.summary.splitlines()[0].startswith(f"machines: servers on {target['ssh']} ({target['address']})")
    assert "Client and servers shared the same CPUs" in page  # one kernel (boot_id): the lab is one machine
    loaded = load_run(run)
    rows = loaded.measurements
    assert len(rows) == len(manifest["measurements"]) and set(rows["clients"]) == {clients}
    for entry in manifest["measurements"]:
        hists = [run / c["hist_file"] for c in entry["clients"]] if clients > 1 else [run / entry["hist_file"]]
        merged = merge_files(hists)
        row = rows[rows["file"] == entry["file"]].iloc[0]
        assert row["requests"] == merged.requests
        # several clients: exact, from the merged histogram; one: wrk's own printed p99 (2 decimals)
        assert row["latency_p99_ms"] == pytest.approx(merged.percentile_ms(99), abs=0 if clients > 1 else 0.005)
