"""The test hosts of tests/netlab.py: separate namespaces reachable over ssh, private /tmp, nothing left afterwards."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import netlab

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.skipif(netlab.missing() is not None, reason=str(netlab.missing()))]


def namespaces() -> set[str]:
    return {line.split()[0] for line in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.splitlines() if line}


def test_hosts_are_separate_machines_over_ssh_and_leave_nothing():
    passwd = Path("/etc/passwd").read_bytes()
    with netlab.Lab(count=2, hide=(str(ROOT),)) as lab:
        own = subprocess.run(["readlink", "/proc/self/ns/net"], capture_output=True, text=True).stdout.strip()
        seen = {}
        for host in lab.hosts:
            out = lab.ssh(
                host,
                f"readlink /proc/self/ns/net; hostname -I; ls -A /tmp | wc -l; test -e {netlab.quote(str(ROOT / 'run_bench.sh'))} && echo visible || echo hidden",
            ).stdout.split()
            seen[host.name] = out
            assert out[1] == host.address
            assert out[2] == "0", "the host's /tmp is its own"
            assert out[3] == "hidden", "the checkout is not visible on a test host"
            assert out[0] != own
        assert seen["host-1"][0] != seen["host-2"][0]
        # host-1 reaches host-2 over the bridge; the controller's namespace is not this one.
        reach = lab.ssh(lab.hosts[0], f"timeout 3 bash -c '</dev/tcp/{lab.hosts[1].address}/22' && echo reached").stdout
        assert "reached" in reach
        assert lab.leftovers() == {}
        names = set(lab.namespaces())
        assert names <= namespaces()
    assert not (names & namespaces()), "every namespace is deleted"
    assert Path("/etc/passwd").read_bytes() == passwd, "the real /etc/passwd is never written"


def test_leftovers_names_a_process_started_on_a_host():
    with netlab.Lab(count=1) as lab:
        lab.ssh(lab.hosts[0], "setsid sleep 300 </dev/null >/dev/null 2>&1 &")
        found = lab.leftovers()
        assert any("sleep 300" in cmd for cmd in found.get(lab.hosts[0].netns, [])), found
