"""What the browser tests share: the system Chromium, the pages they open (fixture runs built once) and where screenshots go.

Playwright is imported by each test module (pytest.importorskip), so a machine without it
skips those modules; this module needs only the standard library and wrkreport.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from helpers import RUNS, session_root
from wrkreport.report import build

BINARY = next(
    (
        p
        for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "")
        if p and Path(p).is_file()
    ),
    None,
)
BUILT_AT = datetime(2026, 11, 22, 12, tzinfo=timezone.utc)


class BuiltReports(Mapping):
    """{run name: its index.html}: each fixture run copied under root/raw and built into root/reports when first asked for.

    Several processes may share root (shared_root: the pytest-xdist workers of one session):
    a page is built under a lock on its name by the first that needs it and read by the
    others, so the workers build different pages side by side and none twice; the build is
    deterministic (BUILT_AT), so which process built a page cannot show in it.
    """

    def __init__(self, root: Path, names: tuple[str, ...]):
        self.root, self.names = root, names

    def __getitem__(self, name: str) -> Path:
        if name not in self.names:
            raise KeyError(name)
        (self.root / "locks").mkdir(parents=True, exist_ok=True)
        with open(self.root / "locks" / name, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (self.root / "built" / name).exists():
                run = self.root / "raw" / name
                shutil.rmtree(run, ignore_errors=True)
                shutil.copytree(RUNS / name, run)
                build(run, self.root / "reports" / name, BUILT_AT)
                (self.root / "built").mkdir(exist_ok=True)
                (self.root / "built" / name).touch()
        return self.root / "reports" / name / "index.html"

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def shared_root(tmp_path_factory) -> Path:
    """Return the directory where the browser tests' pages are built: one per test session, shared by its pytest-xdist workers.

    Without sharing, each worker that ran a browser module's tests built that module's
    pages again (4 workers: up to 4 x 16 builds of 1-5 s each)."""
    return session_root(tmp_path_factory) / "browser-pages"


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
