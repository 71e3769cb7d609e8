"""Tests of wrkreport.runs.client_outputs: several wrk clients' real outputs merged into one record, exactly; grouping by name and by manifest entry."""

from __future__ import annotations

import doctest

import pytest

from helpers import FIXTURES, PERCENTILE_FIELDS, brute_percentile_ms
from wrkreport.analysis.client_load import client_saturation
from wrkreport.core.errors import ParseError
from wrkreport.parsers import parse_file
from wrkreport.parsers.histogram import read_histogram_file
from wrkreport.runs import client_outputs as clients
from wrkreport.runs.client_outputs import (
    ClientLoad,
    ClientsProblem,
    by_names,
    from_entry,
    group_paths,
    merge_files,
    merge_results,
    numbering_problem,
)

HIST = FIXTURES / "hist"
PAIR = [HIST / "client-1.wrk.txt", HIST / "client-2.wrk.txt"]  # two real wrk processes started together


def test_the_doctests_hold():
    assert doctest.testmod(clients).failed == 0


def test_merged_record_is_the_sum_of_the_clients_and_the_request_weighted_mean():
    one, two = (parse_file(p) for p in PAIR)
    merged = merge_results(
        [one, two], [read_histogram_file(HIST / "client-1.hist.json"), read_histogram_file(HIST / "client-2.hist.json")], "m"
    )
    assert merged.requests == one.requests + two.requests
    assert merged.bytes_read == pytest.approx(one.bytes_read + two.bytes_read)
    assert merged.requests_per_sec == pytest.approx(one.requests_per_sec + two.requests_per_sec)
    assert merged.transfer_bytes_per_sec == pytest.approx(one.transfer_bytes_per_sec + two.transfer_bytes_per_sec)
    assert merged.threads == one.threads + two.threads and merged.connections == one.connections + two.connections
    weighted = (one.latency_avg_ms * one.requests + two.latency_avg_ms * two.requests) / (one.requests + two.requests)
    assert merged.latency_avg_ms == pytest.approx(weighted)
    assert merged.latency_max_ms == max(one.latency_max_ms, two.latency_max_ms)
    assert merged.latency_stdev_ms is None and merged.req_per_thread_avg is None  # they do not add across clients


def test_merged_percentiles_are_those_of_every_latency_of_both_clients_not_an_average():
    hists = [HIST / "client-1.hist.json", HIST / "client-2.hist.json"]
    merged = merge_results([parse_file(p) for p in PAIR], [read_histogram_file(h) for h in hists], "m")
    for p, name in PERCENTILE_FIELDS.items():
        assert getattr(merged, name) == brute_percentile_ms(hists, p), name
    one, two = (parse_file(p) for p in PAIR)
    assert merged.latency_p99_ms != pytest.approx((one.latency_p99_ms + two.latency_p99_ms) / 2, abs=1e-3)


def test_without_histograms_there_are_no_percentiles_at_all():
    merged = merge_results([parse_file(p) for p in PAIR], None, "m")
    assert [getattr(merged, name) for name in PERCENTILE_FIELDS.values()] == [None] * 5
    assert merged.requests == sum(parse_file(p).requests for p in PAIR)


def test_clients_of_other_tools_or_urls_are_not_merged():
    ab = FIXTURES / "ab" / "captured" / "ab-2.3__go-keepalive-t2.txt"
    with pytest.raises(ClientsProblem, match="must all be wrk outputs"):
        merge_results([parse_file(PAIR[0]), parse_file(ab)], None, "m")
    other = parse_file(HIST / "no-response.wrk.txt")  # another port
    with pytest.raises(ClientsProblem, match="different URLs"):
        merge_results([parse_file(PAIR[0]), other], None, "m")


def test_grouping_by_name_orders_clients_and_finds_a_gap():
    names = ["s.gomaxprocs-1.run-1.client-2.wrk.txt", "s.gomaxprocs-1.run-1.client-1.wrk.txt", "t.gomaxprocs-1.run-1.wrk.txt"]
    ((stem, group),) = by_names(names).items()
    assert stem == "s.gomaxprocs-1.run-1" and [c.client for c in group] == ["client-1", "client-2"]
    assert group[1].hist_file == "s.gomaxprocs-1.run-1.client-2.hist.json"
    assert numbering_problem(group) is None
    (gappy,) = by_names(["s.gomaxprocs-1.run-1.client-1.wrk.txt", "s.gomaxprocs-1.run-1.client-3.wrk.txt"]).values()
    assert numbering_problem(gappy) == "client 2 of 3 has no wrk file"


def test_a_manifest_entry_must_name_its_own_files():
    stem = "go-http.gomaxprocs-1.run-1"
    good = from_entry(
        stem, [{"client": "client-1", "host": "root@h", "file": f"{stem}.client-1.wrk.txt", "hist_file": None, "exit_code": 0}]
    )
    assert good[0].host == "root@h" and good[0].exit_code == 0
    for entries, why in [
        ([{"client": "client-1", "file": "../../etc/passwd"}], "does not name"),
        ([{"client": "client-1", "file": "other.gomaxprocs-1.run-1.client-1.wrk.txt"}], "does not name"),
        ([{"file": f"{stem}.client-1.wrk.txt"}, {"file": f"{stem}.client-1.wrk.txt"}], "a second time"),
        ([{"file": f"{stem}.client-1.wrk.txt", "hist_file": "x.hist.json"}], "hist_file"),
        ([], "empty"),
    ]:
        with pytest.raises(ClientsProblem, match=why):
            from_entry(stem, entries)


def test_command_line_files_group_by_stem_and_merge(tmp_path):
    for i, source in enumerate(PAIR, 1):
        (tmp_path / f"m.gomaxprocs-1.run-1.client-{i}.wrk.txt").write_bytes(source.read_bytes())
        (tmp_path / f"m.gomaxprocs-1.run-1.client-{i}.hist.json").write_bytes((HIST / f"client-{i}.hist.json").read_bytes())
    paths = [str(tmp_path / f"m.gomaxprocs-1.run-1.client-{i}.wrk.txt") for i in (2, 1)]
    assert group_paths(paths) == [paths[::-1]]
    merged, without = merge_files(paths[::-1])
    assert without == [] and merged.latency_p99_ms == brute_percentile_ms([HIST / "client-1.hist.json", HIST / "client-2.hist.json"], 99)
    (tmp_path / "m.gomaxprocs-1.run-1.client-2.hist.json").unlink()
    merged, without = merge_files(paths[::-1])
    assert without == ["client-2"] and merged.latency_p99_ms is None
    (tmp_path / "m.gomaxprocs-1.run-1.client-2.wrk.txt").write_text("not wrk\n")
    with pytest.raises(ParseError):
        merge_files(paths[::-1])


def test_saturation_uses_each_clients_own_threads_and_cores():
    loads = (
        ClientLoad("client-1", "root@a", threads=2, cpu_s=0.5, cores=8, shares_servers=False),
        ClientLoad("client-2", "root@b", threads=4, cpu_s=3.8, cores=2, shares_servers=False),
    )
    figures = client_saturation(loads, wall_s=1.0, server_busy=1.5)
    assert figures["wrk_cpu_per_thread"] == pytest.approx(0.95)  # client-2: 3.8 s / 1 s / 4 threads
    assert figures["busiest"] == "client-2 (root@b: 2 cores, 4 wrk threads)"
    assert figures["free_cores_per_thread"] == pytest.approx(0.5)  # client-2: 2 cores / 4 threads; the servers are elsewhere
    assert figures["shortest"].startswith("client-2") and figures["apart"] is True
    assert figures["wrk_cpu_share"] == pytest.approx(4.3 / 10)


def test_a_client_on_the_target_loses_the_servers_cores_and_shares_its_machine_with_other_clients_there():
    loads = (
        ClientLoad("client-1", "local", threads=1, cpu_s=0.2, cores=2, shares_servers=True),
        ClientLoad("client-2", "local", threads=1, cpu_s=0.3, cores=2, shares_servers=True),
    )
    figures = client_saturation(loads, wall_s=1.0, server_busy=1.2)
    assert figures["free_cores_per_thread"] == pytest.approx((2 - 1.2) / 2)
    assert figures["apart"] is False and figures["busiest"] == "client-2 (local: 2 cores, 2 wrk threads)"
    assert client_saturation((), 1.0, 0.5) is None
