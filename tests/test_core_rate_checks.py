"""Tests of wrkreport.core.rate_checks: the rate held within 1% and no backlog growing (a pause is held), every answer 200 with the expected body, errors and timeouts counted, the generator's CPU."""

from __future__ import annotations

from pathlib import Path

from helpers import rate_result
from wrkreport.core.rate_checks import Expected, errors_check, generator_cpu_check, rate_checks, rate_held_check, response_check
from wrkreport.parsers.vegeta import read_vegeta_file

HELLO = Expected(200, 12)  # the hello world's answer: 200 with a 12-byte body

VEGETA = Path(__file__).parent / "fixtures" / "vegeta"
WHERE = {"setup": "nginx-http", "gomaxprocs": 1, "repeat": 2, "file": "nginx-http.gomaxprocs-1.block-1.run-2.rate-1000.vegeta.csv.gz"}


def test_a_rate_held_within_one_percent_passes_and_says_the_figures():
    check = rate_held_check(rate_result([1] * 1000, span_s=0.999, offered=1000), WHERE)
    assert check.status == "pass" and "1,000.0 req/s of the 1,000 offered (100.0%" in check.message
    assert (check.setup, check.gomaxprocs, check.repeat, check.file) == tuple(WHERE.values())
    assert rate_held_check(rate_result([1] * 991, span_s=0.999, offered=1000)).status == "pass"  # 99.1%


def test_a_rate_not_held_fails_with_the_reason():
    check = rate_held_check(rate_result([1] * 981, span_s=0.999, offered=1000))  # 980 intervals in 0.999 s: 98.1%
    assert check.status == "fail"
    assert check.message.startswith("rate not held: 981.0 req/s of the 1,000 offered (98.1%, 981 requests over 0.999 s)")
    assert "vegeta fell behind, so these are not latencies at 1,000 req/s" in check.message
    assert rate_held_check(rate_result([1] * 1020, span_s=0.999, offered=1000)).status == "fail"  # 102%: started too fast


def test_a_server_whose_backlog_grew_fails_though_the_requests_were_started_at_the_rate():
    growing = tuple(int(ms * 1e6) for ms in (0.2, 5, 20, 40, 60, 80, 100, 120, 140, 160))  # a queue growing to the end
    queued = rate_held_check(rate_result([1] * 1000, span_s=0.999, duration_s=1.2, offered=1000, window_p50_ns=growing))
    assert queued.status == "fail"
    assert queued.message == (
        "rate not held by the server: the requests were started at 1,000.0 req/s, but a backlog grew over the "
        "attack (median latency 5.00 ms in its first third, 140.00 ms in its last; rising window after window, "
        "tau 1.00): these are latencies of a growing queue, not at 1,000 req/s"
    )


def test_a_pause_is_held_and_shows_in_the_latencies_not_in_the_verdict():
    # Two pauses of 150 ms (a GC, SIGSTOP): two windows of ten lifted, the last answer 201 ms after the last request.
    paused = tuple(int(ms * 1e6) for ms in (0.2, 0.2, 0.2, 0.2, 150, 0.2, 0.2, 0.2, 0.2, 150))
    check = rate_held_check(rate_result([1] * 1000, span_s=0.999, duration_s=1.2, offered=1000, window_p50_ns=paused))
    assert check.status == "pass" and "no backlog grew over the attack (the last answer 201.0 ms after the last request)" in check.message
    # a slow, small rise (0.2 to 0.3 ms) is no backlog either: under the 1 ms floor
    creeping = tuple(int(ms * 1e6) for ms in (0.20, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.27, 0.28, 0.30))
    assert rate_held_check(rate_result([1] * 1000, span_s=0.999, offered=1000, window_p50_ns=creeping)).status == "pass"


def test_a_backlog_on_one_client_fails_the_merged_measurement():
    from wrkreport.core.rate_result import merge_results

    growing = tuple(int(ms * 1e6) for ms in (1, 3, 6, 9, 12, 15, 18, 21, 24, 27))
    flat = tuple(int(0.2e6) for _ in range(10))
    parts = [
        rate_result([1] * 500, span_s=0.998, offered=500, window_p50_ns=flat),
        rate_result([1] * 500, span_s=0.998, offered=500, window_p50_ns=growing),
    ]
    assert rate_held_check(merge_results(parts, 1000, "two")).status == "fail"
    assert rate_held_check(merge_results(parts[:1] * 2, 1000, "two")).status == "pass"


def test_real_files_a_stall_is_held_and_a_generator_that_fell_behind_is_not():
    stalled = read_vegeta_file(VEGETA / "go-http-stalled.rate-200.vegeta.csv.gz")  # stopped 0.3 s, 41 timeouts
    assert max(stalled.window_p50_ms) > 100 and rate_held_check(stalled).status == "pass"
    assert stalled.p99_ms > 90  # the pause is in the percentiles
    behind = rate_held_check(read_vegeta_file(VEGETA / "fell-behind.rate-200.vegeta.csv.gz"))
    assert behind.status == "fail" and "vegeta fell behind" in behind.message


def test_a_rate_that_cannot_be_measured_fails():
    assert (
        rate_held_check(rate_result([1], span_s=0.0, offered=1000)).message
        == "1 request(s) at 1,000 req/s offered: too few to measure a rate"
    )
    assert "offered rate is unknown" in rate_held_check(rate_result([1, 2], span_s=0.1)).message


def test_the_same_response_every_time():
    assert response_check(rate_result([1] * 5), HELLO).message == "all 5 answers 200 with a 12-byte body"
    wrong = response_check(rate_result([1] * 5, statuses=((200, 3), (502, 2)), body=((12, 3), (157, 2))), HELLO)
    assert wrong.status == "fail"
    assert wrong.message == (
        "not the same response every time: 2 of 5 answers not 200 (3 x 200, 2 x 502), "
        "2 with a body other than 12 bytes (3 x 12 bytes, 2 x 157 bytes)"
    )
    assert response_check(rate_result([1] * 5, body=((13, 5),)), HELLO).status == "fail"
    assert response_check(rate_result([1] * 2, statuses=(), errors=2, body=()), HELLO).message == "none of the 2 requests was answered"


def test_an_app_is_held_to_its_own_status_and_body():
    created = Expected(201, 40)  # an app answering 201 Created with a 40-byte body
    assert (
        response_check(rate_result([1] * 4, statuses=((201, 4),), body=((40, 4),)), created).message
        == "all 4 answers 201 with a 40-byte body"
    )
    ok_instead = response_check(rate_result([1] * 4, statuses=((200, 4),), body=((40, 4),)), created)
    assert ok_instead.status == "fail" and "4 of 4 answers not 201 (4 x 200)" in ok_instead.message


def test_errors_and_timeouts_are_counted():
    r = rate_result([1] * 10, statuses=((200, 7),), errors=3, timeouts=2, body=((12, 7),), error_messages=(("timeout", 2), ("refused", 1)))
    check = errors_check(r)
    assert check.status == "fail"
    assert check.message == "3 of 10 requests got no answer, 2 of them timeouts: 2 x 'timeout'; 1 x 'refused'"
    assert errors_check(rate_result([1] * 10)).status == "pass"


def cpu(vegeta_s: float, go_s: float, wall_s: float = 1.0, cores: int = 2) -> dict:
    """Return a .cpu.json record with vegeta as the generator and one Go server."""
    return {
        "wall_s": wall_s,
        "logical_cores": cores,
        "processes": {"go": {"user_s": go_s / 2, "system_s": go_s / 2}, "nginx": None, "wrk": {"user_s": vegeta_s, "system_s": 0.0}},
    }


def test_the_generator_cpu_is_reported_and_warned_when_it_competed():
    calm = generator_cpu_check(cpu(0.2, 0.3), 2000)
    assert calm.status == "pass"
    assert calm.message == "vegeta used 0.20 cores (100.0 ms of CPU per 1,000 requests) and the servers 0.30, of 2 cores"
    busy = generator_cpu_check(cpu(0.9, 0.95), 2000)
    assert busy.status == "warn" and busy.message.endswith("the load generator competed with the servers for the CPUs")
    assert generator_cpu_check(None, 10).status == "warn"


def clients_cpu(*used: float, wall_s: float = 2.0) -> dict:
    """Return a .cpu.json record of vegeta on --client-hosts: its CPU per client (all user time), summed as the driver writes it."""
    clients = [{"client": f"client-{i}", "user_s": u, "system_s": 0.0} for i, u in enumerate(used, 1)]
    return {
        "wall_s": wall_s,
        "logical_cores": 2,
        "processes": {
            "go": {"user_s": 1.0, "system_s": 0.5},
            "nginx": None,
            "wrk": {"user_s": sum(used), "system_s": 0.0, "pids": [], "clients": clients},
        },
    }


def test_vegeta_on_clients_is_summed_and_a_client_it_saturated_is_warned_about():
    cores = {"client-1": 2, "client-2": 1}
    calm = generator_cpu_check(clients_cpu(0.4, 0.3), 4000, client_cores=cores)
    assert calm.status == "pass" and calm.message == "vegeta used 0.35 cores in all on 2 clients (175.0 ms of CPU per 1,000 requests)"
    busy = generator_cpu_check(clients_cpu(0.4, 1.9), 4000, client_cores=cores)  # client-2: 0.95 of its 1 core
    assert busy.status == "warn"
    assert busy.message == (
        "vegeta used 1.15 cores in all on 2 clients (575.0 ms of CPU per 1,000 requests); vegeta kept its client's "
        "cores busy (client-2 0.95 of its 1): that client may have sent and timed late, so part of the latency may be its own"
    )
    assert generator_cpu_check(clients_cpu(0.4, 1.9), 4000).status == "pass"  # cores unknown (a manifest without them): not judged
    assert generator_cpu_check(clients_cpu(3.8, 0.1), 4000, client_cores=cores).status == "warn"  # client-1: 1.9 of its 2


def test_each_clients_cores_come_from_the_manifest_into_the_check(tmp_path):
    from wrkreport.runs.rate_measurements import client_cores

    manifest = {
        "client_hosts": [
            {"client": "client-1", "machine": {"logical_cores": 2}},
            {"client": "client-2", "machine": {"logical_cores": True}},
            {"client": "client-3", "machine": "x"},
            "junk",
            {"client": 4, "machine": {"logical_cores": 2}},
        ]
    }
    assert client_cores(manifest) == {"client-1": 2}  # a bool, a string or a non-string name is no core count
    assert client_cores({}) == {} and client_cores(None) == {}
    checks = rate_checks(rate_result([1] * 4001, span_s=2.0, offered=2000), HELLO, clients_cpu(3.8, 0.1), WHERE, client_cores(manifest))
    assert checks[-1].name == "rate-generator" and checks[-1].status == "warn" and "client-1 1.90 of its 2" in checks[-1].message


def test_rate_checks_gives_every_check_in_order():
    checks = rate_checks(rate_result([1] * 1001, span_s=1.0, offered=1000), HELLO, cpu(0.1, 0.1), WHERE)
    assert [c.name for c in checks] == ["rate-held", "rate-response", "rate-errors", "rate-generator"]
    assert [c.status for c in checks] == ["pass"] * 4


# --- The real fixtures (tests/fixtures/vegeta): each fails the check it was captured for ------------------

FIXTURES = Path(__file__).parent / "fixtures" / "vegeta"


def verdicts(name: str) -> dict[str, str]:
    """Return {check name: status} of a real fixture's checks (12-byte body expected)."""
    return {c.name: c.status for c in rate_checks(read_vegeta_file(FIXTURES / name), HELLO)[:3]}


def test_each_real_fixture_fails_exactly_the_check_it_was_captured_for():
    ok = {"rate-held": "pass", "rate-response": "pass", "rate-errors": "pass"}
    assert verdicts("go-http.gomaxprocs-1.block-1.run-1.rate-500.vegeta.csv.gz") == ok
    assert verdicts("fell-behind.rate-200.vegeta.csv.gz") == ok | {"rate-held": "fail"}
    assert verdicts("nginx-502.rate-100.vegeta.csv.gz") == ok | {"rate-response": "fail"}
    assert verdicts("go-http-stalled.rate-200.vegeta.csv.gz") == ok | {"rate-errors": "fail"}
    assert verdicts("refused.rate-100.vegeta.csv.gz") == ok | {"rate-response": "fail", "rate-errors": "fail"}
    stalled = errors_check(read_vegeta_file(FIXTURES / "go-http-stalled.rate-200.vegeta.csv.gz"))
    assert stalled.message.startswith(
        '41 of 400 requests got no answer, 41 of them timeouts: 41 x \'Get "http://127.0.0.1:18180/": context deadline exceeded'
    )
    behind = rate_held_check(read_vegeta_file(FIXTURES / "fell-behind.rate-200.vegeta.csv.gz"))
    assert behind.message.startswith("rate not held: 48.4 req/s of the 200 offered (24.2%, 98 requests over 2.006 s)")
