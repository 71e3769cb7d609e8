"""Hypothesis settings of the suite: the same examples on every run of the test command, many new ones on demand.

The test command (./run_tests.sh, and so CI) runs every property derandomized: Hypothesis
draws its examples from a seed fixed by the test itself, with no example database, so the
same tree gives the same result every time. `./run_tests.sh --explore N` sets
WRKREPORT_EXPLORE=N: every property then draws at least N new random examples (docs/development.md);
each failure it finds becomes an `@example` of that test, so the test command keeps it.

Two example counts (WRKREPORT_PROPERTIES): `full`, each property's own count (200-400 for
the parsers' properties, 16 for the mutated run, whose every example is a build), is what
./run_tests.sh exports, so its first tier and CI run them; `quick`, a quarter of that (at
least 4), is plain `pytest`'s, the edit-and-rerun loop: the same derandomized draws cut short
(the 22 first-tier properties on one worker: 11.9 s at full counts, 7.3 s quick; the rest is
what they read and build once).
"""

from __future__ import annotations

import os

from hypothesis import settings

EXPLORE_ENV = "WRKREPORT_EXPLORE"
COUNTS_ENV = "WRKREPORT_PROPERTIES"
FULL, QUICK = "full", "quick"
QUICK_SHARE, QUICK_LEAST = 4, 4  # quick: a property's count // QUICK_SHARE, at least QUICK_LEAST (never above its count)
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


def counts() -> str:
    """Return the example counts asked for with WRKREPORT_PROPERTIES: full (./run_tests.sh) or quick (plain pytest, the default)."""
    value = os.environ.get(COUNTS_ENV, "").strip() or QUICK
    if value not in (FULL, QUICK):
        raise ValueError(f"{COUNTS_ENV}={value!r}: expected {FULL} (each property's own count) or {QUICK} (a quarter of it)")
    return value


def examples(count: int) -> int:
    """Return a property's max_examples: its own count in the test command (full), a quarter of it in plain pytest (quick),
    at least WRKREPORT_EXPLORE's when exploring."""
    own = count if counts() == FULL else min(count, max(QUICK_LEAST, count // QUICK_SHARE))
    return max(own, explore_examples())
