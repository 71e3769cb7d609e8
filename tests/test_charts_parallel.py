"""Tests of wrkreport.charts.parallel: forked jobs give the same texts, in order, as running them here; a failed child is run again here."""

from __future__ import annotations

import os
import signal

import pytest

from wrkreport.charts import parallel


def jobs_of(n: int):
    return {f"job-{i}": (lambda i=i: f"{i}:" + "x" * (i * 100_000)) for i in range(n)}  # large texts: more than a pipe buffer


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_same_texts_in_the_same_order_as_running_them_here(workers):
    jobs = jobs_of(5)
    assert parallel.run_all(jobs, workers) == {name: job() for name, job in jobs.items()}
    assert list(parallel.run_all(jobs, workers)) == list(jobs)


def test_jobs_run_in_children_when_there_are_cpus_for_them():
    parent = os.getpid()
    found = parallel.run_all({f"j{i}": (lambda: str(os.getpid())) for i in range(4)}, workers=2)
    pids = [int(v) for v in found.values()]
    assert pids[0] == parent and all(pid != parent for pid in pids[1:]), pids


def test_a_child_that_dies_or_raises_is_run_again_here():
    parent = os.getpid()

    def dies() -> str:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return "ran here"

    def raises() -> str:
        if os.getpid() != parent:
            raise RuntimeError("only in the child")
        return "ran here too"

    assert parallel.run_all({"first": lambda: "a", "dies": dies, "raises": raises}, workers=3) == {
        "first": "a",
        "dies": "ran here",
        "raises": "ran here too",
    }


def test_an_error_of_the_job_itself_still_reaches_the_caller():
    def broken() -> str:
        raise ValueError("bad data")

    with pytest.raises(ValueError, match="bad data"):
        parallel.run_all({"first": lambda: "a", "broken": broken}, workers=2)
