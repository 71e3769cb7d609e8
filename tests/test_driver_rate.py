"""End-to-end test of the fixed-rate phase (issue 21) and the capacity search (issue 31): ./run_bench.sh --rates with real nginx, wrk, vegeta and the Go server, then `wrkreport build`.

One quick run offers go-http and nginx-http 2,000, 5,000 and 200,000 req/s open loop:
the first two are held on any machine the suite runs on, the last on none (vegeta is
capped at the run's connection level, so it falls behind). Then the default objective's
search (p99 within 10 ms) finds each setup's capacity above the highest of the first two that
met it (5,000 req/s but for a stall) and below 200,000 req/s. The report must carry every
cell in results.json `fixed_rate`, say on the page that 200,000 req/s was not held and
leave it out of the figures, and every kept .vegeta.csv.gz must give again the
percentiles the report shows.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import crossing_between, free_ports, latest_run, port_args, run_script, slow
from rate_servers import vegeta_or_skip
from wrkreport.bench.commands import rate_phase
from wrkreport.parsers.vegeta import read_vegeta_file

pytestmark = [*slow, pytest.mark.alone]  # which rates are held depends on the machine being the run's

HELD = (2000, 5000)
NOT_HELD = 200_000
SETUPS = ("go-http", "nginx-http")
REQUIRED = ("setup", "gomaxprocs", "offered_rps", "achieved_rps", "p50_ms", "p99_ms", "p999_ms")
ADDED = ("added_p50_ms", "added_p50_ci_low", "added_p50_ci_high", "added_p99_ms", "added_p99_ci_low", "added_p99_ci_high")


@pytest.fixture(scope="module")
def rate_run():
    """Yield (run dir, manifest, report dir, build's stdout) of one quick run at three fixed rates."""
    vegeta_or_skip()  # built once into the cache, as preflight would
    top = Path(tempfile.mkdtemp(prefix="rbr", dir="/tmp"))  # short, and traversable by nginx's workers (as test_driver's workdirs)
    top.chmod(0o711)
    out, tmp, report = top / "out", top / "tmp", top / "report"
    tmp.mkdir()
    args = [
        "--quick",
        "--setups",
        ",".join(SETUPS),
        "--rates",
        f"{HELD[0]},{HELD[1]},{NOT_HELD}",
        "--slo",
        "p99=10ms",
        "--warmup",  # the quick profile's, as the rates' figures were judged with (script_env's runs have none)
        "1",
        "--out",
        str(out),
        *port_args(free_ports()),
    ]
    done = run_script(args, tmp, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    run, manifest = latest_run(out)
    built = subprocess.run(
        [sys.executable, "-m", "wrkreport", "build", str(run), "--out", str(report)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert "Traceback" not in built.stderr
    yield run, manifest, report, built, done
    shutil.rmtree(top, ignore_errors=True)


def test_build_exits_zero_and_every_cell_is_in_results_json(rate_run):
    _, manifest, report, built, _ = rate_run
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    records = json.loads((report / "results.json").read_text())["fixed_rate"]
    gomaxprocs = manifest["parameters"]["gomaxprocs"]
    planned = [r for r in records if r["planned"]]
    assert {(r["setup"], r["gomaxprocs"], r["offered_rps"]) for r in planned} == {
        (s, n, r) for s in SETUPS for n in gomaxprocs for r in (*HELD, NOT_HELD)
    }
    searched = {(r["setup"], r["gomaxprocs"]) for r in records if not r["planned"]}  # the capacity search's steps: points of the curve
    assert searched == {(s, n) for s in SETUPS for n in gomaxprocs}
    for record in records:
        assert set(REQUIRED) <= set(record), record
        if record["setup"] != "go-http":
            assert set(ADDED) <= set(record), record


def test_the_search_finds_each_setups_capacity_between_the_held_and_the_unheld_rate(rate_run):
    run, manifest, report, _, _ = rate_run
    assert manifest["parameters"]["slo"] == {"percentile": 99, "ms": 10.0}
    capacity = json.loads((report / "results.json").read_text())["capacity"]
    gomaxprocs = manifest["parameters"]["gomaxprocs"]
    assert [(c["setup"], c["gomaxprocs"]) for c in capacity] == [(s, n) for n in gomaxprocs for s in SETUPS]
    rate_phase.STEPS.clear()
    for record in capacity:
        steps = [e for e in manifest["fixed_rate_measurements"] if (e["setup"], e["gomaxprocs"]) == (record["setup"], record["gomaxprocs"])]
        searched = [e for e in steps if "search_high" in e]
        # the search starts above the highest planned rate that met the objective: 5,000 req/s nearly always, but one stall in its
        # second can put its p99 past 10 ms (CI once: nginx-http at GOMAXPROCS=2), and then the search goes on from 2,000
        verdicts = {e["rate"]: rate_phase.measured_step(run, e, manifest).verdict for e in steps if e["rate"] in HELD}
        floor = max((rate for rate, verdict in verdicts.items() if verdict == "pass"), default=HELD[0])
        assert 1 <= len(searched) <= 6 and all(floor < e["rate"] < min(NOT_HELD, e["search_high"]) for e in searched), (verdicts, steps)
        assert record["slo"] == {"percentile": 99, "ms": 10.0} and record["blocks"] == 1 and record["ci_low"] is None  # one block
        if record["bound"] is None:  # where the p99 crosses 10 ms between the bracket's ends, read from their files
            low, high = record["block_capacities"][0]["bracket"]
            p99 = {e["rate"]: read_vegeta_file(run / e["file"], e["rate"]).percentile_ms(99) if e.get("file") else None for e in steps}
            assert floor <= low < record["capacity_rps"] < high
            assert record["capacity_rps"] == round(crossing_between(low, high, p99[low], p99[high], 10.0))
        print(
            f"capacity {record['setup']} GOMAXPROCS={record['gomaxprocs']}: {record['capacity_rps']:,} req/s ({record['bound']}), "
            f"{len(searched)} steps"
        )
    nginx = [c for c in capacity if c["setup"] == "nginx-http"]
    assert all(c["baseline"] == "go-http" and (c["ratio"] is None or c["ratio"] > 0) for c in nginx)


def test_low_rates_held_with_figures_and_the_high_rate_left_out(rate_run):
    _, _, report, _, _ = rate_run
    records = [r for r in json.loads((report / "results.json").read_text())["fixed_rate"] if r["planned"]]
    for record in records:
        if record["offered_rps"] in HELD:
            assert record["held"], record
            assert record["achieved_rps"] == pytest.approx(record["offered_rps"], rel=0.01)
            assert 0 < record["p50_ms"] <= record["p99_ms"] <= record["p999_ms"]
            if record["setup"] == "nginx-http":
                assert isinstance(record["added_p50_ms"], float) and isinstance(record["added_p99_ms"], float)
                for name in ("added_p50", "added_p99"):
                    low, high = record[f"{name}_ci_low"], record[f"{name}_ci_high"]
                    assert (low is None) == (high is None)  # one block: no interval
                    assert low is None or low <= record[f"{name}_ms"] <= high
        else:
            assert not record["held"] and record["held_in"] < record["measurements"], record
            assert (record["p50_ms"] is None) == (record["held_in"] == 0), record  # held in some blocks: those blocks' latencies
            assert record.get("added_p50_ms") is None and record.get("added_p99_ms") is None


def test_page_has_the_section_and_says_the_high_rate_was_not_held(rate_run):
    _, _, report, _, _ = rate_run
    html = (report / "index.html").read_text()
    assert "Latency at a fixed load" in html
    assert f"At {NOT_HELD:,} req/s" in html and re.search(r"held it in (none of its|[0-9]+ of) [0-9]+ blocks", html)
    # what nginx-http does to go-http's latency at the held rate: "nginx-http adds ... at p50 ... and ... at p99", or, where one
    # percentile is not added (on a noisy host go-http's own p99 can be the higher), "nginx-http: adds ...; takes ... off at
    # p99" (rate_summary.added_words): CI once met the second form
    assert re.search(rf"At {HELD[0]:,} req/s(?:(?!At )[^<])*?\bnginx-http:? (adds|takes) ", html), re.findall(
        r"At [0-9,]+ req/s[^<]*", html
    )


def test_every_kept_results_file_rereads_to_the_reported_percentiles(rate_run):
    run, manifest, report, _, _ = rate_run
    records = {(r["setup"], r["gomaxprocs"], r["offered_rps"]): r for r in json.loads((report / "results.json").read_text())["fixed_rate"]}
    entries = manifest["fixed_rate_measurements"]
    kept = [e for e in entries if e.get("file")]
    assert len(kept) == len(list(run.glob("*.vegeta.csv.gz"))) > 0
    cells: dict[tuple, list] = {}
    for entry in kept:
        result = read_vegeta_file(run / entry["file"], entry["rate"])
        cells.setdefault((entry["setup"], entry["gomaxprocs"], entry["rate"]), []).append(result)
    for key, results in cells.items():
        record = records[key]
        if not record["held"]:
            continue
        for name, p in (("p50_ms", 50), ("p99_ms", 99), ("p999_ms", 99.9)):
            assert record[name] == pytest.approx(statistics.median(r.percentile_ms(p) for r in results)), (key, name)


def unwrapped(text: str) -> list[str]:
    """Return text's lines with the continuation lines (indented two spaces) joined to the line they continue."""
    lines: list[str] = []
    for line in text.splitlines():
        line = line.removeprefix("[run_bench] ")  # the driver's log lines
        if line.startswith("  ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def test_summaries_name_the_load_and_the_capacity(rate_run):
    _, manifest, _, built, done = rate_run
    # wrkreport build: the answer's table, each group's heading naming the light load and the objective its figures are at
    headings = [x for x in built.stdout.splitlines() if x.startswith("GOMAXPROCS=")]
    assert len(headings) == len(manifest["parameters"]["gomaxprocs"]), built.stdout[-2000:]
    assert all(
        re.fullmatch(rf"GOMAXPROCS=[0-9]+: fixed load {HELD[0]:,} req/s, [0-9]+ starts?; objective p99 within 10 ms", x) for x in headings
    ), headings
    assert next(x for x in built.stdout.splitlines() if x.startswith("setup ")).split()[3:7] == ["+p50", "ms", "+p99", "ms"]
    # the answer names the light load only: 5,000 req/s may be a capacity's bound (quick's 2 search steps), never a fixed load
    assert f"{NOT_HELD:,} req/s" not in built.stdout and f"fixed load {HELD[1]:,} req/s" not in built.stdout, built.stdout
    for text in (done.stderr,):  # the driver logs on stderr: a line per planned rate, one capacity line per GOMAXPROCS
        lines = unwrapped(text)
        line = next((x for x in lines if f"at {HELD[0]:,} req/s offered, open loop" in x), None)
        assert line is not None, text[-2000:]
        assert re.search(r"nginx-http(:| adds [0-9.]+ ms at p50)", line) and " at p99 " in line
        assert any(
            f"at {NOT_HELD:,} req/s offered, open loop" in x and re.search(r"held it in (none of its|[0-9]+ of) [0-9]+ blocks", x)
            for x in lines
        )
        assert not any(
            "req/s offered, open loop" in x and not re.search(rf"at ({HELD[0]:,}|{HELD[1]:,}|{NOT_HELD:,}) req/s", x) for x in lines
        ), "the search's steps are no light-load lines"
        assert sum(bool(re.search(r"with p99 within 10 ms: .* carries [0-9,]+ req/s", x)) for x in lines) == len(
            manifest["parameters"]["gomaxprocs"]
        ), text[-2000:]
