"""Tests of tests/conftest.py's grouping: the tests that share a module fixture of ours run on one pytest-xdist worker.

Under pytest 9.2 and pytest-xdist 3.8 `--dist loadgroup` grouped nothing (xdist writes the group
into a node id pytest no longer reads: pytest-xdist issue 1386), and every module's shared real
run was made again on each worker without a test failing. The probe below is run
by the test in a pytest of its own, on 3 workers with --dist loadgroup, as ./run_tests.sh runs
the side tier; in any other session it is skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from helpers import REPO

PROBE = "WRKREPORT_GROUP_PROBE"  # set by the test for the pytest it starts: the probe runs there only


@pytest.fixture(scope="module")
def shared_by_the_probe():
    """A module fixture of ours (defined under tests/, not in UNSHARED): its tests form one group."""
    return os.getpid()


@pytest.mark.skipif(not os.environ.get(PROBE), reason="run by test_tests_sharing_a_module_fixture_run_on_one_worker only")
@pytest.mark.parametrize("n", range(6))
def test_probe(shared_by_the_probe, n):
    assert shared_by_the_probe == os.getpid()  # made in this worker
    print(f"probe {n} in {os.environ.get('PYTEST_XDIST_WORKER')}")


@pytest.mark.skipif(not os.environ.get(PROBE), reason="run by test_tests_sharing_a_module_fixture_run_on_one_worker only")
@pytest.mark.parametrize("n", range(6))
def test_free(n):
    assert n >= 0  # shares nothing: may go to any worker


@pytest.mark.slow  # starts a pytest on 3 workers (12 s of CPU): the side tier's
def test_tests_sharing_a_module_fixture_run_on_one_worker():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | {PROBE: "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-m",
            "",
            "-n",
            "3",
            "--dist",
            "loadgroup",
            "-v",
            "-p",
            "no:cacheprovider",
            __file__,
            "-k",
            "probe or free",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    ran = re.findall(r"^\[(gw\d+)\] .*PASSED (\S+)", done.stdout, re.M)
    probes = {worker for worker, test in ran if "::test_probe[" in test}
    assert len([t for _, t in ran if "::test_probe[" in t]) == 6 and len(probes) == 1, ran
    assert all(test.endswith("@tests/test_conftest.py") for _, test in ran if "::test_probe[" in test), ran  # the group in the id
    assert not any("@" in test for _, test in ran if "::test_free[" in test), ran  # no group: any worker
