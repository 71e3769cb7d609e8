"""Tests of wrkreport.core.units: every unit wrk prints, case-sensitivity, nan/inf, and rejections."""

from __future__ import annotations

import doctest

import pytest

from wrkreport.core import units


def test_docstring_examples_hold():
    failures, tried = doctest.testmod(units)
    assert tried > 20 and failures == 0


@pytest.mark.parametrize(
    ("token", "ms"),
    [
        ("814.95us", 0.81495),
        ("740.00us", 0.74),
        ("1.30ms", 1.3),
        ("1000.00ms", 1000.0),
        ("1.20s", 1200.0),
        (" 1.20s ", 1200.0),  # percentile cells keep one trailing space
        ("0.92m", 55_200.0),
        ("60.00m", 3_600_000.0),
        ("2.00h", 7_200_000.0),
        ("0.00us", 0.0),
    ],
)
def test_time_to_ms(token, ms):
    assert units.time_to_ms(token) == pytest.approx(ms, rel=1e-12)


@pytest.mark.parametrize("token", ["-nanus", "nanus", "-nan", "nan", "NaN", "infm", "inf", "+inf"])
def test_time_nan_and_inf_are_none(token):
    assert units.time_to_ms(token) is None


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("1.20", "has no unit"),
        ("1.20M", "has unit 'M'"),  # M is a count suffix, never a time
        ("1.20MS", "has unit 'MS'"),  # case-sensitive
        ("1.20 ms", "not a number with a unit"),
        ("fast", "not a number with a unit"),
        ("", "not a number with a unit"),
    ],
)
def test_time_rejects(token, message):
    with pytest.raises(ValueError, match=message):
        units.time_to_ms(token)


@pytest.mark.parametrize(
    ("token", "value"),
    [("0.87k", 870.0), ("1.29k", 1290.0), ("220.75", 220.75), ("850.00", 850.0), ("1.50M", 1_500_000.0), ("2.00G", 2e9), ("1.00T", 1e12)],
)
def test_count(token, value):
    assert units.count(token) == value  # exact: decimal arithmetic, no 870.0000000000001


@pytest.mark.parametrize("token", ["1.29K", "1.50m", "1.00P", "3B"])
def test_count_rejects_other_suffixes(token):
    with pytest.raises(ValueError, match="count"):
        units.count(token)


@pytest.mark.parametrize(
    ("token", "value"),
    [
        ("0.00B", 0.0),
        ("229.53B", 229.53),
        ("870.00B", 870.0),
        ("0.85KB", 0.85 * 1024),
        ("14.46MB", 14.46 * 1024**2),
        ("14.06GB", 14.06 * 1024**3),
        ("0.91TB", 0.91 * 1024**4),
    ],
)
def test_size_to_bytes_is_base_1024(token, value):
    assert units.size_to_bytes(token) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("token", ["14.46M", "14.46mb", "14.46kB", "14.46", "14.46PB"])
def test_size_rejects(token):
    with pytest.raises(ValueError, match="size"):
        units.size_to_bytes(token)


def test_size_inf_is_none():
    assert units.size_to_bytes("infTB") is None


@pytest.mark.parametrize(("token", "seconds"), [("30s", 30.0), ("1m", 60.0), ("120m", 7200.0), ("2h", 7200.0)])
def test_duration_to_s(token, seconds):
    assert units.duration_to_s(token) == seconds


@pytest.mark.parametrize("token", ["30", "30ms", "nans", "1M"])
def test_duration_rejects(token):
    with pytest.raises(ValueError, match="duration"):
        units.duration_to_s(token)


@pytest.mark.parametrize(("token", "value"), [("94.35", 94.35), ("100.00", 100.0), ("-nan", None), ("nan", None), ("inf", None)])
def test_number(token, value):
    assert units.number(token) == value


def test_number_rejects_units_and_huge_values():
    with pytest.raises(ValueError, match="not a plain number"):
        units.number("94.35k")
    with pytest.raises(ValueError, match="too large"):
        units.number("9" * 400)


@pytest.mark.parametrize(
    "convert, token, number",
    [
        (units.time_to_ms, "-1.20ms", "-1.20"),
        (units.count, "-0.87k", "-0.87"),
        (units.size_to_bytes, "-13.93MB", "-13.93"),
        (units.number, "-94.35", "-94.35"),
    ],
)
def test_negative_values_are_rejected(convert, token, number):
    # wrk prints no negative time, count, size or rate (issue 14: `-13.93MB read` became a ValueError in the record).
    with pytest.raises(ValueError, match=f"negative number '{number}': wrk prints none here"):
        convert(token)
