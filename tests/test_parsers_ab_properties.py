"""Property tests of wrkreport.parsers.ab: any ab-like text, and every truncation of a real ab output,
either parses or raises ParseError -- never anything else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import parses_or_parse_error
from properties import examples

CAPTURED = Path(__file__).parent / "fixtures" / "ab" / "captured"
REAL = sorted(CAPTURED.glob("*.txt"))
REPORTS = [p for p in REAL if "(longest request)" in p.read_text()]
REAL_LINES = sorted({line for p in REAL for line in p.read_text().splitlines()})
BANNER = "This is ApacheBench, Version 2.3 <$Revision$>"
ABISH = st.sampled_from(sorted(set("".join(REAL_LINES)) | set("\t\r\xa0\x00é-+")))


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=ABISH, max_size=400))
def test_banner_then_ab_characters_raise_only_parse_error(text):
    parses_or_parse_error(BANNER + "\n" + text)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(REAL_LINES), max_size=50))
def test_shuffled_real_lines_after_the_banner_raise_only_parse_error(lines):
    parses_or_parse_error("\n".join([BANNER, *lines]))


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(REAL), st.data())
def test_real_output_with_a_line_dropped_or_repeated(path, data):
    lines = path.read_text().splitlines()
    index = data.draw(st.integers(0, len(lines) - 1))
    parses_or_parse_error("\n".join(lines[:index] + lines[index + 1 :]))
    parses_or_parse_error("\n".join(lines[: index + 1] + lines[index:]))


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(REAL), st.data())
def test_real_output_with_one_character_changed(path, data):
    text = path.read_text()
    index = data.draw(st.integers(0, len(text) - 1))
    parses_or_parse_error(text[:index] + data.draw(ABISH) + text[index + 1 :])


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_every_truncation_of_a_real_output(path):
    text = path.read_text()
    complete_from = text.index("(longest request)") + len("(longest request)") if path in REPORTS else len(text) + 1
    for size in range(len(text) + 1):
        result = parses_or_parse_error(text[:size])
        if size < complete_from:
            assert result is None, f"cut at {size} lacks part of a required line but parsed"
    if path in REPORTS:
        assert parses_or_parse_error(text) is not None
