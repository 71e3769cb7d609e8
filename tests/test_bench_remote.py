"""Tests of wrkreport.bench.remote: the facts sh script run here gives what this machine's own readers give; hostile output stays harmless."""

from __future__ import annotations

import os
import subprocess

from wrkreport.bench.machine import machine_info, read_sysctl, tool_versions
from wrkreport.bench.remote import FACTS_SCRIPT, MAX_VALUE, parse_facts


def run_script() -> str:
    return subprocess.run(["sh", "-c", FACTS_SCRIPT], capture_output=True, text=True, check=True, timeout=60).stdout


def test_facts_of_this_machine_match_the_local_readers():
    facts = parse_facts(run_script())
    local = machine_info()
    assert facts["machine"] == local
    assert facts["sysctl"] == {key: value.replace("\t", " ") if value else value for key, value in read_sysctl().items()}
    versions, _ = tool_versions("/usr/sbin/nginx")
    for tool in ("nginx", "wrk", "curl"):
        assert facts["versions"][tool] == versions[tool], tool
    assert facts["uid"] == os.getuid()
    assert facts["net_ns"] == os.readlink("/proc/self/ns/net")
    assert facts["arch"] == os.uname().machine
    assert facts["boot_id"] == open("/proc/sys/kernel/random/boot_id").read().strip()
    assert isinstance(facts["ulimit_n"], int) or facts["ulimit_n"] == "unlimited"


def test_hostile_output_is_cut_and_numbers_read_strictly():
    text = "\n".join(
        [
            "usable_cores\t2; rm -rf /",
            "memory_kb\t-5",
            "logical_cores\t99999999999999999999",
            "cpu_model\t" + "x" * 5000,
            "Not A Key\tvalue",
            "version.nginx\tnginx version: nginx/1.22.1",
            "ulimit_n\tunlimited",
            "boot_id\t../../etc/passwd",
        ]
    )
    facts = parse_facts(text)
    assert facts["machine"]["usable_cores"] is None
    assert facts["machine"]["memory_bytes"] is None
    assert facts["machine"]["logical_cores"] is None
    assert len(facts["machine"]["cpu_model"]) == MAX_VALUE
    assert facts["versions"]["nginx"] == "1.22.1"
    assert facts["versions"]["go"] is None
    assert facts["ulimit_n"] == "unlimited"
    assert facts["boot_id"] is None
