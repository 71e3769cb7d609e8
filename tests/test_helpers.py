"""Tests of tests/helpers.py's memos: what a build repeats is made once per session, and a kept result is the one a new call gives.

Shared keeps pickled results in the session's directory, where another pytest-xdist worker
reads them; load_analysis_once keys an analysis by the run's path and the bytes of its files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from helpers import RUNS, Shared, load_analysis_once
from wrkreport.analysis.analyze import load_analysis


def test_a_result_kept_by_one_process_is_read_by_another_without_making_it(tmp_path):
    first, second = Shared(), Shared()
    first.root = second.root = tmp_path
    made = []
    assert first.get("kind", b"k", lambda: made.append(1) or {"a": [1]}) == {"a": [1]}
    assert second.get("kind", b"k", lambda: made.append(2) or "other") == {"a": [1]}  # read from the file, not made
    assert made == [1] and [p.name for p in (tmp_path / "kind").iterdir()] == [b"k".hex()]  # no partial file left
    kept = second.get("kind", b"k", lambda: "other")
    kept["a"].append(2)
    assert second.get("kind", b"k", lambda: "other") == {"a": [1]}  # each call a new copy: a caller's change is not kept


def test_a_call_that_raises_is_not_kept(tmp_path):
    memo = Shared()
    memo.root = tmp_path

    def fails():
        raise ValueError("no")

    try:
        memo.get("kind", b"k", fails)
    except ValueError:
        pass
    assert memo.get("kind", b"k", lambda: 3) == 3


def test_an_analysis_is_kept_per_run_content_and_an_edited_copy_is_analysed_again(tmp_path, monkeypatch):
    import helpers

    memo = Shared()
    memo.root = tmp_path / "shared"
    monkeypatch.setattr(helpers, "SHARED", memo)
    calls = []
    analysed = load_analysis_once(lambda raw, expect=None: calls.append(raw) or load_analysis(raw, expect))
    run = shutil.copytree(RUNS / "pinned-quick", tmp_path / "raw" / "run")
    once, again = analysed(run), analysed(run)
    assert len(calls) == 1 and once.table.equals(again.table) and once.analysis == again.analysis
    assert once.run.path == run  # the run's own path, not another copy's
    (run / "manifest.json").write_text((run / "manifest.json").read_text().replace('"seed"', '"seed" ', 1))
    analysed(run)
    assert len(calls) == 2  # one byte more in one file: a new key
    analysed(run, 141)
    assert len(calls) == 3  # another header size asked: a new key


def test_run_wrkreport_gives_a_real_processs_status_and_lines(tmp_path, monkeypatch):
    import warnings

    from helpers import run_wrkreport
    from wrkreport import cli

    missing = run_wrkreport("build", str(tmp_path / "nope"))
    real = subprocess.run([sys.executable, "-m", "wrkreport", "build", str(tmp_path / "nope")], capture_output=True, text=True, timeout=120)
    assert (missing.returncode, missing.stdout, missing.stderr) == (real.returncode, real.stdout, real.stderr) and missing.returncode == 2

    def warned(*args, **kwargs):
        warnings.warn("a library's warning", RuntimeWarning, stacklevel=1)
        warnings.warn("a deprecation", DeprecationWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli.cli, "main", warned)
    done = run_wrkreport("build")
    assert done.returncode == 0 and "RuntimeWarning: a library's warning" in done.stderr and "deprecation" not in done.stderr
