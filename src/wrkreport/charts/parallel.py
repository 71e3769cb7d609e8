"""Parallel: independent jobs that each return text (the report's charts), run in forked children on the usable CPUs.

Drawing a chart is pure CPU work in matplotlib, one chart independent of the next; a build
of a default run spends most of its time beyond the imports there. With fork (Linux) and
more than one usable CPU, each job after the first runs in a child forked from this
process (which has already imported everything), sending its text back through a pipe;
this process runs the first job meanwhile. All jobs start at once (up to twice the usable
CPUs, this process counted while it runs its job): the kernel shares the CPUs among them, so the last one ends about when the total
work divided by the CPUs is done, whatever the jobs' sizes. A child that fails (an exception, a signal, a short answer) is run again
here, so the result never depends on the children: the same texts in the same order.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..core.cpus import cpu_count


def run_all(jobs: dict[str, Callable[[], str]], workers: int | None = None) -> dict[str, str]:
    """Return {name: job()} for every job, in the jobs' order, on `workers` CPUs (default: the usable ones); 1: all here.

    The first job always runs in this process, so its value may be anything (the others' are texts, sent through pipes).
    """
    workers = cpu_count() if workers is None else workers
    names = list(jobs)
    if workers < 2 or len(names) < 2 or not hasattr(os, "fork"):
        return {name: jobs[name]() for name in names}
    results: dict[str, str] = {}
    pending = names[1:]
    running: dict[str, tuple[int, int]] = {}  # name -> (pid, read end)
    while pending and len(running) < 2 * workers - 1:
        name = pending.pop(0)
        running[name] = fork_job(jobs[name])
    results[names[0]] = jobs[names[0]]()
    while pending and len(running) < 2 * workers:  # this process now only waits: one more child in its place
        name = pending.pop(0)
        running[name] = fork_job(jobs[name])
    while running:
        name, (pid, fd) = next(iter(running.items()))
        del running[name]
        results[name] = collect(pid, fd, jobs[name])
        if pending:
            later = pending.pop(0)
            running[later] = fork_job(jobs[later])
    return {name: results[name] for name in names}


def fork_job(job: Callable[[], str]) -> tuple[int, int]:
    """Start job in a forked child writing its text to a pipe; return (pid, read end)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        status = 1
        try:
            os.close(read_end)
            data = job().encode("utf-8")
            with os.fdopen(write_end, "wb") as out:
                out.write(len(data).to_bytes(8, "big") + data)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def collect(pid: int, fd: int, job: Callable[[], str]) -> str:
    """Return a child's text; run the job here instead when the child failed."""
    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    size = int.from_bytes(data[:8], "big") if len(data) >= 8 else -1
    if status != 0 or size != len(data) - 8:
        return job()
    return data[8:].decode("utf-8")
