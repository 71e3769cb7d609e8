"""Tests of wrkreport.parsers.h2load: every real h2load 1.52 capture against the numbers its own text prints (read
here with the test's own regexes), broken variants made from them with their exact messages, and `wrkreport parse`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wrkreport.cli import cli
from wrkreport.core.display import quote
from wrkreport.core.errors import ParseError
from wrkreport.core.records import FIELDS
from wrkreport.parsers import parse_file, parse_text

FIXTURES = Path(__file__).parent / "fixtures" / "h2load"
CAPTURED = FIXTURES / "captured"
KILLED = CAPTURED / "h2load-1.52__D1-c5-h1-python-hung-then-killed.txt"
REPORTS = sorted(path for path in CAPTURED.glob("*.txt") if path != KILLED)
IN_FLIGHT = CAPTURED / "h2load-1.52__D2-c4-m8-tls-slow-in-flight.txt"
TWO_THREADS = CAPTURED / "h2load-1.52__n20000-t2-c20-m10-tls.txt"
MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def ms(token: str) -> float:
    """Return one of h2load's times (`483us`, `36.27ms`, `2.00s`) in ms: the test's own reading."""
    number, unit = re.fullmatch(r"([0-9.]+)(us|ms|s)", token).groups()
    return float(number) * MS[unit]


def printed(text: str) -> dict:
    """Read what h2load printed, with regexes of this test (independent of the parser)."""
    spawning = re.findall(
        r"^spawning thread #\d+: (\d+) total client\(s\)\. (?:Timing-based test with \S+ of warm-up time and (\S+)s of main)?", text, re.M
    )
    finished = re.search(r"^finished in (\S+), (\S+) req/s, ", text, re.M)
    counts = dict(
        (name, int(n))
        for n, name in re.findall(
            r"(\d+) (total|started|done|succeeded|failed|errored|timeout)\b", re.search(r"^requests: .*$", text, re.M)[0]
        )
    )
    codes = dict((k, int(n)) for n, k in re.findall(r"(\d+) ([2-5]xx)", re.search(r"^status codes: .*$", text, re.M)[0]))
    traffic = re.search(r"^traffic: \S+ \((\d+)\) total, \S+ \((\d+)\) headers \(space savings (\S+)%\), \S+ \((\d+)\) data$", text, re.M)
    rows = {
        name: row.split() for name, row in re.findall(r"^(time for request|time for connect|time to 1st byte|req/s\s+):(.*)$", text, re.M)
    }
    protocol = re.search(r"^Application protocol: (\S+)$", text, re.M)
    tls = re.search(r"^TLS Protocol: (\S+)$", text, re.M)
    return {
        "threads": len(spawning),
        "clients": sum(int(c) for c, _ in spawning),
        "main_s": float(spawning[0][1]) if spawning[0][1] else None,
        "elapsed_ms": ms(finished[1]),
        "rps": float(finished[2]),
        "counts": counts,
        "codes": codes,
        "traffic": [int(traffic[1]), int(traffic[2]), float(traffic[3]), int(traffic[4])],
        "rows": rows,
        "protocol": protocol[1] if protocol else None,
        "tls": tls[1] if tls else None,
    }


def test_every_capture_is_in_the_readme_with_its_command():
    readme = (FIXTURES / "README.md").read_text()
    named = set(re.findall(r"^\| `([^`]+)` \|", readme, re.M)) - {"file (`h2load-1.52__<name>.txt`)"}
    assert {path.name.removeprefix("h2load-1.52__").removesuffix(".txt") for path in CAPTURED.glob("*.txt")} == named
    assert len(named) == 21


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_capture_gives_the_numbers_it_prints(path):
    text, result = path.read_text(), parse_file(path)
    want = printed(text)
    counts, codes, (total, head, savings, data) = want["counts"], want["codes"], want["traffic"]
    assert list(result.to_dict()) == list(FIELDS) and result.tool == "h2load" and result.version is None
    assert (result.threads, result.connections) == (want["threads"], want["clients"])
    assert result.elapsed_s == pytest.approx(want["elapsed_ms"] / 1000)
    assert result.duration_s == pytest.approx(want["main_s"] if want["main_s"] else want["elapsed_ms"] / 1000)
    assert (result.requests, result.failed_requests, result.errored_requests, result.errors_timeout) == (
        counts["succeeded"],
        counts["failed"],
        counts["errored"],
        counts["timeout"],
    )
    assert (result.requests_started, result.requests_done) == (counts["started"], counts["done"])
    assert result.socket_errors == counts["errored"] and result.errors_connect == result.errors_write == 0
    assert result.non_2xx_3xx == codes["4xx"] + codes["5xx"]
    assert (result.bytes_read, result.header_bytes, result.header_space_savings_pct, result.data_bytes) == (total, head, savings, data)
    assert result.requests_per_sec == want["rps"]
    request, connect, ttfb = (want["rows"][name] for name in ("time for request", "time for connect", "time to 1st byte"))
    assert (result.latency_min_ms, result.latency_max_ms, result.latency_avg_ms, result.latency_stdev_ms) == pytest.approx(
        [ms(t) for t in request[:4]]
    )
    assert result.latency_within_stdev_pct == float(request[4].rstrip("%"))
    assert (result.connect_min_ms, result.connect_max_ms, result.connect_avg_ms, result.connect_stdev_ms) == pytest.approx(
        [ms(t) for t in connect[:4]]
    )
    assert (result.ttfb_min_ms, result.ttfb_max_ms, result.ttfb_avg_ms, result.ttfb_stdev_ms) == pytest.approx([ms(t) for t in ttfb[:4]])
    per_client = want["rows"]["req/s           "]
    assert (result.req_per_client_min, result.req_per_client_max, result.req_per_client_avg, result.req_per_client_stdev) == tuple(
        map(float, per_client[:4])
    )
    assert (result.application_protocol, result.tls_protocol) == (want["protocol"], want["tls"])
    assert result.req_per_thread_avg is None and result.latency_p99_ms is None and result.url == ""


def test_what_the_captures_show():
    """The cases the README names: in flight at the end, h1 bytes, refused, 404/502, timeouts, nginx's 1000 per connection."""
    named = {path.name.removeprefix("h2load-1.52__").removesuffix(".txt"): parse_file(path) for path in REPORTS}
    flight = named["D2-c4-m8-tls-slow-in-flight"]
    assert flight.requests_started - flight.requests_done == 32 == 4 * 8 and flight.duration_s == 2.0
    assert named["n2000-c10-h1-go"].bytes_per_response == 153 and named["n2000-c10-h1-go"].application_protocol == "http/1.1"
    refused = named["n100-c10-refused"]
    assert (refused.requests, refused.errored_requests, refused.errors_read, refused.application_protocol) == (0, 100, 100, None)
    assert named["D2-c10-refused"].socket_errors == 0 and named["D2-c10-refused"].requests == 0
    assert named["n1000-c10-m2-tls-404"].non_2xx_3xx == 1000 and named["n500-c5-tls-502"].non_2xx_3xx == 500
    assert (named["n6-c2-h1-N1-timeout"].errors_timeout, named["n6-c2-h1-N1-timeout"].errors_read) == (2, 4)
    assert named["n5000-c4-m4-tls-nginx-1000-per-connection"].failed_requests == 1000
    assert named["n5000-c4-m4-h2c"].application_protocol == "h2c" and named["n5000-c4-m4-h2c"].tls_protocol is None
    assert named["D1-warmup1-c4-m2-tls"].elapsed_s > 2 * named["D1-warmup1-c4-m2-tls"].duration_s * 0.99


def test_a_run_killed_before_its_report_names_its_last_line():
    with pytest.raises(ParseError) as info:
        parse_file(KILLED)
    assert (info.value.line, info.value.detail) == (
        13,
        "h2load output ends before its report: no 'finished in ...' line (h2load still running, killed, or cut off?)",
    )


# --- Broken variants, made here from a real capture ----------------------------------------------------------------


def parse_error(text: str) -> tuple[int | None, str]:
    """Return (line, message) of the ParseError parsing text raises."""
    with pytest.raises(ParseError) as info:
        parse_text(text, "broken.h2load.txt")
    assert "\n" not in info.value.message()
    return info.value.line, info.value.detail


def numbered(text: str, start: str) -> int:
    """Return the 1-based number of the first line starting with start."""
    return next(n for n, line in enumerate(text.split("\n"), start=1) if line.startswith(start))


@pytest.mark.parametrize(
    "cut_at",
    [
        "finished in",
        "requests:",
        "status codes:",
        "traffic:",
        "                     min",
        "time for request:",
        "time for connect:",
        "time to 1st byte:",
        "req/s",
    ],
)
def test_a_cut_output_says_what_is_missing(cut_at):
    text = TWO_THREADS.read_text()
    head = text[: text.index("\n" + cut_at) + 1]
    line, message = parse_error(head)
    assert line == head.count("\n")
    if cut_at == "finished in":
        assert message.startswith("h2load output ends before its report")
    else:
        assert message.startswith("output ends here, expected ") and message.endswith("(file cut off?)")


def test_every_cut_raises_a_parse_error_or_parses():
    text = IN_FLIGHT.read_text()
    for end in range(0, len(text), 7):
        try:
            parse_text(text[:end], "cut.h2load.txt")
        except ParseError as exc:
            assert "\n" not in exc.message()
    assert parse_text(text.rstrip("\n"), "whole").requests == 288  # the last line without its line break is whole


@pytest.mark.parametrize(
    "old, new, start, message",
    [
        (
            "(1580980) total",
            "(580980) total",
            "traffic:",
            "traffic total 1.51MB is not its exact 580980 bytes (h2load prints 567.36KB for them)",
        ),
        (
            "(980000) headers",
            "(98000) headers",
            "traffic:",
            "traffic head 957.03KB is not its exact 98000 bytes (h2load prints 95.70KB for them)",
        ),
        (
            "20000 succeeded",
            "20001 succeeded",
            "requests:",
            "20001 succeeded + 0 failed is not the 20000 total: h2load counts every request as one or the other",
        ),
        (
            "0 timeout",
            "18446744073709551615 timeout",
            "requests:",
            "timeout 18446744073709551615 is a negative count printed unsigned (h2load's counter wrapped); its value is unknown",
        ),
        (
            "    4.96ms",
            "    4,96ms",
            "time for request:",
            "expected the 'time for request:' row (min, max, mean, sd, +/- sd), found 'time for request: 37us 21.09ms 4,96ms 3.62ms 60.96%'",
        ),
        ("60.96%", "160.96%", "time for request:", "time for request: 160.96% within the sd: a share is at most 100%"),
        (
            "33680.52 req/s",
            "33680.52 req/sec",
            "finished in",
            "expected 'finished in <time>, <N> req/s, <size>B/s', found 'finished in 593.82ms, 33680.52 req/sec, 2.54MB/s'",
        ),
        (
            "spawning thread #1:",
            "spawning thread #2:",
            "spawning thread #2:",
            "expected 'spawning thread #1: ...', found 'spawning thread #2: 10 total client(s). 10000 total requests'",
        ),
    ],
)
def test_a_garbled_number_is_named_with_its_line(old, new, start, message):
    text = TWO_THREADS.read_text()
    assert text.count(old) == 1
    broken = text.replace(old, new)
    assert parse_error(broken) == (numbered(broken, start), message)


def test_a_missing_section_is_named():
    text = TWO_THREADS.read_text()
    status = next(line for line in text.split("\n") if line.startswith("status codes:"))
    broken = text.replace(status + "\n", "")
    assert parse_error(broken) == (
        numbered(broken, "traffic:"),
        "expected 'status codes: <N> 2xx, <N> 3xx, <N> 4xx, <N> 5xx', found " + quote(" ".join(numbered_line(broken, "traffic:").split())),
    )
    no_start = text.replace("starting benchmark...\n", "")
    assert parse_error(no_start)[1].startswith("expected 'Running <duration> test @ <url>'")  # no h2load first line: read as wrk
    trailing = text + "$ echo done\n"
    assert parse_error(trailing) == (trailing.count("\n"), "expected nothing after h2load's req/s row, found '$ echo done'")


def numbered_line(text: str, start: str) -> str:
    """Return the first line starting with start."""
    return next(line for line in text.split("\n") if line.startswith(start))


def test_complaint_and_warning_lines_and_interleaved_stderr():
    assert parse_error("-n: bad option value: x\n") == (1, "h2load rejected its arguments and printed no report: '-n: bad option value: x'")
    text = TWO_THREADS.read_text()
    warned = "-t: warning: the number of threads is greater than hardware cores.\n" + text.replace(
        "progress: 50% done\n", "progress: 50% done\nclient could not connect to host\n"
    )
    assert parse_text(warned, "warned").requests == 20000
    versioned = parse_text("h2load nghttp2/1.52.0\n" + text, "versioned")
    assert versioned.version == "1.52.0" and versioned.threads == 2


def test_progress_lines_spliced_by_h2loads_threads_are_noise():
    # As a -t2 driver run wrote them: thread 1's 'Warm-up started for thread #' and another's
    # progress line on one line, the rest ('0.') on the next. The report after them is read.
    text = (CAPTURED / "h2load-1.52__D2-t2-c10-m10-tls-proxy-go.txt").read_text()
    spliced = text.replace(
        "Warm-up started for thread #0.\nprogress: 20% of clients started\n",
        "Warm-up started for thread #progress: 20% of clients started\n0.\n",
    )
    assert spliced != text
    result = parse_text(spliced, "spliced")
    assert result.requests == parse_text(text, "whole").requests == 13195 and result.application_protocol == "h2"
    # the server's key, its name and its rest two writes: another thread's progress line between them, the key on its own line
    for head in ("Server Temp Key: progress: 30% of clients started\n", "Server Temp Key:\nprogress: 30% of clients started\n"):
        keyed = text.replace("Server Temp Key: X25519 253 bits\n", head + "X25519 253 bits\n")
        assert keyed != text and parse_text(keyed, "keyed").requests == 13195
    with pytest.raises(ParseError):  # a line that only looks like the key's rest is still refused
        parse_text(text.replace("Server Temp Key: X25519 253 bits\n", "Server Temp Key:\nX25519 253 bitsy\n"), "not a key")
    # a protocol line spliced with noise is not taken for noise
    broken = text.replace("Application protocol: h2\n", "Application protocol: progress: 40% of clients started\n")
    with pytest.raises(ParseError):
        parse_text(broken, "broken")


def test_a_foreign_file_is_one_line_naming_it(tmp_path):
    foreign = tmp_path / "notes.h2load.txt"
    foreign.write_text("milk\neggs\n")
    with pytest.raises(ParseError) as info:
        parse_file(foreign)
    assert info.value.message() == f"{foreign}:1: expected 'Running <duration> test @ <url>', found no such line (first line 'milk')"


# --- wrkreport parse on h2load files -----------------------------------------------------------------------------


def test_cli_summary_and_json():
    done = CliRunner().invoke(cli, ["parse", str(IN_FLIGHT)], standalone_mode=False, catch_exceptions=False)
    assert done.return_value == 0
    assert done.stdout.startswith(f"{IN_FLIGHT}: h2load h2 over TLSv1.2, 2 s, 1 threads, 4 connections\n")
    assert "  h2load        320 started, 288 done;" in done.stdout and "failed 0, errored 0 (timeout 0)" in done.stdout
    done = CliRunner().invoke(cli, ["parse", "--json", str(IN_FLIGHT)], standalone_mode=False, catch_exceptions=False)
    (record,) = json.loads(done.stdout)
    assert list(record) == [*FIELDS, "clients"] and (record["tool"], record["requests"], record["requests_started"]) == ("h2load", 288, 320)


def test_real_process_exit_status_0_1_2_and_no_traceback(tmp_path):
    cut = tmp_path / "cut.h2load.txt"
    cut.write_text(IN_FLIGHT.read_text().split("time to 1st byte")[0])
    runs = [
        subprocess.run([sys.executable, "-m", "wrkreport", "parse", "--json", *map(str, files)], capture_output=True, text=True, timeout=60)
        for files in ((IN_FLIGHT,), (IN_FLIGHT, cut), (cut, KILLED))
    ]
    assert [run.returncode for run in runs] == [0, 1, 2]
    assert all("Traceback" not in run.stderr for run in runs)
    assert runs[2].stderr.splitlines() == [
        f"wrkreport: {cut}:{cut.read_text().count(chr(10))}: output ends here, expected the 'time to 1st byte:' row (min, max, mean, sd, +/- sd) (file cut off?)",
        f"wrkreport: {KILLED}:13: h2load output ends before its report: no 'finished in ...' line (h2load still running, killed, or cut off?)",
    ]
    assert json.loads(runs[2].stdout) == [] and [r["tool"] for r in json.loads(runs[1].stdout)] == ["h2load"]


def test_a_wrk_output_after_a_warning_line_is_still_wrk():
    wrk = (Path(__file__).parent / "fixtures" / "wrk" / "samples" / "wrk-4.2.0__latency.txt").read_text()
    assert parse_text("Warning: something a shell printed\n" + wrk, "wrk-with-preamble").tool == "wrk"
