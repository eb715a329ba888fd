"""The executors of a release build: where the bytes work runs beside the build's Python.

The build (building.py) is one path; it hands an executor what can run beside it: checking and
copying the originals, making the files that hold images (the VLMEvalKit TSVs), and, with
processes, half the derived negatives and the Label Studio files. Two executors:

- ``ProcessExecutor``, when the release's folder and the originals are on local disk: two
  forked worker processes. Checking and linking originals and making the TSVs are reading,
  hashing and copying bytes; in threads of the building process each of their many GIL
  hand-overs waited on the Python that makes the data files, questions and tables, and the two
  halves slowed each other down. In processes they run on the other core. The workers are
  forked before the build starts any thread, and inherit the build's pairs and storage (nothing
  large is pickled to them); they touch no database and write only below the release's local
  folder.
- ``ThreadExecutor`` otherwise (S3, or a process that may not fork): threads of the build,
  whose storage calls wait on the network with the GIL released.

Either way a failure stops the other side (``close(failed=True)``) before the caller clears the
folder.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Protocol

from django.core.files.storage import Storage

from annotator.models import Pair
from config.storage import local_path
from jobs.lifecycle import job_progress
from jobs.processes import die_with_parent
from pairdiff.labelstudio.write import labelstudio_files
from pairdiff.release import publish
from pairdiff.release.build import ReleaseMeta, release_categories
from pairdiff.release.harness import EVAL_SPLITS
from pairdiff.release.hf import IMAGE_COLUMNS
from pairdiff.release.question_set import (
    Derived,
    derived_negatives,
    question_problem,
    release_firsts,
)
from releases.storage import file_read, files_store, image_path
from review.standing import Standing

log = logging.getLogger("releases.building")
WORKERS = 2  # one checks and links the originals, the other makes the files holding images
COPIERS = 2  # threads checking and copying originals on local disk (I/O and hashing free the GIL)

# What the workers inherit at fork (set just before it, cleared in the parent just after).
_inherited: dict = {}


def workers_usable(standing: Sequence[Standing], prefix: str, storage: Storage) -> bool:
    """Whether a build can use worker processes: the release's folder and the originals on
    local disk, and a process that may fork (a daemonic one may not have children)."""
    if not standing or local_path(storage, prefix) is None:
        return False
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    if multiprocessing.current_process().daemon:
        return False
    pair = standing[0].pair
    return all(
        local_path(pair.image(side).storage, pair.image(side).name) is not None
        for side in ("a", "b")
    )


Files = dict[str, tuple[int, str]]  # size and sha256 of each file written, by name


class BuildExecutor(Protocol):
    """What runs beside the build. In order, the build: calls ``records_made`` once its records
    exist; hands ``derived`` and ``labelstudio`` to ``release_files`` (None: it makes them
    itself); starts the files holding images with ``images``; collects the originals' copies
    with ``copied``; and ends with ``close``, failed or not."""

    @property
    def derived(self) -> Mapping[int, tuple[list, str] | ValueError] | None: ...

    @property
    def labelstudio(self) -> Callable[[], Mapping[str, bytes]] | None: ...

    def records_made(
        self,
        records: list[dict],
        meta: ReleaseMeta,
        *,
        verified: Mapping[int, object],
        edited: Mapping[int, object],
    ) -> None: ...

    def images(
        self, questions: Sequence[Mapping], meta: Mapping, checksums: Mapping[str, str]
    ) -> list[Future]: ...

    def copied(self, job) -> Files: ...

    def close(self, *, failed: bool) -> None: ...


class ProcessExecutor:
    """The two workers of one build; the originals' copies start at once."""

    def __init__(
        self,
        standing: list[Standing],
        prefix: str,
        storage: Storage,
        *,
        copy_image: Callable[..., tuple[str, tuple[int, str]]],
    ) -> None:
        """``copy_image``: the build's copier of one original (storage.original_copy)."""
        context = multiprocessing.get_context("fork")
        self.stop = context.Event()
        self.count = len(standing)
        self.derived = LaterNegatives()
        self.labelstudio = self._labelstudio_files
        self._labelstudio: Future | None = None
        _inherited.update(
            standing=standing, prefix=prefix, storage=storage, stop=self.stop, copy_image=copy_image
        )
        # What exists now is left out of the garbage collector's passes, here and in the
        # workers: their collections would walk (and copy, page by page) the build's heap.
        gc.freeze()
        try:
            self.pool = ProcessPoolExecutor(
                max_workers=WORKERS,
                mp_context=context,
                initializer=die_with_parent,
                initargs=(os.getpid(),),
            )
            # The first task forks both workers (fork: all of them, before its manager thread).
            self.copies: Future = self.pool.submit(_copy_all)
        finally:
            _inherited.clear()
            gc.unfreeze()

    def records_made(
        self,
        records: list[dict],
        meta: ReleaseMeta,
        *,
        verified: Mapping[int, object],
        edited: Mapping[int, object],
    ) -> None:
        """Half the derived negatives and the Label Studio files are made from now on."""
        self._negatives(records, verified=verified, edited=edited)
        self._labelstudio = self.pool.submit(
            _labelstudio, records, release_categories(meta, records), meta.labelstudio
        )

    def _labelstudio_files(self) -> Mapping[str, bytes]:
        """The Label Studio files a worker made (waits for them)."""
        assert self._labelstudio is not None  # records_made came first
        return self._labelstudio.result()

    def images(
        self, questions: Sequence[Mapping], meta: Mapping, checksums: Mapping[str, str]
    ) -> list[Future]:
        """The VLMEvalKit TSVs of the questions, one per split (both workers make one), written
        by the workers: futures of their size and sha256 by name. ``checksums``: the images'
        sha256 by name in the release."""
        by_split = {
            split: [q for q in questions if q.get("split", "train") == split]
            for split in EVAL_SPLITS
        }
        return [self._images([], part, meta, checksums) for part in by_split.values()]

    def _images(
        self,
        paths: list[dict],
        questions: list[Mapping],
        meta: Mapping,
        checksums: Mapping[str, str],
    ) -> Future:
        wanted = {p for row in (*paths, *questions) for p in (row.get(s) for s in IMAGE_COLUMNS)}
        sums = {path: digest for path, digest in checksums.items() if path in wanted}
        rows: dict[str, Sequence[Mapping]] = {"benchmark": paths, "questions": questions}
        return self.pool.submit(_images_all, rows, dict(meta), sums)

    def _negatives(
        self,
        records: Sequence[Mapping],
        *,
        verified: Mapping[int, object],
        edited: Mapping[int, object],
    ) -> None:
        """Derive the negatives of the second half of the records that need derived ones in
        a worker, into ``derived``, while the build derives the first half."""
        need = [
            r
            for r in records
            if not question_problem(r)
            and not verified.get(r["pair_id"])
            and not edited.get(r["pair_id"])
        ]
        sent = [
            {
                "id": r["id"],
                "pair_id": r["pair_id"],
                "content_key": r.get("content_key"),
                "source": {"instruction": (r.get("source") or {}).get("instruction") or ""},
                "changes": [r["changes"][0]],
            }
            for r in need[len(need) // 2 :]
        ]
        future = self.pool.submit(_negatives, sent, release_firsts(records))
        self.derived.start(future, {r["pair_id"] for r in sent})

    def copied(self, job) -> Files:
        """Size and sha256 of every original's copy by name, in the pairs' order."""
        files = dict(self.copies.result())
        if job:
            job_progress(job, done=self.count)
        return files

    def close(self, *, failed: bool) -> None:
        """Wait for the workers to end; after a failure they stop at their next file."""
        if failed:
            self.stop.set()
        self.pool.shutdown(wait=True, cancel_futures=True)


class ThreadExecutor:
    """Threads of the build: the originals' copies start at once, in batches (``_Copies``);
    the files holding images are made in a thread of their own, reading the originals. The
    derived negatives and the Label Studio files stay with the build (``derived`` and
    ``labelstudio`` are None): in a thread they would only wait on the build's GIL."""

    derived: Mapping[int, tuple[list, str] | ValueError] | None = None
    labelstudio: Callable[[], Mapping[str, bytes]] | None = None

    def __init__(
        self,
        standing: list[Standing],
        prefix: str,
        storage: Storage,
        *,
        copy_image: Callable[..., tuple[str, tuple[int, str]]],
        batch: int,
    ) -> None:
        """``copy_image``: the build's copier of one original; ``batch``: originals per
        copying task."""
        self.prefix, self.storage = prefix, storage
        self.stop = threading.Event()
        self.sides = {image_path(s.pair, side): (s.pair, side) for s in standing for side in "ab"}
        self.copies = _Copies(standing, prefix, storage, copy_image=copy_image, batch=batch)
        self.side = ThreadPoolExecutor(max_workers=1)

    def records_made(
        self,
        records: list[dict],
        meta: ReleaseMeta,
        *,
        verified: Mapping[int, object],
        edited: Mapping[int, object],
    ) -> None:
        """Nothing to start: the build makes what needs the records itself."""

    def images(
        self, questions: Sequence[Mapping], meta: Mapping, checksums: Mapping[str, str]
    ) -> list[Future]:
        """The VLMEvalKit TSVs of the questions, made and written in a thread of their own
        (reading, encoding, hashing bytes: the GIL is free most of the time)."""
        rows: dict[str, Sequence[Mapping]] = {"benchmark": [], "questions": questions}
        made = publish.research_images(
            rows, meta=dict(meta), checksums=checksums, read_image=self._read_original
        )
        return [self.side.submit(files_store, self.storage, self.prefix, made, self.stop)]

    def _read_original(self, path: str) -> bytes:
        if path not in self.sides:  # a made control's file, written by the build
            return file_read(self.storage, f"{self.prefix}/{path}")
        pair, side = self.sides[path]
        original = pair.image(side)
        # A handle of its own: the pair's FieldFile is shared with the copying threads, and an
        # S3 file closed by one is None to another.
        with original.storage.open(original.name, "rb") as handle:
            return handle.read()

    def copied(self, job) -> Files:
        return self.copies.result(job)

    def close(self, *, failed: bool) -> None:
        """No copy or file starts any more; returns when the running ones have finished, so
        the folder can be cleared behind them."""
        if failed:
            self.stop.set()
        self.copies.stop()
        self.side.shutdown(wait=True, cancel_futures=True)


class _Copies:
    """Every original into ``images/``, each checked against its import sha256, started at
    once and collected by ``result``: in threads when originals and release are on local disk
    (hashing and linking release the GIL), one at a time otherwise (a remote store's failure
    then stops the copy where it happened). Copies run in batches, so a release of 10,000
    pairs makes a couple of hundred tasks, not 20,000. A failed batch stops the batches after
    it (those before it go on: the failure raised is the first in the pairs' order, as one at
    a time). The threads touch no database: ``result`` reports progress, in the caller's."""

    def __init__(
        self,
        standing: list[Standing],
        prefix: str,
        storage: Storage,
        *,
        copy_image: Callable[..., tuple[str, tuple[int, str]]],
        batch: int,
    ) -> None:
        self.prefix, self.storage, self.copy_image = prefix, storage, copy_image
        self.checked: dict[str, str] = {}  # digest of each local original: a shared file once
        self.made: set[str] = set()  # local folders made already
        items = [(s.pair, side) for s in standing for side in ("a", "b")]
        self.stop_at = len(items)  # the batches from this index on start no copy
        local = local_path(storage, prefix) is not None
        self.pool = ThreadPoolExecutor(max_workers=COPIERS if local else 1)
        self.batches = [
            self.pool.submit(self._copy, index, items[start : start + batch])
            for index, start in enumerate(range(0, len(items), batch))
        ]

    def _copy(self, index: int, batch: list[tuple[Pair, str]]) -> list[tuple[str, tuple[int, str]]]:
        done = []
        for pair, side in batch:
            if index >= self.stop_at:
                break
            try:
                done.append(
                    self.copy_image(
                        pair, side, self.prefix, self.storage, checked=self.checked, made=self.made
                    )
                )
            except BaseException:
                self.stop_at = min(self.stop_at, index + 1)
                raise
        return done

    def result(self, job) -> Files:
        """Size and sha256 of every copy by name, in the pairs' order; raises the first
        failure in that order."""
        files: Files = {}
        for batch in self.batches:
            for name, size_digest in batch.result():
                files[name] = size_digest
                if job and len(files) % 50 == 0:
                    job_progress(job, done=len(files) // 2)
        return files

    def stop(self) -> None:
        self.stop_at = -1
        self.pool.shutdown(wait=True, cancel_futures=True)


class LaterNegatives(Mapping):
    """Derived negatives by pair id of the records a worker derives: a lookup of one of them
    waits for the worker's answer."""

    def __init__(self) -> None:
        self._pids: frozenset[int] = frozenset()
        self._future: Future | None = None

    def start(self, future: Future, pids: set[int]) -> None:
        self._future, self._pids = future, frozenset(pids)

    def __contains__(self, pid: object) -> bool:
        return pid in self._pids

    def __getitem__(self, pid: int) -> tuple[list, str] | ValueError:
        if pid not in self._pids or self._future is None:
            raise KeyError(pid)
        return self._future.result()[pid]

    def __iter__(self) -> Iterator[int]:
        return iter(self._pids)

    def __len__(self) -> int:
        return len(self._pids)


def _labelstudio(records: list[dict], categories: list[str], profile) -> dict[str, bytes]:
    """In a worker: ``labelstudio_files`` of the records."""
    with _timed("Label Studio files"):
        return labelstudio_files(records, categories=categories, profile=profile)


def _negatives(records: list[dict], firsts: list[str]) -> Derived:
    """In a worker: ``derived_negatives`` of the records."""
    with _timed("derived negatives"):
        return derived_negatives(records, firsts=firsts)


@contextlib.contextmanager
def _timed(task: str) -> Iterator[None]:
    """Log how long a worker's task took (wall and the worker's CPU seconds)."""
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    log.info(
        "release worker %s: %s in %.2f s (CPU %.2f s)",
        os.getpid(),
        task,
        time.perf_counter() - wall,
        time.process_time() - cpu,
    )


def _copy_all() -> list[tuple[str, tuple[int, str]]]:
    """In a worker: every original checked and linked, in the pairs' order; the first failure
    stops the copies and is raised."""
    with _timed("originals checked and linked"):
        return _copy_each()


def _copy_each() -> list[tuple[str, tuple[int, str]]]:
    state = _inherited  # the parent's, as it was at fork
    standing, prefix, storage, stop = (state[k] for k in ("standing", "prefix", "storage", "stop"))
    copy_image = state["copy_image"]
    checked: dict[str, str] = {}
    made: set[str] = set()
    done: list[tuple[str, tuple[int, str]]] = []
    for s in standing:
        for side in ("a", "b"):
            if stop.is_set():
                return done
            done.append(copy_image(s.pair, side, prefix, storage, checked=checked, made=made))
    return done


def _images_all(
    rows: Mapping[str, Sequence[Mapping]], meta: Mapping, checksums: Mapping[str, str]
) -> dict[str, tuple[int, str]]:
    """In a worker: the files holding images, read from the originals (the release's copies
    are links to the same files), written below the release's folder."""
    with _timed(f"TSV of {len(rows['questions'])} questions"):
        return _images_each(rows, meta, checksums)


def _images_each(
    rows: Mapping[str, Sequence[Mapping]], meta: Mapping, checksums: Mapping[str, str]
) -> dict[str, tuple[int, str]]:
    state = _inherited  # the parent's, as it was at fork
    standing = state["standing"]
    # Each image's pair and side by its name in the release; its original's path is looked
    # up only for the images read (a few thousand of them for the TSVs).
    sides = {image_path(s.pair, side): (s.pair, side) for s in standing for side in "ab"}

    def read_image(path: str) -> bytes:
        if path not in sides:  # a made control's file, written by the build
            return file_read(state["storage"], f"{state['prefix']}/{path}")
        pair, side = sides[path]
        source = local_path(pair.image(side).storage, pair.image(side).name)
        assert source is not None  # workers_usable
        with open(source, "rb") as handle:
            return handle.read()

    made = publish.research_images(rows, meta=meta, checksums=checksums, read_image=read_image)
    return files_store(state["storage"], state["prefix"], made, state["stop"])
