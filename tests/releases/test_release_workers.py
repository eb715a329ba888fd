"""The release build's worker processes end with the build's process."""

import multiprocessing
import os
import time

from jobs.processes import die_with_parent


def _worker(parent: int) -> None:
    die_with_parent(parent)  # what the release workers run first
    time.sleep(30)  # a task that would outlive a killed build


def test_a_worker_ends_when_the_build_process_is_gone():
    context = multiprocessing.get_context("fork")
    orphan = context.Process(target=_worker, args=(-1,))  # its parent is not the build's
    started = time.monotonic()
    orphan.start()
    orphan.join(10)
    assert orphan.exitcode == 1 and time.monotonic() - started < 5

    kept = context.Process(target=_worker, args=(os.getpid(),))
    kept.start()
    kept.join(1.5)
    assert kept.is_alive()  # its build is still there
    kept.terminate()
    kept.join(5)
