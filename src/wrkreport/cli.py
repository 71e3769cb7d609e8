"""CLI: options -> one library call -> output -> exit code. The only place that prints or exits."""

from __future__ import annotations

import gc
import json
import re
import sys
from contextlib import contextmanager

import click

from . import __version__
from .core.errors import ParseError, WrkreportError

CONTEXT = {"help_option_names": ["-h", "--help"]}
GATE_FAILED = 3  # wrkreport compare --fail-on: a figure worse (or changed) in B
# C0 and C1 controls but newline and tab (ESC starts terminal sequences), DEL, and the bidirectional overrides.
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# Each command is a thin function returning its exit status; `main` is the only exit.


def printable(text: str) -> str:
    """Return text without control characters, so run directories cannot drive the terminal.

    >>> printable("run\\x1b]0;title\\x07\\x1b[2J ok\\r\\n")
    'run]0;title[2J ok\\n'
    """
    return UNPRINTABLE.sub("", text)


def say(text: str) -> None:
    """Print text on stdout, control characters removed."""
    click.echo(printable(text))


def fail(message: str) -> None:
    """Print one `wrkreport: ...` line on stderr, control characters removed and line breaks as spaces."""
    click.echo("wrkreport: " + printable(message).replace("\n", " ").replace("\t", " "), err=True)


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, prog_name="wrkreport")
def cli() -> None:
    """Parse wrk results and report what nginx in front of Go costs.

    Example:

        ./run_bench.sh && wrkreport build
    """


@contextmanager
def frozen_imports():
    """Import the libraries a command needs with the cyclic garbage collector paused, then freeze what they loaded.

    pandas, matplotlib and the report's modules leave a few hundred thousand long-lived
    objects; every full collection during the imports and during the build walked them
    all again (about 15% of a default run's build in CPU time). Frozen (gc.freeze) they
    are never walked again, also not in the chart drawers forked from this process; the
    command's own garbage is collected as before.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


# --- wrkreport parse -------------------------------------------------------------------


@cli.command("parse", context_settings=CONTEXT)
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of records instead of summaries.")
def parse_command(files: tuple[str, ...], as_json: bool) -> int:
    """Parse wrk / wrk2 / ab 2.3 / webbench 1.5 / h2load 1.52 outputs and print what each says, in argument order.

    The format is told by the file's content. A file that is not a complete wrk, ab,
    webbench or h2load output is reported on stderr as `wrkreport: FILE:LINE: message`;
    the others are still printed. Exit status 0 when every file parsed, 1 when some
    parsed and others failed, 2 when none could be read. With --json the keys are those of `wrkreport.core.records.FIELDS`
    (null when that output does not print the value), then `clients`: the wrk files
    merged into the record. Files `<stem>.client-<i>.wrk.txt` of one stem are one
    measurement of several wrk clients: printed once, summed, with exact percentiles
    from their `.client-<i>.hist.json` when every client has one (else none). A `*.hist.json` (wrk's latency
    histogram, docs/raw-format.md) gives its totals and exact percentiles instead (with
    --json: source, format, duration_s, requests, bytes_read, errors, latencies,
    distinct, percentiles_ms, max_ms). A `*.vegeta.csv.gz` (a fixed-rate measurement)
    gives its offered and achieved rate, errors and exact p50, p90, p99, p99.9 and max
    (with --json: core.rate_result.RateResult.to_dict's keys); the `<stem>.client-<i>.vegeta.csv.gz`
    of one stem are one measurement of several clients, merged: every request of every
    client in the percentiles, the achieved rate the sum of each one's.

    Example:

        wrkreport parse go-http.gomaxprocs-1.run-1.wrk.txt --json
    """
    from .core.latency_histogram import SUFFIX, histogram_record
    from .parsers import parse_file
    from .parsers.histogram import read_histogram_file
    from .parsers.vegeta import read_client_files, read_vegeta_file
    from .runs.client_outputs import group_paths, merge_files

    records, failed = [], 0
    for group in group_paths(list(files)):
        path, without = group[0], []
        try:
            if is_vegeta(path) and len(group) > 1:
                result = read_client_files(group)  # several clients' files: merged exactly, each at its share of the rate in the name
            elif is_vegeta(path):
                result = read_vegeta_file(path)  # the offered rate from its name
            elif path.endswith(SUFFIX):
                result = read_histogram_file(path)
            elif len(group) > 1:
                result, without = merge_files(group)
            else:
                result = parse_file(path)
        except ParseError as exc:
            fail(exc.message())
            failed += len(group)
            continue
        if is_vegeta(path):
            record = result.to_dict()
        else:
            record = histogram_record(result) if path.endswith(SUFFIX) else result.to_dict() | {"clients": len(group)}
        if as_json:
            records.append(record)
        elif is_vegeta(path):
            say(rate_line(record) + (f"\n  clients       {len(group)}: " + ", ".join(group) if len(group) > 1 else ""))
        elif path.endswith(SUFFIX):
            say(histogram_summary(record))
        else:
            say(summary(result) + (clients_line(group, without) if len(group) > 1 else ""))
    if as_json:
        click.echo(json.dumps(records, indent=2, allow_nan=False))  # JSON escapes every control character
    return parse_status(failed, len(files))


def parse_status(failed: int, files: int) -> int:
    """Return parse's exit status: 0 every file parsed, 1 some failed, 2 none could be read (bad input).

    >>> parse_status(0, 3), parse_status(1, 3), parse_status(3, 3)
    (0, 1, 2)
    """
    if failed == 0:
        return 0
    return 2 if failed >= files else 1


# --- wrkreport build -------------------------------------------------------------------


@cli.command("build", context_settings=CONTEXT)
@click.argument("raw", default="raw", required=False, type=click.Path(file_okay=True, dir_okay=True))
@click.option(
    "--out",
    "out_dir",
    default="reports",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory for index.html, results.csv and results.json.",
)
@click.option(
    "--expect-header-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Header block size every setup must answer with [default: the run's, else 141].",
)
@click.option("--open", "open_page", is_flag=True, help="Open the report in a browser when written.")
def build_command(raw: str, out_dir: str, expect_header_bytes: int | None, open_page: bool) -> int:
    """Build the report of one run: RAW is a run directory, or raw/ for its newest run.

    Writes index.html (self-contained), results.csv (one row per measurement) and
    results.json (measurements, ratios with intervals, checks, environment), prints a
    summary table and the report's path. Exit status 0 when every check passed, 1 when
    the report was written but a check failed (listed on stderr), 2 when there is nothing
    usable (no run, nothing parsed).

    Example:

        wrkreport build raw/ --out reports/ --open
    """
    from datetime import datetime, timezone

    with frozen_imports():
        from .report import build

    built = build(raw, out_dir, datetime.now(timezone.utc), expect_header_bytes)
    say(f"run: {built.run_path}")
    say(built.summary)
    for line in grouped_failures(built.run_path, built.failures):
        fail(line)
    say(built.closing)
    if open_page:
        click.launch(str(built.paths["index.html"]))
    return built.exit_code


def grouped_failures(run_path, failures) -> list[str]:
    """Return one 'FILE: check failed: NAME: MESSAGE' line per setup and check, naming how many more files it covers."""
    import os
    from pathlib import Path

    groups: dict[tuple, list] = {}
    for check in failures:
        groups.setdefault((check.setup, check.name), []).append(check)
    lines = []
    for (setup, _), checks in groups.items():
        first = checks[0]
        where = Path(run_path) / first.file if first.file else Path(run_path)
        relative = os.path.relpath(where)
        shown = relative if not relative.startswith("..") else str(where)
        line = f"{shown}: check failed: {first.name}: {first.message}"
        if len(checks) > 1:
            line += f" (and {len(checks) - 1} more {setup or 'run'} file{'s' if len(checks) > 2 else ''} alike)"
        lines.append(line)
    return lines


# --- wrkreport compare -----------------------------------------------------------------


@cli.command("compare", context_settings=CONTEXT)
@click.argument("run_a", type=click.Path())
@click.argument("run_b", type=click.Path(), required=False)
@click.option(
    "--out",
    "out_dir",
    default="reports",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory for compare.html and compare.json.",
)
@click.option(
    "--expect-header-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Header block size every setup must answer with [default: each run's, else 141].",
)
@click.option(
    "--fail-on",
    type=click.Choice(["never", "worse", "change"]),
    default="never",
    show_default=True,
    help="Exit 3 when a figure is flagged worse in B (worse) or flagged either way (change): a regression gate for CI.",
)
def compare_command(run_a: str, run_b: str | None, out_dir: str, expect_header_bytes: int | None, fail_on: str) -> int:
    """Compare two runs (two machines, two nginx versions, pinned or not) cell by cell, or one run's --variant with its nginx.

    For every setup, GOMAXPROCS and connection count both runs measured: the change in
    req/s, in the overhead ratio and in p99 latency (run B / run A) with a Welch 95%
    interval, flagged BETTER or WORSE only where the interval excludes 1.0. Writes
    compare.html (titled with what differs, a chart of the changes, links to each run's
    report when one was built) and compare.json.
    Given ONE run made with run_bench.sh --variant, compares A (its nginx setups) with
    B (their twins through the variant's nginx), each pair measured in the same rounds:
    B / A paired per block, so drift cancels, and nothing is added for it.
    Every figure says the smallest change it could have flagged (80% of the time), and
    when every req/s moved one way together while the ratios held, the machine drift is
    named.
    Exit status 0, 1 when a check failed in either run (those measurements are left
    out), 2 when a run is unusable, the runs have no cell in common, or the one run has
    no variant (nothing to compare), 3 when --fail-on worse (or change) found a figure
    flagged worse (or changed) in B: req/s, a ratio, p99, CPU per request or a fixed-rate
    added latency (req/s not counted when machine drift is named); 3 wins over 1.

    Example:

        wrkreport compare raw/20261122T101500Z raw/20261122T164700Z --out reports/
        wrkreport compare raw/20261126T113000Z     # a run with --variant: in-run A/B
        wrkreport compare raw/main-run raw/branch-run --fail-on worse || echo regression
    """
    import textwrap
    from datetime import datetime, timezone

    with frozen_imports():
        from .compare.gate import gate
        from .compare.variants import DRIFT_NOTE
        from .report import build_compare, compare_table

    result, paths = build_compare(run_a, run_b, out_dir, datetime.now(timezone.utc), expect_header_bytes)
    if result.in_run and result.variant.app_b is not None:  # --app-b: two builds of the app, alone and behind nginx
        say(
            f"A: {result.a.run.path}: your app (--app), alone and behind nginx\nB: the same run: its build {result.variant.name} ({result.variant.options_text})"
        )
    elif result.in_run:
        say(
            f"A: {result.a.run.path}: its nginx setups\nB: the same run: their twins through {result.names[1]} ({result.variant.options_text})"
        )
    else:
        say(f"A: {result.a.run.path}\nB: {result.b.run.path}")
    say(compare_table(result))
    if result.in_run:
        say(textwrap.fill(DRIFT_NOTE, 100, break_on_hyphens=False))
    status = 0
    for side in (result.a,) if result.in_run else (result.a, result.b):
        for check in side.checks.failures:
            where = side.run.path / check.file if check.file else side.run.path
            fail(f"{where}: check failed: {check.name}: {check.message}")
            status = 1
    say(f"comparison: {paths['compare.html']}")
    tripped = gate(result, fail_on)
    if tripped:
        fail(
            f"--fail-on {fail_on}: {len(tripped)} figure{'s' if len(tripped) != 1 else ''} {'worse' if fail_on == 'worse' else 'changed'} in B: "
            + "; ".join(tripped)
        )
        status = GATE_FAILED
    return status


def summary(result) -> str:
    """Return a few readable lines about one parsed output."""
    lat = ", ".join(
        f"{label} {number(getattr(result, name))}"
        for label, name in (
            ("avg", "latency_avg_ms"),
            ("stdev", "latency_stdev_ms"),
            ("max", "latency_max_ms"),
            ("p50", "latency_p50_ms"),
            ("p75", "latency_p75_ms"),
            ("p90", "latency_p90_ms"),
            ("p99", "latency_p99_ms"),
            ("p99.9", "latency_p999_ms"),
        )
        if getattr(result, name) is not None or label in ("avg", "stdev", "max")
    )
    lines = [
        f"{result.source}: {result.tool} {result.url or h2load_protocol(result)}, {number(result.duration_s)} s, "
        f"{result.threads} threads, {result.connections} connections",
        f"  requests      {result.requests} in {number(result.elapsed_s)} s, "
        f"{number(result.requests_per_sec)} req/s, {number(result.bytes_read)} bytes read, "
        f"{number(result.bytes_per_response)} bytes/response",
        f"  latency ms    {lat}",
        f"  errors        connect {result.errors_connect}, read {result.errors_read}, "
        f"write {result.errors_write}, timeout {result.errors_timeout}, non-2xx/3xx {result.non_2xx_3xx}",
    ]
    if result.tool == "h2load":
        lines[-1] = (
            f"  errors        failed {result.failed_requests}, errored {result.errored_requests} "
            f"(timeout {result.errors_timeout}), non-2xx/3xx {result.non_2xx_3xx}"
        )
        lines.append(
            f"  h2load        {result.requests_started} started, {result.requests_done} done; connect avg "
            f"{number(result.connect_avg_ms)} ms, 1st byte avg {number(result.ttfb_avg_ms)} ms; headers "
            f"{result.header_bytes} bytes (space savings {number(result.header_space_savings_pct)}%), data {result.data_bytes} bytes"
        )
    return "\n".join(lines)


def h2load_protocol(result) -> str:
    """Return what an h2load output says of its connection instead of a URL (it prints none): `h2 over TLSv1.3`."""
    protocol = result.application_protocol or "no protocol negotiated"
    return f"{protocol} over {result.tls_protocol}" if result.tls_protocol else protocol


def clients_line(group: list[str], without: list[str]) -> str:
    """Return the line naming the clients merged into one measurement, and why it has no percentiles when so."""
    line = f"\n  clients       {len(group)}: " + ", ".join(group)
    if without:
        line += f"\n  percentiles   none: no latency histogram beside {', '.join(without)} (never an average of percentiles)"
    return line


def is_vegeta(path: str) -> bool:
    """Return True for a fixed-rate measurement's results file (`*.vegeta.csv.gz`, or `.vegeta.csv` uncompressed)."""
    return path.endswith((".vegeta.csv.gz", ".vegeta.csv"))


def rate_line(record: dict) -> str:
    """Return one vegeta file's line: the load it was measured at, then its exact percentiles."""
    offered = f"{record['offered_rps']:,.0f} req/s offered" if record["offered_rps"] else "an offered rate not in its name"
    achieved = "-" if record["achieved_rps"] is None else f"{record['achieved_rps']:,.1f}"
    figures = ", ".join(
        f"{name} {'-' if record[key] is None else format(record[key], '.3f')} ms"
        for name, key in (("p50", "p50_ms"), ("p90", "p90_ms"), ("p99", "p99_ms"), ("p99.9", "p999_ms"), ("max", "max_ms"))
    )
    return (
        f"{record['source']}: vegeta at {offered}, open loop: {record['requests']:,} requests, {achieved} req/s achieved; "
        f"{figures}; {record['errors']:,} errors ({record['timeouts']:,} timeouts)"
    )


def histogram_summary(record: dict) -> str:
    """Return a few readable lines about one latency histogram file."""

    def exact(ms: float | None) -> str:  # microsecond resolution: 3 decimals of a ms, every one meant
        return "-" if ms is None else f"{ms:.3f}"

    percentiles = ", ".join(f"p{p} {exact(v)}" for p, v in record["percentiles_ms"].items())
    errors = ", ".join(f"{kind} {count}" for kind, count in record["errors"].items())
    return "\n".join(
        [
            f"{record['source']}: wrk latency histogram, {record['latencies']} latencies ({record['distinct']} distinct)",
            f"  requests      {record['requests']} in {number(record['duration_s'])} s, {record['bytes_read']} bytes read",
            f"  latency ms    {percentiles}, max {exact(record['max_ms'])} (exact)",
            f"  errors        {errors}",
        ]
    )


def number(value: float | None) -> str:
    """Return a number for display (3 decimals under 100, else 2; no trailing zeros), '-' when absent."""
    if value is None:
        return "-"
    text = f"{value:.3f}" if abs(value) < 100 else f"{value:.2f}"
    return text.rstrip("0").rstrip(".")


def main() -> None:
    """Run the CLI; turn any library error into one line and an exit status."""
    try:
        status = cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        fail("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        fail(exc.format_message())
        sys.exit(exc.exit_code)
    except WrkreportError as exc:
        fail(exc.message())
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    # Commands return their exit status (0, 1, 2 or 3); None means success (e.g. --help).
    sys.exit(status if isinstance(status, int) else 0)
