"""Tests of wrkreport.runs.rate_measurements: a run directory's fixed-rate measurements read as untrusted input (real vegeta files from tests/fixtures/vegeta), and what a measurement not held does to the figures."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from helpers import (
    FIXTURES,
    VEGETA_BEHIND,
    VEGETA_HELD,
    make_rate_run,
    problem_messages,
    rate_entry,
    rate_file_name,
    read_rate_run,
    run_wrkreport,
    shifted_vegeta,
)
from wrkreport.analysis.rate_latency import rate_cells
from wrkreport.core.units import fmt_ms
from wrkreport.report import ratepage
from wrkreport.report.rate_summary import rate_summary_lines
from wrkreport.runs.record import Parameters


def test_a_clean_run_reads_every_measurement_usable(tmp_path):
    entries = [rate_entry(s, b) for s in ("go-http", "nginx-http") for b in (1, 2)]
    run = make_rate_run(tmp_path / "run", entries, {e["file"]: VEGETA_HELD for e in entries})
    found, problems = read_rate_run(run)
    assert problems == [] and len(found) == 4 and all(m.usable and m.held for m in found)


def test_a_file_outside_the_run_directory_is_a_one_line_problem(tmp_path):
    outside = tmp_path / "elsewhere.rate-500.vegeta.csv.gz"
    shutil.copy(VEGETA_HELD, outside)
    run = make_rate_run(
        tmp_path / "run", [rate_entry("go-http", 1, file="../elsewhere.rate-500.vegeta.csv.gz"), rate_entry("nginx-http", 1)], {}
    )
    (run / rate_file_name("nginx-http", 1)).symlink_to(outside)  # named as the entry says, but a link out of the run
    found, problems = read_rate_run(run)
    assert [m.usable for m in found] == [False, False]
    said = problem_messages(problems)
    assert any("fixed_rate_measurements[0].file: '../elsewhere" in m and "not a plain file name" in m for m in said), said
    assert any(m.startswith(rate_file_name("nginx-http", 1) + ":") for m in said), said  # refused by rawfile
    assert all("\n" not in m and "Traceback" not in m for m in said)


@pytest.mark.parametrize("rate", [0, -500, "500", 2.5, True, 10**10, None])
def test_a_bad_rate_is_a_problem_not_a_measurement(tmp_path, rate):
    bad = rate_entry("go-http", 1) | {"rate": rate}
    run = make_rate_run(
        tmp_path / "run",
        [bad, rate_entry("go-http", 2)],
        {rate_file_name("go-http", 1): VEGETA_HELD, rate_file_name("go-http", 2): VEGETA_HELD},
    )
    found, problems = read_rate_run(run)
    assert [(m.block, m.usable) for m in found] == [(2, True)]
    assert problems and all("\n" not in m for m in problem_messages(problems))
    assert any("fixed_rate_measurements" in m for m in problem_messages(problems)), problem_messages(problems)


@pytest.mark.parametrize("cut", [0.5, 0.1, 0.99])
def test_a_truncated_results_file_fails_its_measurement_in_one_line(tmp_path, cut):
    data = VEGETA_HELD.read_bytes()
    run = make_rate_run(tmp_path / "run", [rate_entry("go-http", 1)], {rate_file_name("go-http", 1): data[: int(len(data) * cut)]})
    found, problems = read_rate_run(run)
    assert len(found) == 1 and found[0].result is None and not found[0].usable
    (failed,) = found[0].failed
    assert failed.name == "parse" and rate_file_name("go-http", 1) in failed.message and "\n" not in failed.message


@pytest.mark.parametrize(
    "wrong",
    [
        "not a list",
        ["not a dict"],
        [{"setup": "go-http"}],
        [{"setup": 7, "gomaxprocs": 1, "block": 1, "rate": 500}],
        [{"setup": "go-http", "gomaxprocs": "1", "block": 1, "rate": 500, "file": rate_file_name("go-http", 1)}],
        [{"setup": "go-http", "gomaxprocs": 1, "block": 1, "rate": 500, "file": ["a", "list"]}],
        [{"setup": "../../etc", "gomaxprocs": 1, "block": 1, "rate": 500}],
    ],
)
def test_wrong_types_are_one_line_problems(tmp_path, wrong):
    run = make_rate_run(tmp_path / "run", [], {rate_file_name("go-http", 1): VEGETA_HELD})
    manifest = json.loads((run / "manifest.json").read_text()) | {"fixed_rate_measurements": wrong}
    (run / "manifest.json").write_text(json.dumps(manifest))
    found, problems = read_rate_run(run)
    assert not any(m.usable for m in found)
    assert problems and all("\n" not in m for m in problem_messages(problems)), problem_messages(problems)


def test_a_cpu_file_outside_the_run_or_of_the_wrong_shape_is_left_out(tmp_path):
    (tmp_path / "secret.cpu.json").write_text('{"user_s": 1}')
    entries = [rate_entry("go-http", 1, cpu_file="../secret.cpu.json"), rate_entry("go-http", 2, cpu_file="go-http.2.cpu.json")]
    run = make_rate_run(
        tmp_path / "run",
        entries,
        {rate_file_name("go-http", 1): VEGETA_HELD, rate_file_name("go-http", 2): VEGETA_HELD, "go-http.2.cpu.json": b"[1, 2"},
    )
    found, problems = read_rate_run(run)
    assert [m.usable for m in found] == [True, True]  # the latencies stand; the CPU record is what is left out
    assert all("\n" not in m for m in problem_messages(problems))


def test_a_cell_held_in_some_blocks_says_so_with_what_was_measured_and_adds_nothing(tmp_path):
    entries = [rate_entry(s, b) for s in ("go-http", "nginx-http") for b in (1, 2)]
    files = {e["file"]: VEGETA_HELD for e in entries}
    held = rate_cells(read_rate_run(make_rate_run(tmp_path / "held", entries, files))[0])
    nginx = next(c for c in held if c.setup == "nginx-http")
    assert nginx.held and nginx.added_p50 is not None and nginx.added_p50.estimate == pytest.approx(0.0)  # the same file: nothing added

    files[rate_file_name("nginx-http", 2)] = VEGETA_BEHIND  # in block 2 nginx-http fell behind the 500 req/s offered
    cells = rate_cells(read_rate_run(make_rate_run(tmp_path / "behind", entries, files))[0])
    nginx = next(c for c in cells if c.setup == "nginx-http")
    assert not nginx.held and nginx.not_held == 1 and nginx.held_in == 1 and nginx.held_in_some
    held_one = next(c for c in held if c.setup == "nginx-http")
    assert nginx.p50_ms == held_one.p50_ms and nginx.p99_ms == held_one.p99_ms  # the held block's latencies, not dropped
    assert nginx.added_p50 is None and nginx.added_p99 is None
    assert nginx.record()["added_p50_ms"] is None and nginx.record()["added_p99_ci_low"] is None
    assert nginx.record()["held_in"] == 1 and nginx.record()["p99_ms"] == held_one.p99_ms
    assert any("rate not held" in r for r in nginx.reasons)
    (line,) = rate_summary_lines(cells)
    line = " ".join(line.split())  # wrapped at 80 columns
    assert line.startswith("GOMAXPROCS=1 at 500 req/s offered, open loop") and "nginx-http held it in 1 of 2 blocks (p50 " in line
    assert f"p99 {fmt_ms(held_one.p99_ms)} ms there; nothing added)" in line
    assert "adds" not in line

    files[rate_file_name("nginx-http", 2)], files[rate_file_name("go-http", 2)] = (
        VEGETA_HELD,
        VEGETA_BEHIND,
    )  # now go-http fell behind: nginx-http held, with nothing to add over
    cells = rate_cells(read_rate_run(make_rate_run(tmp_path / "base-behind", entries, files))[0])
    rows = {row[1]: row for row in ratepage.rate_section(cells, Parameters.of({}), SimpleNamespace(cells=())).rows}
    assert rows["nginx-http"][-2:] == ("- (go-http did not hold the rate)",) * 2 and rows["nginx-http"][4] != "-"
    assert rows["go-http (held in 1 of 2)"][-1] == "baseline"


def test_the_summary_line_says_the_load_and_the_interval(tmp_path):
    entries = [rate_entry(s, b) for s in ("go-http", "nginx-http") for b in (1, 2, 3)]
    (line,) = rate_summary_lines(
        rate_cells(read_rate_run(make_rate_run(tmp_path / "run", entries, {e["file"]: VEGETA_HELD for e in entries}))[0])
    )
    assert " ".join(line.split()) == (
        "GOMAXPROCS=1 at 500 req/s offered, open loop, latency added over go-http: "
        "nginx-http: no measurable difference at p50 (0 to 0 ms); no measurable difference at p99 (0 to 0 ms)"
    )


def test_nginx_tls_setups_add_over_go_https_and_say_so(tmp_path):
    # As their ratios (issue 22): TLS at nginx against TLS in Go; go-https itself over go-http.
    setups, shift_us = ("go-http", "go-https", "nginx-https"), {"go-http": 0, "go-https": 100, "nginx-https": 150}
    entries = [rate_entry(s, b) for s in setups for b in (1, 2)]
    cells = rate_cells(
        read_rate_run(make_rate_run(tmp_path / "run", entries, {e["file"]: shifted_vegeta(shift_us[e["setup"]]) for e in entries}))[0]
    )
    by = {c.setup: c for c in cells}
    assert by["nginx-https"].added_p50.estimate == pytest.approx(0.05, abs=1e-6) and by["go-https"].added_p50.estimate == pytest.approx(
        0.1, abs=1e-6
    )
    assert (by["nginx-https"].record()["baseline"], by["go-https"].record()["baseline"]) == ("go-https", "go-http")
    assert "baseline" not in by["go-http"].record()
    (line,) = rate_summary_lines(cells)
    line = " ".join(line.split())
    assert (
        "latency added over each setup's baseline: go-https adds 0.100 ms at p50 (0.100 to 0.100) and 0.100 ms at p99 (0.100 to 0.100) "
        "over go-http; nginx-https adds 0.0500 ms at p50"
    ) in line
    assert line.endswith("over go-https")
    (sentence,) = ratepage.sentences(cells, False)
    assert sentence.startswith(
        "At 500 req/s, open loop, over each setup's baseline: go-https adds 0.100 ms at p50 (0.100 to 0.100)"
    ) and sentence.endswith("over go-https.")
    section = ratepage.rate_section(cells, Parameters.of({}), SimpleNamespace(cells=()))
    assert section.added_over == "each setup's baseline"
    assert {row[1]: row[-1] for row in section.rows}["nginx-https"].endswith(" over go-https")


def test_build_of_a_hostile_rate_run_exits_without_a_traceback(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "runs" / "default-run-1", run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["fixed_rate_measurements"] = [
        rate_entry("go-http", 1),
        rate_entry("nginx-http", 1, file="../../etc/passwd"),
        {"rate": "x"},
        rate_entry("nginx-http", 2, rate=True),
    ]
    (run / "manifest.json").write_text(json.dumps(manifest))
    data = VEGETA_HELD.read_bytes()
    (run / rate_file_name("go-http", 1)).write_bytes(data[: len(data) // 3])
    done = run_wrkreport("build", str(run), "--out", str(tmp_path / "rep"))
    assert "Traceback" not in done.stderr + done.stdout
    assert done.returncode in (0, 1), done.stderr
    assert json.loads((tmp_path / "rep" / "results.json").read_text())["fixed_rate"] is not None


def test_build_prints_one_line_per_rate_saying_the_load(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "runs" / "default-run-1", run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["fixed_rate_measurements"] = [rate_entry(s, b) for s in ("go-http", "nginx-http") for b in (1, 2)]
    (run / "manifest.json").write_text(json.dumps(manifest))
    for e in manifest["fixed_rate_measurements"]:
        shutil.copy(VEGETA_HELD, run / e["file"])
    done = run_wrkreport("build", str(run), "--out", str(tmp_path / "rep"))
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("GOMAXPROCS=1")))
    assert lines[head].startswith("GOMAXPROCS=1: fixed load 500 req/s"), done.stdout  # the group's heading names the load
    row = lines.index(next(line for line in lines[head:] if line.startswith("nginx-http ")))
    # the same file at both setups: no measurable difference added at p50 or p99, the interval below (0 to 0 ms)
    assert lines[row].split()[-3:-1] == ["none", "none"] and lines[row + 1].split()[1:3] == ["0-0", "0-0"], done.stdout
