"""Rendering: page data -> HTML through the jinja2 templates shipped in the package, autoescaped."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import jinja2

from .page import Page

TEMPLATE = "report.html"
# How templates compile: jinja2's bytecode cache keys a template by its text only, so the cache folder is named by these too.
OPTIONS = {"autoescape": True, "keep_trailing_newline": True, "trim_blocks": True, "lstrip_blocks": True}


def in_groups(rows, key: str | int = "group") -> list[tuple[str, list]]:
    """Return rows split by their group (an attribute name or a tuple index), groups in first-seen order."""
    groups: dict[str, list] = {}
    for row in rows:
        groups.setdefault(row[key] if isinstance(key, int) else getattr(row, key), []).append(row)
    return list(groups.items())


def bytecode_cache() -> jinja2.FileSystemBytecodeCache | None:
    """Return a cache of compiled templates in the user's cache folder (keyed by template source), or None when none is writable."""
    if os.environ.get("WRKREPORT_NO_TEMPLATE_CACHE"):
        return None
    compiled_as = hashlib.sha1(f"{jinja2.__version__} {sorted(OPTIONS.items())}".encode()).hexdigest()[:12]
    try:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wrkreport" / f"templates-{compiled_as}"
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # RuntimeError: no home folder to be found
        return None
    return jinja2.FileSystemBytecodeCache(str(folder)) if os.access(folder, os.W_OK | os.X_OK) else None


def environment() -> jinja2.Environment:
    """Return the jinja2 environment over the packaged templates (autoescaping always on, OPTIONS)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("wrkreport.templates", "."),
        undefined=jinja2.StrictUndefined,
        **OPTIONS,
        bytecode_cache=bytecode_cache(),  # compiling report.html took about 75 ms of every build
    )
    env.filters["in_groups"] = in_groups
    return env


def render_html(page: Page) -> str:
    """Return the page as one self-contained HTML document."""
    template = environment().get_template(TEMPLATE)
    charts_html = {name: jinja2.utils.markupsafe.Markup(svg) for name, svg in page.charts.items()}  # our own SVG only
    return template.render(page=page, charts=charts_html)
