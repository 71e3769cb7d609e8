"""The helper's subcommands after a block and at the end: the stopping rule, the run's status and summary."""

from __future__ import annotations

from pathlib import Path

from ..allocation import plan_next
from ..manifest import load_manifest, save_manifest
from ..progress import elapsed_of, summary_lines
from ..stopping_rule import assess, decide, gap_record, verdict_words
from ..values import format_duration, iso, utc_now

PARSED: dict[str, float | None] = {}  # wrk file -> counted req/s, kept while `serve` runs


def cmd_decide(args) -> int:
    """After a block: record the precision so far and print `stop WORST REASON`, or `continue WORST N ROUNDS WARMUP SETUPS` (the next block: GOMAXPROCS, rounds, warm-up seconds, comma list or `all`; WORST: worst half-width in %, or -);
    with the verdict rule a second line, `answer so far: ...`."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    record = assess(run_dir, manifest, PARSED, elapsed_of(manifest))
    reason = decide(record, manifest["parameters"])
    record["stop_reason"] = reason
    worst = "-" if record["worst_half_width_pct"] is None else f"{record['worst_half_width_pct']:g}"
    if reason:
        record["next"] = None
        print(f"stop {worst} {reason}")
    else:
        plan = plan_next(run_dir, manifest, PARSED, record)
        record["next"] = plan
        setups = ",".join(plan["setups"]) if plan["setups"] else "all"
        print(f"continue {worst} {plan['gomaxprocs']} {plan['rounds']} {plan['warmup_s']:g} {setups}")
    if record.get("verdicts"):
        print(f"answer so far: {verdict_words(record) or 'no connection compared yet'}")
    record["warmup_found"] = (manifest.get("precision") or {}).get("warmup_found")
    if record["next"] and "warmup_why" in record["next"]:
        record["warmup_found"] = record["next"]["warmup_why"]
    manifest["precision"] = record
    save_manifest(run_dir, manifest)
    return 0


def precision_lines(manifest: dict) -> list[str]:
    """Return the end-of-run lines on precision and gaps."""
    params, record, gap = manifest["parameters"], manifest.get("precision") or {}, manifest.get("gaps_s")
    lines = []
    if params.get("smoke_test"):
        lines.append("smoke test (--quick): one short measurement per cell, no interval claims; for figures run the default profile")
    if record:
        worst, median = record.get("worst_half_width_pct"), record.get("median_half_width_pct")
        shown = "no interval yet" if worst is None else f"worst ratio half-width +/-{worst:g}%, median +/-{median:g}%"
        blocks = ", ".join(f"GOMAXPROCS={n}: {b}" for n, b in record["blocks"].items())
        if record.get("rule") == "verdict":
            shown = "no interval yet" if worst is None else f"widest deciding ratio +/-{worst:g}%"
            more = record.get("more_time_estimate_s")
            extra = "" if record["met"] or not more else f"; about {format_duration(more)} more would likely decide it"
            if not record["met"] and record.get("beyond_ceiling"):
                extra += f", past this run's ceiling of {record['ceiling']} blocks per GOMAXPROCS (--precision allows 40)"
            state = "decided" if record["met"] else "NOT decided everywhere"
            lines.append(
                f"answer {state}: {verdict_words(record) or 'nothing compared'}; {shown}, target +/-{record['target_pct']:g}% "
                f"({blocks} blocks){extra}"
            )
        elif record["met"]:
            lines.append(f"precision target +/-{record['target_pct']:g}% met: {shown} ({blocks} blocks)")
        else:
            more = record.get("more_time_estimate_s")
            extra = f"; about {format_duration(more)} more would meet it" if more else ""
            lines.append(f"precision target +/-{record['target_pct']:g}% NOT met: {shown} ({blocks} blocks){extra}")
        if record.get("stop_reason") and not (record.get("rule") == "verdict" and record["met"]):  # a decided answer says it above
            lines.append(f"stopped: {record['stop_reason']}")
        if record.get("warmup_found"):
            lines.append(f"warm-up: {record['warmup_found']}")
    lines += capacity_lines(manifest.get("capacity_precision") or {})
    if gap:
        lines.append(f"gap between measurements: median {gap['median']:.3f}s, max {gap['max']:.3f}s ({gap['count']} gaps)")
    return lines


def capacity_lines(records: dict) -> list[str]:
    """Return the end-of-run line per GOMAXPROCS value on the capacity's target (capacity-more's records), none for a phase of fixed blocks.

    >>> capacity_lines({"1": {"target_pct": 15.0, "blocks": 6, "worst": "nginx-http/go-http", "worst_half_width_pct": 12.1, "stop_reason": "target met: ..."}})
    ['capacity target +/-15% met at GOMAXPROCS=1: widest nginx-http/go-http +/-12.1% (6 fixed-rate blocks)']
    >>> capacity_lines({"1": {"target_pct": 15.0, "blocks": 12, "worst": "caddy-http", "worst_half_width_pct": 9.6,
    ...                       "stop_reason": "block ceiling: 12 fixed-rate blocks (caddy-http at +/-10%, +/-22% at its usual spread)"}})[0].split("); ")[1]
    'stopped: block ceiling: 12 fixed-rate blocks (caddy-http at +/-10%, +/-22% at its usual spread)'
    """
    lines = []
    for n, record in records.items():
        worst, target = record.get("worst_half_width_pct"), record.get("target_pct")
        if worst is None or target is None:
            continue
        met = "met" if worst <= target else "NOT met"
        reason = record.get("stop_reason") or ""
        why = "" if reason.startswith("target met") or not reason and worst <= target else f"; stopped: {reason}"  # met, yet judged wider
        lines.append(
            f"capacity target +/-{target:g}% {met} at GOMAXPROCS={n}: widest {record['worst']} +/-{worst:g}% ({record['blocks']} fixed-rate blocks){why}"
        )
    return lines


def cmd_finish(args) -> int:
    """Set the run's final status, reason and end time, its gaps and precision; when complete, print the summary."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    manifest["status"] = args.status
    manifest["reason"] = args.reason or None
    manifest["ended_at"] = iso(utc_now())
    manifest["gaps_s"] = gap_record(manifest)
    if manifest["measurements"] and not manifest.get("precision"):  # a fixed design: no stopping rule ran
        record = assess(run_dir, manifest, PARSED, elapsed_of(manifest))
        record["stop_reason"] = "fixed design: the planned blocks ran" if args.status == "complete" else f"run {args.status}"
        manifest["precision"] = record
    save_manifest(run_dir, manifest)
    if args.status == "complete":
        print("\n".join(summary_lines(run_dir, manifest) + precision_lines(manifest)))
    return 0


def cmd_summary(args) -> int:
    """Print the median req/s of each cell."""
    run_dir = Path(args.run)
    print("\n".join(summary_lines(run_dir, load_manifest(run_dir))))
    return 0
