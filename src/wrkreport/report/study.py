"""The 2012 Go-vs-Node study on the page: its rows, the reference beside node-http, and the run's load generator."""

from __future__ import annotations

import pandas as pd

from ..analysis import reference
from ..runs.record import Parameters
from .fmt import fmt_number


def load_generator(table: pd.DataFrame) -> str | None:
    """Return the run's load generator ('wrk' for wrk and wrk2, or 'ab'); the most frequent one in a mixed run, None when empty."""
    tools = table["tool"].dropna().replace("wrk2", "wrk") if "tool" in table else pd.Series(dtype=object)
    return str(tools.value_counts().idxmax()) if len(tools) else None


def load_generator_of(parameters: Parameters) -> str:
    """Return the load generator the manifest's parameters name (wrk, ab, h2load); 'wrk' for a run recorded before they named one.

    >>> load_generator_of(Parameters.of({"load_generator": "h2load"})), load_generator_of(Parameters.of({}))
    ('h2load', 'wrk')
    """
    return parameters.load_generator or "wrk"


def study_rows() -> list[tuple[str, str, str, str, str, str]]:
    """Return the 2012 study's rows: CPUs, load generator, Go's and Node's figures (with unit), bytes per response, Node/Go."""
    rows = []
    for r in reference.study_ratios():
        sizes = f"{r.go_bytes_per_response:.0f} / {r.node_bytes_per_response:.0f}" if r.go_bytes_per_response else "not given"
        cpus = "1 CPU (our GOMAXPROCS=1)" if r.mode == "1" else "all CPUs but one (our GOMAXPROCS above 1)"
        rows.append((cpus, r.load_generator, f"{fmt_number(r.go)} {r.unit}", f"{fmt_number(r.node)} {r.unit}", sizes, f"{r.ratio:.3f}"))
    return rows


def study_reference(setup: str, gomaxprocs: int, tool: str | None) -> str:
    """Return the 2012 study's Node/Go ratios matching a node-http row, the run's load generator first; '' for other setups."""
    if setup != reference.NODE_SETUP:
        return ""
    found = sorted((r for r in reference.study_ratios() if r.matches(gomaxprocs)), key=lambda r: r.load_generator != tool)
    return "2012 study: " + ", ".join(r.label for r in found)
