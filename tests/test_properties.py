"""tests/properties.py: the example counts a property runs with under the test command, plain pytest and --explore."""

from __future__ import annotations

import pytest

from properties import COUNTS_ENV, EXPLORE_ENV, examples


@pytest.mark.parametrize(
    ("asked", "count", "expected"),
    [("full", 300, 300), ("full", 16, 16), ("quick", 300, 75), ("quick", 16, 4), ("quick", 3, 3), ("", 400, 100)],
)
def test_a_property_runs_its_own_count_in_full_and_a_quarter_quick(monkeypatch, asked, count, expected):
    monkeypatch.setenv(COUNTS_ENV, asked)
    monkeypatch.delenv(EXPLORE_ENV, raising=False)
    assert examples(count) == expected


@pytest.mark.parametrize("asked", ["full", "quick"])
def test_exploring_runs_at_least_the_examples_asked_for(monkeypatch, asked):
    monkeypatch.setenv(COUNTS_ENV, asked)
    monkeypatch.setenv(EXPLORE_ENV, "2000")
    assert examples(300) == 2000
    monkeypatch.setenv(EXPLORE_ENV, "10")
    assert examples(300) == (300 if asked == "full" else 75)


def test_an_unknown_count_says_what_it_takes(monkeypatch):
    monkeypatch.setenv(COUNTS_ENV, "all")
    with pytest.raises(ValueError, match="WRKREPORT_PROPERTIES='all': expected full"):
        examples(300)
