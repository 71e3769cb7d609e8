"""Two files for one measurement: a measurement that another file, or another manifest entry, also claims to be is failed (neither is used)."""

from __future__ import annotations

from ..core.records import Check
from ..runs.directory import Run, table_rows

IDENTITY = ("setup", "gomaxprocs", "connections", "repeat")  # what a listed measurement says it is


def duplicate_checks(run: Run) -> list[Check]:
    """Fail every measurement that another file, or another manifest entry, also claims to be."""
    found = []
    table = run.measurements
    cells: dict[tuple, list[str]] = {}
    for row in table_rows(table):
        cells.setdefault((row.setup, row.gomaxprocs, row.connections, row.repeat), []).append(row.file)
    for (setup, gomaxprocs, connections, repeat), names in cells.items():
        if len(names) > 1:
            what = f"repeat {repeat} of {setup} at GOMAXPROCS={gomaxprocs}, {connections} connections"
            for name in names:
                others = " and ".join(n for n in names if n != name)
                found.append(duplicate(f"{name} and {others} are both {what}: neither is used", setup, gomaxprocs, repeat, name))
    found.extend(manifest_duplicates(run, {row.file: row for row in table_rows(table)}))
    return found


def manifest_duplicates(run: Run, rows: dict) -> list[Check]:
    """Fail measurements the manifest lists twice, or lists with another file's identity or a different one."""
    entries = {entry.index: entry for entry in (run.record.measurements if run.record else ())}
    by_file: dict[str, list[int]] = {}
    by_cell: dict[tuple, list[str]] = {}
    for index, entry in entries.items():
        if not isinstance(entry.file, str) or entry.file not in rows:
            continue
        by_file.setdefault(entry.file, []).append(index)
        cell = tuple(getattr(entry, key) for key in IDENTITY)
        if None not in cell and entry.file not in by_cell.setdefault(cell, []):
            by_cell[cell].append(entry.file)
    found = []
    for name, indexes in by_file.items():
        row = rows[name]
        if len(indexes) > 1:
            listed = ", ".join(map(str, indexes))
            found.append(
                duplicate(
                    f"manifest.json lists {name} {len(indexes)} times (measurements {listed}): it is not used",
                    row.setup,
                    row.gomaxprocs,
                    row.repeat,
                    name,
                )
            )
        entry = entries[indexes[0]]
        said = {key: getattr(entry, key) for key in IDENTITY if getattr(entry, key) is not None}
        named = {key: plain(getattr(row, key)) for key in said}
        if said != named:
            found.append(
                duplicate(
                    f"manifest.json says {name} is {said}, its name and output say {named}: it is not used",
                    row.setup,
                    row.gomaxprocs,
                    row.repeat,
                    name,
                )
            )
    for cell, names in by_cell.items():
        if len(names) > 1:
            for name in names:
                row = rows[name]
                others = " and ".join(n for n in names if n != name)
                found.append(
                    duplicate(
                        f"manifest.json lists {name} and {others} as the same measurement {list(cell)}: neither is used",
                        row.setup,
                        row.gomaxprocs,
                        row.repeat,
                        name,
                    )
                )
    return found


def plain(value):
    """Return a numpy scalar as the Python value it holds (for messages)."""
    return value.item() if hasattr(value, "item") else value


def duplicate(message: str, setup: str, gomaxprocs: int, repeat: int, name: str) -> Check:
    """Return the failed `duplicate` check of one file."""
    return Check("duplicate", "fail", message, setup=setup, gomaxprocs=int(gomaxprocs), repeat=int(repeat), file=name)
