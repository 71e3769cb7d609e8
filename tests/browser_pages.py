"""What the browser tests share: the system Chromium, the pages they open (fixture runs built once) and where screenshots go.

Playwright is imported by each test module (pytest.importorskip), so a machine without it
skips those modules; this module needs only the standard library and wrkreport.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

from wrkreport.report import build

from helpers import RUNS

BINARY = next((p for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "") if p and Path(p).is_file()), None)
BUILT_AT = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)


def built_reports(root: Path, names: tuple[str, ...]) -> dict[str, Path]:
    """Return {run name: its index.html}, each fixture run copied under root/raw and built once into root/reports."""
    found = {}
    for name in names:
        run = root / "raw" / name
        shutil.copytree(RUNS / name, run)
        build(run, root / "reports" / name, BUILT_AT)
        found[name] = root / "reports" / name / "index.html"
    return found


def launched(sync_api):
    """Yield a headless Chromium (the system one) driven by Playwright's sync_api, closed afterwards: a module fixture's body."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BINARY, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


def keep(name: str) -> Path | None:
    """Return where to keep an artefact (a screenshot, a PDF) when WRKREPORT_SCREENSHOT_DIR is set, else None."""
    folder = os.environ.get("WRKREPORT_SCREENSHOT_DIR")
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder) / name
