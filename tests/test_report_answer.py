"""Tests of wrkreport.report.answer: the answer box (one sentence, one table, the conditions) on every real run (tests/fixtures/runs/)."""

from __future__ import annotations

import html as htmllib
import re
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from helpers import RUNS
from wrkreport.analysis import analyze  # analyze.load_analysis: conftest's parsed_and_drawn_once keeps each analysis
from wrkreport.cli import cli
from wrkreport.core.setups import backend_of
from wrkreport.report.answer import MAX_SENTENCE_WORDS, answer
from wrkreport.report.answercells import Figure, fmt_us
from wrkreport.report.render import environment
from wrkreport.report.terminal import ascii_terminal, terminal_cell

pytestmark = pytest.mark.usefixtures(
    "parsed_and_drawn_once"
)  # every fixture run analysed, some built: quick-rates-slo's 690,000 vegeta rows among them

WHEN = datetime(2026, 11, 27, tzinfo=timezone.utc)
EVERY_RUN = sorted(p.name for p in RUNS.iterdir() if p.is_dir())
DEFAULT_RUNS = [f"default-run-{i}" for i in range(1, 7)]
MAX_PROSE_WORDS = 120
# Words a deployer should not meet before "How it was measured" (issue 32): estimators and their authors.
JARGON = (
    "Huber",
    "Welch",
    "Satterthwaite",
    "DerSimonian",
    "z-score",
    "Little's law",
    "Little&#39;s law",
    "coordinated omission",
    "M-estimate",
    "Student-t",
    "1.345 within-block",
)


def text(html: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


def answered(name: str):
    """Return (the analysed run, its Answer, the answer box as the page renders it: templates/answer.html)."""
    done = analyze.load_analysis(RUNS / name)
    said = answer(done.analysis, list(done.rates), list(done.capacities), done.run.parameters, backend_of(done.run.parameters))
    box = environment().get_template("answer.html").render(page=SimpleNamespace(answer=said))
    return done, said, box


class OnFirstUse(dict):
    """A dict whose value for a key is made by `make(key)` when first asked for: a pytest-xdist worker makes only the runs its tests read."""

    def __init__(self, make, keys):
        super().__init__()
        self.make, self.every = make, tuple(keys)

    def __missing__(self, key):
        self[key] = value = self.make(key)
        return value

    def items(self):
        """Return every key's (key, value), each made if not yet."""
        return [(key, self[key]) for key in self.every]


@pytest.fixture(scope="module")
def boxes(parsed_and_drawn_once):
    """Return {run: (analysed run, Answer, rendered box)} for every fixture run, each analysed when a test first reads it."""
    return OnFirstUse(answered, EVERY_RUN)


BUILT = ("default-run-1", "capacity-ladder", "every-phase", "tls-both-modes", "quick-rates-slo")


@pytest.fixture(scope="module")
def built(tmp_path_factory, parsed_and_drawn_once):
    """Return {run: (index.html, `wrkreport build`'s stdout lines)} for the runs whose page and terminal the tests read together, each built when first read."""
    root = tmp_path_factory.mktemp("answer")

    def build_one(name: str) -> tuple[str, list[str]]:  # the fixture run itself (build writes only --out): its analysis is boxes'
        result = CliRunner().invoke(
            cli, ["build", str(RUNS / name), "--out", str(root / "out" / name)], standalone_mode=False, catch_exceptions=False
        )
        return (root / "out" / name / "index.html").read_text(), result.stdout.splitlines()

    return OnFirstUse(build_one, BUILT)


# --- Every run: a sentence, a table, within the word budget --------------------------------------


@pytest.mark.parametrize("name", EVERY_RUN)
def test_every_runs_answer_is_a_short_sentence_and_a_table_with_at_most_120_words_of_prose(boxes, name):
    _, said, box = boxes[name]
    assert len(said.sentence.split()) <= MAX_SENTENCE_WORDS, (len(said.sentence.split()), said.sentence)
    prose = text(re.sub(r"<table\b.*?</table>", " ", box, flags=re.S))
    assert len(prose.split()) <= MAX_PROSE_WORDS, (len(prose.split()), prose)
    assert box.count("<table") == 1 and box.index('class="lead"') < box.index("<table") < box.index('class="conditions"')
    assert said.conditions.startswith("Conditions: ") and "\n" not in said.conditions


@pytest.mark.parametrize("name", EVERY_RUN)
def test_the_table_has_a_row_per_setup_go_alone_first_and_the_columns_the_run_has_data_for(boxes, name):
    done, said, _ = boxes[name]
    keys = [c.key for c in said.columns]
    assert keys[-1] == "share"
    assert ("cpu" in keys) == (done.analysis.sharing is not None)
    assert ("p50" in keys and "p99" in keys) == any(c.planned for c in done.rates)
    assert ("capacity" in keys) == bool(done.capacities)
    for group in said.groups:
        setups = [r.setup for r in group.rows]
        assert setups[0] in ("go-http", "app") and "~" not in " ".join(setups), setups  # twins are the A/B part's
        assert all(len(r.figures) == len(keys) for r in group.rows)
    assert len(said.groups) == len(done.analysis.groups)


def test_the_sentence_of_a_default_run_names_the_cheapest_connection_and_its_cost_in_microseconds_at_each_gomaxprocs(boxes):
    for name in DEFAULT_RUNS:
        done, said, _ = boxes[name]
        assert said.sentence.startswith("The cheapest connection is the HTTP proxy: it adds "), said.sentence
        for gomaxprocs in (1, 2):
            cpu = {c.setup: c.metrics["cpu_server_ms_per_1k"].interval.estimate for c in done.analysis.cells if c.gomaxprocs == gomaxprocs}
            # its cost is its mean server CPU per request (ms per 1,000 = us per request) minus go-http's
            assert f"{fmt_us(cpu['nginx-http'] - cpu['go-http'])} µs" in said.sentence.split(f"GOMAXPROCS={gomaxprocs}")[0]
        assert [r.setup for r in said.cheapest_rows] == ["nginx-http", "nginx-http"]
        assert said.conditions.startswith("Conditions: a handler doing no work (12-byte body); wrk and servers sharing 2 CPUs")
        assert "saturated at 100 connections," in said.conditions


def test_the_sentence_says_the_one_reason_when_no_connection_can_be_named(boxes):
    assert (
        boxes["every-phase"][1].sentence
        == "No connection is measurably the cheapest yet: the HTTP proxy leads, but within the noise at GOMAXPROCS=1."
    )
    assert boxes["capacity-ladder"][1].sentence.startswith("The HTTP proxy, the only nginx connection measured: it adds 36 µs")
    assert boxes["quick-1-repeat"][1].sentence.startswith("The HTTP proxy leads, from one repeat each (no interval): it serves ")


def test_a_run_without_cpu_records_gives_the_cheapest_connections_req_s_at_saturation(boxes):
    done, said, _ = boxes["default-2cores"]
    rps = {g: done.analysis.cell(g, 100, "nginx-http").metrics["requests_per_sec"].geometric.estimate for g in (1, 2)}
    assert said.sentence == (
        f"The cheapest connection is the HTTP proxy: it serves {round(rps[1], -2):,.0f} req/s at saturation at GOMAXPROCS=1 "
        f"and {round(rps[2], -2):,.0f} req/s at GOMAXPROCS=2."
    )
    assert "CPU use not recorded" in said.conditions and "cpu" not in [c.key for c in said.columns]


def test_the_cpu_figures_are_the_cpu_tables_figures(built):
    """One figure per fact: the answer's us per request are the CPU table's means (ms per 1,000 requests), not a second estimate."""
    page = built["default-run-1"][0]
    table = page.split('<h2 id="cpu">')[1].split("</table>")[0]
    rows = re.findall(
        r'<tr><td class="group">GOMAXPROCS=1</td><td class="setup">([^<]+)</td><td class="num">[^<]*</td><td class="num">[^<]*</td>'
        r'<td class="num">([0-9.]+)',
        table,
    )
    totals = {setup: float(total) for setup, total in rows}
    box = page.split('aria-label="The answer"')[1].split("</section>")[0]
    first = box.split('scope="rowgroup">GOMAXPROCS=2')[0]
    for setup in ("nginx-fcgi-tcp", "nginx-fcgi-unix"):
        found = re.search(
            rf'{setup}</span></th><td class="num"><span class="label"[^>]*>[^<]*</span><span class="figure">([0-9.]+) \(\+([0-9.]+)\)',
            first,
        )
        assert float(found.group(1)) == pytest.approx(totals[setup], abs=1.0), (setup, totals)
        assert float(found.group(2)) == pytest.approx(totals[setup] - totals["go-http"], abs=1.0), (setup, totals)


def test_a_run_with_a_fixed_load_and_an_objective_gives_the_added_latency_and_the_capacity_with_its_check(boxes):
    done, said, _ = boxes["capacity-ladder"]
    ((group,),) = [said.groups]
    assert group.at == "fixed load 970 req/s, 4 starts; objective p99 within 10 ms"
    go, proxy = group.rows
    cells = dict(zip([c.key for c in said.columns], proxy.figures))
    assert cells["p50"] == Figure("+0.14", "0.09-0.19") and cells["p99"].main == "none"  # the p99 interval includes 0
    # the capacities with their intervals; go-http's check at its capacity was not held (p99 22 ms), nginx-http's met the objective
    assert cells["capacity"] == Figure("3,280 ✓", "3,000-3,580")
    assert dict(zip([c.key for c in said.columns], go.figures))["capacity"] == Figure("3,700 ✗", "3,620-3,780")
    assert [c.head for c in said.columns if c.key == "p50"] == ["p50 added"] and "at 970 req/s" in said.columns[1].unit


def test_the_table_leaves_the_variant_twins_to_the_ab_part(boxes):
    for name in ("every-phase", "variant-nokeep"):
        _, said, box = boxes[name]
        assert "~" not in box and all("~" not in r.setup for g in said.groups for r in g.rows), name


# --- The page and the terminal say the same ----------------------------------------------------


def page_rows(page: str) -> list[tuple[str, ...]]:
    """Return the answer table's rows as the page shows them: (setup id, each figure, each detail)."""
    box = page.split('aria-label="The answer"')[1].split("</section>")[0]
    rows = []
    for row in re.findall(r'<tr(?: class="cheapest")?><th scope="row".*?</tr>', box, flags=re.S):
        setup = re.search(r'<span class="detail">([^<]+)</span></th>', row).group(1)
        cells = re.findall(r'<span class="figure">([^<]*)</span>(?:<span class="detail">([^<]*)</span>)?</td>', row)
        rows.append((setup, *(htmllib.unescape(f) for f, _ in cells), *(htmllib.unescape(d) for _, d in cells)))
    return rows


@pytest.mark.parametrize("name", BUILT)
def test_the_terminal_prints_the_pages_sentence_and_every_figure_of_its_table(built, name):
    page, out = built[name]
    lines = [line.split() for line in out]
    box = page.split('aria-label="The answer"')[1].split("</section>")[0]
    sentence = text(box.split('class="lead">')[1].split("</p>")[0])
    assert " ".join(" ".join(line) for line in lines).find(ascii_terminal(sentence)) > 0
    at = 0
    for setup, *cells in page_rows(page):
        figures, details = cells[: len(cells) // 2], cells[len(cells) // 2 :]
        # the row's line, after the one before it: the setup id, then its figures (the terminal's cells: ASCII for µs, ≥, ✓ and ✗, shorter words below)
        at = next((i for i, line in enumerate(out) if i > at and line.startswith(setup + " ")), None)
        assert at is not None, (setup, figures)
        assert all(terminal_cell(f) in out[at] for f in figures), (setup, figures, out[at])
        if any(details):
            assert all(terminal_cell(d) in out[at + 1] for d in details if d), (setup, details, out[at + 1])


def test_a_default_runs_terminal_fits_25_lines_of_80_columns_and_counts_the_warnings_in_one_line(built):
    _, out = built["default-run-1"]
    assert len(out) <= 25, "\n".join(out)
    assert max(len(line) for line in out if not line.startswith(("run: ", "report: "))) <= 80  # the two path lines aside
    assert out[-1].startswith("report: ") and out[-1].endswith(" warnings, precision target NOT met)") or out[-1].endswith(" warnings)")
    assert all(ord(c) < 128 for line in out for c in line)  # 'us', not 'µs', for any terminal


def test_no_estimator_is_named_before_how_it_was_measured(built):
    for name, (page, _) in built.items():
        reading = page.split('<h2 id="method">')[0]
        found = [word for word in JARGON if word in reading]
        assert not found, (name, found)
        method = page.split('<h2 id="method">')[1]
        assert "Huber" in method or "Student-t" in method or name.startswith("quick"), name  # the method is there, below


def test_the_header_has_one_badge_and_it_is_not_green_when_the_precision_target_was_missed(built):
    for name, (page, _) in built.items():
        header = page.split("</header>")[0]
        badges = re.findall(r'<span class="status status-(\w+)">([^<]+)</span>', header)
        assert len(badges) == 1, (name, badges)
        status, words = badges[0]
        if "precision target NOT met" in words:
            assert status != "pass", (name, badges)


def test_what_the_box_said_before_is_below_it_the_relative_figures_in_the_throughput_section(built):
    page = built["default-run-1"][0]
    box, after = page.split('aria-label="The answer"')[1].split("</section>", 1)
    assert "Relative to" not in box and "keeps" not in text(box)
    throughput = after.split('<h2 id="throughput">')[1].split("<h2")[0]
    assert '<p class="relative">' in throughput and "keeps" in text(throughput)
    assert '<p class="note precision">Precision target:' in after.split("<h2")[0]  # the precision target, right below the box


def test_a_front_ends_run_names_each_front_end_and_counts_what_it_adds():
    """A real quick run of nginx, HAProxy, Caddy and Apache httpd in front of Go (issue 44): every row names its front end and
    connection, the CPU column says what the front end adds, and the sentence names the cheapest of all of them."""
    done, said, box = answered("front-ends-quick")
    rows = {r.setup: r for g in said.groups for r in g.rows if g.title == "GOMAXPROCS=1"}
    assert {s: r.name for s, r in rows.items()} == {
        "go-http": "Go alone", "nginx-http": "nginx's HTTP proxy", "haproxy-http": "HAProxy's HTTP proxy",
        "haproxy-fcgi-unix": "HAProxy's FastCGI over a Unix socket", "caddy-http": "Caddy's HTTP proxy",
        "apache-http": "Apache httpd's HTTP proxy", "apache-fcgi-tcp": "Apache httpd's FastCGI over TCP",
    }  # fmt: skip
    assert said.columns[0].unit == "µs (+ what the front end measurably adds)" and said.columns[0].label == "CPU µs/req (+front end)"
    for setup in ("haproxy-http", "caddy-http", "apache-fcgi-tcp"):  # what each front end adds over Go alone, as nginx's
        cpu = done.analysis.ratio(1, 100, setup, "cpu_server_ms_per_1k")
        assert cpu is not None and rows[setup].figures[0].main.endswith(")") and " (+" in rows[setup].figures[0].main
    shares = {s: done.analysis.ratio(1, 100, s).ratio for s in rows if s != "go-http"}
    best = max(shares, key=shares.get)
    assert said.sentence.startswith(f"{rows[best].name} leads, from one repeat each (no interval): it adds ")
    assert "HAProxy's HTTP proxy" in text(box) and "Apache httpd's FastCGI over TCP" in text(box)


def test_a_front_ends_runs_page_is_titled_for_a_front_end(tmp_path):
    from helpers import built_fixture_page, visible_text

    words = visible_text(built_fixture_page("front-ends-quick", tmp_path, WHEN))
    assert "What a front end in front of Go costs on this machine" in words and "What nginx in front" not in words
    assert "HAProxy's HTTP proxy" in words and "CPU µs/req (+front end)" in words


def test_a_tie_within_five_percent_is_said_as_one_and_an_open_comparison_as_within_the_noise():
    """verdict-default with its GOMAXPROCS=2 comparison of the HTTP proxy and FastCGI over a Unix socket replaced: within 0.97-1.03
    the two tie (core/verdict.py's margin), at 0.98-1.12 the proxy leads but within the noise; both read by the page's leader."""
    from dataclasses import replace

    from wrkreport.analysis.cells import Comparison

    done = analyze.load_analysis(RUNS / "verdict-default")

    def with_comparison(low: float, high: float):
        kept = [
            c for c in done.analysis.comparisons if not (c.gomaxprocs == 2 and {c.setup_a, c.setup_b} == {"nginx-http", "nginx-fcgi-unix"})
        ]
        changed = replace(
            done.analysis, comparisons=(*kept, Comparison(2, 100, "nginx-http", "nginx-fcgi-unix", (low * high) ** 0.5, low, high, 30))
        )
        return answer(changed, list(done.rates), [], done.run.parameters).sentence

    tied = with_comparison(0.97, 1.03)
    assert tied.startswith(
        "The HTTP proxy and FastCGI over a Unix socket tie for the cheapest connection (throughput within 5% of each "
        "other at GOMAXPROCS=2): the HTTP proxy adds "
    ), tied
    assert with_comparison(0.98, 1.12) == (
        "No connection is measurably the cheapest yet: the HTTP proxy leads, but within the noise at " "GOMAXPROCS=2."
    )
