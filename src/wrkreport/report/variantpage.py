"""The variant part of the page: each nginx setup's A/B figure (its --variant twin over itself, paired in the same rounds) in words and rows."""

from __future__ import annotations

from dataclasses import dataclass

from ..analyze import Analysis
from ..core.records import Ratio
from ..core.setups import split_twin
from ..variant_ratio import METHOD, Variant, changed, variant_of
from .fmt import fmt_ratio
from .words import BAND_TEXT, SAME_HIGH, SAME_LOW


@dataclass(frozen=True)
class VariantSection:
    """What the template shows of a run with --variant."""

    title: str  # 'Variant nokeep (no-upstream-keepalive)'
    sentences: tuple[str, ...]  # one per nginx setup and GOMAXPROCS
    rows: tuple[tuple[str, ...], ...]  # group, setup, twin, A/B req/s (95% CI), A/B CPU per request (95% CI), blocks, verdict
    method: str


def verdict(ratio: Ratio) -> str:
    """Return what an A/B figure says: measurably lower or higher, no measurable difference, inconclusive, or why there is none."""
    if ratio.ratio is None:
        return f"no figure: {ratio.excluded}"
    if not ratio.has_interval:
        return "no interval (fewer than 2 blocks)"
    if changed(ratio):
        return f"{'lower' if ratio.ratio < 1 else 'higher'}: the interval excludes 1"
    if SAME_LOW <= ratio.ci_low and ratio.ci_high <= SAME_HIGH:
        return f"no measurable difference: the whole interval lies within {BAND_TEXT}"
    return f"inconclusive: the interval includes 1 but reaches outside {BAND_TEXT}"


def where(ratio: Ratio, several_gomaxprocs: bool, several_levels: bool) -> str:
    """Return ' at GOMAXPROCS=2' (and the connections with a sweep), '' when the run has one of each."""
    parts = ([f"GOMAXPROCS={ratio.gomaxprocs}"] if several_gomaxprocs else []) + ([f"{ratio.connections} connections"] if several_levels else [])
    return f" at {', '.join(parts)}" if parts else ""


def sentence(ratio: Ratio, variant: Variant, several_gomaxprocs: bool, several_levels: bool = False, cpu: Ratio | None = None) -> str:
    """Return 'With variant nokeep (no-upstream-keepalive), nginx-http's throughput at GOMAXPROCS=2 is 0.612 (0.590-0.634) of the original's: lower ...', and its CPU per request when recorded."""
    original = split_twin(ratio.setup)[0]
    figure = fmt_ratio(ratio) if ratio.ratio is not None else "not known"
    said = (f"With variant {variant.name} ({variant.options_text}), {original}'s throughput{where(ratio, several_gomaxprocs, several_levels)} "
            f"is {figure} of the original's: {verdict(ratio)}.")
    if cpu is not None and cpu.ratio is not None:
        said += f" Its servers need {fmt_ratio(cpu)} times the original's CPU per request: {verdict(cpu)}."
    return said


def cpu_of(ratio: Ratio, analysis: Analysis) -> Ratio | None:
    """Return the twin's CPU-per-request A/B figure beside its throughput one (None without CPU records)."""
    return next((c for c in analysis.variant_cpu_ratios if (c.gomaxprocs, c.connections, c.setup) == (ratio.gomaxprocs, ratio.connections, ratio.setup)), None)


def variant_section(manifest: dict | None, analysis: Analysis) -> VariantSection | None:
    """Return the section of a run whose nginx setups have --variant twins, None for any other run."""
    variant = variant_of(manifest, analysis.setups)
    if variant is None or not analysis.variant_ratios:
        return None
    several_gomaxprocs = len({g for g, _ in analysis.groups}) > 1
    figures = [(r, cpu_of(r, analysis)) for r in analysis.variant_ratios]  # throughput and CPU per request, per twin
    rows = tuple(
        (f"GOMAXPROCS={r.gomaxprocs}" + (f", {r.connections} connections" if analysis.several_levels else ""), split_twin(r.setup)[0], r.setup,
         fmt_ratio(r) if r.ratio is not None else "-", fmt_ratio(cpu) if cpu is not None and cpu.ratio is not None else "-",
         str(r.blocks), verdict(r))
        for r, cpu in figures
    )
    return VariantSection(
        title=f"Variant {variant.name} ({variant.options_text})",
        sentences=tuple(sentence(r, variant, several_gomaxprocs, analysis.several_levels, cpu) for r, cpu in figures),
        rows=rows,
        method=METHOD,
    )


def variant_lines(manifest: dict | None, analysis: Analysis) -> str:
    """Return the terminal summary's A/B lines ('' for a run without --variant)."""
    section = variant_section(manifest, analysis)
    return "\n".join(section.sentences) if section else ""
