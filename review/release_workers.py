"""The bytes work of a release build in two forked worker processes, beside the build's Python.

Checking and linking the originals, and making the files that hold images (the VLMEvalKit
TSVs), are reading, hashing and copying bytes; in threads of the building process each of their
many GIL hand-overs waited on the Python that makes the data files, questions and tables, and
the two halves slowed each other down. In processes they run on the other core. The workers are
forked before the build starts any thread, and inherit the build's pairs and storage (nothing
large is pickled to them); they touch no database and write only below the release's local
folder. A failure stops both (``stop``) before the caller clears the folder.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

from django.core.files.storage import Storage

from annotator.models import Pair
from config.storage import local_path
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
from review.standing import Standing

log = logging.getLogger("review.releases")
WORKERS = 2  # one checks and links the originals, the other makes the files holding images

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


class BuildWorkers:
    """The two workers of one build; the originals' copies start at once."""

    def __init__(
        self,
        standing: list[Standing],
        prefix: str,
        storage: Storage,
        *,
        copy_image: Callable[..., tuple[str, tuple[int, str]]],
        image_path: Callable[[Pair, str], str],
        store_all: Callable[..., dict[str, tuple[int, str]]],
    ) -> None:
        """`copy_image`, `image_path` and `store_all`: the build's own (review.releases
        imports this module, so it hands them over rather than being imported back)."""
        context = multiprocessing.get_context("fork")
        self.stop = context.Event()
        _inherited.update(
            standing=standing,
            prefix=prefix,
            storage=storage,
            stop=self.stop,
            copy_image=copy_image,
            image_path=image_path,
            store_all=store_all,
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

    def tsvs(
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

    def negatives(
        self,
        records: Sequence[Mapping],
        *,
        verified: Mapping[int, object],
        edited: Mapping[int, object],
        derived: LaterNegatives,
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
        derived.start(future, {r["pair_id"] for r in sent})

    def labelstudio(self, records: list[dict], meta: ReleaseMeta) -> Callable[[], dict]:
        """The Label Studio files of the records made by a worker: a call that waits for
        them."""
        future = self.pool.submit(
            _labelstudio, records, release_categories(meta, records), meta.labelstudio
        )
        return future.result

    def close(self, *, failed: bool) -> None:
        """Wait for the workers to end; after a failure they stop at their next file."""
        if failed:
            self.stop.set()
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
    standing, image_path = state["standing"], state["image_path"]
    # Each image's pair and side by its name in the release; its original's path is looked
    # up only for the images read (a few thousand of them for the TSVs).
    sides = {image_path(s.pair, side): (s.pair, side) for s in standing for side in "ab"}

    def read_image(path: str) -> bytes:
        pair, side = sides[path]
        source = local_path(pair.image(side).storage, pair.image(side).name)
        assert source is not None  # workers_usable
        with open(source, "rb") as handle:
            return handle.read()

    made = publish.research_images(rows, meta=meta, checksums=checksums, read_image=read_image)
    return state["store_all"](state["storage"], state["prefix"], made, state["stop"])
