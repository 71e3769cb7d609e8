"""Hypothesis settings of the suite: the same examples on every run of the test command, many new ones on demand.

The test command (./run_tests.sh, and so CI) runs every property derandomized: Hypothesis
draws its examples from a seed fixed by the test itself, with no example database, so the
same tree gives the same result every time. `./run_tests.sh --explore N` sets
WRKREPORT_EXPLORE=N: every property then draws at least N new random examples (docs/development.md);
each failure it finds becomes an `@example` of that test, so the test command keeps it.
"""

from __future__ import annotations

import os

from hypothesis import settings

EXPLORE_ENV = "WRKREPORT_EXPLORE"
REPEATABLE, EXPLORE = "repeatable", "explore"

settings.register_profile(REPEATABLE, derandomize=True, database=None, print_blob=True)
settings.register_profile(EXPLORE, derandomize=False, database=None, print_blob=True)


def explore_examples() -> int:
    """Return the examples per property asked for with WRKREPORT_EXPLORE (0: not exploring)."""
    value = os.environ.get(EXPLORE_ENV, "").strip()
    if not value:
        return 0
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{EXPLORE_ENV}={value!r}: expected a whole number of examples per property, at least 1")
    return int(value)


def load_profile() -> str:
    """Load the exploring profile when WRKREPORT_EXPLORE is set, else the repeatable one; return its name."""
    name = EXPLORE if explore_examples() else REPEATABLE
    settings.load_profile(name)
    return name


def examples(count: int) -> int:
    """Return a property's max_examples: its own count in the test command, at least WRKREPORT_EXPLORE's when exploring."""
    return max(count, explore_examples())
