"""Tests of wrkreport.core.verdict: how the leader stands against each other connection, the verdict, the contenders and the family."""

from __future__ import annotations

import pytest

from wrkreport.core import verdict
from wrkreport.core.verdict import TIE_MARGIN, Verdict, comparable, contenders, decide, family_size, standing


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (1.001, 1.2, "beaten"),
        (1.0, 1.2, "open"),
        (0.96, 1.04, "tied"),
        (1 / (1 + TIE_MARGIN), 1 + TIE_MARGIN, "tied"),
        (0.95, 1.04, "open"),
        (0.97, 1.06, "open"),
        (None, 1.1, "open"),
        (0.9, None, "open"),
    ],
)
def test_standing(low, high, expected):
    assert standing(low, high) == expected


def table(**intervals):
    """Return against() over a table keyed 'a_b' (best a over other b)."""
    return lambda best, other: intervals.get(f"{best}_{other}".replace("-", ""), (None, None))


def test_the_leader_is_the_highest_ratio_and_named_when_every_other_is_beaten():
    found = decide({"a": 0.6, "b": 0.35, "c": 0.3}, table(a_b=(1.5, 1.9), a_c=(1.8, 2.2)))
    assert found == Verdict("named", "a", (), ("b", "c"), ()) and found.decided and found.leaders == ("a",)


def test_one_open_comparison_keeps_the_verdict_open_and_a_tie_needs_every_other_settled():
    assert decide({"a": 0.6, "b": 0.35, "c": 0.59}, table(a_b=(1.5, 1.9), a_c=(0.9, 1.2))).kind == "open"
    tied = decide({"a": 0.6, "b": 0.35, "c": 0.59}, table(a_b=(1.5, 1.9), a_c=(0.98, 1.03)))
    assert (tied.kind, tied.tied, tied.beaten, tied.leaders, tied.decided) == ("tied", ("c",), ("b",), ("a", "c"), True)
    assert not decide({"a": 0.6, "c": 0.59}, table()).decided  # no interval: open


def test_only_one_or_no_contender():
    assert decide({"a": 0.6}, table()) == Verdict("only", "a") and decide({}, table()) == Verdict("none")
    assert Verdict("only", "a").decided and not Verdict("none").decided


def test_the_contenders_are_the_plain_front_end_connections_else_the_named_ones_never_a_twin():
    assert contenders(["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-static", "go-fasthttp", "node-http"]) == [
        "nginx-http",
        "nginx-fcgi-tcp",
        "nginx-fcgi-unix",
    ]
    assert contenders(["go-http", "nginx-http", "haproxy-http", "caddy-fcgi-unix", "nginx-https"]) == [
        "nginx-http",
        "haproxy-http",
        "caddy-fcgi-unix",
    ]
    assert contenders(["go-http", "go-h2", "nginx-h2", "nginx-h2-unix", "nginx-h2-mux"]) == ["nginx-h2", "nginx-h2-unix"]
    assert contenders(["app", "nginx-app", "nginx-app-unix"]) == ["nginx-app", "nginx-app-unix"]
    assert contenders(["go-http", "nginx-http", "nginx-http~nokeep"]) == ["nginx-http"]
    assert contenders(["go-http", "node-http"]) == []


def test_only_connections_over_the_same_baseline_are_compared_and_the_family_counts_every_pair():
    assert comparable("nginx-http", "haproxy-fcgi-tcp") and comparable("nginx-https", "nginx-https-unix")
    assert not comparable("nginx-https", "nginx-app")
    five = ["go-http", "nginx-http", "haproxy-http", "caddy-http", "apache-http", "nginx-fcgi-unix"]  # five contenders: 10 pairs
    assert family_size(five, 2) == 20 and family_size(["go-http", "go-https", "nginx-https", "nginx-https-unix", "nginx-app"], 1) == 1
    assert family_size(["go-http", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"], 3) == 9


def test_the_named_connections_are_the_answers_words():
    from wrkreport.core.setups import FRONTED_SETUPS
    from wrkreport.report.answer import SHORT

    assert set(SHORT) <= set(FRONTED_SETUPS) | set(verdict.NAMED_CONNECTIONS)  # the page and the driver choose among the same setups
