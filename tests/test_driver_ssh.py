"""run_bench.sh over ssh: test hosts in network namespaces (tests/netlab.py); nothing leaves this machine."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import netlab

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "run_bench.sh"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(netlab.missing() is not None, reason=str(netlab.missing()))]


@pytest.fixture(scope="module")
def lab():
    with netlab.Lab(count=1, hide=(str(ROOT),)) as made:
        yield made


def run_in_controller(lab, *argv, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(lab.in_controller(str(SCRIPT), *argv), capture_output=True, text=True, timeout=timeout)


def test_unreachable_server_host_is_a_preflight_error(lab, tmp_path):
    absent = f"root@{lab.subnet}.250"  # on the lab's bridge, no host there
    done = run_in_controller(lab, "--quick", "--server-host", absent, "--ssh-config", str(lab.ssh_config), "--out", str(tmp_path / "raw"))
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert f"ssh to {absent} failed:" in last and "nothing was started" in last
    assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").iterdir()), "no run directory for a preflight error"
    assert lab.leftovers() == {}
    masters = subprocess.run(["pgrep", "-af", "ControlMaster=yes"], capture_output=True, text=True).stdout
    assert absent not in masters, "no ssh master left behind"
