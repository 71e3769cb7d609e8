"""Tests of wrkreport.report on a run with --variant (issue 20; analysis.variant_ratio, compare.variants, report.variantpage): twin ids read everywhere, the A/B figure worked from the raw files, results.json, the page, the summary, one-run compare, hostile variants."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from helpers import RUNS
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.analysis.variant_ratio import Variant, variant_of
from wrkreport.cli import cli
from wrkreport.core import stats
from wrkreport.core.errors import NothingToCompare
from wrkreport.core.records import Ratio
from wrkreport.core.setups import baseline_of, setup_order, split_twin
from wrkreport.parsers.schema import SETUP_NAME
from wrkreport.report import build, build_compare
from wrkreport.report.variantpage import answer_words, sentence
from wrkreport.runs.record import record_of
from wrkreport.runs.sidecars import HEADERS_FILE, WRK_FILE

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds the --variant fixture runs

SOURCE = RUNS / "default-2cores"  # real wrk outputs: 4 setups x GOMAXPROCS 1, 2 x 5 repeats
BLOCK_OF_ROUND = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2}
# The twin's files are nginx-fcgi-tcp's: real outputs measured in the same rounds as nginx-http's.
SOURCE_OF = {"go-http": "go-http", "nginx-http": "nginx-http", "nginx-http~nokeep": "nginx-fcgi-tcp"}
WHEN = datetime(2026, 11, 26, 12, tzinfo=timezone.utc)
VARIANT = {
    "name": "nokeep",
    "options": ["no-upstream-keepalive"],
    "nginx": "/usr/sbin/nginx",
    "nginx_version": "1.22.1",
    "upstream_keepalive": False,
    "pin_server": None,
    "port_offset": 100,
    "setups": {"nginx-http": "nginx-http~nokeep"},
}


def variant_files() -> dict:
    files = {}
    for gomaxprocs in (1, 2):
        for setup, source in SOURCE_OF.items():
            files[f"{setup}.gomaxprocs-{gomaxprocs}.headers.txt"] = SOURCE / f"{source}.gomaxprocs-{gomaxprocs}.headers.txt"
            for k, b in BLOCK_OF_ROUND.items():
                files[f"{setup}.gomaxprocs-{gomaxprocs}.block-{b}.run-{k}.wrk.txt"] = (
                    SOURCE / f"{source}.gomaxprocs-{gomaxprocs}.run-{k}.wrk.txt"
                )
    return files


def variant_manifest(**variant) -> dict:
    manifest = json.loads((SOURCE / "manifest.json").read_text())
    manifest["parameters"]["setups"] = list(SOURCE_OF)
    manifest.update(variant=VARIANT | variant, measurements=[], passes=[])
    return manifest


@pytest.fixture
def variant_run(make_run):
    return make_run(variant_files(), variant_manifest())


def req_per_sec(setup: str, gomaxprocs: int, k: int) -> float:
    """Return the req/s line of one source file, read by hand."""
    text = (SOURCE / f"{SOURCE_OF[setup]}.gomaxprocs-{gomaxprocs}.run-{k}.wrk.txt").read_text()
    return float(next(x for x in text.splitlines() if x.startswith("Requests/sec:")).split()[1])


def expected_ab(gomaxprocs: int) -> tuple[float, float, float]:
    """Return twin / original worked from the raw files: per block the Huber estimate of the round-paired log ratios, t over 2 blocks."""
    blocks = [
        [
            math.log(req_per_sec("nginx-http~nokeep", gomaxprocs, k) / req_per_sec("nginx-http", gomaxprocs, k))
            for k, kb in BLOCK_OF_ROUND.items()
            if kb == b
        ]
        for b in (1, 2)
    ]
    summaries = stats.block_summaries(blocks)
    centre = sum(summaries) / 2
    half = 12.706 * math.sqrt(sum((s - centre) ** 2 for s in summaries)) / math.sqrt(2)  # t(0.975, 1)
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


def test_twin_ids_are_read_by_every_reader_and_nothing_hostile_is():
    assert WRK_FILE.fullmatch("nginx-http~nokeep.gomaxprocs-2.block-1.run-3.wrk.txt")["setup"] == "nginx-http~nokeep"
    assert HEADERS_FILE.fullmatch("nginx-http~nokeep.gomaxprocs-2.headers.txt")["setup"] == "nginx-http~nokeep"
    assert SETUP_NAME.fullmatch("nginx-http~nokeep")
    for hostile in (
        "nginx-http~../x",
        "nginx-http~",
        "~x",
        "nginx-http~A",
        "nginx-http~a~b",
        "nginx-http~a/b",
        "nginx-http~<b>",
        "nginx-http~abcdefghijklmnopq",
    ):
        assert not SETUP_NAME.fullmatch(hostile), hostile
        assert not WRK_FILE.fullmatch(f"{hostile}.gomaxprocs-1.run-1.wrk.txt"), hostile
    assert split_twin("nginx-https~v2") == ("nginx-https", "v2") and baseline_of("nginx-https~v2") == "go-https"
    assert setup_order("nginx-http") < setup_order("nginx-http~v") < setup_order("nginx-fcgi-tcp")


def test_the_ab_figure_is_twin_over_original_paired_per_block(variant_run):
    analysis = analyze.load_analysis(variant_run).analysis
    assert [(r.gomaxprocs, r.setup, r.baseline) for r in analysis.variant_ratios] == [
        (1, "nginx-http~nokeep", "nginx-http"),
        (2, "nginx-http~nokeep", "nginx-http"),
    ]
    for found in analysis.variant_ratios:
        assert (found.ratio, found.ci_low, found.ci_high) == pytest.approx(expected_ab(found.gomaxprocs))
        assert (found.unit, found.blocks, found.n) == ("block", 2, 5)
    twin = analysis.ratio(1, 100, "nginx-http~nokeep")  # and its own ratio over go-http, like any setup
    assert twin.baseline == "go-http" and twin.ratio == pytest.approx(req_ratio_over_go(1), rel=0.2)


def req_ratio_over_go(gomaxprocs: int) -> float:
    return math.exp(
        stats.mean(
            [math.log(req_per_sec("nginx-http~nokeep", gomaxprocs, k) / req_per_sec("go-http", gomaxprocs, k)) for k in BLOCK_OF_ROUND]
        )
    )


def test_build_writes_the_ab_figure_to_results_json_the_page_and_the_summary(variant_run, tmp_path):
    built = build(variant_run, tmp_path / "out", WHEN)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["variant"]["name"] == "nokeep" and data["variant"]["options"] == ["no-upstream-keepalive"]
    records = data["variant_ratios"]
    assert [(r["setup"], r["variant"], r["gomaxprocs"], r["blocks"]) for r in records] == [
        ("nginx-http", "nokeep", 1, 2),
        ("nginx-http", "nokeep", 2, 2),
    ]
    ratio, low, high = expected_ab(1)
    assert (records[0]["ratio"], records[0]["ci_low"], records[0]["ci_high"]) == pytest.approx((ratio, low, high))
    assert records[0]["changed"] is (high < 1 or low > 1)
    sentence = f"With variant nokeep (no-upstream-keepalive), nginx-http's throughput at GOMAXPROCS=1 is {ratio:.3f} ({low:.3f}-{high:.3f}) of the original's"
    page = (tmp_path / "out" / "index.html").read_text()
    assert sentence.replace("'", "&#39;") in page and 'id="variant"' in page and "cancel in the figure" in page
    assert sentence in built.summary


def test_a_run_without_variant_has_no_section_and_empty_records(tmp_path):
    build(RUNS / "default-2cores", tmp_path / "out", WHEN)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["variant"] is None and data["variant_ratios"] == []
    assert 'id="variant"' not in (tmp_path / "out" / "index.html").read_text()


def test_one_run_compare_pairs_twin_and_original_and_says_drift_cancels(variant_run, tmp_path):
    result, paths = build_compare(variant_run, None, tmp_path / "cmp", WHEN)
    assert result.in_run and result.names == ("the run's nginx", "variant nokeep")
    throughput = [c for c in result.changes if c.metric == "requests_per_sec"]
    assert [(c.gomaxprocs, c.setup) for c in throughput] == [(1, "nginx-http"), (2, "nginx-http")]
    for change in throughput:
        assert (change.change, change.ci_low, change.ci_high) == pytest.approx(expected_ab(change.gomaxprocs))
        assert change.flagged is not (change.ci_low <= 1 <= change.ci_high)
    ratio = next(c for c in result.changes if c.metric == "overhead_ratio")
    assert ratio.baseline == "go-http" and ratio.change == pytest.approx(throughput[0].change)
    assert ratio.b / ratio.a == pytest.approx(ratio.change, rel=0.2)
    page = paths["compare.html"].read_text()
    assert "Drift cancels" in page and "in-run A/B" in page and "Upstream keep-alive on vs off" in page
    data = json.loads(paths["compare.json"].read_text())
    assert data["in_run"] is True and data["variant"]["name"] == "nokeep" and len(data["changes"]) == 6


def test_the_compare_command_takes_one_run_with_a_variant(variant_run, tmp_path):
    done = CliRunner().invoke(cli, ["compare", str(variant_run), "--out", str(tmp_path / "cmp")], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "B: the same run: their twins through variant nokeep (no-upstream-keepalive)" in done.output
    assert "Drift cancels: A and B were measured in the same rounds of one run" in done.output
    assert "WORSE" in done.output  # nginx-fcgi-tcp's outputs as the twin: about half nginx-http's req/s


def test_one_run_without_a_variant_is_nothing_to_compare(tmp_path):
    with pytest.raises(NothingToCompare, match="this run has no variant"):
        build_compare(RUNS / "default-2cores", None, tmp_path / "cmp", WHEN)


def test_options_the_driver_never_writes_are_not_shown(make_run, tmp_path):
    run = make_run(
        variant_files(), variant_manifest(options=["no-upstream-keepalive", "<b>x</b>", "nginx=rel/path", "pin-server=0\x1b[2J"])
    )
    built = build(run, tmp_path / "out", WHEN)
    assert "(no-upstream-keepalive)" in built.summary and "<b>" not in built.summary and "rel/path" not in built.summary


def test_a_twin_without_its_original_has_no_ab_figure(make_run):
    files = {k: v for k, v in variant_files().items() if not k.startswith("nginx-http.")}
    analysis = analyze.load_analysis(make_run(files, variant_manifest())).analysis
    assert all(r.ratio is None and "no nginx-http measurement" in r.excluded for r in analysis.variant_ratios)


@pytest.mark.parametrize(
    ("variant", "field"),
    [
        ({"name": "<script>"}, "variant.name"),
        ({"name": "a" * 40}, "variant.name"),
        ({"pin_server": "0-99999999"}, "variant.pin_server"),
        ({"setups": {"nginx-http": "nginx-http~../../etc"}}, "variant.setups.nginx-http"),
        ({"options": "no-upstream-keepalive"}, "variant.options"),
    ],
)
def test_a_hostile_variant_entry_is_left_out_with_a_warning(make_run, variant, field):
    run = make_run(variant_files(), variant_manifest(**variant))
    done = analyze.load_analysis(run)
    assert any(p.name == "manifest" and field in p.message for p in done.run.problems), [p.message for p in done.run.problems]
    assert all(len(r.setup) < 40 for r in done.analysis.variant_ratios)  # the twins still come from their file names


REAL_VARIANT = RUNS / "variant-nokeep"  # a real run: go-http, nginx-http and nginx-http~nokeep, 2 blocks of 2 rounds (README)


def server_ms_per_1k(stem: str) -> float:
    """Return one measurement's server CPU (Go's and that side's nginx's user + system) per 1,000 requests, read by hand."""
    record = json.loads((REAL_VARIANT / f"{stem}.cpu.json").read_text())
    cpu_s = sum(record["processes"][name]["user_s"] + record["processes"][name]["system_s"] for name in ("go", "nginx"))
    text = (REAL_VARIANT / f"{stem}.wrk.txt").read_text()
    requests = int(next(x for x in text.splitlines() if " requests in " in x).split()[0])
    return cpu_s * 1000 / (requests / 1000)


def test_one_run_compare_gives_the_twins_cpu_per_request_paired_per_block(tmp_path):
    result, paths = build_compare(REAL_VARIANT, None, tmp_path / "cmp", WHEN)
    cpu = [c for c in result.changes if c.metric == "cpu_server_ms_per_1k"]
    assert [(c.gomaxprocs, c.setup) for c in cpu] == [(1, "nginx-http")]
    rounds = {1: (1, 2), 2: (3, 4)}
    blocks = [
        [
            math.log(
                server_ms_per_1k(f"nginx-http~nokeep.gomaxprocs-1.block-{b}.run-{k}")
                / server_ms_per_1k(f"nginx-http.gomaxprocs-1.block-{b}.run-{k}")
            )
            for k in ks
        ]
        for b, ks in rounds.items()
    ]
    summaries = stats.block_summaries(blocks)
    centre = sum(summaries) / 2
    half = 12.706 * math.sqrt(sum((s - centre) ** 2 for s in summaries)) / math.sqrt(2)  # t(0.975, 1)
    assert (cpu[0].change, cpu[0].ci_low, cpu[0].ci_high) == pytest.approx(
        (math.exp(centre), math.exp(centre - half), math.exp(centre + half))
    )
    assert cpu[0].change > 1  # a new upstream connection per request costs the servers CPU
    assert cpu[0].label == "server CPU ms per 1,000 requests"
    page = paths["compare.html"].read_text()
    assert "server CPU ms per 1,000 requests (geometric mean)" in page and "server CPU per request (Go" in page
    data = json.loads(paths["compare.json"].read_text())
    assert [c["metric"] for c in data["changes"]].count("cpu_server_ms_per_1k") == 1


def test_one_run_compare_gives_the_twins_added_latency_at_a_fixed_load_paired_per_block(tmp_path):
    from wrkreport.runs.rate_measurements import read_rate_measurements

    measurements, problems = read_rate_measurements(REAL_VARIANT, json.loads((REAL_VARIANT / "manifest.json").read_text()))
    assert not problems and {m.setup for m in measurements} == {"go-http", "nginx-http", "nginx-http~nokeep"}
    result, paths = build_compare(REAL_VARIANT, None, tmp_path / "cmp", WHEN)
    assert [(c.gomaxprocs, c.offered_rps, c.setup, c.percentile) for c in result.rate_changes] == [
        (1, 1000, "nginx-http", "p50"),
        (1, 1000, "nginx-http", "p99"),
    ]
    for change, p in zip(result.rate_changes, (50, 99)):

        def at(setup: str, block: int, p: float = p) -> float:
            return next(m.result.percentile_ms(p) for m in measurements if (m.setup, m.block) == (setup, block))

        differences = [at("nginx-http~nokeep", b) - at("nginx-http", b) for b in (1, 2, 3, 4)]  # go-http's part cancels
        centre = sum(differences) / 4
        half = 3.182 * math.sqrt(sum((d - centre) ** 2 for d in differences) / 3) / 2  # t(0.975, 3) * sd / sqrt(4)
        assert (change.change_ms, change.ci_low, change.ci_high) == pytest.approx((centre, centre - half, centre + half))
        assert change.a_ms == pytest.approx(sum(at("nginx-http", b) - at("go-http", b) for b in (1, 2, 3, 4)) / 4)
        assert change.blocks_a == change.blocks_b == 4
    assert all(c.flagged and c.change_ms > 0 for c in result.rate_changes)  # a new upstream connection per request adds latency
    page = paths["compare.html"].read_text()
    assert "Latency added at a fixed load" in page and "the run&#39;s drift cancels" in page and "widened by a run-to-run" not in page
    assert "At a fixed load (open loop), 2 of the 2 added latencies with an interval changed in B" in page
    assert len(json.loads(paths["compare.json"].read_text())["fixed_rate"]) == 2


def test_build_gives_the_twins_cpu_per_request_beside_its_throughput(tmp_path, variant_run):
    built = build(REAL_VARIANT, tmp_path / "out", WHEN)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    records = data["variant_cpu_ratios"]
    assert [(r["setup"], r["twin"], r["gomaxprocs"], r["blocks"]) for r in records] == [("nginx-http", "nginx-http~nokeep", 1, 2)]
    result, _ = build_compare(REAL_VARIANT, None, tmp_path / "cmp", WHEN)
    cpu = next(c for c in result.changes if c.metric == "cpu_server_ms_per_1k")  # worked from the raw files in the test above
    assert (records[0]["ratio"], records[0]["ci_low"], records[0]["ci_high"]) == pytest.approx((cpu.change, cpu.ci_low, cpu.ci_high))
    said = f"Its servers need {cpu.change:.3f} ({cpu.ci_low:.3f}-{cpu.ci_high:.3f}) times the original's CPU per request"
    assert said in built.summary and said.replace("'", "&#39;") in (tmp_path / "out" / "index.html").read_text()
    build(variant_run, tmp_path / "no-cpu", WHEN)  # twins without .cpu.json records: no CPU figure, no sentence
    assert json.loads((tmp_path / "no-cpu" / "results.json").read_text())["variant_cpu_ratios"] == []
    assert "times the original's CPU per request" not in (tmp_path / "no-cpu" / "index.html").read_text()


def test_app_b_figures_are_said_in_app_words_with_each_builds_answer():
    manifest = {
        "variant": {"name": "b", "options": [], "app_b": True},
        "parameters": {"app": {"b": {"command": "./new {port}", "name": "b"}}},
        "passes": [{"cells": {"app": {"body_bytes": 912, "body_sha256": "a" * 64}, "app~b": {"body_bytes": 235, "body_sha256": "b" * 64}}}],
    }
    variant = variant_of(record_of(manifest))
    assert variant == Variant("b", (), app_b="./new {port}") and variant.options_text == "--app-b './new {port}'"
    assert "build B's req/s over build A's" in variant.method and "test_analysis_variant_ratio_calibration" in variant.method
    alone = Ratio("requests_per_sec", 1, "app~b", 1.21, 1.15, 1.27, 6, baseline="app", blocks=3)
    behind = Ratio("requests_per_sec", 1, "nginx-app~b", 0.99, 0.97, 1.01, 6, baseline="nginx-app", blocks=3)
    assert sentence(alone, variant, False) == (
        "Your app's build b alone: its throughput is 1.210 (1.150-1.270) times build A's: " "higher: the interval excludes 1."
    )
    assert sentence(behind, variant, False).startswith("Your app's build b behind nginx (nginx-app): its throughput is 0.990 (0.970-1.010)")
    said = answer_words(record_of(manifest), "b")
    assert "build A (app) 912 bytes, sha256 aaaaaaaaaaaa; build b (app~b) 235 bytes, sha256 bbbbbbbbbbbb: different bodies" in said
    manifest["passes"][0]["cells"]["app~b"] = manifest["passes"][0]["cells"]["app"]
    assert answer_words(record_of(manifest), "b").endswith(": the same body.")
    nginx_variant = Variant("v", ("no-upstream-keepalive",))  # --app --variant: the variant's nginx in front of the same app
    assert "the throughput of nginx in front of your app (nginx-app) is" in sentence(
        Ratio("requests_per_sec", 1, "nginx-app~v", 0.5, 0.4, 0.6, 6), nginx_variant, False
    )
