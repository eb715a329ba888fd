"""Checking an import's rows: read both images, decode and hash them; no database.

Decoding dominates an import, so a big one checks its rows in worker processes (every core,
no GIL): `RowChecker` keeps the next batch in the workers while the current one is stored.
The workers run `row_check` only, which never touches Django's database or storage.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from annotator.services import CheckedPair, PairInput, PairRejected, pair_inspect
from jobs.processes import die_with_parent
from pairdiff.images import ImageLimits, ImageRejected
from pairdiff.manifest import ManifestRow
from pairdiff.sources import ImageSource, open_source

log = logging.getLogger(__name__)
CHECK_THREADS = min(4, os.cpu_count() or 1)
# Below this many rows, starting worker processes costs more than it saves: threads check
# them in this process (Pillow decodes without the GIL).
PROCESS_MIN_ROWS = 100
ROWS_PER_WORKER = 50  # at least, so a small import on a big machine forks a few workers only
AHEAD = 2  # batches checked ahead of the one being stored (their image bytes are held too)

Outcome = CheckedPair | PairRejected


def row_check(
    row: ManifestRow, source: ImageSource, limits: ImageLimits, categories: Sequence[str]
) -> Outcome:
    """The checked pair of a manifest row, or why it cannot be imported."""
    data = {}
    try:
        for side, name in (("image_a", row.image_a), ("image_b", row.image_b)):
            try:
                data[side] = source.read(name)
            except ImageRejected as exc:
                raise PairRejected(f"{side}: {exc}", field=side) from exc
        pair_input = PairInput(
            image_a=data["image_a"],
            image_b=data["image_b"],
            external_id=row.external_id,
            instruction=row.instruction,
            category=row.category,
            metadata={**row.metadata, "source_files": [row.image_a, row.image_b]},
        )
        return pair_inspect(pair_input, limits=limits, categories=categories)
    except PairRejected as exc:
        return exc


def worker_count() -> int:
    return os.cpu_count() or 1


class RowChecker:
    """Outcomes of the rows, batch by batch in the order given; call `outcomes` with each batch
    of `batches` in turn. Worker processes for big imports, this process otherwise (and from
    the batch where the workers broke, should they)."""

    def __init__(
        self,
        batches: list[list[ManifestRow]],
        *,
        images: str | os.PathLike[str],
        source: ImageSource,
        limits: ImageLimits,
        categories: Sequence[str],
    ) -> None:
        self._batches = batches
        self._source = source
        self._args = (limits, tuple(categories))
        self._pending: deque[list[Future[list[Outcome]]]] = deque()
        self._submitted = 0
        self._pool: ProcessPoolExecutor | None = None
        rows = sum(len(batch) for batch in batches)
        workers = self._workers = min(worker_count(), -(-rows // ROWS_PER_WORKER))
        if rows >= PROCESS_MIN_ROWS and workers > 1 and _can_fork():
            # fork: the workers start in milliseconds with everything imported; each opens
            # its own handle on the folder or zip (a zip's file offset is not shareable).
            self._pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_worker_start,
                initargs=(os.getpid(), os.fspath(images), limits.max_bytes),
            )

    @property
    def workers(self) -> int:
        """Worker processes checking the rows; 0 when this process checks them."""
        return self._workers if self._pool is not None else 0

    def outcomes(self, batch: list[ManifestRow]) -> list[Outcome]:
        if self._pool is not None:
            try:
                return self._from_workers(batch)
            except (BrokenProcessPool, OSError):
                # A worker died (killed for memory, say) or could not be forked: check in this
                # process from here on (an error of the check itself would come again there).
                log.warning("import worker processes stopped; checking rows in-process")
                self.close()
        return self._in_process(batch)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self._pending.clear()

    def __enter__(self) -> RowChecker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _from_workers(self, batch: list[ManifestRow]) -> list[Outcome]:
        assert self._pool is not None
        while len(self._pending) <= AHEAD and self._submitted < len(self._batches):
            rows = self._batches[self._submitted]
            # One task per worker and batch, not per row: a task's round trip (queueing,
            # pickling, waking the pool's threads) cost this process more than storing a row.
            step = -(-len(rows) // self._workers)
            self._pending.append(
                [
                    self._pool.submit(_worker_check, rows[start : start + step], *self._args)
                    for start in range(0, len(rows), step)
                ]
            )
            self._submitted += 1
        outcomes = [o for future in self._pending.popleft() for o in future.result()]
        assert len(outcomes) == len(batch), "outcomes asked out of the batches' order"
        return outcomes

    def _in_process(self, batch: list[ManifestRow]) -> list[Outcome]:
        limits, categories = self._args
        with ThreadPoolExecutor(max_workers=CHECK_THREADS) as pool:
            return list(pool.map(lambda r: row_check(r, self._source, limits, categories), batch))


def _can_fork() -> bool:
    # A daemonic process (a worker of some pools) may not have children of its own.
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )


_worker_source: ImageSource | None = None


def _worker_start(parent: int, images: str, max_entry_bytes: int) -> None:
    """In a worker, first: end with the import's process (a kill -9 of it must not leave
    decoders holding memory and its client's socket), then open the source."""
    global _worker_source
    die_with_parent(parent)
    _worker_source = open_source(images, max_entry_bytes=max_entry_bytes)


def _worker_check(
    rows: list[ManifestRow], limits: ImageLimits, categories: Sequence[str]
) -> list[Outcome]:
    assert _worker_source is not None, "_worker_start runs first in every worker"
    return [row_check(row, _worker_source, limits, categories) for row in rows]
