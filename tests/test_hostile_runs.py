"""Tests for a hostile or careless run directory (issue 14): each reproducer builds, warns or fails
with a one-line message naming the file and field, and never shows a byte of a file outside it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import CAPTURED, FIXTURES
from wrkreport.cli import cli
from wrkreport.core.errors import ParseError, RefusedFile
from wrkreport.parsers.rawfile import CAP_BYTES, read_bytes
from wrkreport.parsers.schema import cpu_list_problem
from wrkreport.report import build_compare
from wrkreport.runs.directory import load_run

RUNS = FIXTURES / "runs"
SECRET = "SECRET-7f3a9c-do-not-leak"
WRK = "go-http.gomaxprocs-1.run-1.wrk.txt"
CPU = "go-http.gomaxprocs-1.run-1.cpu.json"
HEADERS = "go-http.gomaxprocs-1.headers.txt"

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # each test builds a copy of a few fixture runs, one field changed


@pytest.fixture
def run(tmp_path):
    """Return a copy of the pinned-quick fixture run (2 setups, CPU records, a manifest)."""
    return Path(shutil.copytree(RUNS / "pinned-quick", tmp_path / "raw" / "run"))


@pytest.fixture
def secret(tmp_path):
    """Return a file outside every run directory holding a token that must never be shown."""
    path = tmp_path / "secret.txt"
    path.write_text(f"HTTP/1.1 200 OK\r\n{SECRET}: root:x:0:0\r\n\r\n")
    return path


def build(run_dir: Path, out: Path):
    """Run `wrkreport build` in-process under a 60 s alarm (a hang guard); return (result, exit status, every output text)."""
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        result = CliRunner().invoke(cli, ["build", str(run_dir), "--out", str(out)], standalone_mode=False, catch_exceptions=False)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    texts = result.stdout + result.stderr + "".join(p.read_text(errors="replace") for p in out.iterdir() if p.is_file())
    return result, result.return_value, texts


def hung(signum, frame):
    """Stop a build that runs past its alarm."""
    raise TimeoutError("wrkreport build hung")


def checks_of(out: Path) -> list[dict]:
    """Return the checks results.json lists."""
    return json.loads((out / "results.json").read_text())["checks"]


def edit_json(path: Path, change) -> None:
    """Apply change(data) to a JSON file and write it back (NaN/Infinity allowed, as a hostile file may hold)."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


# --- Files: regular, inside the run directory, capped -------------------------------------------


@pytest.mark.parametrize("name", [HEADERS, WRK, CPU, "manifest.json"])
def test_symlink_to_a_file_outside_is_refused_and_never_shown(run, secret, tmp_path, name):
    (run / name).unlink()
    (run / name).symlink_to(secret)
    result, status, texts = build(run, tmp_path / "out")
    assert SECRET not in texts and "root:x" not in texts
    refused = [c for c in checks_of(tmp_path / "out") if c["name"] == "refused"]
    assert [c["message"] for c in refused] == [f"{name}: a symlink to a file outside the run directory; not read"]
    assert refused[0]["status"] == "warn" and status in (0, 1)
    table = json.loads((tmp_path / "out" / "results.json").read_text())["measurements"]
    assert len(table) == (1 if name == WRK else 2)  # the rest of the run still builds


def test_symlink_loop_is_refused_and_the_run_builds(run, tmp_path):
    (run / "manifest.json").unlink()
    (run / "manifest.json").symlink_to("manifest.json")
    _, status, _ = build(run, tmp_path / "out")
    refused = [c["message"] for c in checks_of(tmp_path / "out") if c["name"] == "refused"]
    assert status == 0 and len(refused) == 1 and refused[0].startswith("manifest.json: cannot read: ")


def test_symlink_inside_the_run_directory_is_read(run, tmp_path):
    (run / "copy.txt").write_bytes((run / HEADERS).read_bytes())
    (run / HEADERS).unlink()
    (run / HEADERS).symlink_to("copy.txt")
    _, status, _ = build(run, tmp_path / "out")
    assert status == 0 and not [c for c in checks_of(tmp_path / "out") if c["name"] == "refused"]


@pytest.mark.parametrize("name", ["manifest.json", CPU, WRK, "nginx-static.gomaxprocs-1.run-1.wrk.txt"])
def test_fifo_is_refused_without_hanging(run, tmp_path, name):
    if (run / name).exists():
        (run / name).unlink()
    os.mkfifo(run / name)
    _, status, _ = build(run, tmp_path / "out")  # a hang would hit build's alarm
    refused = [c["message"] for c in checks_of(tmp_path / "out") if c["name"] == "refused"]
    assert refused == [f"{name}: a FIFO, not a regular file; not read"] and status in (0, 1)


def test_file_over_its_cap_is_refused(run, tmp_path):
    with open(run / WRK, "r+b") as handle:  # sparse: costs no disk
        handle.truncate(CAP_BYTES["wrk"] + 1)
    build(run, tmp_path / "out")
    refused = [c["message"] for c in checks_of(tmp_path / "out") if c["name"] == "refused"]
    assert refused == [f"{WRK}: larger than the 1 MiB a file of this kind may have; not read"]


def test_read_bytes_reads_at_most_cap_plus_one_from_a_device():
    with pytest.raises(RefusedFile, match="a character device, not a regular file"):
        read_bytes(Path("/dev/zero"), 10)


def test_read_bytes_outside_root_names_no_target(tmp_path, secret):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "x").symlink_to(secret)
    with pytest.raises(RefusedFile) as info:
        read_bytes(tmp_path / "run" / "x", 100, root=tmp_path / "run")
    assert str(secret) not in info.value.message() and "outside the run directory" in info.value.reason


# --- Values: finite, in range, of the right type ---------------------------------------------------


@pytest.mark.parametrize(
    "key, raw, message",
    [
        ("ulimit_n", "NaN", "manifest.json: ulimit_n: nan is not a finite number of sensible size"),
        ("ulimit_n", "1e999", "manifest.json: ulimit_n: inf is not a finite number of sensible size"),
        ("ulimit_n", "9" * 5000, "manifest.json: ulimit_n: inf is not a finite number of sensible size"),
        ("ulimit_n", '"many"', "manifest.json: ulimit_n: expected an integer, found 'many'; left out"),
        ("machine", '["x"]', "manifest.json: machine: expected an object, found a list; left out"),
    ],
)
def test_bad_manifest_value_is_a_warning_naming_the_field(run, tmp_path, key, raw, message):
    edit_json(run / "manifest.json", lambda m: m.update({key: "@@value@@"}))
    (run / "manifest.json").write_text((run / "manifest.json").read_text().replace('"@@value@@"', raw))
    _, status, texts = build(run, tmp_path / "out")
    warned = [c for c in checks_of(tmp_path / "out") if c["name"] == "manifest"]
    assert len(warned) == 1 and warned[0]["message"].startswith(message) and warned[0]["status"] == "warn"
    assert status == 0 and "Traceback" not in texts
    assert len(json.loads((tmp_path / "out" / "results.json").read_text())["measurements"]) == 2


def test_nan_handler_delay_is_left_out(run, tmp_path):
    edit_json(run / "manifest.json", lambda m: m["parameters"].update(handler_delay_ms=float("nan")))
    _, status, _ = build(run, tmp_path / "out")
    (warned,) = [c["message"] for c in checks_of(tmp_path / "out") if c["name"] == "manifest"]
    assert warned.startswith("manifest.json: parameters.handler_delay_ms: nan is not a finite number") and status == 0


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda d: d["pinning"].update(client="abc"), "pinning.client: expected a CPU list such as '0-3,6', found 'abc'"),
        (lambda d: d.update(pinning="x"), "pinning: expected an object, found 'x'"),
        (lambda d: d.update(wall_s=float("inf")), "wall_s: inf is not a finite number of sensible size (NaN, Infinity, over 30 digits)"),
        (lambda d: d["processes"]["go"].update(user_s=1e308), "processes.go.user_s: expected a number from 0 to 1e+07, found 1e+308"),
        (lambda d: d["pinning"].update(client="0-100000000"), "pinning.client: CPU list '0-100000000' names CPUs above 65535"),
    ],
)
def test_bad_cpu_record_is_a_warning_and_the_run_builds(run, tmp_path, change, field):
    edit_json(run / CPU, change)
    _, status, _ = build(run, tmp_path / "out")  # expanding 0-100000000 would take 8.9 GB and hit the alarm
    (warned,) = [c["message"] for c in checks_of(tmp_path / "out") if c["name"] == "cpu"]
    assert warned == f"{CPU}: not a usable CPU record ({field}); CPU figures left out" and status == 0


def test_cpu_list_is_bounded_before_expansion():
    assert cpu_list_problem("0-" + "9" * 10) == "CPU list '0-9999999999' names CPUs above 65535"
    assert cpu_list_problem("3-1") == "CPU list '3-1' has a range that runs backwards (3-1)"
    assert cpu_list_problem("0-3,6") is None and cpu_list_problem("0-65535") is None


def test_zero_threads_in_a_run_with_cpu_records_fails_that_file_only(run, tmp_path):
    (run / WRK).write_text((run / WRK).read_text().replace("2 threads and", "0 threads and"))
    result, status, _ = build(run, tmp_path / "out")
    assert status == 1
    (line,) = result.stderr.splitlines()
    assert line == (
        f"wrkreport: {run / WRK}: check failed: parse: {run / WRK}:2: "
        "0 threads and 100 connections: wrk refuses to run unless 1 <= threads <= connections"
    )
    assert len(json.loads((tmp_path / "out" / "results.json").read_text())["measurements"]) == 1


def test_dollar_signs_in_a_reason_are_not_mathtext(run, tmp_path):
    def change(manifest):
        manifest["passes"][0]["cells"]["nginx-http"]["error"] = "$\\frac{$"
        manifest["passes"][0]["cells"]["$\\frac{$"] = {"ready": False}

    edit_json(run / "manifest.json", change)
    _, status, texts = build(run, tmp_path / "out")
    assert status == 1 and "$\\frac{$" in texts
    warned = [c["message"] for c in checks_of(tmp_path / "out") if c["name"] == "manifest"]
    assert warned == ["manifest.json: passes[0].cells: key '$\\\\frac{$' is not a setup name; left out"]


def test_compare_with_a_manifest_field_of_the_wrong_type(run, tmp_path):
    edit_json(run / "manifest.json", lambda m: m.update(machine=["x"], versions="4.1"))
    result, _ = build_compare(run, RUNS / "pinned-quick", tmp_path / "out", __import__("datetime").datetime(2026, 11, 23))
    assert result.a.run.record.machine is None and result.a.run.record.versions is None
    assert any(what == "machine cpu_model" for what, _, _ in result.differences)


# --- Counters and rates wrk never prints ------------------------------------------------------------


def test_negative_socket_errors_fail_a_check(run, tmp_path):
    text = (run / WRK).read_text().replace("Requests/sec:", "  Socket errors: connect 0, read -5, write 0, timeout 0\nRequests/sec:")
    (run / WRK).write_text(text)
    result, status, _ = build(run, tmp_path / "out")
    assert status == 1
    assert "check failed: socket-errors: socket errors: read -5: negative, so wrk's 32-bit counter" in result.stderr


def test_negative_non_2xx_fails_a_check(run, tmp_path):
    text = (run / WRK).read_text().replace("Requests/sec:", "  Non-2xx or 3xx responses: -7\nRequests/sec:")
    (run / WRK).write_text(text)
    result, status, _ = build(run, tmp_path / "out")
    assert status == 1 and "check failed: non-2xx: non-2xx/3xx count -7: negative" in result.stderr


def test_negative_requests_per_sec_is_a_failed_parse_check(run, tmp_path):
    text = (run / WRK).read_text()
    start = text.index("Requests/sec:")
    (run / WRK).write_text(text[:start] + "Requests/sec: -72748.10\n" + text[text.index("Transfer/sec:") :])
    result, status, _ = build(run, tmp_path / "out")
    assert status == 1 and "check failed: parse:" in result.stderr and "negative number '-72748.10'" in result.stderr


# --- Two files for one measurement -------------------------------------------------------------------


def test_run_1_and_run_01_fail_and_neither_is_counted(run, tmp_path):
    shutil.copyfile(run / WRK, run / "go-http.gomaxprocs-1.run-01.wrk.txt")
    result, status, _ = build(run, tmp_path / "out")
    assert status == 1
    duplicates = [c for c in checks_of(tmp_path / "out") if c["name"] == "duplicate"]
    assert sorted(c["file"] for c in duplicates) == ["go-http.gomaxprocs-1.run-01.wrk.txt", WRK]
    assert all(
        "go-http.gomaxprocs-1.run-01.wrk.txt and" in c["message"] or "and go-http.gomaxprocs-1.run-01.wrk.txt" in c["message"]
        for c in duplicates
    )
    measurements = json.loads((tmp_path / "out" / "results.json").read_text())["measurements"]
    go = [m for m in measurements if m["setup"] == "go-http"]
    assert len(go) == 2 and all(m["excluded"] for m in go)


def test_manifest_listing_one_measurement_twice_fails(run, tmp_path):
    edit_json(run / "manifest.json", lambda m: m["measurements"].append(dict(m["measurements"][0], exit_code=3)))
    result, status, _ = build(run, tmp_path / "out")
    assert status == 1 and f"check failed: duplicate: manifest.json lists {WRK} 2 times (measurements 0, 2)" in result.stderr


def test_manifest_entries_claiming_one_cell_for_two_files_fail_both(run, tmp_path):
    def change(manifest):
        manifest["measurements"][1].update(setup="go-http")

    edit_json(run / "manifest.json", change)
    result, status, _ = build(run, tmp_path / "out")
    failed = [c for c in checks_of(tmp_path / "out") if c["name"] == "duplicate"]
    assert status == 1 and {c["file"] for c in failed} == {WRK, "nginx-http.gomaxprocs-1.run-1.wrk.txt"}
    assert any("manifest.json lists" in c["message"] and "as the same measurement" in c["message"] for c in failed)


# --- parse: one line per bad file, the others printed -----------------------------------------------


def test_parse_reports_every_bad_file_and_prints_the_good_ones(tmp_path):
    good = CAPTURED / "wrk-4.1.0__latency.txt"
    invisible = tmp_path / "zwsp.txt"
    invisible.write_text("\u200b")
    negative = tmp_path / "negative.txt"
    negative.write_text(good.read_text().replace("MB read", "MB read").replace(" read\n", " read\n", 1))
    text = good.read_text()
    line = next(x for x in text.splitlines() if x.endswith(" read"))
    negative.write_text(text.replace(line, line.replace(", ", ", -", 1)))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    files = [invisible, good, negative, fifo, good]
    proc = subprocess.run(  # a FIFO read in blocking mode would hang until the timeout
        [sys.executable, "-m", "wrkreport", "parse", *map(str, files)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        f"wrkreport: {invisible}: empty, expected wrk output",
        f"wrkreport: {negative}:{text.splitlines().index(line) + 1}: negative number '-{line.split(', ')[1].split('MB')[0]}': wrk prints none here",
        f"wrkreport: {fifo}: a FIFO, not a regular file; not read",
    ]
    assert proc.stdout.count(f"{good}: wrk") == 2


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("2 threads and", "0 threads and", "0 threads and 20 connections: wrk refuses to run"),
        ("Requests/sec:", "Requests/sec: nan\nX:", "Requests/sec is 'nan', not a number"),
        ("50%  326.00us", "50%  -326.00us", "negative number '-326.00': wrk prints none here"),
    ],
)
def test_parse_rejects_values_wrk_never_prints(old, new, message):
    from wrkreport.parsers import parse_text

    text = (CAPTURED / "wrk-4.1.0__latency.txt").read_text()
    if new.endswith("X:"):
        start = text.index("Requests/sec:")
        text = text[:start] + "Requests/sec: nan\n" + text[text.index("Transfer/sec:") :]
    else:
        assert old in text
        text = text.replace(old, new, 1)
    with pytest.raises(ParseError, match=message):
        parse_text(text, "x")


def test_load_run_never_reads_through_a_symlink_to_a_directory_outside(run, tmp_path, secret):
    (run / "other.wrk.txt").symlink_to(tmp_path)
    loaded = load_run(run)
    assert any(p.name in ("refused", "file-name") for p in loaded.problems)


# --- File names from the run: one gate (rawfile.name_problem) -----------------------------------

# What cannot be a plain file name inside the run (issue 29): each is refused with one line.
BAD_NAMES = {
    "nul": "a\x00b.wrk.txt",
    "escape": "\x1b[31mred.wrk.txt",
    "newline": "a\nb.wrk.txt",
    "del": "a\x7fb.wrk.txt",
    "surrogate-undecodable": "\udcff.wrk.txt",
    "surrogate-lone": "\ud800.wrk.txt",
    "too-long": "x" * 300 + ".wrk.txt",
    "absolute": "/etc/passwd",
    "parent": "../../outside.wrk.txt",
    "subdirectory": "logs/x.wrk.txt",
    "dot": ".",
    "dotdot": "..",
    "empty": "",
}
# (fixture run, where in the manifest): every path-like field the readers use or keep.
NAME_FIELDS = {
    "measurement-file": ("pinned-quick", ("measurements", 0, "file")),
    "measurement-cpu-file": ("pinned-quick", ("measurements", 0, "cpu_file")),
    "measurement-hist-file": ("variant-nokeep", ("measurements", 0, "hist_file")),
    "client-file": ("two-clients", ("measurements", 0, "clients", 1, "file")),
    "client-hist-file": ("two-clients", ("measurements", 0, "clients", 0, "hist_file")),
    "rate-file": ("variant-nokeep", ("fixed_rate_measurements", 0, "file")),
    "rate-cpu-file": ("variant-nokeep", ("fixed_rate_measurements", 0, "cpu_file")),
    "rate-client-file": ("variant-nokeep", ("fixed_rate_measurements", 0, "clients", 1, "file")),
    "headers-file": ("pinned-quick", ("passes", 0, "cells", "go-http", "headers_file")),
}


AUXILIARY_FIELDS = (
    "measurement-cpu-file",
    "measurement-hist-file",
    "rate-cpu-file",
    "headers-file",
)  # left out alone; a client entry's fails its measurement


def two_rate_clients(data: dict) -> None:
    """Make the first fixed-rate entry a two-client one (its file client-1's), as --client-hosts writes it."""
    entry = data["fixed_rate_measurements"][0]
    half = entry["rate"] // 2
    entry["clients"] = [
        {"client": "client-1", "rate": half, "file": entry["file"]},
        {"client": "client-2", "rate": entry["rate"] - half, "file": entry["file"].replace(".vegeta", ".client-2.vegeta")},
    ]


def set_in(data, path: tuple, value) -> None:
    """Set data[path...] = value (the path exists in the fixture)."""
    for step in path[:-1]:
        data = data[step]
    data[path[-1]] = value


def manifest_text(data: dict) -> str:
    """Return JSON as json.dumps writes it, with lone surrogates as \\u escapes (valid JSON a hostile file may hold)."""
    return json.dumps(data)  # ensure_ascii escapes every non-ASCII character, surrogates included


def stderr_lines(result) -> list[str]:
    """Return the non-empty lines the build wrote on stderr."""
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.mark.parametrize("value", list(BAD_NAMES.values()), ids=list(BAD_NAMES))
@pytest.mark.parametrize("field", list(NAME_FIELDS))
def test_a_path_like_manifest_value_that_is_no_plain_file_name_is_refused_in_one_line(tmp_path, field, value):
    source, path = NAME_FIELDS[field]
    run = Path(shutil.copytree(RUNS / source, tmp_path / "raw" / "20261126T000000Z"))
    data = json.loads((run / "manifest.json").read_text())
    if field == "rate-client-file":
        two_rate_clients(data)
    set_in(data, path, value)
    (run / "manifest.json").write_text(manifest_text(data))
    result, status, texts = build(run, tmp_path / "out")
    assert status in (0, 1, 2)
    assert len(stderr_lines(result)) <= 2, result.stderr
    assert "Traceback" not in texts
    refused = [c for c in checks_of(tmp_path / "out") if "not a plain file name" in c["message"]]
    assert len(refused) == 1, [c["message"] for c in checks_of(tmp_path / "out")]
    assert path[0] + f"[{path[1]}]" in refused[0]["message"] and "20261126T000000Z" in refused[0]["message"]
    assert "\n" not in refused[0]["message"] and "\x00" not in refused[0]["message"]
    assert refused[0]["status"] == ("warn" if field in AUXILIARY_FIELDS else "fail")


def test_a_refused_entry_leaves_the_rest_of_the_run_built(tmp_path):
    run = Path(shutil.copytree(RUNS / "variant-nokeep", tmp_path / "raw" / "r"))
    edit_json(run / "manifest.json", lambda d: set_in(d, ("fixed_rate_measurements", 0, "file"), "a\x00b"))
    loaded = load_run(run)
    assert [m.usable for m in loaded.rates].count(False) == 1 and not loaded.rates[0].usable  # the refused one, kept as unusable
    assert len(loaded.rates) == len(json.loads((RUNS / "variant-nokeep" / "manifest.json").read_text())["fixed_rate_measurements"])
    assert [c.name for c in loaded.problems if c.status == "fail"] == ["file-name"]
    assert not loaded.measurements.empty


@pytest.mark.parametrize("name", ["a\nb.wrk.txt", "\x1b[31m.wrk.txt", os.fsdecode(b"\xff\xfe.wrk.txt"), "tab\there.headers.txt"])
def test_a_listed_file_whose_name_is_no_plain_file_name_is_refused_unread(run, tmp_path, name):
    (run / name).write_bytes((run / WRK).read_bytes())
    result, status, texts = build(run, tmp_path / "out")
    assert status in (0, 1, 2)
    assert len(stderr_lines(result)) <= 2, result.stderr
    refused = [c for c in checks_of(tmp_path / "out") if "not a plain file name" in c["message"]]
    assert len(refused) == 1 and refused[0]["file"] is None
    assert refused[0]["status"] == ("fail" if name.endswith(".wrk.txt") else "warn")
    assert repr(name) in refused[0]["message"]


@pytest.mark.parametrize(
    "value, reason",
    [
        ("go-http.gomaxprocs-1.run-1.wrk.txt", None),
        ("é.wrk.txt", None),
        ("x" * 255, None),
        ("x" * 256, "256 bytes long"),
        ("é" * 128, "256 bytes long"),
        ("a\x00", "NUL"),
        ("a\x85", "control character"),
        ("\udc80", "not UTF-8"),
        ("/x", "absolute path"),
        ("a/../b", "parent directory"),
        ("a/b", "into a directory"),
        ("", "empty"),
        ("..", "a directory"),
        (None, "expected a file name"),
        (7, "expected a file name"),
    ],
)
def test_name_problem_says_why_a_value_is_no_plain_file_name(value, reason):
    from wrkreport.parsers.rawfile import name_problem

    found = name_problem(value)
    assert (found is None) if reason is None else (reason in found)


def test_doctests():
    import doctest

    from wrkreport.parsers import rawfile, schema

    for module in (schema, rawfile):
        failures, tried = doctest.testmod(module)
        assert failures == 0 and tried > 0, module.__name__


def test_a_manifest_cannot_mark_its_own_fixed_rate_entry_refused(tmp_path):
    run = Path(shutil.copytree(RUNS / "variant-nokeep", tmp_path / "raw" / "r"))
    edit_json(run / "manifest.json", lambda d: d["fixed_rate_measurements"][0].update(refused="\x1b[31mforged"))
    loaded = load_run(run)
    assert all(m.usable for m in loaded.rates) and not any("forged" in c.message for c in loaded.problems)
