"""CPUs: the ones this process may run on (what `nproc` counts): the driver's helper and the build's parallel charts ask here."""

from __future__ import annotations

import os


def usable_cpus() -> frozenset[int]:
    """Return the CPUs this process may run on (those `nproc` counts)."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return frozenset(range(os.cpu_count() or 1))


def cpu_count() -> int:
    """Return how many CPUs this process may run on (what `nproc` prints)."""
    return len(usable_cpus())
