"""Units: strict converters from wrk's printed tokens to plain numbers (ms, bytes, seconds), and a latency back to text.

Every converter takes one token exactly as wrk prints it (surrounding spaces allowed) and
raises ValueError for anything else; `nan`, `-nan` and `inf` (any sign, any case) are
"no data" and become None. wrk prints no negative time, count, size or percentage (they
are unsigned or sums of them), so a negative number is rejected too. Units are case-sensitive, as in wrk's `units.c`: `m` is
minutes in a time, `M` is a million in a count, `k` is 1000 and `K` (bytes) is 1024.

fmt_ms is the one way a latency in ms is written, by the page, the terminal and the
driver's summary alike: three significant digits.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

# A number as wrk prints it, then its unit letters (`-nanus` is `-nan` + `us`).
VALUE_TOKEN = re.compile(r"(?P<num>[-+]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+|nan|inf))(?P<unit>[A-Za-z]*)", re.ASCII | re.I)
NOT_A_NUMBER = re.compile(r"[-+]?(?:nan|inf)", re.ASCII | re.I)

MS_PER_TIME_UNIT = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
COUNT_MULTIPLIER = {"": 1, "k": 1000, "M": 10**6, "G": 10**9, "T": 10**12}
BYTES_PER_SIZE_UNIT = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
SECONDS_PER_DURATION_UNIT = {"s": 1, "m": 60, "h": 3600}


def split_token(token: str) -> tuple[str, str]:
    """Split a token into its number and unit text.

    >>> split_token("814.95us")
    ('814.95', 'us')
    >>> split_token(" -nanus ")
    ('-nan', 'us')
    >>> split_token("0.87k")
    ('0.87', 'k')
    """
    match = VALUE_TOKEN.fullmatch(token.strip())
    if match is None:
        raise ValueError(f"not a number with a unit: {token.strip()!r}")
    return match["num"], match["unit"]


def finite(value, kind=(int, float)) -> float | int | None:
    """Return value when it is a finite number of kind (not a bool: JSON's true is no count), else None.

    >>> finite(3), finite(True), finite(float("nan")), finite(2.5, int), finite("3")
    (3, None, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, kind):
        return None
    return value if math.isfinite(value) else None


def number(text: str) -> float | None:
    """Return a plain number; nan/inf -> None.

    >>> number("94.35")
    94.35
    >>> number("-nan") is None
    True
    >>> number("1.2k")
    Traceback (most recent call last):
    ValueError: not a plain number: '1.2k'
    """
    num, unit = split_token(text)
    if unit:
        raise ValueError(f"not a plain number: {text.strip()!r}")
    return _finite(num)


def time_to_ms(token: str) -> float | None:
    """Return a time token (us, ms, s, m, h) in milliseconds; nan/inf -> None.

    >>> time_to_ms("814.95us")
    0.81495
    >>> time_to_ms("1.20ms")
    1.2
    >>> time_to_ms("1.20s")
    1200.0
    >>> time_to_ms("0.92m")
    55200.0
    >>> time_to_ms("-nanus") is None
    True
    >>> time_to_ms("1.20")
    Traceback (most recent call last):
    ValueError: time '1.20' has no unit (expected us, ms, s, m or h)
    """
    return _in_unit(token, "time", MS_PER_TIME_UNIT, "us, ms, s, m or h", bare=True)


def count(token: str) -> float | None:
    """Return a count token (no suffix, k, M, G, T; base 1000) as a number; nan/inf -> None.

    >>> count("0.87k")
    870.0
    >>> count("220.75")
    220.75
    >>> count("1.50M")
    1500000.0
    >>> count("-nan") is None
    True
    >>> count("1.29K")
    Traceback (most recent call last):
    ValueError: count '1.29K' has unit 'K' (expected none, k, M, G or T)
    """
    return _in_unit(token, "count", COUNT_MULTIPLIER, "none, k, M, G or T")


def size_to_bytes(token: str) -> float | None:
    """Return a size token (B, KB, MB, GB, TB; base 1024) in bytes; nan/inf -> None.

    >>> size_to_bytes("229.53B")
    229.53
    >>> size_to_bytes("1.35KB")
    1382.4
    >>> size_to_bytes("14.46MB")
    15162408.96
    >>> size_to_bytes("infTB") is None
    True
    >>> size_to_bytes("14.46M")
    Traceback (most recent call last):
    ValueError: size '14.46M' has unit 'M' (expected B, KB, MB, GB or TB)
    """
    return _in_unit(token, "size", BYTES_PER_SIZE_UNIT, "B, KB, MB, GB or TB")


def duration_to_s(token: str) -> float:
    """Return a test duration (`30s`, `1m`, `2h`) in seconds.

    >>> duration_to_s("30s")
    30.0
    >>> duration_to_s("1m")
    60.0
    >>> duration_to_s("2h")
    7200.0
    >>> duration_to_s("30")
    Traceback (most recent call last):
    ValueError: duration '30' has no unit (expected s, m or h)
    """
    if NOT_A_NUMBER.fullmatch(split_token(token)[0]):
        raise ValueError(f"duration {token.strip()!r} is not a number")
    return _in_unit(token, "duration", SECONDS_PER_DURATION_UNIT, "s, m or h", bare=True)  # never None: nan/inf raised above


def _in_unit(token: str, what: str, per_unit: dict[str, float | int], expected: str, bare: bool = False) -> float | None:
    """Return a token's number times its unit's factor in per_unit, the one rule of every converter with units.

    nan/inf with a unit of per_unit -> None; any other unit raises ValueError naming what the
    token is and the units expected. bare (a time, a duration): a token without a unit is
    told apart, nan/inf without one being None and a number without one 'has no unit';
    otherwise (a size) no unit is one more wrong unit (has unit '').
    """
    num, unit = split_token(token)
    if NOT_A_NUMBER.fullmatch(num) and (unit in per_unit or (bare and not unit)):
        return None
    if unit not in per_unit:
        said = "has no unit" if bare and not unit else f"has unit {unit!r}"
        raise ValueError(f"{what} {token.strip()!r} {said} (expected {expected})")
    return _scaled(num, per_unit[unit])


def fmt_ms(value: float | None) -> str:
    """Return a latency (or a difference of two) in ms with 3 significant digits, whole with thousands separators from 100 on; '-' when absent.

    >>> fmt_ms(0.81495), fmt_ms(12.345), fmt_ms(1210.0), fmt_ms(-0.1412), fmt_ms(0.0), fmt_ms(None)
    ('0.815', '12.3', '1,210', '-0.141', '0', '-')
    """
    if value is None or math.isnan(value):
        return "-"
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    return f"{value:.{max(0, 2 - math.floor(math.log10(size)))}f}" if size > 0 else "0"


def _finite(num: str) -> float | None:
    """Return float(num), or None for nan/inf."""
    if NOT_A_NUMBER.fullmatch(num):
        return None
    return _scaled(num, 1)


def _scaled(num: str, multiplier: float | int) -> float:
    """Return num * multiplier rounded once (decimal arithmetic: 0.87k is 870.0, not 870.0000000000001)."""
    if Decimal(num) < 0:
        raise ValueError(f"negative number {num!r}: wrk prints none here")
    value = float(Decimal(num) * Decimal(str(multiplier)))
    if math.isinf(value):
        raise ValueError(f"number {num!r} is too large")
    return value


def round_figures(value: float, figures: int) -> int:
    """Return a positive rate rounded to `figures` significant figures, at least 1 (rates are named by such whole numbers).

    >>> round_figures(6234.5, 2), round_figures(17345.2, 3), round_figures(87.2, 2), round_figures(0.3, 3)
    (6200, 17300, 87, 1)
    """
    if value < 1:
        return 1
    digits = len(str(int(value))) - figures
    return int(round(value, -digits)) if digits > 0 else int(round(value))
