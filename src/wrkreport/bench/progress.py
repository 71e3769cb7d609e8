"""Progress: the per-measurement progress line and the end-of-run summary."""

from __future__ import annotations

import statistics
from pathlib import Path

from .cpu import cpu_ms_per_1k_requests, read_cpu_record
from .manifest import find_pass, levels_of
from .plan import estimate_seconds
from .setups import SETUP_BY_ID
from .values import format_duration, format_rate


def order_index(parameters: dict, connections: int, repeat: int) -> int:
    """Return the index in a pass's `order` of the (connection level, repeat) round."""
    return levels_of(parameters).index(connections) * parameters["repeats"] + repeat - 1


def progress_index(manifest: dict, gomaxprocs: int, connections: int, setup: str, repeat: int) -> tuple[int, int]:
    """Return (1-based position of this measurement in the whole run, total measurements)."""
    params = manifest["parameters"]
    per_round = len(params["setups"])
    per_pass = per_round * params["repeats"] * len(levels_of(params))
    pass_index = params["gomaxprocs"].index(gomaxprocs)
    round_index = order_index(params, connections, repeat)
    order = find_pass(manifest, gomaxprocs)["order"][round_index]
    index = pass_index * per_pass + round_index * per_round + order.index(setup) + 1
    return index, per_pass * len(params["gomaxprocs"])


def progress_start(manifest: dict, gomaxprocs: int, connections: int, setup: str, repeat: int) -> str:
    """Return the start of a progress line: '[5/40] nginx-fcgi-tcp GOMAXPROCS=2 run 2/5 (~3m 10s left) ... '.

    In a sweep, the connection level follows GOMAXPROCS: '... GOMAXPROCS=2 c=100 run 2/5 ...'.
    """
    params = manifest["parameters"]
    levels = levels_of(params)
    index, total = progress_index(manifest, gomaxprocs, connections, setup, repeat)
    passes_left = len(params["gomaxprocs"]) - params["gomaxprocs"].index(gomaxprocs) - 1
    levels_left = len(levels) - levels.index(connections) - 1
    left = estimate_seconds(params, index - 1, passes_left, levels_left)
    level = f" c={connections}" if len(levels) > 1 else ""
    return f"[{index}/{total}] {setup} GOMAXPROCS={gomaxprocs}{level} run {repeat}/{params['repeats']} (~{format_duration(left)} left) ... "


def progress_result(path: Path, exit_code: int) -> str:
    """Return the end of a progress line from a finished wrk file: '14,812 req/s' (+ problems)."""
    from ..errors import ParseError
    from ..parse import parse_file

    try:
        result = parse_file(path)
    except ParseError:
        text = path.read_text(errors="replace").strip() if path.exists() else ""
        last = text.splitlines()[-1] if text else "no output"
        return f"no result (wrk exit {exit_code}: {last})"
    if result.requests_per_sec is None:
        return f"no req/s (wrk exit {exit_code})"
    notes = []
    if result.non_2xx_3xx:
        notes.append(f"{result.non_2xx_3xx:,} non-2xx/3xx")
    if result.socket_errors:
        notes.append(f"{result.socket_errors:,} socket errors")
    if exit_code:
        notes.append(f"wrk exit {exit_code}")
    tail = f" ({', '.join(notes)})" if notes else ""
    return f"{format_rate(result.requests_per_sec)} req/s{tail}"


def summary_lines(run_dir: Path, manifest: dict) -> list[str]:
    """Return one line per cell: median req/s over its measurements, how many there were, and
    the median CPU time per 1,000 requests of each process the setup runs on."""
    from ..errors import ParseError
    from ..parse import parse_file

    params = manifest["parameters"]
    levels = levels_of(params)
    rates: dict[tuple, list[float]] = {}
    cpu: dict[tuple, dict[str, list[float]]] = {}
    for m in manifest["measurements"]:
        try:
            result = parse_file(run_dir / m["file"])
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
    for n in params["gomaxprocs"]:
        for c in levels:
            level = f" c={c}" if len(levels) > 1 else ""
            for setup in params["setups"]:
                values = rates.get((n, c, setup))
                shown = f"{format_rate(statistics.median(values))} req/s (median of {len(values)})" if values else "no result"
                per_process = cpu.get((n, c, setup), {})
                used = [f"{name} {statistics.median(per_process[name]):.1f}" for name in SETUP_BY_ID[setup].needs if name in per_process]
                if values and used:
                    shown += f"; CPU ms per 1k requests: {', '.join(used)}"
                lines.append(f"GOMAXPROCS={n}{level} {setup:<16} {shown}")
    return lines
