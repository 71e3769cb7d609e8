"""Tests of core/level_table.py: the default designs' per-look levels, simulated once and kept, are the simulation's."""

from __future__ import annotations

import pytest

from wrkreport.core import sequential
from wrkreport.core.level_table import LEVELS
from wrkreport.core.sequential import ALPHA, DEFAULT_LAST_LOOK, FIRST_LOOK, PRECISION_LAST_LOOK, SEED, SIMULATED_RUNS, Design

DESIGNS = [(FIRST_LOOK, DEFAULT_LAST_LOOK, SIMULATED_RUNS, SEED), (FIRST_LOOK, PRECISION_LAST_LOOK, SIMULATED_RUNS, SEED)]


def test_the_table_keeps_the_two_default_designs_at_every_position_a_family_reads():
    assert sorted(LEVELS) == sorted(DESIGNS)
    for kept in LEVELS.values():
        assert sorted(kept) == sequential.table_indices()
        values = [kept[i] for i in sorted(kept)]
        assert values == sorted(values) and 0 < values[0] and values[-1] < ALPHA


@pytest.mark.parametrize("last", [DEFAULT_LAST_LOOK, PRECISION_LAST_LOOK])
def test_a_default_design_and_every_family_of_it_read_the_table_without_simulating(monkeypatch, last):
    def simulated(*args):
        raise AssertionError(f"simulated {args}")

    monkeypatch.setattr(sequential, "smallest_p_values", simulated)
    sequential.nominal_level.cache_clear()
    try:
        design = Design.repeated(last)
        assert design.nominal == LEVELS[FIRST_LOOK, last, SIMULATED_RUNS, SEED][int(ALPHA * SIMULATED_RUNS)]
        levels = [design.family(k).nominal for k in (1, 2, 3, 6, 7, 45, 300, 4999, 5000, 5001, 100_000)]
        assert levels == sorted(levels, reverse=True) and levels[-1] == LEVELS[FIRST_LOOK, last, SIMULATED_RUNS, SEED][0]
        with pytest.raises(AssertionError, match="simulated"):  # a design the table does not keep is simulated
            Design.repeated(last - 1)
    finally:
        sequential.nominal_level.cache_clear()


@pytest.mark.simulation
@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: f"looks-{d[0]}-{d[1]}")
def test_every_kept_level_is_the_simulations_to_the_bit(design):
    """100,000 seeded runs again (0.8 s for looks 4..10, 2.8 s for 4..40): the kept values are the ones a run would compute."""
    simulated = sequential.smallest_p_values(*design)
    kept = LEVELS[design]
    assert {i: simulated[i] for i in kept} == kept
