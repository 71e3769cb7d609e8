"""Tests of wrkreport.bench.fixed_rate_clients: a fixed-rate measurement on several clients (--client-hosts), the rate split, the exact merge, and reading such runs as untrusted input."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import VEGETA_HELD, make_rate_run, problem_messages, read_rate_run, run_wrkreport
from wrkreport.bench.fixed_rate import Attack
from wrkreport.bench.fixed_rate_clients import client_runs, install_script, rate_of_run
from wrkreport.bench.remote_clients.agent import GENERATORS, down_script, kill_lines, stop_script
from wrkreport.bench.remote_clients.measuring import ClientRun, run_line
from wrkreport.bench.remote_clients.state import Client, Clients
from wrkreport.core.latency_histogram import rank_of
from wrkreport.core.rate_checks import Expected, rate_checks
from wrkreport.core.rate_result import RateResult, merge_results, rate_shares
from wrkreport.parsers.vegeta import client_part, read_client_files, read_vegeta_file

HELLO = Expected(200, 12)  # the hello world's answer: 200 with a 12-byte body

STEM = "go-http.gomaxprocs-1.block-1.run-1.rate-1000"


def client_name(i: int, stem: str = STEM) -> str:
    return f"{stem}.client-{i}.vegeta.csv.gz"


def result(latencies: list[int], span_s: float = 1.0, wait_s: float = 0.001, offered: float | None = None) -> RateResult:
    return RateResult(
        "x",
        offered,
        len(latencies),
        span_s,
        span_s + wait_s,
        ((200, len(latencies)),),
        0,
        0,
        (),
        ((12, len(latencies)),),
        tuple(sorted(latencies)),
    )


# --- The split ---------------------------------------------------------------------------


@pytest.mark.parametrize("rate,count", [(1000, 3), (500, 2), (7, 7), (10_000_000, 9), (1001, 4), (5, 1)])
def test_shares_add_up_to_the_rate_and_differ_by_at_most_one(rate, count):
    shares = rate_shares(rate, count)
    assert sum(shares) == rate and len(shares) == count
    assert max(shares) - min(shares) <= 1 and shares == sorted(shares, reverse=True)


def test_a_rate_below_one_per_client_cannot_be_split():
    with pytest.raises(ValueError, match="cannot be split over 3 clients"):
        rate_shares(2, 3)


def test_each_client_runs_its_share_of_the_rate_and_of_the_connection_cap(tmp_path):
    state = Clients(
        "/c/%C", None, [Client("client-1", "root@h1", "/tmp/d1"), Client("client-2", "local"), Client("client-3", "root@h3", "/tmp/d3")]
    )
    attack = Attack("http://10.0.0.2:8081/", 1000, 2.0, max_connections=100, timeout_s=2.0, expect_body_bytes=12)
    runs = client_runs(state, tmp_path / "vegeta", attack, "nginx-http", STEM, tmp_path)
    assert [rate_of_run(r) for r in runs] == [334, 333, 333]
    caps = [int(r.argv[r.argv.index("-max-connections") + 1]) for r in runs]
    assert sum(caps) == 100
    assert (
        runs[0].argv[:2] == ["/tmp/d1/vegeta", "attack"]
        and runs[0].argv[runs[0].argv.index("-targets") + 1] == "/tmp/d1/targets.nginx-http"
    )
    assert runs[1].argv[0] == str(tmp_path / "vegeta") and (tmp_path / "targets.nginx-http").read_text() == "GET http://10.0.0.2:8081/\n"
    assert all(r.generator == "vegeta" and r.duration_s == 4.0 for r in runs)
    assert run_line(runs[0]).split()[2] == "v", "the agent encodes a remote vegeta's results to CSV"
    warm = client_runs(state, tmp_path / "vegeta", attack, "nginx-http", "warm-up", tmp_path, keep=False)
    assert all(r.out is None and r.argv[-2:] == ["-output", "/dev/null"] for r in warm)


def test_the_agents_scripts_stop_vegeta_as_they_stop_wrk():
    assert GENERATORS == ("wrk", "vegeta")
    for script in (kill_lines("x.pid"), stop_script("/tmp/d", "n"), down_script("/tmp/d")):
        assert "wrk|vegeta)" in script
    assert "wrk" in ClientRun(Client("client-1", "local"), "n", ["wrk"], None, Path("e"), None).generator


def test_the_copy_is_checked_by_sha256_before_it_becomes_the_work_dirs_vegeta(tmp_path):
    script = install_script(str(tmp_path), "ab" * 32, {"go-http": "http://h:8080/"})
    binary = tmp_path / "vegeta.part"
    binary.write_text("#!/bin/sh\necho Version: v12.13.0\n")
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
    assert done.returncode == 1 and "arrived damaged" in done.stdout and not (tmp_path / "vegeta").exists()
    digest = subprocess.run(["sha256sum", str(binary)], capture_output=True, text=True).stdout.split()[0]
    done = subprocess.run(
        ["sh", "-c", install_script(str(tmp_path), digest, {"go-http": "http://h:8080/"})], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout
    assert (tmp_path / "vegeta").stat().st_mode & 0o777 == 0o700 and (tmp_path / "targets.go-http").read_text() == "GET http://h:8080/\n"


def test_a_client_of_another_architecture_gets_vegeta_built_for_its_own(tmp_path, monkeypatch):
    from wrkreport.bench import fixed_rate_clients, vegeta_build

    go = tmp_path / "go"
    go.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = version ]; then printf "%s: go1.26\\n\\tmod\\tgithub.com/tsenart/vegeta/v12\\tv12.13.0\\th1:x\\n\\tbuild\\tGOARCH=arm64\\n" "$3"; exit 0; fi\n'
        '[ -z "$GOBIN" ] && [ "$GOOS/$GOARCH" = linux/arm64 ] || exit 9\n'
        'mkdir -p "$GOPATH/bin/linux_$GOARCH" && echo arm > "$GOPATH/bin/linux_$GOARCH/vegeta"\n'
    )
    go.chmod(0o755)
    monkeypatch.setattr(vegeta_build, "find_go", lambda: str(go))
    monkeypatch.setattr(fixed_rate_clients.platform, "machine", lambda: "x86_64")
    here = tmp_path / "cache" / "vegeta-v12.13.0" / "vegeta"
    built: dict = {}
    assert fixed_rate_clients.binary_for(here, "x86_64", built, print) == here and built == {}
    arm = fixed_rate_clients.binary_for(here, "aarch64", built, print)
    assert arm == tmp_path / "cache" / "vegeta-v12.13.0-linux-arm64" / "vegeta" and arm.read_text() == "arm\n"
    assert fixed_rate_clients.binary_for(here, "aarch64", built, print) == arm, "built once per run"
    with pytest.raises(fixed_rate_clients.ClientError, match="a sparc64 machine"):
        fixed_rate_clients.binary_for(here, "sparc64", built, print)


# --- The merge ---------------------------------------------------------------------------


def test_merged_percentiles_are_those_of_every_request_together():
    rng = random.Random(7)
    parts = [result([rng.randrange(100_000, 9_000_000) for _ in range(n)], offered=r) for n, r in ((997, 500), (1003, 500), (13, 7))]
    merged = merge_results(parts, 1007, "m")
    together = sorted(x for p in parts for x in p.latencies_ns)
    assert merged.latencies_ns == tuple(together) and merged.requests == len(together)
    for p in (50, 90, 99, 99.9, 100):
        assert merged.percentile_ns(p) == together[rank_of(p, len(together)) - 1]
    assert merged.p99_ms != pytest.approx(sum(p.p99_ms for p in parts) / 3), "not an average of percentiles"


def test_the_merged_rate_is_the_sum_of_each_clients_and_its_wait_the_longest():
    a, b = result([1] * 501, span_s=1.0, wait_s=0.002, offered=500), result([1] * 496, span_s=1.0, wait_s=0.004, offered=500)
    merged = merge_results([a, b], 1000, "m")
    assert merged.achieved_rps == pytest.approx(500 + 495) and merged.wait_s == pytest.approx(0.004)
    held = rate_checks(merged, HELLO)[0]
    assert held.status == "pass" and "2 clients: 500.0 + 495.0" in held.message
    short = merge_results([a, result([1] * 450, offered=500)], 1000, "m")
    assert rate_checks(short, HELLO)[0].status == "fail", "the sum over clients must reach the rate"


def test_statuses_errors_and_bodies_add_up():
    a = RateResult("a", 2, 3, 1.0, 1.0, ((200, 2),), 1, 1, (("timeout", 1),), ((12, 2),), (1, 2, 3))
    b = RateResult("b", 2, 2, 1.0, 1.0, ((200, 1), (502, 1)), 0, 0, (), ((12, 1), (0, 1)), (4, 5))
    merged = merge_results([a, b], 4, "m")
    assert merged.statuses == ((200, 3), (502, 1)) and merged.body_bytes == ((0, 1), (12, 3))
    assert (merged.errors, merged.timeouts, merged.error_messages) == (1, 1, (("timeout", 1),))
    assert merged.to_dict()["clients"] == 2 and a.to_dict()["clients"] == 1


# --- The files of a run --------------------------------------------------------------------


TWO_CLIENTS = (client_name(1), client_name(2))


def clients_entry(files=TWO_CLIENTS, rates=(500, 500), **extra) -> dict:
    clients = [
        {"client": f"client-{i}", "host": f"root@h{i}", "rate": r, "file": f, "exit_code": 0}
        for i, (f, r) in enumerate(zip(files, rates), 1)
    ]
    return {"setup": "go-http", "gomaxprocs": 1, "block": 1, "repeat": 1, "rate": sum(rates), "file": files[0], "clients": clients, **extra}


def test_a_two_client_measurement_reads_as_one_exact_held_record(tmp_path):
    run = make_rate_run(tmp_path / "run", [clients_entry()], {client_name(1): VEGETA_HELD, client_name(2): VEGETA_HELD})
    (found,), problems = read_rate_run(run)
    assert problems == [] and found.usable and found.held and found.file == client_name(1)
    one = read_vegeta_file(VEGETA_HELD, 500)
    assert found.result.requests == 2 * one.requests and found.result.achieved_rps == pytest.approx(2 * one.achieved_rps)
    assert found.result.p99_ms == one.p99_ms and found.result.latencies_ns == tuple(sorted(one.latencies_ns * 2))


@pytest.mark.parametrize(
    "change,said",
    [
        (
            lambda e: e["clients"][1].update(file=None, problem="client-2 (root@h2): vegeta attack exit 1: boom"),
            "client-2 (root@h2): vegeta attack exit 1: boom",
        ),
        (lambda e: e["clients"][1].update(rate=400), "clients' rates do not add up to 1000"),
        (
            lambda e: e["clients"][1].update(file=client_name(1)),
            "does not say this measurement's setup, GOMAXPROCS, block, run, rate and client",
        ),
        (
            lambda e: e["clients"][1].update(file="../" + client_name(2)),
            "is not a plain file name in the run: a path to a parent directory",
        ),
        (lambda e: e.update(clients=e["clients"][:1]), "not a list of two or more clients"),
        (lambda e: e.update(file=client_name(2)), "is not its first client's"),
        (lambda e: (e["clients"].reverse(), e.update(file=e["clients"][0]["file"])), "not listed as client-1 to client-2 in order"),
    ],
)
def test_a_broken_client_list_fails_the_measurement_with_one_line(tmp_path, change, said):
    bad = clients_entry()
    change(bad)
    run = make_rate_run(tmp_path / "run", [bad], {client_name(1): VEGETA_HELD, client_name(2): VEGETA_HELD})
    (found,), problems = read_rate_run(run)
    assert not found.usable and found.result is None
    assert any(said in m for m in problem_messages(problems)), problem_messages(problems)
    assert all("\n" not in m and "Traceback" not in m for m in problem_messages(problems))


def test_a_damaged_client_file_fails_the_measurement_naming_that_file(tmp_path):
    cut = VEGETA_HELD.read_bytes()[: len(VEGETA_HELD.read_bytes()) // 2]
    run = make_rate_run(tmp_path / "run", [clients_entry()], {client_name(1): VEGETA_HELD, client_name(2): cut})
    (found,), problems = read_rate_run(run)
    assert not found.usable and any(
        m.startswith(client_name(2)) or client_name(2) in m for m in problem_messages(problems)
    ), problem_messages(problems)


def test_a_client_file_linked_out_of_the_run_is_refused(tmp_path):
    outside = tmp_path / client_name(2)
    shutil.copy(VEGETA_HELD, outside)
    run = make_rate_run(tmp_path / "run", [clients_entry()], {client_name(1): VEGETA_HELD})
    (run / client_name(2)).symlink_to(outside)
    (found,), problems = read_rate_run(run)
    assert not found.usable and any(client_name(2) in m for m in problem_messages(problems))


# --- wrkreport parse ------------------------------------------------------------------------


def test_client_part_names():
    assert client_part(client_name(3)) == (f"{STEM}.vegeta.csv.gz", 3)
    assert client_part(f"{STEM}.vegeta.csv.gz") is None


def test_read_client_files_needs_every_client(tmp_path):
    for i in (1, 3):
        shutil.copy(VEGETA_HELD, tmp_path / client_name(i))
    from wrkreport.core.errors import ParseError

    with pytest.raises(ParseError, match="expected clients 1 to 2"):
        read_client_files([tmp_path / client_name(1), tmp_path / client_name(3)])


def test_wrkreport_parse_merges_one_measurements_client_files(tmp_path):
    for i in (1, 2):
        shutil.copy(VEGETA_HELD, tmp_path / client_name(i))
    paths = [str(tmp_path / client_name(2)), str(tmp_path / client_name(1))]
    done = subprocess.run([sys.executable, "-m", "wrkreport", "parse", "--json", *paths], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)
    one = read_vegeta_file(VEGETA_HELD, 500)
    assert record["clients"] == 2 and record["requests"] == 2 * one.requests and record["offered_rps"] == 1000
    assert record["achieved_rps"] == pytest.approx(2 * one.achieved_rps) and record["p99_ms"] == one.p99_ms
    text = subprocess.run([sys.executable, "-m", "wrkreport", "parse", *paths], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and "1,000 req/s offered" in text.stdout and "clients       2:" in text.stdout
    (tmp_path / client_name(2)).write_bytes(gzip.compress(b"not,csv\n"))
    bad = subprocess.run([sys.executable, "-m", "wrkreport", "parse", *paths], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr  # its one measurement could not be read: bad input
    assert len(bad.stderr.strip().splitlines()) == 1 and client_name(2) in bad.stderr


def test_an_answer_of_megabytes_is_cut_at_its_end_marker_even_when_the_marker_is_split_between_reads():
    from wrkreport.bench.remote_clients.session import ClientSession

    body, marker = b"row,of,csv\n" * 300_000, b"\x1ewrkreport-end 0\n"
    for cut in range(len(marker) + 1):  # the read boundary anywhere in the marker
        session = ClientSession.__new__(ClientSession)
        session.buffer, session.scanned = bytearray(), 0
        for start in range(0, len(body), 65536):
            session.buffer += body[start : start + 65536]
            assert session.take_answer() is None
        session.buffer += marker[:cut]
        early = session.take_answer()
        assert early is None if cut < len(marker) else early == (body, 0)
        session.buffer += marker[cut:] + b"next"
        assert (early or session.take_answer()) == (body, 0) and bytes(session.buffer) == b"next" and session.scanned == 0


@pytest.mark.parametrize(
    "clients",
    [
        "two",
        [1, 2],
        [],
        {"client-1": {}},
        [{"client": "client-1"}, {"client": "client-2"}],
        [{"client": "client-1", "rate": True, "file": client_name(1)}, {"client": "client-2", "rate": 999, "file": client_name(2)}],
        [{"client": "nobody", "rate": 500, "file": client_name(1)}, {"client": "client-2", "rate": 500, "file": client_name(2)}],
        [{"client": "client-1", "rate": 500, "file": ["x"]}, {"client": "client-2", "rate": 500, "file": client_name(2)}],
        [{"client": "client-1", "rate": 10**12, "file": client_name(1)}, {"client": "client-2", "rate": 500, "file": client_name(2)}],
    ],
)
def test_a_hostile_client_list_is_one_line_never_a_traceback(tmp_path, clients):
    run = make_rate_run(
        tmp_path / "run", [clients_entry() | {"clients": clients}], {client_name(1): VEGETA_HELD, client_name(2): VEGETA_HELD}
    )
    found, problems = read_rate_run(run)
    assert all(not m.usable for m in found) and problems
    assert all("\n" not in m and "Traceback" not in m for m in problem_messages(problems)), problem_messages(problems)
    built = run_wrkreport("build", str(run), "--out", str(tmp_path / "out"))
    assert "Traceback" not in built.stderr
