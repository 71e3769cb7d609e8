"""Formatting: figures and manifest values -> the short strings the page and the terminal show."""

from __future__ import annotations

import json
import math

from ..analyze import THROUGHPUT
from ..model import BASELINE, Ratio


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


def fmt_ms(value: float | None) -> str:
    """Return a latency in ms with 3 significant digits ('-' when absent).

    >>> fmt_ms(0.81495), fmt_ms(12.345), fmt_ms(1210.0)
    ('0.815', '12.3', '1,210')
    """
    if value is None or math.isnan(value):
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.{max(0, 2 - math.floor(math.log10(value)))}f}" if value > 0 else "0"


def fmt_ratio(ratio: Ratio | None) -> str:
    """Return '0.936 (0.921-0.950)', '0.936 (n=1, no interval)', or the exclusion.

    >>> fmt_ratio(Ratio("requests_per_sec", 1, "nginx-http", 0.9356, 0.921, 0.95, 5))
    '0.936 (0.921-0.950)'
    """
    if ratio is None:
        return "-"
    if ratio.ratio is None:
        return "-" if ratio.excluded and ratio.excluded.startswith("no ") and ratio.metric != THROUGHPUT else "excluded"
    if ratio.setup == ratio.baseline and ratio.metric == THROUGHPUT:
        return "1 (baseline)" if ratio.baseline == BASELINE else "1 (the ceiling)"
    if ratio.ci_low is None:
        return f"{ratio.ratio:.3f} (n={ratio.n}, no interval)"
    return f"{ratio.ratio:.3f} ({ratio.ci_low:.3f}-{ratio.ci_high:.3f})"


def fmt_share(ratio: Ratio) -> str:
    """Return a throughput ratio as a share of Go's: '94% (91-96%)', the range unbreakable."""
    if ratio.ci_low is None:
        return f"{ratio.ratio:.0%} (one repeat, no interval)" if ratio.n == 1 else f"{ratio.ratio:.0%}"
    return f"{ratio.ratio:.0%} ({ratio.ci_low * 100:.0f}\u2011{ratio.ci_high:.0%})"  # non-breaking hyphen


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


def fmt_share_of(spread) -> str:
    """Return a median fraction as a percentage, '-' when absent."""
    return "-" if spread is None else f"{spread.median:.0%}"


def display(value) -> str:
    """Return a manifest value for display (None as 'unknown', lists and dicts as JSON)."""
    if value is None:
        return "unknown"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(", ", ": "))
    return str(value)


def none_if_nan(value):
    """Return None for NaN/None, else value."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value

