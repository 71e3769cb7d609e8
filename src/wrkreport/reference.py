"""Reference: the 2013 article's figures, shipped as package data, and its overhead ratios."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .model import BASELINE

DATA_FILE = "article-2013.json"


@dataclass(frozen=True)
class ReferenceRatio:
    """One of the article's overhead ratios: setup req/s / go-http req/s at its GOMAXPROCS."""

    gomaxprocs: int
    setup: str
    ratio: float
    requests_per_sec: float
    baseline_requests_per_sec: float


@lru_cache(maxsize=1)
def article() -> dict:
    """Return the article's data (setups, settings, results) as stored in the package."""
    text = resources.files("wrkreport").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def article_ratios() -> tuple[ReferenceRatio, ...]:
    """Return the article's ratios, computed from its req/s (they round to its published ones)."""
    rows = article()["results"]
    baseline = {row["gomaxprocs"]: row["requests_per_sec"] for row in rows if row["setup"] == BASELINE}
    return tuple(
        ReferenceRatio(row["gomaxprocs"], row["setup"], row["requests_per_sec"] / baseline[row["gomaxprocs"]], row["requests_per_sec"], baseline[row["gomaxprocs"]])
        for row in rows
        if row["setup"] != BASELINE
    )


def article_gomaxprocs() -> tuple[int, ...]:
    """Return the GOMAXPROCS values the article measured."""
    return tuple(sorted({row["gomaxprocs"] for row in article()["results"]}))
