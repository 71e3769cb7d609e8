"""Formatting: figures and manifest values -> the short strings the page and the terminal show."""

from __future__ import annotations

import json
import math

from ..core.records import CPU_METRIC, THROUGHPUT, Ratio
from ..core.setups import APP_BASELINE, BASELINE
from ..core.units import fmt_ms  # the one rule for a latency in ms, shared with report/rate_summary.py


def fmt_number(value: float | None, digits: int = 0) -> str:
    """Return a number with thousands separators, '-' when absent.

    >>> fmt_number(14812.345)
    '14,812'
    >>> fmt_number(None)
    '-'
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def fmt_ratio(ratio: Ratio | None) -> str:
    """Return '0.936 (0.921-0.950)', '0.936 (n=1, no interval)', or the exclusion.

    >>> fmt_ratio(Ratio("requests_per_sec", 1, "nginx-http", 0.9356, 0.921, 0.95, 5))
    '0.936 (0.921-0.950)'
    """
    if ratio is None:
        return "-"
    if ratio.ratio is None:
        return "-" if ratio.excluded and ratio.excluded.startswith("no ") and ratio.metric != THROUGHPUT else "excluded"
    if ratio.setup == ratio.baseline and ratio.metric in (THROUGHPUT, CPU_METRIC):
        return "1 (baseline)" if ratio.baseline in (BASELINE, APP_BASELINE) else "1 (the ceiling)"
    if ratio.ci_low is None:
        return f"{ratio.ratio:.3f} (n={ratio.n}, no interval)"
    return f"{ratio.ratio:.3f} ({ratio.ci_low:.3f}-{ratio.ci_high:.3f})"


def fmt_share(ratio: Ratio) -> str:
    """Return a throughput ratio as a share of Go's: '94% (91-96%)', the range unbreakable."""
    if ratio.ci_low is None:
        return f"{ratio.ratio:.0%} (one repeat, no interval)" if ratio.n == 1 else f"{ratio.ratio:.0%}"
    return f"{ratio.ratio:.0%} ({ratio.ci_low * 100:.0f}\u2011{ratio.ci_high:.0%})"  # non-breaking hyphen


def fmt_times(ratio: Ratio) -> str:
    """Return a cost ratio as a multiple: '2.14x (2.05-2.24)', the range unbreakable.

    >>> fmt_times(Ratio("cpu_server_ms_per_1k", 1, "nginx-http", 2.1414, 2.0502, 2.2361, 30))
    '2.14× (2.05‑2.24)'
    """
    if ratio.ci_low is None:
        return f"{ratio.ratio:.2f}×" + (" (one repeat, no interval)" if ratio.n == 1 else "")
    return f"{ratio.ratio:.2f}× ({ratio.ci_low:.2f}‑{ratio.ci_high:.2f})"  # times sign, non-breaking hyphen


def group_name(gomaxprocs: int, connections: int, several_levels: bool) -> str:
    """Return how a group is named in the page."""
    return f"GOMAXPROCS={gomaxprocs}" + (f", {connections} connections" if several_levels else "")


def fmt_mean(spread) -> str:
    """Return 'mean (low-high)' of a spread in ms, '-' when absent."""
    if spread is None:
        return "-"
    interval = spread.interval
    if interval.low is None:
        return f"{fmt_ms(interval.estimate)} (n=1)"
    return f"{fmt_ms(interval.estimate)} ({fmt_ms(max(interval.low, 0.0))}-{fmt_ms(interval.high)})"


def fmt_geometric(interval, number=None) -> str:
    """Return a geometric mean with its interval: '41,618 (36,790-47,080)', '41,618 (n=1)', '-' when absent."""
    number = number or fmt_number
    if interval is None:
        return "-"
    if interval.low is None:
        return f"{number(interval.estimate)} (n=1)"
    return f"{number(interval.estimate)} ({number(interval.low)}-{number(interval.high)})"


def fmt_range(low: float | None, high: float | None, number=None) -> str:
    """Return 'low-high', one value when both are equal at the shown precision, '-' when absent.

    >>> fmt_range(0.5, 0.5, lambda v: f"{v:.2f}"), fmt_range(1200.2, 1300.0)
    ('0.50', '1,200-1,300')
    """
    number = number or fmt_number
    if low is None or high is None:
        return "-"
    a, b = number(low), number(high)
    return a if a == b else f"{a}-{b}"


def fmt_share_of(spread) -> str:
    """Return a median fraction as a percentage, '-' when absent."""
    return "-" if spread is None else f"{spread.median:.0%}"


def display(value, key: str = "") -> str:
    """Return a manifest value for people: bytes in GiB, yes/no, lists joined, 'not recorded' for none.

    >>> display(25276502016, "memory_bytes"), display(True), display([1, 2]), display(None)
    ('23.5 GiB', 'yes', '1, 2', 'not recorded')
    >>> display({"go-http": 8080, "nginx-http": 8081})
    'go-http 8080, nginx-http 8081'
    """
    if value is None:
        return "not recorded"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and key.endswith("_bytes") and value >= 1024**2:
        return f"{value / 1024**3:.1f} GiB" if value >= 1024**3 else f"{value / 1024**2:.1f} MiB"
    if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
        return ", ".join(display(v) for v in value) if value else "none"
    if isinstance(value, dict) and all(not isinstance(v, (list, dict)) for v in value.values()):
        return ", ".join(f"{k} {display(v)}" for k, v in value.items()) if value else "none"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(", ", ": "))
    return str(value)


def none_if_nan(value):
    """Return None for NaN/None, else value."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value
