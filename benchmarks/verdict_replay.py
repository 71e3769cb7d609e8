#!/usr/bin/env python3
"""Replay finished runs' throughput blocks through the verdict rule: after each block, what it would have said; print figures, assert nothing.

Usage: python benchmarks/verdict_replay.py [--last-look N] [--first-look N] RUN_DIR...

For each run (raw/<run-id>/), the blocks are taken in the order they ran; after each, the
manifest cut to the blocks so far is assessed as the driver's helper does after a block
(bench/stopping_rule.assess) with the repeated-interval design of the verdict rule (the run's
own when it has one, else one made for its setups and GOMAXPROCS values), and one line says
each group's verdict, the widest deciding ratio and whether the rule would stop there. A run
measured under another rule (every setup in every block) shows when the verdict rule would
have stopped it and how wide the intervals were at that block: a way to weigh a design on
real runs before a new default run is spent on it.
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

from wrkreport.bench.profiles import VERDICT_PRECISION_PCT
from wrkreport.bench.stopping_plan import interval_plan
from wrkreport.bench.stopping_rule import assess, verdict_words
from wrkreport.core.sequential import DEFAULT_LAST_LOOK, FIRST_LOOK


def design_record(params: dict, first: int, last: int) -> dict:
    """Return the verdict rule's interval record for a run's setups and GOMAXPROCS values, as a new run would record it."""
    return interval_plan(
        {
            **params,
            "adaptive": True,
            "precision_given": False,
            "min_blocks": first,
            "max_blocks": last,
            "connections_levels": params.get("connections_levels") or [1],
        }
    )


def width(pct: float | None) -> str:
    """Return '+/-8.2%', or '-' without an interval."""
    return "-" if pct is None else f"+/-{pct:g}%"


def replay(run_dir: Path, first: int, last: int) -> None:
    """Print one line per block of the run: the verdict so far and the widest deciding ratio."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    params = manifest["parameters"]
    params = {
        **params,
        "intervals": design_record(params, first, last),
        "precision_pct": VERDICT_PRECISION_PCT,
        "min_blocks": first,
        "max_blocks": last,
    }
    cache: dict = {}
    passes = [p for p in manifest["passes"] if p.get("ended_at")]
    print(
        f"{run_dir.name}: {len(passes)} blocks; looks {first}..{last}, nominal {params['intervals']['nominal_alpha']:.4f} per look, "
        f"{params['intervals']['comparisons']} comparisons"
    )
    for i in range(1, len(passes) + 1):
        kept = passes[:i]
        ends = {(p["gomaxprocs"], p.get("block", 1)) for p in kept}
        cut = copy.copy(manifest)
        cut["parameters"] = params
        cut["passes"] = kept
        cut["measurements"] = [m for m in manifest["measurements"] if (m["gomaxprocs"], m.get("block", 1)) in ends]
        record = assess(run_dir, cut, cache, 0.0)
        widths = ", ".join(
            f"G{k}: {width(r['worst_half_width_pct'])}{' answered' if r['answered'] else ''}" for k, r in record["verdicts"].items()
        )
        blocks = ", ".join(f"G{n}: {b}" for n, b in record["blocks"].items())
        print(
            f"  after {i:2d} ({blocks}): {verdict_words(record) or 'no verdict yet'}; deciding {widths}{'  => STOP' if record['met'] else ''}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--first-look", type=int, default=FIRST_LOOK)
    parser.add_argument("--last-look", type=int, default=DEFAULT_LAST_LOOK)
    args = parser.parse_args()
    for run_dir in args.runs:
        replay(run_dir, args.first_look, args.last_look)


if __name__ == "__main__":
    main()
