"""Tests of wrkreport.bench.cpu: processes' CPU time from /proc (real processes and a fake /proc), the servers' PIDs, a measured child."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from wrkreport.bench.cpu import child_pids, cpu_delta, cpu_ms_per_1k_requests, cpu_snapshot, cpu_ticks, run_measured, server_pids

# --- processes ---------------------------------------------------------------------------------


def test_child_pids_finds_a_child():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10)"])
    try:
        assert child.pid in child_pids(os.getpid())
    finally:
        child.kill()
        child.wait()


def test_child_pids_without_the_kernels_children_file_scans_parents(tmp_path):
    for pid, ppid in ((10, 1), (11, 10), (12, 10), (13, 11)):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (nginx: a (b) c) S {ppid} 1 1 0\n")
    (tmp_path / "self").mkdir()
    assert child_pids(10, tmp_path) == [11, 12]
    (tmp_path / "10" / "task" / "10").mkdir(parents=True)
    (tmp_path / "10" / "task" / "10" / "children").write_text("12 11 ")
    assert child_pids(10, tmp_path) == [11, 12]


def fake_stat(proc: Path, pid: int, utime: int, stime: int, ppid: int = 1, pgrp: int = 0, session: int = 0) -> None:
    """Write a /proc/<pid>/stat whose command name has spaces and parentheses, as nginx's can."""
    (proc / str(pid)).mkdir(exist_ok=True)
    fields = ["S", str(ppid), str(pgrp), str(session), *["0"] * 7, str(utime), str(stime), *["0"] * 8]
    (proc / str(pid) / "stat").write_text(f"{pid} (nginx: worker (x)) {' '.join(fields)}\n")


def test_cpu_ticks_read_utime_and_stime(tmp_path):
    fake_stat(tmp_path, 42, 123, 45)
    assert cpu_ticks(42, tmp_path) == (123, 45)
    assert cpu_ticks(43, tmp_path) is None
    own = cpu_ticks(os.getpid())
    assert own is not None and all(t >= 0 for t in own)


def test_server_pids_are_those_started_and_nginx_children(tmp_path):
    fake_stat(tmp_path, 100, 0, 0)
    fake_stat(tmp_path, 101, 0, 0, ppid=100)
    fake_stat(tmp_path, 102, 0, 0, ppid=100)
    fake_stat(tmp_path, 103, 0, 0, ppid=7)  # somebody else's nginx: never counted
    pids = {"go": 5, "nginx": 100, "nginx_workers": [101], "fasthttp": None}
    assert server_pids(pids, tmp_path) == {"go": [5], "nginx": [100, 101, 102]}
    assert server_pids({"go": 5, "nginx": None, "nginx_workers": [], "fasthttp": 6}, tmp_path) == {"go": [5], "fasthttp": [6]}


def test_server_pids_count_node_with_its_cluster_workers(tmp_path):
    fake_stat(tmp_path, 200, 0, 0)
    fake_stat(tmp_path, 201, 0, 0, ppid=200)  # the cluster's workers: children of the primary
    fake_stat(tmp_path, 202, 0, 0, ppid=200)
    fake_stat(tmp_path, 203, 0, 0, ppid=8)  # another node: never counted
    pids = {"go": 5, "nginx": None, "nginx_workers": [], "fasthttp": None, "node": 200, "node_workers": [201, 202]}
    assert server_pids(pids, tmp_path) == {"go": [5], "node": [200, 201, 202]}
    assert server_pids({"go": None, "node": 200}, tmp_path) == {"node": [200, 201, 202]}


def test_server_pids_count_an_apps_and_a_front_ends_whole_process_group_not_their_session(tmp_path):
    # the driver starts each in a process group of its own inside its own session (start_in_group): the session is everybody's
    for pid, ppid in ((300, 1), (301, 300), (302, 301)):  # the app's bash, the app, a worker of it
        fake_stat(tmp_path, pid, 0, 0, ppid=ppid, pgrp=300, session=50)
    for pid, ppid in ((400, 1), (401, 400)):  # Apache httpd's parent and a child
        fake_stat(tmp_path, pid, 0, 0, ppid=ppid, pgrp=400, session=50)
    fake_stat(tmp_path, 50, 0, 0, pgrp=50, session=50)  # the script: same session, its own group
    fake_stat(tmp_path, 303, 0, 0, ppid=300, pgrp=303, session=50)  # a process the app put in a group of its own: beyond it
    found = server_pids({"go": None, "app": 300, "apache": 400}, tmp_path)
    assert found == {"app": [300, 301, 302], "apache": [400, 401]}


def test_cpu_delta_sums_the_group_over_the_measurement():
    before = {1: (100, 50), 2: (10, 10), 3: (5, 5)}
    after = {1: (250, 80), 2: (30, 15), 4: (7, 3)}  # 3 is gone, 4 started meanwhile
    assert cpu_delta(before, after, 100) == {"user_s": 1.77, "system_s": 0.38, "pids": [1, 2, 4]}
    assert cpu_delta(before, {}, 100) is None


def test_cpu_snapshot_leaves_out_processes_that_are_gone(tmp_path):
    fake_stat(tmp_path, 7, 3, 4)
    assert cpu_snapshot({"go": [7], "nginx": [8, 9]}, tmp_path) == {"go": {7: (3, 4)}, "nginx": {}}


def test_cpu_ms_per_1k_requests():
    record = {"processes": {"go": {"user_s": 1.0, "system_s": 0.5}, "fasthttp": None, "wrk": {"user_s": 2.0, "system_s": 1.0}}}
    assert cpu_ms_per_1k_requests(record, 100_000) == {"go": 15.0, "wrk": 30.0}


def test_run_measured_returns_the_childs_own_cpu_and_status(tmp_path):
    burn = "import sys, time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\nprint('out'); print('err', file=sys.stderr); sys.exit(3)"
    started = time.monotonic()
    result = run_measured([sys.executable, "-c", burn], tmp_path / "out", tmp_path / "err")
    assert result.status == 3 and result.signal is None and result.pid > 0
    assert result.user_s + result.system_s >= 0.25
    assert 0.25 <= result.wall_s <= time.monotonic() - started
    assert (tmp_path / "out").read_text() == "out\n" and (tmp_path / "err").read_text() == "err\n"
    killed = run_measured([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], tmp_path / "o", tmp_path / "e")
    assert killed.status == 128 + 9
