"""Tests of src/wrkreport/bench/histogram.lua with the real wrk against the real Go server: the FFI path and wrk's latency(i)
path both write a histogram whose percentiles are wrk's own; two wrk clients at once merge
exactly; without WRKREPORT_HIST_FILE nothing is written and wrk's text is unchanged."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from helpers import free_port_block, missing_tools
from wrkreport.core.latency_histogram import merge, rank_of
from wrkreport.parsers import parse_file
from wrkreport.parsers.histogram import parse_histogram

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "src" / "wrkreport" / "bench" / "histogram.lua"
NO_FFI = """package.loaded.ffi = nil
package.preload.ffi = function() error("ffi disabled for this test") end
dofile(os.getenv("WRKREPORT_HIST_SCRIPT"))
"""

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(missing_tools("wrk", "go")), reason="needs wrk and go")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Return the URL of a real gohello on 127.0.0.1 (built here), stopped after the module."""
    tmp = tmp_path_factory.mktemp("gohello")
    binary = tmp / "gohello"
    subprocess.run(
        ["go", "build", "-buildvcs=false", "-o", str(binary), "."], cwd=ROOT / "src" / "gohello", check=True, capture_output=True
    )
    ports = free_port_block(("http", "fcgi"), 28000, 32000)
    proc = subprocess.Popen(
        [str(binary), "-http-port", str(ports["http"]), "-fcgi-port", str(ports["fcgi"])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{ports['http']}/"]).returncode != 0:
            assert time.monotonic() < deadline and proc.poll() is None, "gohello did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{ports['http']}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def start_wrk(url: str, script: Path, out: Path, hist: Path | None, connections: int = 20) -> subprocess.Popen:
    """Start wrk --latency -s script against url, its text into out and its histogram into hist."""
    env = {k: v for k, v in os.environ.items() if k != "WRKREPORT_HIST_FILE"}
    if hist is not None:
        env["WRKREPORT_HIST_FILE"] = str(hist)
    env["WRKREPORT_HIST_SCRIPT"] = str(SCRIPT)
    with open(out, "wb") as f:
        return subprocess.Popen(
            ["wrk", "--latency", "-s", str(script), "-t1", f"-c{connections}", "-d1s", "--timeout", "2s", url],
            stdout=f,
            stderr=subprocess.STDOUT,
            env=env,
        )


def check_against_wrk(hist: Path, text: Path):
    """Return the histogram, asserting it has wrk's own percentiles and the text's request count."""
    histogram = parse_histogram(hist, hist.read_bytes())
    assert histogram.requests == parse_file(text).requests > 0
    assert histogram.wrk_percentiles_us and all(histogram.percentile_us(p) == v for p, v in histogram.wrk_percentiles_us.items())
    return histogram


@pytest.mark.parametrize("path", ["ffi", "latency(i)"])
def test_both_ways_of_reading_wrk_give_its_own_percentiles(server, tmp_path, path):
    script = SCRIPT
    if path == "latency(i)":
        script = tmp_path / "no-ffi.lua"
        script.write_text(NO_FFI)
    proc = start_wrk(server, script, tmp_path / "out.wrk.txt", tmp_path / "out.hist.json")
    assert proc.wait(timeout=30) == 0
    check_against_wrk(tmp_path / "out.hist.json", tmp_path / "out.wrk.txt")
    assert f'"read_by":"{path}"' in (tmp_path / "out.hist.json").read_text()


def test_two_clients_at_once_merge_exactly(server, tmp_path):
    procs = [start_wrk(server, SCRIPT, tmp_path / f"c{i}.wrk.txt", tmp_path / f"c{i}.hist.json") for i in (1, 2)]
    assert [p.wait(timeout=30) for p in procs] == [0, 0]
    one, two = (check_against_wrk(tmp_path / f"c{i}.hist.json", tmp_path / f"c{i}.wrk.txt") for i in (1, 2))
    merged = merge([one, two])
    assert merged.requests == one.requests + two.requests and merged.count == one.count + two.count
    values = sorted([v for v, c in one.pairs for _ in range(c)] + [v for v, c in two.pairs for _ in range(c)])
    for p in (50, 99):
        assert min(one.percentile_us(p), two.percentile_us(p)) <= merged.percentile_us(p) <= max(one.percentile_us(p), two.percentile_us(p))
        assert merged.percentile_us(p) == values[rank_of(p, len(values)) - 1]


def test_without_the_variable_nothing_is_written_and_the_text_still_parses(server, tmp_path):
    proc = start_wrk(server, SCRIPT, tmp_path / "out.wrk.txt", None)
    assert proc.wait(timeout=30) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.wrk.txt"]
    assert parse_file(tmp_path / "out.wrk.txt").latency_p99_ms is not None


def test_a_histogram_that_cannot_be_written_costs_only_the_histogram(server, tmp_path):
    out, err = tmp_path / "out.wrk.txt", tmp_path / "stderr.txt"
    env = {**os.environ, "WRKREPORT_HIST_FILE": str(tmp_path / "missing-dir" / "out.hist.json")}
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        code = subprocess.run(
            ["wrk", "--latency", "-s", str(SCRIPT), "-t1", "-c10", "-d1s", server], stdout=stdout, stderr=stderr, env=env, timeout=30
        ).returncode
    assert code == 0
    message = err.read_text()
    assert message.startswith("histogram.lua: no latency histogram: cannot write ") and "No such file or directory" in message
    with open(out, "ab") as f:  # what the driver's measure does: stdout, then stderr
        f.write(err.read_bytes())
    assert parse_file(out).requests > 0
