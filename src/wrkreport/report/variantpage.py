"""The variant part of the page: each twin's A/B figure over its original (paired in the same rounds) in words and rows.

A --variant twin is an nginx setup served by the variant's nginx; with --app-b the twins are
the app's second build alone (app~NAME) and behind nginx (nginx-app~NAME), said in app
words with each build's CPU per request and answer (body size and sha256).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.analyze import Analysis
from ..analysis.variant_ratio import Variant, changed, variant_of
from ..core.records import Ratio
from ..core.setups import APP_BASELINE, split_twin, twin_id
from ..runs.record import RunRecord
from .fmt import fmt_ratio
from .words import BAND_TEXT, SAME_HIGH, SAME_LOW


@dataclass(frozen=True)
class VariantSection:
    """What the template shows of a run with --variant."""

    title: str  # 'Variant nokeep (no-upstream-keepalive)'
    sentences: tuple[str, ...]  # one per twin and GOMAXPROCS (with --app-b, then the builds' answers)
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
    parts = ([f"GOMAXPROCS={ratio.gomaxprocs}"] if several_gomaxprocs else []) + (
        [f"{ratio.connections} connections"] if several_levels else []
    )
    return f" at {', '.join(parts)}" if parts else ""


APP_WORDS = {APP_BASELINE: "alone", "nginx-app": "behind nginx (nginx-app)"}  # --app-b's figures, by original


def sentence(
    ratio: Ratio,
    variant: Variant,
    several_gomaxprocs: bool,
    several_levels: bool = False,
    cpu: Ratio | None = None,
    analysis: Analysis | None = None,
) -> str:
    """Return 'With variant nokeep (no-upstream-keepalive), nginx-http's throughput at GOMAXPROCS=2 is 0.612 (0.590-0.634) of the original's: lower ...', and its CPU per request when recorded.

    With --app-b: "Your app's build b alone: its throughput is 1.21 (1.15-1.27) times build A's: higher ...; CPU per request 41.2 µs (A: 50.3 µs) ...".
    """
    original = split_twin(ratio.setup)[0]
    figure = fmt_ratio(ratio) if ratio.ratio is not None else "not known"
    if variant.app_b is not None:
        said = (
            f"Your app's build {variant.name} {APP_WORDS.get(original, f'as {original}')}{where(ratio, several_gomaxprocs, several_levels)}: "
            f"its throughput is {figure} times build A's: {verdict(ratio)}."
        )
        said += cpu_words(ratio, analysis, cpu)
        return said
    shown = "the throughput of nginx in front of your app (nginx-app)" if original == "nginx-app" else f"{original}'s throughput"
    said = (
        f"With variant {variant.name} ({variant.options_text}), {shown}{where(ratio, several_gomaxprocs, several_levels)} "
        f"is {figure} of the original's: {verdict(ratio)}."
    )
    if cpu is not None and cpu.ratio is not None:
        said += f" Its servers need {fmt_ratio(cpu)} times the original's CPU per request: {verdict(cpu)}."
    return said


def cpu_words(ratio: Ratio, analysis: Analysis | None, cpu: Ratio | None) -> str:
    """Return ' Server CPU per request: 41.2 µs for build b, 50.3 µs for build A; b / A 0.82 (0.78-0.86): lower ...' ('' without CPU records)."""
    if analysis is None:
        return ""
    original, name = split_twin(ratio.setup)
    twin, base = (analysis.cell(ratio.gomaxprocs, ratio.connections, s) for s in (ratio.setup, original))
    us = [c.median("cpu_server_ms_per_1k") if c is not None else None for c in (twin, base)]  # ms per 1,000 requests = µs per request
    if None in us:
        return ""
    said = f" Server CPU per request (median): {us[0]:.1f} µs for build {name}, {us[1]:.1f} µs for build A"
    if cpu is not None and cpu.ratio is not None:
        said += f"; {name} / A {fmt_ratio(cpu)}: {verdict(cpu)}"
    return said + "."


def answer_words(record: RunRecord | None, name: str) -> str:
    """Return what each build answered at the first block's start (body size and sha256) and whether the bodies differ ('' when not captured)."""
    for entry in record.passes if record is not None else ():
        a, b = entry.cell(APP_BASELINE), entry.cell(twin_id(APP_BASELINE, name))
        facts = [(c.body_bytes, c.body_sha256) if c is not None else (None, None) for c in (a, b)]
        if all(isinstance(size, int) and isinstance(sha, str) for size, sha in facts):
            (a_size, a_sha), (b_size, b_sha) = facts
            same = (
                "the same body"
                if a_sha == b_sha
                else "different bodies (a new build may change its answer; each build behind nginx answered what it answers alone)"
            )
            return (
                f"Answers at the first block's start: build A (app) {a_size:,} bytes, sha256 {a_sha[:12]}; build {name} (app~{name}) "
                f"{b_size:,} bytes, sha256 {b_sha[:12]}: {same}."
            )
    return ""


def cpu_of(ratio: Ratio, analysis: Analysis) -> Ratio | None:
    """Return the twin's CPU-per-request A/B figure beside its throughput one (None without CPU records)."""
    return next(
        (
            c
            for c in analysis.variant_cpu_ratios
            if (c.gomaxprocs, c.connections, c.setup) == (ratio.gomaxprocs, ratio.connections, ratio.setup)
        ),
        None,
    )


def variant_section(record: RunRecord | None, analysis: Analysis) -> VariantSection | None:
    """Return the section of a run whose nginx setups have --variant twins, None for any other run."""
    variant = variant_of(record, analysis.setups)
    if variant is None or not analysis.variant_ratios:
        return None
    several_gomaxprocs = len({g for g, _ in analysis.groups}) > 1
    figures = [(r, cpu_of(r, analysis)) for r in analysis.variant_ratios]  # throughput and CPU per request, per twin
    rows = tuple(
        (
            f"GOMAXPROCS={r.gomaxprocs}" + (f", {r.connections} connections" if analysis.several_levels else ""),
            split_twin(r.setup)[0],
            r.setup,
            fmt_ratio(r) if r.ratio is not None else "-",
            fmt_ratio(cpu) if cpu is not None and cpu.ratio is not None else "-",
            str(r.blocks),
            verdict(r),
        )
        for r, cpu in figures
    )
    sentences = [sentence(r, variant, several_gomaxprocs, analysis.several_levels, cpu, analysis) for r, cpu in figures]
    if variant.app_b is not None:
        sentences.append(answer_words(record, variant.name))
    title = (
        f"Your app's build {variant.name} ({variant.options_text}) against build A (--app)"
        if variant.app_b is not None
        else f"Variant {variant.name} ({variant.options_text})"
    )
    return VariantSection(title=title, sentences=tuple(s for s in sentences if s), rows=rows, method=variant.method)


def variant_lines(record: RunRecord | None, analysis: Analysis) -> str:
    """Return the terminal summary's A/B lines ('' for a run without --variant)."""
    section = variant_section(record, analysis)
    return "\n".join(section.sentences) if section else ""
