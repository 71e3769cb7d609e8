"""CPU cost: server CPU time per 1,000 requests, the one formula the driver and the analysis share (stdlib only)."""

from __future__ import annotations

from typing import TypeVar

Number = TypeVar("Number")  # a float, or a pandas Series of them: the arithmetic is the same


def ms_per_1k_requests(cpu_s: Number, requests: Number) -> Number:
    """Return CPU milliseconds per 1,000 requests: 1.5 s over 100,000 requests -> 15.0."""
    return cpu_s * 1000 / (requests / 1000)
