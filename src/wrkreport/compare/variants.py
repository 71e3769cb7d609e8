"""Variant compare: one run with --variant -> A (its nginx setups) against B (their twins), measured in the same rounds.

two_runs.py compares two runs, which cannot be paired: each is a separate time on the
machine, so every interval is widened by the run-to-run spread (two_runs.RUN_SD), and a
10% change cannot be told from drift. A run with --variant measured each nginx setup and
its twin in the same shuffled rounds of the same blocks, so here B / A pairs each of the
twin's rounds with the original's round beside it (analyze.pair_interval: a Huber
estimate per block, a Student-t interval over blocks, as every overhead ratio); drift
and each block's server start hit both and cancel, and nothing is added for them.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..analysis.analyze import CPU_METRIC, THROUGHPUT, Analysed, pair_interval, paired_values
from ..analysis.cells import Cell
from ..analysis.variant_ratio import Variant, variant_of
from ..compare.rate_changes import planned_only, variant_rate_changes
from ..core import stats
from ..core.errors import NothingToCompare
from ..core.setups import baseline_of, setup_order, split_twin
from ..runs.record import RunRecord
from .settings import show
from .two_runs import P99, Change, RunComparison

METHOD = (
    "A is each nginx setup as the run measured it, B its --variant twin (the same setup served by the variant's nginx); "
    "both were measured in one run, in the same shuffled rounds of the same blocks. B / A pairs each of B's rounds with "
    "A's round beside it, summarises each block by a Huber estimate of the log ratios and gives a Student-t interval "
    "over the blocks (blocks - 1 degrees of freedom), as the overhead ratios; the ratio to go-http moves by the same "
    "paired factor; p99 latency and server CPU per request (Go's and that side's own nginx's CPU time over its requests) "
    "are paired the same way. Drift during the run and each block's server start hit A and B "
    "alike and cancel in B / A, so unlike a comparison of two runs no run-to-run spread is added. A change is flagged "
    "only when the interval excludes 1.0; with fewer than 2 blocks there is no interval."
)
DRIFT_NOTE = (
    "Drift cancels: A and B were measured in the same rounds of one run, so whatever moved the machine during the run "
    "moved both alike; between two runs it would not (see docs/comparing.md)."
)


def variant_comparison(done: Analysed) -> RunComparison:
    """Return A (each nginx setup) against B (its twin) of one run with --variant; NothingToCompare for a run without one."""
    variant = variant_of(done.run.record, done.analysis.setups)
    if variant is None:
        raise NothingToCompare(
            f"{done.run.path}: one run compares only its --variant twins with their originals, and this run has no variant "
            "(run_bench.sh --variant NAME:OPT ...); to compare two runs, name both: wrkreport compare RUN_A RUN_B"
        )
    cells = {(c.gomaxprocs, c.connections, c.setup): c for c in done.analysis.cells}
    twins = sorted((k for k in cells if split_twin(k[2])[1] == variant.name), key=lambda k: (k[0], k[1], setup_order(k[2])))
    changes, alone = [], []
    for g, c, twin in twins:
        original = cells.get((g, c, split_twin(twin)[0]))
        if original is None:
            alone.append((g, c, twin))
            continue
        changes.append(paired_change(original, cells[g, c, twin], THROUGHPUT))
        base = cells.get((g, c, baseline_of(original.setup)))
        ratio = paired_change(
            original, cells[g, c, twin], THROUGHPUT, "overhead_ratio", levels=ratio_levels(done, original, cells[g, c, twin])
        )
        changes.append(replace(ratio, baseline=base.setup if base else baseline_of(original.setup)))
        changes.append(paired_change(original, cells[g, c, twin], P99))
        if original.metrics.get(CPU_METRIC) is not None and cells[g, c, twin].metrics.get(CPU_METRIC) is not None:
            changes.append(paired_change(original, cells[g, c, twin], CPU_METRIC))  # each side's own nginx counted (bench/cpu.py)
    raw = variant_differences(done.run.record or RunRecord(), variant)
    measured, planned = planned_only(list(done.run.rates), done.rates)
    return RunComparison(
        done,
        done,
        tuple(changes),
        (),
        tuple(alone),
        tuple((f"{section} {key}", *(show(v, "not pinned", switches=True) for v in (a, b))) for section, key, a, b in raw),
        tuple(raw),
        method=METHOD,
        labels=("the run's nginx", f"variant {variant.name}"),
        variant=variant,
        rate_changes=tuple(variant_rate_changes(measured, variant.name, planned)),  # the phase's planned rates, paired per block
    )


def geometric_mean(cell: Cell, metric: str) -> float | None:
    """Return the geometric mean of a cell's kept values of metric (None without one)."""
    spread = cell.metrics.get(metric)
    logs = [math.log(v) for _, v in spread.by_repeat if v > 0] if spread else []
    return math.exp(stats.mean(logs)) if logs else None


def ratio_levels(done: Analysed, original: Cell, twin: Cell) -> tuple[float | None, float | None]:
    """Return the original's and the twin's overhead ratios (to go-http, or go-https for nginx's TLS) as the run's report has them."""
    found = [done.analysis.ratio(cell.gomaxprocs, cell.connections, cell.setup) for cell in (original, twin)]
    return tuple(r.ratio if r is not None else None for r in found)  # type: ignore[return-value]


def paired_change(
    a: Cell, b: Cell, metric: str, figure: str | None = None, levels: tuple[float | None, float | None] | None = None
) -> Change:
    """Return B / A of one figure, B's rounds paired with A's in the same block (pair_interval), or why there is none."""
    level_a, level_b = levels or (geometric_mean(a, metric), geometric_mean(b, metric))
    where = (a.gomaxprocs, a.connections, a.setup, figure or metric)
    if not paired_values(b, a, metric):
        return Change(*where, level_a, level_b, None, None, None, a.n, b.n, "no round measured both (excluded or not measured)")
    found = pair_interval(b, a, metric)
    if found.low is None:
        return Change(
            *where, level_a, level_b, found.estimate, None, None, found.blocks, found.blocks, "fewer than 2 blocks: no interval", found.unit
        )
    return Change(
        *where,
        level_a,
        level_b,
        found.estimate,
        found.low,
        found.high,
        found.blocks,
        found.blocks,
        None,
        found.unit,
        detectable_change=paired_detectable(found),
    )


def paired_detectable(found: stats.Interval) -> float | None:
    """Return the smallest true twin / original change a paired interval like this one flags in 80% of runs, relative (0.12: 12%).

    The interval is Student-t over the blocks' summaries (blocks - 1 degrees of freedom, or
    repeats - 1 without blocks): its standard error on the log scale is its half-width over
    t_.975, and the change is exp((t_.975 + t_.80) x se) - 1 (stats.detectable_shift), as for
    two runs but with no run-to-run term, the pairs sharing every server start. A run's se is
    an estimate, below the true one in more than half of runs at few blocks: it is scaled by
    sqrt(df / median of chi-square(df)) (the median by Wilson-Hilferty, df (1 - 2 / 9df)^3), so
    the change reported is flagged in 73-80% of simulated runs at 3-10 blocks (76-80% from 5); uncorrected,
    in 62-76% (tests/test_compare_variants_detectable.py).

    >>> round(paired_detectable(stats.Interval(1.0, math.exp(-0.05), math.exp(0.05), 7, stats.BLOCK, 7)), 4)
    0.0752
    """
    if found.low is None or found.high is None or found.low <= 0:
        return None
    df = (found.blocks if found.unit == stats.BLOCK else found.n) - 1
    if df < 1:
        return None
    se = (math.log(found.high) - math.log(found.low)) / 2 / stats.t_975(df)
    median_chi2 = df * (1 - 2 / (9 * df)) ** 3
    return math.exp(stats.detectable_shift(se * math.sqrt(df / median_chi2), df)) - 1


def variant_differences(record: RunRecord, variant: Variant) -> list[tuple[str, str, object, object]]:
    """Return what the variant changes: (section, key, the run's value, the variant's), keyed as compare_words' title reads them."""
    found, parameters = [], record.parameters
    versions = record.versions or {}
    if variant.nginx_version is not None and versions.get("nginx") != variant.nginx_version:
        found.append(("versions", "nginx", versions.get("nginx"), variant.nginx_version))
    if any(o.startswith("nginx=") for o in variant.options):
        found.append(("variant", "nginx binary", "the run's nginx", variant.nginx))
    keepalive = parameters.upstream_keepalive  # on unless --no-upstream-keepalive (runs recorded before the key: runs/record.py)
    if variant.upstream_keepalive is not None and keepalive != variant.upstream_keepalive:
        found.append(("parameter", "upstream_keepalive", keepalive, variant.upstream_keepalive))
    if variant.pin_server is not None and parameters.pin_server != variant.pin_server:
        found.append(("parameter", "pin_server", parameters.pin_server, variant.pin_server))
    if not found:
        found.append(("variant", "options", "none", variant.options_text))
    return found
