"""Variant A/B: a run's --variant, and its twins' req/s over their originals' (analyze.Analysis.variant_ratios) as records.

A twin (ORIGINAL~NAME) is its original nginx setup served by the variant's nginx, measured
in the same shuffled rounds of the same blocks. Its A/B figure is paired_ratio's over the
original instead of go-http: the same pairing by round within a block and the same block
interval as every overhead ratio (stats.block_ratio_interval). What moves a whole block
(its server start) or the whole run (drift) moves both sides of each pair alike, so it
cancels in the ratio; between two runs it does not (compare.two_runs.RUN_SD).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.records import Ratio
from ..core.setups import split_twin
from ..runs.record import RunRecord

# The options the driver records (bench/variant.py), as it normalises them; nothing else is shown.
OPTION = re.compile(r"no-upstream-keepalive|pin-server=[0-9][0-9,-]{0,63}|nginx=/[^\x00-\x1f\x7f]{1,1023}")
METHOD = (
    "The A/B figure is the twin's req/s over its original's at the same GOMAXPROCS, each of its rounds paired with the "
    "original's round measured beside it in the same shuffled round, summarised per block and given a Student-t "
    "interval over blocks exactly as the overhead ratios: both nginx setups shared every block's server start and the "
    "run's drift, which therefore cancel in the figure instead of widening it."
)
APP_B_METHOD = (
    "The A/B figure is build B's req/s over build A's (app~NAME over app alone, nginx-app~NAME over nginx-app behind the same nginx "
    "configuration) at the same GOMAXPROCS, each round paired with the one measured beside it in the same shuffled round, summarised "
    "per block and given a Student-t interval over blocks exactly as the --variant figure (tests/test_analysis_variant_ratio_calibration.py "
    "checks its coverage): both builds shared every block's start and the run's drift, which cancel in the figure."
)


@dataclass(frozen=True)
class Variant:
    """The run's --variant: its name, its options as given, and its nginx (binary and version; None: unknown)."""

    name: str
    options: tuple[str, ...]
    nginx: str | None = None
    nginx_version: str | None = None
    upstream_keepalive: bool | None = None
    pin_server: str | None = None
    app_b: str | None = None  # --app-b: the second build's command line (secrets redacted); its twins are app~NAME and nginx-app~NAME

    @property
    def method(self) -> str:
        """Return how the A/B figure is computed, in one paragraph."""
        return APP_B_METHOD if self.app_b is not None else METHOD

    @property
    def options_text(self) -> str:
        """Return the options as a reader wants them: 'no-upstream-keepalive', 'nginx 1.27.3 (/opt/nginx/sbin/nginx), pin-server=1'."""
        if self.app_b is not None:
            return f"--app-b '{self.app_b}'"
        shown = []
        for option in self.options:
            if option.startswith("nginx=") and self.nginx_version:
                shown.append(f"nginx {self.nginx_version} ({option.removeprefix('nginx=')})")
            else:
                shown.append(option)
        return ", ".join(shown) or "options not recorded"


def variant_of(record: RunRecord | None, setups: tuple[str, ...] = ()) -> Variant | None:
    """Return the run's variant from its (checked) manifest, else from its twins' names (a run without a manifest), else None."""
    entry = record.variant if record is not None else None
    if entry is not None:
        options = tuple(o for o in entry.options or () if isinstance(o, str) and OPTION.fullmatch(o))  # a hostile one is not shown
        return Variant(
            entry.name,
            options,
            entry.nginx,
            entry.nginx_version,
            entry.upstream_keepalive,
            entry.pin_server,
            app_b_command(record) if entry.app_b is True else None,
        )
    names = sorted({split_twin(s)[1] for s in setups} - {None})
    return Variant(names[0], ()) if names else None


def app_b_command(record: RunRecord) -> str:
    """Return --app-b's command line as the manifest keeps it (secrets redacted), '' when it is not recorded."""
    app = record.parameters.app
    b = app.get("b") if isinstance(app, dict) else None
    return b["command"] if isinstance(b, dict) and isinstance(b.get("command"), str) else ""


def changed(ratio: Ratio) -> bool:
    """Return True when the A/B interval excludes 1.0: the variant measurably differs from the original."""
    return ratio.has_interval and not ratio.includes_one


def variant_ratio_record(ratio: Ratio) -> dict:
    """Return one A/B figure as results.json's variant_ratios has it."""
    original, variant = split_twin(ratio.setup)
    return {
        "setup": original,
        "variant": variant,
        "twin": ratio.setup,
        "gomaxprocs": ratio.gomaxprocs,
        "connections": ratio.connections,
        "ratio": ratio.ratio,
        "ci_low": ratio.ci_low,
        "ci_high": ratio.ci_high,
        "blocks": ratio.blocks,
        "n": ratio.n,  # round pairs
        "unit": ratio.unit,
        "changed": changed(ratio),
        "excluded": ratio.excluded,
    }


def variant_record(variant: Variant | None) -> dict | None:
    """Return results.json's `variant`: the run's variant and how its figure is computed."""
    if variant is None:
        return None
    return {
        "name": variant.name,
        "options": list(variant.options),
        "nginx": variant.nginx,
        "nginx_version": variant.nginx_version,
        "method": variant.method,
        **({"app_b": variant.app_b} if variant.app_b is not None else {}),
    }
