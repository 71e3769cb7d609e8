"""Shared test settings and fixtures: in CI, end-to-end and browser tests (and modules skipped at import) must run, not skip.

Plain helpers (paths, free ports, run directories, ...) are in tests/helpers.py; tests/README.md says where each kind of helper lives.
"""

from __future__ import annotations

import sys

# The tests' compiled (assert-rewritten) modules and the package's are cached in __pycache__
# (gitignored) even where PYTHONDONTWRITEBYTECODE=1 is set, as on the machine these figures are from:
# without the cache every pytest process (each xdist worker, each tier) rewrites the 130 test
# modules' asserts again, 8-13 s of its collection on 2 cores, 20-30 s under load. Set before
# the imports below, so that what they import is cached too.
sys.dont_write_bytecode = False

import contextlib
import hashlib
import json
import os
import shutil
import signal
import tempfile
import uuid
from pathlib import Path

import pytest

import netlab
from helpers import (
    ARTICLE,
    REPO,
    SESSION_VARIABLE,
    SHARED,
    Bench,
    load_analysis_once,
    parse_vegeta_once,
    port_reservations,
    run_all_once,
    session_root,
)
from properties import load_profile

STRICT_MARKERS = ("slow", "browser", "simulation")


def in_ci() -> bool:
    """Return True when running under CI (CI=true), where skips of real tests are failures."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


load_profile()  # before any test module is imported: every @settings inherits derandomize from it


def stop_as_if_interrupted(signum, frame):
    """Turn SIGTERM into KeyboardInterrupt, so that pytest ends as on Ctrl-C: every fixture torn down (servers, the
    lab's namespaces, ssh masters), every `with` left, instead of the process dying with them in place."""
    raise KeyboardInterrupt(f"signal {signum}")


OWNS_RESERVATIONS = pytest.StashKey[bool]()


def pytest_configure(config):
    """In the main process and in every pytest-xdist worker: SIGTERM (a CI timeout, ./run_tests.sh stopped) tears down
    as SIGINT does. The session's first process names the file of its port reservations (helpers.port_reservations)."""
    signal.signal(signal.SIGTERM, stop_as_if_interrupted)
    draw_in_a_pure_worker(config)
    if SESSION_VARIABLE not in os.environ:
        os.environ[SESSION_VARIABLE] = uuid.uuid4().hex
        config.stash[OWNS_RESERVATIONS] = True


def draw_in_a_pure_worker(config) -> None:
    """In a pytest-xdist worker of a session that selects no real run or browser test (the first tier), draw a build's
    charts in the worker itself.

    The workers already fill every CPU, so charts.parallel.run_all's forked children (one per chart, on the usable
    CPUs) buy no time there: they only add the forks and the copy-on-write faults of children touching the worker's
    pages (measured on 2 CPUs: the first tier's system time 42.7 s -> 22.4 s, its wall time 163-170 s -> 152 s).
    The processes a test starts (a real `wrkreport build`) still draw as a user's does, and
    tests/test_charts_parallel.py gives run_all its workers. A session whose -m may select a test marked with any of
    STRICT_MARKERS (./run_tests.sh's other tiers, `pytest -m ''`) is left as it is."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not config.option.markexpr:
        return
    from _pytest.mark.expression import Expression

    selects = Expression.compile(config.option.markexpr).evaluate
    marked = [{name} for name in STRICT_MARKERS] + [set(STRICT_MARKERS)]  # a test with one of them, or with all
    if any(selects(lambda mark, real=real: mark in real) for real in marked):
        return
    from wrkreport.charts import parallel

    parallel.cpu_count = one_cpu


def one_cpu() -> int:
    """charts.parallel's CPU count in a first-tier worker (draw_in_a_pure_worker)."""
    return 1


def pytest_unconfigure(config):
    """The process that named the reservations file removes it, once its workers have ended."""
    path = port_reservations()
    if path is not None and config.stash.get(OWNS_RESERVATIONS, False):
        path.unlink(missing_ok=True)


TESTS = Path(__file__).resolve().parent
UNSHARED = {
    "made_once_per_session",
    "parsed_and_drawn_once",
    "vegeta_parsed_once",
    "lab",  # test_driver_ssh's lab: 1 s to make, so a worker makes its own and the module's 13 tests (300 s) spread
    "bench",  # test_driver_clients's lab and clients: 3-4 s to make; its 7 tests (300 s) spread the same way
}  # module-scoped, but what it keeps is per process, or cheap to make again: its tests may go to any worker


def shared_fixture(item) -> str | None:
    """Return the group of a test that uses a fixture of ours made once per module or session (a real run, a lab, a
    browser): the session fixture's name, else the module's path; None when it shares nothing."""
    shared = [
        (fixturedef.scope, name)
        for name, fixturedefs in item._fixtureinfo.name2fixturedefs.items()
        for fixturedef in fixturedefs[-1:]
        if fixturedef.scope in ("module", "session")
        and Path(fixturedef.func.__code__.co_filename).resolve().is_relative_to(TESTS)
        and name not in UNSHARED
    ]
    if not shared:
        return None
    sessions = sorted(name for scope, name in shared if scope == "session")
    return f"session:{sessions[0]}" if sessions else item.nodeid.split("::", 1)[0]


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads xdist_group into the node ids it schedules by
def pytest_collection_modifyitems(config, items):
    """Mark every Hypothesis test `property` (what ./run_tests.sh --explore runs), and keep the tests that share a run,
    a lab or a browser on one pytest-xdist worker (`--dist loadgroup`), so that it is made once."""
    for item in items:
        if hasattr(getattr(item, "obj", None), "hypothesis"):
            item.add_marker(pytest.mark.property)
        group = shared_fixture(item) if hasattr(item, "_fixtureinfo") else None
        if group is not None and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
        if getattr(config.option, "loadgroup", False):  # set in a worker of --dist loadgroup
            name_group(item)


def name_group(item) -> None:
    """Give a worker's test its group in its node id as pytest-xdist does (`nodeid@group`, by which the controller sends a
    group to one worker), where xdist's own renaming has no effect: pytest 9.2 keeps a node's id as a structured NodeId in
    `_id`, and xdist 3.8 still sets the old `_nodeid` (pytest-xdist issue 1386), so every group was spread over the workers
    and a module's shared run made again on each (test_driver_ssh's target_run three times, 72-83 s each)."""
    from _pytest.nodeid import NodeId

    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")})
    if names and isinstance(getattr(item, "_id", None), NodeId) and "@" not in item.nodeid.rsplit("]", 1)[-1]:
        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Turn a skip of a slow, browser or simulation test into a failure under CI."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and any(item.get_closest_marker(m) for m in STRICT_MARKERS):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI requires this test to run, but it was skipped: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Turn a whole module skipped at import (pytest.importorskip: playwright, pypdf) into a failure under CI."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and isinstance(collector, pytest.Module):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI requires this module's tests to run, but it was skipped: {reason}"


# --- Run directories assembled from real captured wrk outputs ----------------------------


@pytest.fixture
def make_run(tmp_path):
    """Return a function that lays out a run directory: {name: source path, bytes or str}, optional manifest."""

    def make(files: dict, manifest: dict | str | None = None, name: str = "20261122T120000Z") -> Path:
        run = tmp_path / "raw" / name
        run.mkdir(parents=True)
        for file_name, content in files.items():
            target = run / file_name
            if isinstance(content, Path):
                shutil.copyfile(content, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
        if manifest is not None:
            text = manifest if isinstance(manifest, str) else json.dumps(manifest)
            (run / "manifest.json").write_text(text)
        return run

    return make


@pytest.fixture
def article_run(make_run):
    """Return a run directory holding the article's eight wrk 3.0.4 outputs, named as a user would, no manifest."""
    files = {}
    for path in sorted(ARTICLE.glob("*.txt")):
        stem = path.name.removesuffix(".txt")  # wrk-3.0.4__gomaxprocs-1__go-http
        _, gomaxprocs, setup = stem.split("__")
        files[f"{setup}.{gomaxprocs}.run-1.wrk.txt"] = path
    return make_run(files, name="article-2013")


@pytest.fixture(scope="session", autouse=True)
def made_once_per_session(tmp_path_factory):
    """Keep what helpers.SHARED keeps in the session's shared directory, and make core.sequential's simulation of a
    design's per-look level (smallest_p_values: 100,000 seeded runs, 0.5-2.8 s a design, once per process by its own
    cache) once per session: every pytest-xdist worker after the first reads it. Its tests still compute it (the
    first to ask does) and compare what it returns."""
    from wrkreport.core import sequential

    SHARED.root = session_root(tmp_path_factory) / "made-once"
    simulate = sequential.smallest_p_values

    def shared(first, last, runs=sequential.SIMULATED_RUNS, seed=sequential.SEED):
        key = hashlib.sha256(repr(("smallest_p_values", first, last, runs, seed)).encode()).digest()
        return SHARED.get("levels", key, lambda: simulate(first, last, runs, seed))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sequential, "smallest_p_values", shared)
        yield


@pytest.fixture(scope="module")
def parsed_and_drawn_once():
    """Analyse each distinct run and draw each distinct chart once per session, and parse each distinct vegeta file once
    per process (helpers.load_analysis_once, run_all_once, parse_vegeta_once), while one module runs: for the modules
    that build the same real runs again and again, whose tests do not judge the reading, the analysis or the drawing
    themselves (their determinism, their warnings, the code they call)
    (`pytestmark = pytest.mark.usefixtures("parsed_and_drawn_once")`; a module fixture that builds names it too)."""
    with once(parse=True, draw=True):
        yield


@pytest.fixture
def parsed_and_drawn_once_here():
    """parsed_and_drawn_once for one test, in a module whose other tests judge the drawing."""
    with once(parse=True, draw=True):
        yield


@pytest.fixture(scope="module")
def reports(request, tmp_path_factory):
    """Return {run name: index.html} for a browser module's RUN_NAMES, each page built once per session (browser_pages.BuiltReports)."""
    from browser_pages import BuiltReports, shared_root

    return BuiltReports(shared_root(tmp_path_factory), request.module.RUN_NAMES)


@pytest.fixture(scope="module")
def browser():
    """Return a headless Chromium (the system one) driven by Playwright, for one module (browser_pages.launched)."""
    from browser_pages import launched

    yield from launched(pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')"))


@pytest.fixture(scope="module")
def vegeta_parsed_once():
    """Parse each distinct vegeta file once per process while one module runs (its runs analysed and its charts drawn every time)."""
    with once(parse=True, draw=False):
        yield


@contextlib.contextmanager
def once(parse: bool, draw: bool):
    """Patch the reader's, the analysis' and the page's bindings with helpers' exact-key memos for the duration; draw:
    the analyses and the charts too, kept where the session's workers share them (helpers.SHARED, session_root)."""
    from wrkreport.analysis import analyze
    from wrkreport.charts import parallel
    from wrkreport.parsers import vegeta
    from wrkreport.report import building, compare_page
    from wrkreport.runs import rate_measurements as reading

    with pytest.MonkeyPatch.context() as patch:
        if parse:
            patch.setattr(
                vegeta, "parse_vegeta", parse_vegeta_once(vegeta.parse_vegeta)
            )  # read_vegeta_file's (clients' files, fixed-rate readers)
            patch.setattr(reading, "parse_results", parse_vegeta_once(reading.parse_results))  # the run's fixed-rate measurements (in bulk)
        if draw:
            analysed = load_analysis_once(analyze.load_analysis)
            for module in (analyze, building, compare_page):  # the tests' modules call analyze.load_analysis
                patch.setattr(module, "load_analysis", analysed)
            patch.setattr(parallel, "run_all", run_all_once(parallel.run_all))  # report.page calls parallel.run_all
        yield


# --- run_bench.sh end to end (tests/test_driver*.py) and the lab's clients ------------------------


@pytest.fixture
def workdirs():
    """Yield (out, tmpdir): short paths under /tmp (the Unix socket path must stay short)."""
    top = Path(tempfile.mkdtemp(prefix="rbt", dir="/tmp"))
    top.chmod(0o711)  # as root, nginx's workers (nobody) must traverse it to the socket
    out, tmp = top / "out", top / "tmp"
    tmp.mkdir()
    yield out, tmp
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module")
def bench():
    """Yield the lab of tests/test_driver_clients*.py (helpers.Bench: gohello and its relay, ssh masters to two clients), one per module.

    Its work dir is short (/tmp/wlbXXXX): the ssh masters' control sockets live there, and a
    pytest-xdist worker's tmp_path (.../popen-gw3/clients0/ssh/<hash>.<random>) is longer than a
    Unix socket path may be."""
    work = Path(tempfile.mkdtemp(prefix="wlb", dir="/tmp"))
    with netlab.Lab(count=3, hide=(str(REPO),)) as lab:
        made = Bench(lab, work)
        try:
            made.start()
            yield made
        finally:
            made.stop()
            shutil.rmtree(work, ignore_errors=True)
        assert lab.leftovers() == {}, "nothing left in any namespace once the masters are closed"
