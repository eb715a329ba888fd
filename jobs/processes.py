"""Processes of jobs: whether one still runs, and children that end with their parent.

A job's worker forks helpers (an import's decoders, a release build's writers). Killed with
kill -9, a parent cannot stop them, and a forked child inherits every open descriptor, the
client's socket included: it would live on, holding memory and the connection. Each child runs
``die_with_parent`` first: Linux's PR_SET_PDEATHSIG sends it SIGKILL when its parent thread
ends, and a watch thread ends it when its parent process is gone (elsewhere, or should the
forking thread end first).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PARENT_CHECK_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host is running (a zombie, ended but not yet reaped,
    is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's, running
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def die_with_parent(parent: int) -> None:
    """In a forked child, first thing: end when process ``parent`` ends."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
