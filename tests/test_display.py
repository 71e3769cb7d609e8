"""Tests for core/display: the one rule that cuts a value for a message, and its styles (quote, argument, show, cut_words)."""

from __future__ import annotations

import doctest

from wrkreport.core import display
from wrkreport.core.display import argument, cut, cut_words, quote, show

LONG = "x" * 100


def test_the_doctests_hold():
    failures, tried = doctest.testmod(display)
    assert failures == 0 and tried >= 4


def test_cut_keeps_the_limit_with_its_mark():
    assert cut("abcdef", 6) == "abcdef"
    assert cut("abcdefg", 6) == "abc..."
    assert cut(LONG, 40, count=True) == "x" * 40 + "... (100 characters)"


def test_quote_cuts_before_quoting_so_the_quotes_close():
    # a parser's line (60 characters) and a vegeta field (30)
    assert quote("a\tb") == "'a\\tb'"
    assert quote(LONG) == repr("x" * 57 + "...")
    assert quote(LONG, 30) == repr("x" * 27 + "...")


def test_an_argument_keeps_40_characters_and_tells_its_length():
    assert argument("abc") == "'abc'"
    assert argument("9" * 5000) == repr("9" * 40) + "... (5000 characters)"
    assert argument("x" * 40) == repr("x" * 40)


def test_show_cuts_after_quoting_and_names_lists_and_objects_by_kind():
    assert show(LONG) == repr(LONG)[:37] + "..."
    assert show(LONG, 60) == repr(LONG)[:57] + "..."  # a file name in a run's directory
    assert show({"a": 1}) == "an object" and show([1, 2]) == "a list" and show(()) == "()"
    assert show(1.5) == "1.5" and show(True) == "True" and show(None) == "None"
    assert show("\ud800") == "'\\ud800'"  # a lone surrogate, escaped


def test_a_label_is_cut_at_a_word():
    text = "excluded: every repeat was excluded (non-2xx: 118,554 of 118,554 responses)"
    assert cut_words(text, len(text)) == text
    assert cut_words(text, 50) == "excluded: every repeat was excluded (non-2xx\u2026"  # ":" dropped before the mark
