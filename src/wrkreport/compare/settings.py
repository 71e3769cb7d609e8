"""What differs between two runs' settings: their parameters (those that follow from others left out), machine facts and versions, as the compare page's table shows them."""

from __future__ import annotations

from ..analysis.analyze import Analysed
from ..runs.record import RunRecord

DERIVED_PARAMETERS = ("urls",)  # follow from ports: listing both would say the same twice


def differences(a: Analysed, b: Analysed) -> list[tuple[str, str, str]]:
    """Return the parameters, machine facts and versions that differ between the runs, as (what, in A, in B) text."""
    return [(f"{section} {key}", show(value_a), show(value_b)) for section, key, value_a, value_b in raw_differences(a, b)]


def raw_differences(a: Analysed, b: Analysed) -> list[tuple[str, str, object, object]]:
    """Return (section, key, value in A, value in B) for each parameter, machine fact and version that differs."""
    found = []
    params_a, params_b = a.run.parameters, b.run.parameters
    keys = [k for k in dict.fromkeys([*params_a.names, *params_b.names]) if k not in DERIVED_PARAMETERS]
    for key in keys:
        value_a, value_b = params_a.value(key), params_b.value(key)
        if value_a != value_b:
            found.append(("parameter", key, value_a, value_b))
    record_a, record_b = a.run.record or RunRecord(), b.run.record or RunRecord()
    for section in ("machine", "versions"):
        part_a, part_b = getattr(record_a, section) or {}, getattr(record_b, section) or {}
        for key in sorted(set(part_a) | set(part_b)):
            if part_a.get(key) != part_b.get(key):
                found.append((section, key, part_a.get(key), part_b.get(key)))
    return found


def show(value, missing: str = "unknown", switches: bool = False) -> str:
    """Return a value for the differences table: missing for None, 'on'/'off' for a switch when switches, lists and objects joined.

    >>> show(None), show(True), show([1, 2]), show({"a": 1}), show(None, "not pinned"), show(False, switches=True)
    ('unknown', 'True', '1, 2', 'a=1', 'not pinned', 'off')
    """
    if value is None:
        return missing
    if switches and isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)
