"""Reference: the 2013 article's and the 2012 Go-vs-Node study's figures, shipped as package data, and their ratios."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..core.setups import BASELINE

DATA_FILE = "article-2013.json"
STUDY_2012_FILE = "study-2012.json"
NODE_SETUP = "node-http"  # the setup the 2012 study's Node figures stand beside


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
        ReferenceRatio(
            row["gomaxprocs"],
            row["setup"],
            row["requests_per_sec"] / baseline[row["gomaxprocs"]],
            row["requests_per_sec"],
            baseline[row["gomaxprocs"]],
        )
        for row in rows
        if row["setup"] != BASELINE
    )


def article_gomaxprocs() -> tuple[int, ...]:
    """Return the GOMAXPROCS values the article measured."""
    return tuple(sorted({row["gomaxprocs"] for row in article()["results"]}))


@dataclass(frozen=True)
class StudyRatio:
    """One of the 2012 study's Node/Go ratios: Node's figure / Go's, per CPU mode and load generator.

    mode "1" is one CPU (GOMAXPROCS=1 against one Node process), "all" all CPUs but one
    (GOMAXPROCS=3 against a cluster of 3); each figure is the geometric mean of its 5 runs.
    The bytes per response are webbench's own counters (bytes/s over pages/s); ab's are None.
    """

    mode: str
    load_generator: str
    ratio: float
    node: float
    go: float
    unit: str
    go_bytes_per_response: float | None
    node_bytes_per_response: float | None

    def matches(self, gomaxprocs: int) -> bool:
        """Return True when this ratio's CPU mode corresponds to a GOMAXPROCS value of ours: 1 to 1, all to above 1."""
        return (self.mode == "1") == (gomaxprocs == 1)

    @property
    def label(self) -> str:
        """Return '0.897 (ab, 1 CPU)'."""
        return f"{self.ratio:.3f} ({self.load_generator}, {'1 CPU' if self.mode == '1' else 'all CPUs'})"


@lru_cache(maxsize=1)
def study_2012() -> dict:
    """Return the 2012 Go-vs-Node study's data as stored in the package."""
    text = resources.files("wrkreport").joinpath("data", STUDY_2012_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def geometric_mean(values: list[float]) -> float:
    """Return the geometric mean of positive values: [1, 4] -> 2.0."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def bytes_per_response(row: dict) -> float | None:
    """Return webbench's bytes per response of a row (mean bytes/s over mean pages/s); None without byte counts."""
    if "bytes_per_sec" not in row:
        return None
    return (sum(row["bytes_per_sec"]) / len(row["bytes_per_sec"])) / (sum(row["values"]) / len(row["values"]) / 60)


def study_ratios() -> tuple[StudyRatio, ...]:
    """Return the 2012 study's Node/Go ratios, per CPU mode and load generator (ab first)."""
    data = study_2012()
    rows = {(r["mode"], r["server"], r["load_generator"]): r for r in data["results"]}
    found = []
    for tool, spec in data["load_generators"].items():
        for mode in data["modes"]:
            go, node = rows[(mode, "go", tool)], rows[(mode, "node", tool)]
            go_mean, node_mean = geometric_mean(go["values"]), geometric_mean(node["values"])
            found.append(
                StudyRatio(
                    mode, tool, node_mean / go_mean, node_mean, go_mean, spec["unit"], bytes_per_response(go), bytes_per_response(node)
                )
            )
    return tuple(found)


def study_note() -> str:
    """Return what the 2012 study measured and why its ratios are not like for like."""
    data, ratios = study_2012(), study_ratios()
    sizes = [r for r in ratios if r.go_bytes_per_response is not None and r.mode == "1"]
    go_bytes = sizes[0].go_bytes_per_response if sizes else None
    node_bytes = sizes[0].node_bytes_per_response if sizes else None
    env = data["environment"]
    return (
        f"{data['title']} ({data['published']}): {env['go']} net/http against Node.js {env['node']}'s http module on a "
        f"{env['machine']}, {env['os']}, client on the same machine; "
        + "; ".join(f"{spec['command']} ({spec['version']}, 5 runs each)" for spec in data["load_generators"].values())
        + f". Its responses differed: by webbench's own counters Go sent about {go_bytes:.0f} bytes per response and Node about "
        f"{node_bytes:.0f} (Go chunked with a Content-Type, Node chunked without), so its Node/Go ratios are not like for like: "
        "this tool's same-response check (header bytes and bytes per response) would have failed that run. "
        'Its conclusion: "overall Go and Node perform about the same".'
    )
