"""Progress: the per-measurement progress line and the end-of-run summary."""

from __future__ import annotations

import statistics
from pathlib import Path

from ..core.setups import SETUP_BY_ID
from .cpu import cpu_ms_per_1k_requests, read_cpu_record
from .manifest import find_pass, levels_of
from .parameters import estimate_seconds, measurement_count
from .profiles import RAW_SUFFIX
from .values import format_duration, format_rate, now_ms, parse_iso


def progress_start(manifest: dict, gomaxprocs: int, connections: int, setup: str, repeat: int) -> str:
    """Return the start of a progress line: '[5/40] nginx-fcgi-tcp GOMAXPROCS=2 run 2/5 (~3m 10s left) ... '.

    In a sweep, the connection level follows GOMAXPROCS ('... GOMAXPROCS=2 c=100 run 2/5 ...');
    with several blocks, the block follows ('... block 2/4 run 5/12 ...'). With the stopping
    rule the total is open: '[61] ... block 3 run 8 (+/-7.5% so far, <= 4m 10s left) ... '.
    """
    params = manifest["parameters"]
    levels = levels_of(params)
    entry = find_pass(manifest, gomaxprocs)
    done = len(manifest["measurements"])
    level = f" c={connections}" if len(levels) > 1 else ""
    block = entry.get("block", 1)
    if params.get("adaptive"):
        record = manifest.get("precision") or {}
        worst = record.get("worst_half_width_pct")
        so_far = f"+/-{worst:g}% so far" if worst is not None else "no interval yet"
        left = ""
        if params.get("max_time_s") is not None:
            left = f", <= {format_duration(params['max_time_s'] - elapsed_of(manifest))} left"
        return f"[{done + 1}] {setup} GOMAXPROCS={gomaxprocs}{level} block {block} run {repeat} ({so_far}{left}) ... "
    blocks = params.get("blocks") or 1
    passes_left = len(params["gomaxprocs"]) * blocks - len(manifest["passes"])
    levels_left = len(levels) - levels.index(connections) - 1
    left = estimate_seconds(params, done, passes_left, levels_left)
    shown_block = f" block {block}/{blocks}" if blocks > 1 else ""
    return f"[{done + 1}/{measurement_count(params)}] {setup} GOMAXPROCS={gomaxprocs}{level}{shown_block} run {repeat}/{params['repeats']} (~{format_duration(left)} left) ... "


def elapsed_of(manifest: dict) -> float:
    """Return the seconds since the run started."""
    return (now_ms() - parse_iso(manifest["started_at"])).total_seconds()


def progress_result(path: Path, exit_code: int) -> str:
    """Return the end of a progress line from a finished wrk (ab, h2load) file: '14,812 req/s' (+ problems)."""
    from ..core.errors import ParseError
    from ..parsers import parse_file

    tool = next((name for name, suffix in RAW_SUFFIX.items() if path.name.endswith(suffix)), "wrk")

    try:
        result = parse_file(path)
    except ParseError:
        text = path.read_text(errors="replace").strip() if path.exists() else ""
        last = text.splitlines()[-1] if text else "no output"
        return f"no result ({tool} exit {exit_code}: {last})"
    if result.requests_per_sec is None:
        return f"no req/s ({tool} exit {exit_code})"
    notes = []
    if result.non_2xx_3xx:
        notes.append(f"{result.non_2xx_3xx:,} non-2xx/3xx")
    if result.socket_errors:
        notes.append(f"{result.socket_errors:,} socket errors")
    if exit_code:
        notes.append(f"{tool} exit {exit_code}")
    tail = f" ({', '.join(notes)})" if notes else ""
    return f"{format_rate(result.requests_per_sec)} req/s{tail}"


def summary_lines(run_dir: Path, manifest: dict) -> list[str]:
    """Return one line per cell: median req/s over its measurements, how many there were, and
    the median CPU time per 1,000 requests of each process the setup runs on."""
    from ..core.errors import ParseError
    from .remote_clients.totals import measurement_files, totals

    params = manifest["parameters"]
    levels = levels_of(params)
    rates: dict[tuple, list[float]] = {}
    cpu: dict[tuple, dict[str, list[float]]] = {}
    for m in manifest["measurements"]:
        try:
            result = totals([run_dir / f for f in measurement_files(m)])  # several clients: added up
        except ParseError:
            continue
        key = (m["gomaxprocs"], m.get("connections", levels[0]), m["setup"])
        if result.requests_per_sec is not None:
            rates.setdefault(key, []).append(result.requests_per_sec)
        record = read_cpu_record(run_dir, m.get("cpu_file"))
        if record and result.requests:
            for name, ms in cpu_ms_per_1k_requests(record, result.requests).items():
                cpu.setdefault(key, {}).setdefault(name, []).append(ms)
    lines = []
    width = max(16, *map(len, params["setups"]))  # nginx-https-unix-new is longer than the 16 of the plain setups
    for n in params["gomaxprocs"]:
        for c in levels:
            level = f" c={c}" if len(levels) > 1 else ""
            for setup in params["setups"]:
                values = rates.get((n, c, setup))
                shown = f"{format_rate(statistics.median(values))} req/s (median of {len(values)})" if values else "no result"
                per_process = cpu.get((n, c, setup), {})
                needs = SETUP_BY_ID[setup].cpu_processes  # a twin's CPU record says nginx, an app setup's "app"
                used = [f"{name} {statistics.median(per_process[name]):.1f}" for name in needs if name in per_process]
                if values and used:
                    shown += f"; CPU ms per 1k requests: {', '.join(used)}"
                lines.append(f"GOMAXPROCS={n}{level} {setup:<{width}} {shown}")
    return lines + rate_lines(run_dir, manifest)


def rate_lines(run_dir: Path, manifest: dict) -> list[str]:
    """Return the fixed-rate phase's lines (report/rate_summary.py): per GOMAXPROCS and planned rate, the latency each setup adds over go-http, open loop; then per GOMAXPROCS the capacities at the objective."""
    from ..analysis.capacities import capacities
    from ..analysis.rate_latency import rate_cells
    from ..core.capacity import slo_of
    from ..report.rate_summary import capacity_lines, rate_summary_lines
    from ..runs.rate_measurements import planned_rates, read_rate_measurements

    measurements, _ = read_rate_measurements(run_dir, manifest)  # problems are the report's to show
    setups = manifest["parameters"]["setups"]
    cells = rate_cells(measurements, setups, planned_rates(manifest))  # rate_summary_lines says the planned rates only
    return rate_summary_lines(cells) + capacity_lines(
        capacities(measurements, slo_of(manifest["parameters"].get("slo")), setups, manifest["parameters"].get("check_share"))
    )
