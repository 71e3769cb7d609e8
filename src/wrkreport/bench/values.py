"""Option values and short texts: strict converters (numbers, lists, CPU lists, durations, switches) and formats."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from ..core.display import ARGUMENT_LIMIT, argument, cut
from ..core.errors import UsageError
from .profiles import MAX_CPU, MAX_HANDLER_DELAY_NS, MAX_WHOLE, TIME_FORMAT


def utc_now() -> datetime:
    """Return the current time in UTC, to the second."""
    return datetime.now(timezone.utc).replace(microsecond=0)


def iso(t: datetime) -> str:
    """Return '2026-11-22T16:47:00Z' for a UTC datetime."""
    return t.strftime(TIME_FORMAT)


def iso_ms(t: datetime) -> str:
    """Return '2026-11-22T16:47:00.123Z' for a UTC datetime (milliseconds; readers accept both forms)."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def now_ms() -> datetime:
    """Return the current time in UTC, to the microsecond."""
    return datetime.now(timezone.utc)


def parse_iso(text: str) -> datetime:
    """Return the datetime of '2026-11-22T16:47:00Z' or '2026-11-22T16:47:00.123Z'."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


MAX_TIME = re.compile(r"(?P<number>[0-9]{1,6}(?:\.[0-9]{1,3})?)(?P<unit>s|m|h)?")


def parse_max_time(text: str, what: str) -> int:
    """Return a run time limit in seconds: '6m' -> 360, '90s' or '90' -> 90, '1h' -> 3600."""
    match = MAX_TIME.fullmatch(text.strip())
    if not match:
        raise UsageError(f"{what} must be a duration like 6m, 90s or 1h, not {argument(text)}")
    seconds = round(float(match["number"]) * {"s": 1, "m": 60, "h": 3600}[match["unit"] or "s"])
    if not 1 <= seconds <= 7 * 86_400:
        raise UsageError(f"{what} must be between 1s and 168h, not {argument(text)}")
    return seconds


def parse_percent(text: str, what: str) -> float:
    """Return a precision target in percent, above 0 and at most 100: '5' -> 5.0, '2.5' -> 2.5."""
    value = text.strip().removesuffix("%")
    if not re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{1,3})?", value) or not 0 < float(value) <= 100:
        raise UsageError(f"{what} must be a percentage above 0 and at most 100, e.g. 5 or 2.5, not {argument(text)}")
    return float(value)


def parse_int(text: str, what: str, minimum: int, seconds: bool = False, maximum: int | None = None) -> int:
    """Return text as an int in [minimum, maximum]: '6' -> 6, and with seconds=True also '6s' -> 6.

    Digits beyond the ceiling's are refused before conversion (Python refuses to convert
    over 4,300 digits, and a message should not repeat them).
    """
    value = text.strip()
    if seconds and value.endswith("s"):
        value = value[:-1]
    if not re.fullmatch(r"[0-9]+", value):
        unit = " (seconds, e.g. 6 or 6s)" if seconds else ""
        raise UsageError(f"{what} must be a whole number{unit}, not {argument(text)}")
    ceiling = MAX_WHOLE if maximum is None else maximum
    digits = value.lstrip("0") or "0"
    if len(digits) > len(str(ceiling)) or int(digits) > ceiling:
        raise UsageError(f"{what} must be at most {ceiling}, not {argument(value)}")
    number = int(digits)
    if number < minimum:
        raise UsageError(f"{what} must be at least {minimum}, not {number}")
    return number


def split_list(text: str) -> list[str]:
    """Split '1,2' or '1 2' into ['1', '2']."""
    return [item for item in re.split(r"[,\s]+", text.strip()) if item]


def dedupe(items: list) -> list:
    """Return items without repeats, first occurrence kept."""
    return list(dict.fromkeys(items))


def format_duration(seconds: float) -> str:
    """Return a short duration: 42 -> '42s', 190 -> '3m 10s', 3725 -> '1h 02m'."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def format_rate(value: float) -> str:
    """Return a rate with thousands separators: 14812.4 -> '14,812'."""
    return f"{round(value):,}"


CPU_RANGE = re.compile(r"(?P<first>[0-9]+)(?:-(?P<last>[0-9]+))?")


def parse_cpu_list(text: str, what: str) -> list[int]:
    """Return the CPUs of a taskset list, sorted: '0' -> [0], '0-2,5' -> [0, 1, 2, 5]."""
    cpus: set[int] = set()
    items = text.strip().split(",")
    for item in items:
        match = CPU_RANGE.fullmatch(item.strip())
        if not match:
            raise UsageError(f"{what} {argument(text)} is not a CPU list like 0, 1-3 or 0,2 (as taskset -c takes)")
        numbers = [n.lstrip("0") or "0" for n in match.groups() if n is not None]
        if any(len(n) > len(str(MAX_CPU)) or int(n) > MAX_CPU for n in numbers):
            raise UsageError(f"{what} {argument(text)}: CPU numbers go up to {MAX_CPU} at most")
        first, last = int(numbers[0]), int(numbers[-1])
        if last < first:
            raise UsageError(f"{what} {argument(text)}: range {item.strip()} runs backwards")
        cpus.update(range(first, last + 1))
    return sorted(cpus)


def format_cpu_list(cpus: list[int]) -> str:
    """Return the shortest taskset list for sorted CPUs: [0, 1, 2, 5] -> '0-2,5'."""
    parts, start = [], None
    for i, cpu in enumerate(cpus):
        if start is None:
            start = cpu
        if i + 1 == len(cpus) or cpus[i + 1] != cpu + 1:
            parts.append(str(cpu) if cpu == start else f"{start}-{cpu}")
            start = None
    return ",".join(parts)


def pin_list(text: str | None, what: str, available: frozenset[int]) -> list[int]:
    """Return the CPUs of a taskset list after checking each may be used; [] when not given."""
    if text is None or not text.strip():
        return []
    cpus = parse_cpu_list(text, what)
    missing = [cpu for cpu in cpus if cpu not in available]
    if missing:
        raise UsageError(
            f"{what} {text}: CPU {format_cpu_list(missing)} is not available here "
            f"(this machine lets the benchmark use CPU {format_cpu_list(sorted(available))})"
        )
    return cpus


DURATION = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<unit>ns|us|µs|ms|s)")


DURATION_UNITS_NS = {"ns": 1, "us": 1000, "µs": 1000, "ms": 10**6, "s": 10**9}


def parse_duration_ns(text: str, what: str) -> int:
    """Return a Go-style duration in nanoseconds: '1ms' -> 1000000, '500us' -> 500000, '0' -> 0."""
    value = text.strip()
    if value == "0":
        return 0
    match = DURATION.fullmatch(value)
    if not match:
        raise UsageError(f"{what} must be a duration like 1ms, 500us or 0, not {argument(text)}")
    ns = float(match["number"]) * DURATION_UNITS_NS[match["unit"]]  # inf for thousands of digits, never an error
    if ns > MAX_HANDLER_DELAY_NS:
        raise UsageError(f"{what} {cut(value, ARGUMENT_LIMIT, count=True)} is longer than {MAX_HANDLER_DELAY_NS // 10**9}s")
    return round(ns)


SWITCH_WORDS = {"1": True, "on": True, "yes": True, "true": True, "0": False, "off": False, "no": False, "false": False}


def parse_switch(text: str, what: str) -> bool:
    """Return an environment switch's value: '1', 'on', 'yes', 'true' -> True; '0', 'off', ... -> False."""
    value = SWITCH_WORDS.get(text.strip().lower())
    if value is None:
        raise UsageError(f"{what} must be 1 or 0 (on/off), not {argument(text)}")
    return value
