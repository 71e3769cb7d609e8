"""./run_tests.sh itself, stopped by a signal in its real tier: it ends every server, ssh master and lab namespace its tests made.

The victim is a real test of the lab (tests/test_driver_clients.py): three network
namespaces with an sshd each, gohello and its relay in the controller namespace, two ssh
control masters (`ssh -f`, which detach into sessions of their own). Once they all exist,
./run_tests.sh is sent SIGTERM (a CI timeout) or SIGINT (Ctrl-C); afterwards no namespace it
made and no process that inherited its environment may be left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import netlab
from helpers import REPO, default_sigint
from netlab import command_line

pytestmark = [pytest.mark.slow, pytest.mark.alone, pytest.mark.skipif(netlab.missing() is not None, reason=str(netlab.missing()))]

MARK = "WRKREPORT_STOP_PROBE"  # in the environment of ./run_tests.sh and so of everything it starts (ssh -f too)
VICTIM = ("tests/test_driver_clients.py", "-k", "two_clients_give_one_measurement", "-n", "0", "-p", "no:cacheprovider")


def namespaces() -> set[str]:
    return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()) - {"(id:"}


def marked(mark: str) -> list[str]:
    """Return 'pid: command line' of every process whose environment carries MARK=mark."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"{MARK}={mark}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.append(f"{entry.name}: {command_line(int(entry.name))}")
        except OSError:
            continue
    return found


def ssh_masters(mark: str) -> list[str]:
    return [p for p in marked(mark) if "ControlMaster=yes" in p and " ssh " in f" {p.split(': ', 1)[1]}"]


def hosts_with_a_master(mark: str) -> set[str]:
    """Return the hosts (user@address, the command line's last word) that an ssh master runs to: `ssh -f` is two processes
    for one host while it forks into the background, so processes are not counted."""
    return {master.split()[-1] for master in ssh_masters(mark)}


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_in_the_real_tier_leaves_no_process_namespace_or_ssh_master(signum, status):
    mark = uuid.uuid4().hex
    before = namespaces()
    env = {**os.environ, MARK: mark}
    env.pop("WRKREPORT_TEST_SESSION", None)  # its own session, as a user's
    # default_sigint: a suite started in the background (`cmd &`, nohup) ignores SIGINT, and the inner ./run_tests.sh would
    # inherit that and could not trap it (it ran to the end and exited 0)
    proc = subprocess.Popen(
        [str(REPO / "run_tests.sh"), *VICTIM],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 240  # pip install -e and go test come first
        made: set[str] = set()
        masters: set[str] = set()
        while time.monotonic() < deadline and proc.poll() is None:
            made, masters = {ns for ns in namespaces() - before if ns.startswith("wl")}, hosts_with_a_master(mark)
            if len(made) >= 4 and len(masters) >= 2:
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        # the reading the loop stopped at (a second one could differ): two hosts' masters, not one host's two processes
        assert len(made) >= 4 and len(masters) >= 2, f"the lab never came up: {made}, {masters}: {ssh_masters(mark)}"
        proc.send_signal(signum)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == status, output[-3000:]
    assert f"stopped by {signal.Signals(signum).name}" in output, output[-3000:]
    assert not (made & namespaces()), f"namespaces left: {made & namespaces()}"
    assert marked(mark) == [], "processes left"
