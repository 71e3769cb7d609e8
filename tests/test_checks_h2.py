"""Tests of wrkreport.checks.h2: HTTP/2 measurements must have negotiated h2; their sizes are said, not compared."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from wrkreport.checks.h2 import h2_response_checks, is_h2, kept_words
from wrkreport.checks.measurements import same_response_checks


def rows(*specs):
    return pd.DataFrame(
        [
            dict(
                setup=s,
                gomaxprocs=1,
                repeat=1,
                file=f"{s}.h2load.txt",
                requests=n,
                connections=100,
                errors_read=0,
                bytes_read=b,
                bytes_per_response=b / n,
                application_protocol=p,
                header_bytes=h,
            )
            for s, n, b, p, h in specs
        ]
    )


def test_h2_measurements_need_h2_and_say_their_header_bytes():
    checks = h2_response_checks(rows(("go-h2", 1000, 35_780.0, "h2", 5300), ("nginx-h2", 1000, 74_000.0, "http/1.1", 44_000)))
    assert [c.status for c in checks] == ["pass", "fail"]
    assert "5.3 B of HPACK header per response" in checks[0].message
    assert checks[1].message == "h2load negotiated http/1.1, not h2: not an HTTP/2 measurement"
    assert is_h2("nginx-h2-unix") and not is_h2("nginx-https")


def test_the_http1_setups_of_an_h2_run_still_agree_among_themselves():
    table = rows(
        ("go-http", 1000, 153_000.0, None, None), ("go-h2", 1000, 35_780.0, "h2", 5300), ("nginx-h2", 1000, 74_000.0, "h2", 44_000)
    )
    agreed, checks = same_response_checks(table)
    assert agreed == 153 and [c.status for c in checks] == ["pass", "pass", "pass"]  # the h2 ones are not held to 153 B


def test_a_share_above_one_is_said_as_a_multiple_not_a_share_over_100_percent():
    ratio = lambda r, low, high: SimpleNamespace(ratio=r, ci_low=low, ci_high=high)  # noqa: E731
    assert kept_words(ratio(0.71, 0.66, 0.76)) == "keeps 71% (66%-76%) of"
    assert kept_words(ratio(1.10, 1.02, 1.18)) == "serves 1.10x (1.02-1.18x)"
    assert kept_words(ratio(1.28, None, None)) == "serves 1.28x"
