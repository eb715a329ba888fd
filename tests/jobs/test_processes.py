"""Children of an import end with their parent, and job folders with their process (issue 24
item 6): after kill -9 of an import, its decode workers (which hold memory and, forked from a
web worker, the client's socket) are gone within seconds, and its temporary folder is swept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from jobs.processes import pid_alive
from jobs.tempdirs import PREFIX, job_tempdir, temp_folders_delete

ROOT = Path(__file__).resolve().parents[2]

# An import's row checker with its worker processes up, in a process of its own (as a Celery
# worker or a web worker without a broker runs it); it prints its children and waits.
IMPORTING = textwrap.dedent(
    """
    import multiprocessing, os, sys, time
    import django
    django.setup()
    from annotator.intake.checks import RowChecker
    from annotator.services import image_limits
    from pairdiff.manifest import ManifestRow
    from pairdiff.sources import open_source

    folder = sys.argv[1]
    rows = [ManifestRow(n, "a.png", "b.png", str(n), "", "", {}) for n in range(200)]
    with open_source(folder, max_entry_bytes=10**6) as source:
        checker = RowChecker([rows], images=folder, source=source, limits=image_limits(),
                             categories=[])
        assert checker.workers == 2, checker.workers
        checker.outcomes(rows)
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        time.sleep(120)
    """
)


def test_import_workers_end_when_the_import_is_killed(tmp_path):
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "config.settings_test", "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen(
        [sys.executable, "-c", IMPORTING, str(tmp_path)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        children = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(children) == 2 and all(pid_alive(pid) for pid in children)

        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5
        while any(pid_alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)

        assert not any(pid_alive(pid) for pid in children)
    finally:
        parent.kill()
        parent.wait(10)


def test_the_sweep_deletes_the_folders_of_ended_processes_only(tmp_path):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    orphan = tmp_path / f"{PREFIX}{ended.pid}-import-x1"
    mine = tmp_path / f"{PREFIX}{os.getpid()}-import-x2"
    legacy_old = tmp_path / "diffmark-import-old"
    legacy_new = tmp_path / "diffmark-import-new"
    other = tmp_path / "someone-elses"
    for folder in (orphan, mine, legacy_old, legacy_new, other):
        folder.mkdir()
        (folder / "images.zip").write_bytes(b"x" * 1000)
    day_ago = time.time() - 25 * 3600
    os.utime(legacy_old, (day_ago, day_ago))

    assert temp_folders_delete(root=str(tmp_path)) == 2

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (mine, legacy_new, other)
    )


def test_a_job_folder_names_its_process_and_is_gone_afterwards():
    with job_tempdir("synth") as folder:
        assert folder.name.startswith(f"{PREFIX}{os.getpid()}-synth-")
        assert folder.parent == Path(tempfile.gettempdir())
    assert not folder.exists()
