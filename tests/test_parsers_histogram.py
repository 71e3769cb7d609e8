"""Tests of wrkreport.parsers.histogram (and latency_histogram's merging): real captured .hist.json files against wrk's own percentiles and its
printed --latency lines, exact merging of two real wrk clients, a property test of merging,
and the exact message of every broken variant."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from properties import examples
from wrkreport.core.errors import ParseError
from wrkreport.core.latency_histogram import ERROR_KINDS, SHOWN_PERCENTILES, LatencyHistogram, merge, merge_pairs, percentile_us, rank_of
from wrkreport.core.units import MS_PER_TIME_UNIT
from wrkreport.parsers import parse_file
from wrkreport.parsers.histogram import hist_file_name, merge_files, parse_histogram

FIXTURES = Path(__file__).parent / "fixtures"
HIST = FIXTURES / "hist"
CAPTURED = sorted(HIST.glob("*.hist.json")) + sorted((FIXTURES / "runs" / "quick-hist").glob("*.hist.json"))
PRINTED = re.compile(r"^\s+(?P<p>50|75|90|99)%\s+(?P<value>[0-9.]+)(?P<unit>us|ms|s|m)$", re.M)


def read(path: Path):
    """Return the parsed histogram of a fixture."""
    return parse_histogram(path.name, path.read_bytes())


def wrk_text_of(path: Path) -> Path:
    """Return the wrk text output captured beside a histogram file."""
    return path.with_name(path.name.removesuffix(".hist.json") + ".wrk.txt")


def brute_percentile(values: list[int], p: float) -> int:
    """Return wrk's percentile of a plain list of latencies: the rank-th smallest."""
    return sorted(values)[rank_of(p, len(values)) - 1]


def expanded(pairs) -> list[int]:
    """Return every latency a histogram recorded, one entry per count."""
    return [value for value, count in pairs for _ in range(count)]


def test_the_fixtures_are_there():
    assert len(CAPTURED) >= 12 and {p.name for p in HIST.glob("*.hist.json")} >= {
        "client-1.hist.json",
        "client-2.hist.json",
        "api-path.hist.json",
    }


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.name)
def test_exact_percentiles_equal_what_wrk_itself_computed(path):
    histogram = read(path)
    assert histogram.wrk_percentiles_us is not None
    if histogram.count == 0:
        assert histogram.wrk_percentiles_us == {} and histogram.percentile_us(50) is None
        return
    assert set(histogram.wrk_percentiles_us) == {50.0, 75.0, 90.0, 99.0, 99.9, 99.99}
    for p, wrk_value in histogram.wrk_percentiles_us.items():
        assert histogram.percentile_us(p) == wrk_value, p


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.name)
def test_exact_percentiles_agree_with_the_printed_latency_distribution_within_its_rounding(path):
    histogram = read(path)
    text = wrk_text_of(path).read_text()
    printed = {float(m["p"]): (float(m["value"]), m["unit"]) for m in PRINTED.finditer(text)}
    assert set(printed) == {50.0, 75.0, 90.0, 99.0}
    for p, (value, unit) in printed.items():
        ours_ms = histogram.percentile_ms(p) or 0.0
        # wrk prints 2 decimals in the unit it picks: the true value is within half a digit.
        assert abs(ours_ms - value * MS_PER_TIME_UNIT[unit]) <= 0.005 * MS_PER_TIME_UNIT[unit] + 1e-9, (p, ours_ms, value, unit)


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.name)
def test_totals_agree_with_the_wrk_text(path):
    histogram, result = read(path), parse_file(wrk_text_of(path))
    assert histogram.requests == result.requests
    assert histogram.duration_us / 1e6 == pytest.approx(result.elapsed_s, abs=0.006)
    assert histogram.bytes_read == pytest.approx(result.bytes_read, rel=0.006, abs=1)  # wrk prints bytes to 2 decimals
    assert histogram.count >= histogram.requests - histogram.errors["timeout"]  # the correction only adds


def test_the_latency_i_path_gives_the_same_kind_of_file_as_the_ffi_path():
    api, ffi = read(HIST / "api-path.hist.json"), read(HIST / "client-1.hist.json")
    docs = [json.loads((HIST / name).read_text()) for name in ("api-path.hist.json", "client-1.hist.json")]
    assert [d["read_by"] for d in docs] == ["latency(i)", "ffi"]
    assert set(docs[0]) == set(docs[1]) and api.count > 0 and ffi.count > 0


def test_a_run_that_recorded_nothing_has_an_empty_histogram():
    histogram = read(HIST / "no-response.hist.json")
    assert (histogram.requests, histogram.count, histogram.pairs, histogram.percentile_ms(99)) == (0, 0, (), None)


def test_two_real_clients_merge_exactly():
    one, two = read(HIST / "client-1.hist.json"), read(HIST / "client-2.hist.json")
    merged = merge([one, two])
    assert (merged.requests, merged.bytes_read, merged.clients) == (one.requests + two.requests, one.bytes_read + two.bytes_read, 2)
    assert merged.errors == {kind: one.errors[kind] + two.errors[kind] for kind in one.errors}
    assert merged.count == one.count + two.count
    assert merged.requests_per_sec == pytest.approx(one.requests_per_sec + two.requests_per_sec)
    everything = expanded(one.pairs) + expanded(two.pairs)
    for p in (50.0, 99.0, *SHOWN_PERCENTILES):
        low, high = sorted((one.percentile_us(p), two.percentile_us(p)))
        assert low <= merged.percentile_us(p) <= high, p
        assert merged.percentile_us(p) == brute_percentile(everything, p), p
    averaged = (one.percentile_us(99) + two.percentile_us(99)) / 2
    assert merged.percentile_us(99) != averaged  # what merging must not be: these clients differ
    from_files = merge_files([HIST / "client-2.hist.json", HIST / "client-1.hist.json"])
    assert (from_files.pairs, from_files.requests, from_files.errors) == (merged.pairs, merged.requests, merged.errors)


def test_merging_files_names_the_one_that_cannot_be_used(tmp_path):
    bad = tmp_path / "client-3.hist.json"
    bad.write_text("{}")
    with pytest.raises(ParseError) as caught:
        merge_files([HIST / "client-1.hist.json", bad])
    assert caught.value.message() == f"{bad}: not a latency histogram: format is None, expected 'wrkreport-latency-histogram'"


pairs_strategy = st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 50)), max_size=40).map(lambda ps: merge_pairs(ps))


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(pairs_strategy, min_size=1, max_size=4), st.randoms(), st.floats(0, 100))
def test_merging_is_order_independent_and_equals_the_percentile_of_the_union(histograms, rng, p):
    shuffled = list(histograms)
    rng.shuffle(shuffled)
    merged = merge_pairs(*histograms)
    assert merged == merge_pairs(*shuffled)
    union = [value for pairs in histograms for value in expanded(pairs)]
    expected = brute_percentile(union, p) if union else None
    assert percentile_us(merged, p) == expected
    record = LatencyHistogram("h", 1, 0, 0, dict.fromkeys(ERROR_KINDS, 0), merged, 0.0)
    assert record.percentile_us(p) == expected and record.count == len(union)  # the record's bisection: the same value


def test_rank_follows_wrks_rounding():
    assert [rank_of(p, 10) for p in (0, 10, 49.9, 50, 90, 99, 100)] == [1, 2, 5, 6, 10, 10, 10]
    assert percentile_us([(7, 1)], 100) == 7  # wrk's own percentile(100) returns 0; ours the maximum
    with pytest.raises(ValueError):
        percentile_us([(7, 1)], 101)


def test_the_file_name_sits_beside_the_wrk_file():
    assert hist_file_name("nginx-http.gomaxprocs-2.c100.block-3.run-7.wrk.txt") == "nginx-http.gomaxprocs-2.c100.block-3.run-7.hist.json"


# --- Broken variants, each with its exact message ------------------------------------------

GOOD = json.loads((HIST / "client-1.hist.json").read_text())


def variant(**changes) -> bytes:
    """Return the client-1 fixture with top-level keys replaced (None deletes)."""
    doc = dict(GOOD)
    for key, value in changes.items():
        if value is None:
            doc.pop(key)
        else:
            doc[key] = value
    return json.dumps(doc).encode()


BROKEN = [
    (b"\x00garbage", "x.hist.json: not a latency histogram: not JSON (Expecting value: line 1 column 1 (char 0))"),
    (b"[1, 2]", "x.hist.json: not a latency histogram: expected a JSON object, found list"),
    (b"[" * 5000 + b"]" * 5000, "x.hist.json: not a latency histogram: nested too deeply"),
    (variant(format="other"), "x.hist.json: not a latency histogram: format is 'other', expected 'wrkreport-latency-histogram'"),
    (variant(version=2), "x.hist.json: histogram version 2 is not one this wrkreport reads (1)"),
    (variant(version=True), "x.hist.json: histogram version True is not one this wrkreport reads (1)"),
    (variant(unit="ms"), "x.hist.json: unit is 'ms', expected 'us' (microseconds)"),
    (variant(requests=-1), "x.hist.json: requests: expected an integer from 0 to 9007199254740992, found -1"),
    (variant(requests=1.5), "x.hist.json: requests: expected an integer from 0 to 9007199254740992, found 1.5"),
    (variant(bytes=None), "x.hist.json: bytes: expected an integer from 0 to 9007199254740992, found None"),
    (variant(duration_us="1s"), "x.hist.json: duration_us: expected an integer from 0 to 10000000000000, found '1s'"),
    (variant(errors=[]), "x.hist.json: errors: expected an object, found a list"),
    (
        variant(errors={**GOOD["errors"], "timeout": True}),
        "x.hist.json: errors.timeout: expected an integer from 0 to 9007199254740992, found True",
    ),
    (variant(histogram={}), "x.hist.json: histogram: expected a list of [latency_us, count] pairs, found an object"),
    (variant(histogram=[[5, 1], [5, 2]]), "x.hist.json: histogram[1]: latency 5 us does not follow 5 (values must increase)"),
    (variant(histogram=[[5, 1], [3, 2]]), "x.hist.json: histogram[1]: latency 3 us does not follow 5 (values must increase)"),
    (variant(histogram=[[5, 0]]), "x.hist.json: histogram[0]: count 0 outside 1-9007199254740992"),
    (variant(histogram=[[-5, 1]]), "x.hist.json: histogram[0]: latency -5 us outside 0-1000000000000"),
    (variant(histogram=[[5, 1, 1]]), "x.hist.json: histogram[0]: expected a [latency_us, count] pair of integers, found a list"),
    (variant(histogram=[[5.0, 1]]), "x.hist.json: histogram[0]: expected a [latency_us, count] pair of integers, found a list"),
    (variant(histogram=[[5, 1]]), f"x.hist.json: latency.distinct is {GOOD['latency']['distinct']} but the histogram says 1"),
    (variant(latency=None), "x.hist.json: latency: expected an object, found None"),
    (variant(percentiles={"fifty": 3}), "x.hist.json: percentiles: key 'fifty' is not a percentile from 0 to 100"),
    (variant(percentiles={"50": -3}), "x.hist.json: percentiles.50: expected a latency in us, found -3"),
    (variant(requests=10**40), "x.hist.json: not a latency histogram: a number of more than 30 digits"),
    (variant(requests=2**60), "x.hist.json: requests: expected an integer from 0 to 9007199254740992, found 1152921504606846976"),
    (variant(histogram=[[5, 1], [6, True]]), "x.hist.json: histogram[1]: expected a [latency_us, count] pair of integers, found a list"),
    (
        b'{"format": "wrkreport-latency-histogram", "version": 1, "unit": "us", "requests": NaN}',
        "x.hist.json: duration_us: expected an integer from 0 to 10000000000000, found None",
    ),
]


@pytest.mark.parametrize(("data", "message"), BROKEN, ids=range(len(BROKEN)))
def test_each_broken_variant_gets_its_one_line_message(data, message):
    with pytest.raises(ParseError) as caught:
        parse_histogram("x.hist.json", data)
    assert caught.value.message() == message
    assert "\n" not in caught.value.message()


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_arbitrary_bytes_raise_nothing_but_parse_error(data):
    try:
        parse_histogram("x.hist.json", data)
    except ParseError:
        pass


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, len((HIST / "client-2.hist.json").read_bytes())))
def test_every_truncation_of_a_real_file_raises_parse_error(cut):
    data = (HIST / "client-2.hist.json").read_bytes()
    if cut >= len(data.rstrip()):  # only the final newline cut: still the whole object
        assert parse_histogram("x.hist.json", data[:cut]).count > 0
        return
    with pytest.raises(ParseError):
        parse_histogram("x.hist.json", data[:cut])


def test_a_histogram_record_refuses_pairs_out_of_order():
    good = read(HIST / "client-1.hist.json")
    with pytest.raises(ValueError, match="increasing values and positive counts"):
        dataclasses.replace(good, pairs=((5, 1), (4, 1)))
    with pytest.raises(ValueError, match="increasing values and positive counts"):
        dataclasses.replace(good, pairs=((5, 0),))


def test_doctests():
    import doctest

    from wrkreport.core import latency_histogram
    from wrkreport.parsers import histogram

    found = [doctest.testmod(module) for module in (latency_histogram, histogram)]
    failures, tried = sum(f for f, _ in found), sum(t for _, t in found)
    assert failures == 0 and tried >= 6
