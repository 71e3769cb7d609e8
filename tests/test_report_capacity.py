"""Tests of wrkreport.report: capacity at the latency objective in results.json, the answer box, the fixed-rate section and the terminal, on real vegeta runs (capacity-delay, quick-rates-slo and variants of it).

Every capacity is recomputed here from the raw measurements by the search's rules, written
out again: a step meets the objective when its rate was held with every answer right and
its p99 within the objective; a block's capacity is the geometric middle of its bracket (the highest
rate that met it, the lowest above that did not), `at_most` the lowest rate tried when none
met it, `at_least` the highest when none above failed; over blocks a bound when any block's
is one, else the geometric mean with a Student-t interval on the logs.
"""

from __future__ import annotations

import html as htmllib
import json
import math
import re
import shutil
from datetime import datetime, timezone

import pytest

from helpers import SEARCH_RUN, SLO_RUN, crossing_between, read_rate_run, slo_variant
from wrkreport.core.capacity import DEFAULT_SLO
from wrkreport.report import build
from wrkreport.report.ratepage import DEFAULT_REASONS

pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")  # builds quick-rates-slo, capacity-delay and variants of them

WHEN = datetime(2026, 11, 26, 22, 0, tzinfo=timezone.utc)
T_975 = {1: 12.706, 2: 4.303}  # blocks - 1 degrees of freedom: these runs have one to three blocks
SETUPS = ("go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix")


def built(run, out):
    """Build a run; return (Built, page html, results.json)."""
    result = build(run, out, WHEN)
    return result, (out / "index.html").read_text(encoding="utf-8"), json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def quick(tmp_path_factory, parsed_and_drawn_once):
    """Return quick-rates-slo built: one block, every rate planned."""
    return built(SLO_RUN, tmp_path_factory.mktemp("quick"))


@pytest.fixture(scope="module")
def real_search(tmp_path_factory, parsed_and_drawn_once):
    """Return capacity-delay built: a real capacity search, 3 blocks, p99 within 10 ms."""
    return built(SEARCH_RUN, tmp_path_factory.mktemp("search"))


@pytest.fixture(scope="module")
def searched(tmp_path_factory, parsed_and_drawn_once):
    """Return (run, Built, html, results.json) of a two-block variant planning 12,000 req/s only: the other rates are search steps."""
    run = slo_variant(tmp_path_factory.mktemp("searched") / "run", plan=[12000], two_blocks=True)
    return (run, *built(run, run.parent / "out"))


# --- The rules, written out again -------------------------------------------------------------


def block_capacity(steps: list[tuple[int, bool, float | None]], within_ms: float) -> tuple[float, str | None]:
    """Return one block's (capacity, bound) from its (rate, met the objective, p99 ms) steps: inside the bracket, where the p99 crosses (helpers.crossing_between)."""
    met = [(rate, p99) for rate, ok, p99 in steps if ok]
    if not met:
        return min(rate for rate, _, _ in steps), "at_most"
    top, p_top = max(met)
    above = sorted((rate, p99) for rate, ok, p99 in steps if not ok and rate > top)
    if not above:
        return top, "at_least"
    return crossing_between(top, above[0][0], p_top, above[0][1], within_ms), None


def over_blocks(values: list[tuple[float, str | None]]) -> tuple[float, float | None, float | None, str | None]:
    """Return (capacity, low, high, bound) over the blocks' capacities."""
    if any(bound == "at_most" for _, bound in values):
        return max(v for v, bound in values if bound == "at_most"), None, None, "at_most"
    if any(bound == "at_least" for _, bound in values):
        return min(v for v, _ in values), None, None, "at_least"
    return geometric([v for v, _ in values])


def geometric(values: list[float]) -> tuple[float, float | None, float | None, None]:
    """Return the geometric mean with its 95% t-interval on the logs (no interval for one value)."""
    logs = [math.log(v) for v in values]
    centre = sum(logs) / len(logs)
    if len(logs) < 2:
        return math.exp(centre), None, None, None
    half = T_975[len(logs) - 1] * math.sqrt(sum((x - centre) ** 2 for x in logs) / (len(logs) - 1)) / math.sqrt(len(logs))
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half), None


def expected(run, within_ms: float = 5.0) -> dict[tuple[str, int], dict]:
    """Return, per (setup, GOMAXPROCS), the capacity record's figures recomputed from the run's files (objective: p99 within within_ms)."""
    measurements, _ = read_rate_run(run)
    blocks: dict[tuple[str, int], dict[int, list[tuple[int, bool, float | None]]]] = {}
    for m in measurements:
        met = m.usable and m.result.percentile_ms(99) <= within_ms
        p99 = m.result.percentile_ms(99) if m.result is not None else None
        blocks.setdefault((m.setup, m.gomaxprocs), {}).setdefault(m.block, []).append((m.rate, met, p99))
    per_block = {key: {b: block_capacity(steps, within_ms) for b, steps in found.items()} for key, found in blocks.items()}
    records = {}
    for (setup, n), mine in per_block.items():
        value, low, high, bound = over_blocks(list(mine.values()))
        record = {
            "capacity_rps": round(value),
            "ci_low": None if low is None else round(low),
            "ci_high": None if high is None else round(high),
            "bound": bound,
            "blocks": len(mine),
        }
        if setup != "go-http":
            base = per_block[("go-http", n)]
            theirs = over_blocks(list(base.values()))
            if bound is None and theirs[3] is None:
                ratio = geometric([mine[b][0] / base[b][0] for b in sorted(mine)])
            else:
                turned = {"at_least": "at_most", "at_most": "at_least", None: None}[theirs[3]]
                ratio = (value / theirs[0], None, None, bound or turned) if not (bound and turned and bound != turned) else None
            record.update(
                baseline="go-http",
                ratio=None if ratio is None else round(ratio[0], 4),
                ratio_ci_low=None if ratio is None or ratio[1] is None else round(ratio[1], 4),
                ratio_bound=None if ratio is None else ratio[3],
            )
        records[(setup, n)] = record
    return records


def test_capacity_records_are_the_rules_applied_to_the_raw_files(quick):
    result, _, data = quick
    assert result.exit_code == 0
    want = expected(SLO_RUN)
    assert [(r["gomaxprocs"], r["setup"]) for r in data["capacity"]] == [(n, s) for n in (1, 2) for s in SETUPS]
    for record in data["capacity"]:
        assert record["slo"] == {"percentile": 99, "ms": 5.0}
        assert {k: record.get(k) for k in want[(record["setup"], record["gomaxprocs"])]} == want[(record["setup"], record["gomaxprocs"])]
    bounds = {(r["setup"], r["gomaxprocs"]): r["bound"] for r in data["capacity"]}
    assert bounds[("go-http", 2)] == "at_least" and bounds[("nginx-fcgi-tcp", 1)] == "at_most" and bounds[("nginx-http", 1)] is None


def test_a_real_search_gives_capacities_and_a_ratio_with_intervals_recomputed_from_the_raw_files(real_search):
    result, html, data = real_search
    want = expected(SEARCH_RUN, 10.0)
    assert [(r["setup"], r["gomaxprocs"]) for r in data["capacity"]] == [("go-http", 1), ("nginx-http", 1)]
    for record in data["capacity"]:
        assert record["slo"] == {"percentile": 99, "ms": 10.0} and record["bound"] is None and record["blocks"] == 3
        assert {k: record.get(k) for k in want[(record["setup"], 1)]} == want[(record["setup"], 1)]
        assert record["ci_low"] < record["capacity_rps"] < record["ci_high"]
        assert all(b["bracket"][0] < b["capacity_rps"] < b["bracket"][1] and b["steps"] >= 5 for b in record["block_capacities"])
    nginx = data["capacity"][1]
    assert (
        nginx["ratio_ci_low"] < nginx["ratio"] < min(1, nginx["ratio_ci_high"])
    )  # nginx's estimate below go-http's at p99 within 10 ms here
    go, proxy = (next(r for r in data["capacity"] if r["setup"] == s) for s in ("go-http", "nginx-http"))
    sentence = (
        f"With p99 within 10 ms, nginx-http carries {rps(proxy['capacity_rps'])} req/s ({rps(proxy['ci_low'])}-{rps(proxy['ci_high'])}), "
        f"{proxy['ratio']:.2f} of go-http&#39;s ({proxy['ratio_ci_low']:.2f}-{proxy['ratio_ci_high']:.2f}); "
        f"go-http carries {rps(go['capacity_rps'])} req/s ({rps(go['ci_low'])}-{rps(go['ci_high'])})."
    )
    assert sentence in " ".join(html.split())
    lines = result.summary.splitlines()  # the terminal: the capacity in its column, its interval on the line below
    row = next(i for i, line in enumerate(lines) if line.startswith("nginx-http "))
    assert rps(proxy["capacity_rps"]) in lines[row] and f"{rps(proxy['ci_low'])}-{rps(proxy['ci_high'])}" in lines[row + 1]
    assert "GOMAXPROCS=1: fixed load 960 req/s, 3 starts; objective p99 within 10 ms" in lines
    objective = " ".join(html.split('<p class="note objective">')[1].split("</p>")[0].split())
    assert objective.startswith(objective_lead("p99=10ms", "p99 within 10 ms"))
    assert (
        "in this run go-http&#39;s p99 at light load was " in objective
        and "at light load go-http alone answers with p99 about 1-1.5 ms" in objective
    )


def test_a_real_search_keeps_its_steps_out_of_the_table_and_in_results_json(real_search):
    _, html, data = real_search
    planned = [r for r in data["fixed_rate"] if r["planned"]]
    assert {r["offered_rps"] for r in planned} == {960} and len(data["fixed_rate"]) > 20
    table = html.split('<h2 id="fixed-rate">')[1].split("</table>")[1]
    assert table.count("<tr>") == 1 + 2 and "GOMAXPROCS=1, 960 req/s" in table  # the header, go-http and nginx-http at the light load
    assert all(r["p99_ci_low"] < r["p99_ms"] < r["p99_ci_high"] for r in planned)  # 3 blocks: an interval around each light-load point
    assert all(r["p99_ci_low"] is None for r in data["fixed_rate"] if r["measurements"] == 1)  # a step measured once has none


def rps(value: float) -> str:
    """Return a rate as the sentences write it: three significant figures, thousands separated."""
    return f"{round(value, 2 - math.floor(math.log10(value))):,.0f}"


def test_two_blocks_give_an_interval_recomputed_from_the_raw_files(searched):
    run, _, _, data = searched
    want = expected(run)
    for record in data["capacity"]:
        assert {k: record.get(k) for k in want[(record["setup"], record["gomaxprocs"])]} == want[(record["setup"], record["gomaxprocs"])]
    nginx = next(r for r in data["capacity"] if r["setup"] == "nginx-http")
    assert nginx["ci_low"] < nginx["capacity_rps"] < nginx["ci_high"] and nginx["blocks"] == 2
    assert [b["bracket"] for b in nginx["block_capacities"]] == [[12000, 18000], [18000, 24000]]


def test_the_capacity_part_says_each_capacity_and_the_objective_with_its_reason(quick):
    _, html, data = quick
    part = html.split('<h3 id="capacity">')[1].split("</table>")[0]
    sentences = [" ".join(s.split()) for s in re.findall(r'<p class="capacity">(.*?)</p>', part, re.S)]
    assert len(sentences) == 2
    nginx = next(r for r in data["capacity"] if (r["setup"], r["gomaxprocs"]) == ("nginx-http", 1))
    assert sentences[0].startswith(
        f"With p99 within 5 ms (GOMAXPROCS=1), nginx-http carries {rps(nginx['capacity_rps'])} req/s (one block: no interval), "
        f"{nginx['ratio']:.2f} of go-http&#39;s;"
    )
    assert "nginx-fcgi-tcp carries at most 12,000 req/s (missed at the lowest rate tried)" in sentences[0]
    assert sentences[1].endswith("go-http carries at least 32,000 req/s (the objective held at the highest rate tried).")
    (objective,) = re.findall(r'<p class="note objective">(.*?)</p>', part, re.S)
    assert objective.startswith(objective_lead("p99=5ms", "p99 within 5 ms"))
    assert "at light load go-http alone answers with p99 about 1-1.5 ms" in objective
    assert "in this run go-http&#39;s p99 at light load was 1.36 ms at 12,000 req/s with GOMAXPROCS=1" in objective
    # the answer's table: every capacity in its setup's row, a bound with the edge the search met
    go = next(r for r in data["capacity"] if (r["setup"], r["gomaxprocs"]) == ("go-http", 1))
    cells = answer_cells(html)
    assert cells[("GOMAXPROCS=1", "go-http")][3] == (rps(go["capacity_rps"]), "")  # one block: no interval
    assert cells[("GOMAXPROCS=1", "nginx-http")][3] == (rps(nginx["capacity_rps"]), "")
    assert cells[("GOMAXPROCS=1", "nginx-fcgi-tcp")][3] == ("≤ 12,000", "lowest rate missed")
    assert cells[("GOMAXPROCS=2", "go-http")][3] == ("≥ 32,000", "highest rate held")


def answer_cells(html: str) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Return the answer table's cells as the page shows them: {(group, setup): [(figure, detail) per column]}."""
    box = html.split('aria-label="The answer"')[1].split("</section>")[0]
    found = {}
    for group in box.split('<tr class="group-row">')[1:]:
        title = re.search(r'scope="rowgroup">([^<]+?)\s*(?:<|$)', group).group(1)
        for row in re.findall(r'<th scope="row" class="setup">.*?</tr>', group, re.S):
            setup = re.search(r'<span class="detail">([^<]+)</span></th>', row).group(1)
            cells = re.findall(r'<span class="figure">([^<]*)</span>(?:<span class="detail">([^<]*)</span>)?</td>', row)
            found[(title, setup)] = [(htmllib.unescape(f), htmllib.unescape(d)) for f, d in cells]
    return found


def test_the_fixed_rate_section_names_the_method_and_lists_the_capacities(quick):
    _, html, _ = quick
    section = html.split('<h3 id="capacity">')[1].split("</table>")[0]
    method = html.split('<h3 id="method-fixed-rate">')[1].split("<h3")[0]  # the method: in How it was measured, not on the reading path
    assert "Capacity: in a setup" not in section
    section = method + section
    assert (
        "Capacity: in a setup&#39;s first block (one start of the servers), after the light-load rate, a bisection on a log scale, each cut drawn 30%-70%"
        in section
    )
    assert (
        "each later block measures 4 rates 10% apart around the earlier blocks&#39; capacity (its own random offset), and up to 3 more"
        in section
    )
    assert "the rate at which a typical second meets it (one second in two misses it there)" in section
    assert "(at first 1.2x the setup&#39;s closed-loop req/s) for up to 6 steps or until they are within 10%" in section
    assert "the capacity is the geometric mean over blocks with a Student-t 95% interval" in section
    assert "a bound when at least half the blocks&#39; searches met an edge" in section
    assert section.count("<tr>") == 1 + 8 and section.count('<tr class="group-row">') == 2  # the header, a row per setup and GOMAXPROCS
    assert (
        '<th class="num">measured again at the capacity</th>' in section and section.count("not measured</td>") == 8
    )  # a run from before the checks


def test_the_table_and_the_light_load_sentences_have_the_planned_rates_only(searched):
    _, result, html, data = searched
    table = html.split('<h2 id="fixed-rate">')[1].split("</table>")[1]  # after the capacities' table
    assert (
        table.count("GOMAXPROCS=1, 12,000 req/s") == 1 + 4 and "18,000 req/s" not in table and "32,000 req/s" not in table
    )  # its heading row, 4 setups
    answer = html.split('aria-label="The answer"')[1].split("</section>")[0]
    assert "fixed load 12,000 req/s" in answer and "18,000 req/s" not in answer and "ms at 12,000 req/s" in answer
    sentences = html.split('<h3 id="fixed-rate-table">')[1].split("<table")[0]
    assert "At 12,000 req/s, open loop" in sentences and "At 18,000 req/s" not in sentences
    records = data["fixed_rate"]
    assert {r["offered_rps"] for r in records if r["planned"]} == {12000} and len(records) == 16
    assert {r["offered_rps"] for r in records if not r["planned"]} == {18000, 24000, 32000}  # the search's points stay in results.json
    light = [line for line in result.summary.splitlines() if "fixed load" in line]
    assert light == ["GOMAXPROCS=1: fixed load 12,000 req/s, 2 starts; objective p99 within 5 ms"]


def test_the_terminal_prints_each_capacity_in_its_groups_table(quick):
    result, _, _ = quick
    lines = result.summary.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("GOMAXPROCS=") and line.endswith("; objective p99 within 5 ms")]
    assert [lines[i][:13] for i in starts] == ["GOMAXPROCS=1:", "GOMAXPROCS=2:"]
    assert max(len(line) for line in lines) <= 80
    go = next(i for i in range(starts[1], len(lines)) if lines[i].startswith("go-http "))
    assert ">= 32,000" in lines[go] and "highest held" in lines[go + 1]  # the page's "highest rate held", in fewer columns


@pytest.mark.parametrize("slo", ["drop", None])
def test_a_run_without_an_objective_has_no_capacity_and_says_nothing_of_it(slo, tmp_path):
    result, html, data = built(slo_variant(tmp_path / "run", slo=slo), tmp_path / "out")
    assert data["capacity"] == [] and "capacity with" not in result.summary and "carries" not in result.summary
    assert 'class="capacity"' not in html and 'id="capacity"' not in html and "objective" not in html.lower()
    assert len(data["fixed_rate"]) == 32  # the fixed-rate phase itself is unchanged


def objective_lead(label: str, words: str) -> str:
    """Return how the objective sentence opens: as the default when it is one (core.capacity.DEFAULT_SLO), else as the run's own --slo."""
    return f"The objective is the default, {words}: " if label == DEFAULT_SLO else f"The objective is this run&#39;s --slo {label}, {words}"


def test_the_default_objective_has_its_reason():
    assert DEFAULT_SLO in DEFAULT_REASONS and all("1-1.5 ms" in why and "queue" in why for why in DEFAULT_REASONS.values())


def test_the_method_says_how_many_blocks_the_capacity_rule_took_for_a_run_that_had_one(tmp_path, real_search):
    """A run since 2026-11-29 records its least and most fixed-rate blocks and its --capacity-precision: the method names the rule; a run before it does not."""
    run = tmp_path / "run"
    shutil.copytree(SEARCH_RUN, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["parameters"].update({"rate_blocks": 3, "rate_blocks_max": 8, "capacity_precision_pct": 12.5})
    (run / "manifest.json").write_text(json.dumps(manifest))
    _, html, _ = built(run, tmp_path / "out")
    method = htmllib.unescape(html.split('<h3 id="method-fixed-rate">')[1].split("<h3")[0])
    assert (
        "the run takes 3 blocks per GOMAXPROCS value, then more (up to 8) while a capacity or capacity ratio there reaches further than "
        "+/-12.5% from its estimate and its --max-time allows"
    ) in method
    assert "the run takes" not in htmllib.unescape(real_search[1].split('<h3 id="method-fixed-rate">')[1].split("<h3")[0])
