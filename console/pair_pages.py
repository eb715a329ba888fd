"""Pages of the pairs browser on a large project: by key, in the chosen order, with a count
that stops early.

A page-numbered list counts its whole match set and skips ``OFFSET`` rows: on a million pairs
both cost more than the budget once a filter matches half of them. Here a page starts after
(or ends before) the last pair the reader saw, and reads the pairs in growing id windows
(``WINDOW``, then 4×, 16×, …): a filter whose set is a join (category, text, flag, annotator,
difficulty) reads only the slice of its set in each window, so a page costs what its pairs
cost whatever the set's size. Filtered views count at most ``COUNT_CAP`` pairs ("1,000+"),
in at most ``COUNT_WINDOWS`` windows (a sparser filter: "312+", counted that far);
unfiltered (or status-only) views show the stored pairs per status (annotator.pair_counts).

Orders (``SORTS``): oldest first (import order, the default), newest first, and by status
(in the workflow's order, each status oldest first). A cursor is the last pair's id, with its
status when sorted by status: ``accepted.1234``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Max, Min, QuerySet

from annotator.models import Pair, PairStatus
from annotator.pair_counts import pair_counts_of
from console.pairs import PairFilters, Window, filters_join_sets, pairs_browse
from projects.models import Project

SORTS = {"oldest": "Oldest first", "newest": "Newest first", "status": "By status"}
WINDOW = 512  # ids in the first window a filtered page reads; each next one is 4× wider
COUNT_CAP = 1000  # a filtered view counts this many pairs, then says "1,000+"
# ... and reads at most this many windows (the project's first 10,752 ids): a sparser filter
# (a word in 3 % of the pairs, or with a status and a category) says "320+" rather than reading
# on (at 1M pairs a fourth window added ~100 ms to a text search, 250 ms to text + category).
COUNT_WINDOWS = 3
END = "end"  # ``?before=end``: the last page


@dataclass
class KeysetPage:
    """One page: its pairs, the cursors of the pages around it (None: none), and the count."""

    object_list: list[Pair]
    next_after: str | None = None
    previous_before: str | None = None
    count: int = 0
    count_capped: bool = False

    @property
    def has_other_pages(self) -> bool:
        return bool(self.next_after or self.previous_before)


@dataclass(frozen=True)
class _Cursor:
    segment: int  # index into the order's segments (statuses when sorted by status)
    pk: int


def pairs_page(
    project: Project,
    filters: PairFilters,
    *,
    sort: str,
    per_page: int,
    after: str = "",
    before: str = "",
    prepare: Callable[[QuerySet[Pair]], QuerySet[Pair]] = lambda qs: qs,
) -> KeysetPage:
    """The page after ``after`` (or before ``before``; neither: the first page) of the
    project's pairs under ``filters`` in ``sort`` order (``prepare``: select_related etc.)."""
    segments = _segments(filters, sort)
    descending = sort == "newest"
    span = Pair.objects.filter(project=project).aggregate(low=Min("id"), high=Max("id"))
    if span["low"] is None:
        return KeysetPage([])
    scan = _Scan(project, filters, segments, descending, span["low"], span["high"], prepare)
    backward = bool(before)
    start = _parse(before if backward else after, segments)
    if backward and before == END:
        start = None
    found = scan.read(start, per_page + 1, backward=backward)
    more = len(found) > per_page
    found = found[:per_page]
    if backward:
        found.reverse()
    page = KeysetPage(found)
    if found:
        first, last = scan.cursor(found[0]), scan.cursor(found[-1])
        if backward:  # more: pairs before these; and the page came from a page after them
            page.previous_before = first if more else None
            page.next_after = last if before != END else None
        else:
            page.next_after = last if more else None
            page.previous_before = first if after else None
    page.count, page.count_capped = scan.count()
    return page


def _segments(filters: PairFilters, sort: str) -> list[str]:
    """The statuses read one after the other ("": any status)."""
    if filters.status:
        return [filters.status]
    return list(PairStatus.values) if sort == "status" else [""]


def _parse(cursor: str, segments: list[str]) -> _Cursor | None:
    status, _, pk = cursor.rpartition(".")
    if not pk.isdigit() or len(pk) > 18 or status not in segments:
        return None
    return _Cursor(segments.index(status), int(pk))


class _Scan:
    def __init__(self, project, filters, segments, descending, low, high, prepare) -> None:
        self.project, self.filters, self.segments = project, filters, segments
        self.descending, self.low, self.high, self.prepare = descending, low, high, prepare
        self.windowed = filters_join_sets(filters) or bool(filters.difficulty)

    def cursor(self, pair: Pair) -> str:
        status = pair.status if self.segments != [""] else ""
        return f"{status}.{pair.pk}" if status else f".{pair.pk}"

    def _rows(self, segment: int, window: Window, reverse_ids: bool, limit: int) -> list[Pair]:
        filters = self.filters
        status = self.segments[segment]
        if status and status != filters.status:
            filters = PairFilters(**{**filters.__dict__, "status": status})
        pairs = pairs_browse(self.project, filters, window=window)
        pairs = self.prepare(pairs).order_by("-id" if reverse_ids else "id")
        return list(pairs[:limit])

    def read(self, start: _Cursor | None, need: int, *, backward: bool) -> list[Pair]:
        """Up to ``need`` pairs from ``start`` (exclusive) on, in the order (against it when
        ``backward``)."""
        forward_segments = not backward
        down_ids = self.descending != backward  # ids read high to low
        order = range(len(self.segments))
        segments = list(order) if forward_segments else list(reversed(order))
        if start is not None:
            segments = segments[segments.index(start.segment) :]
        found: list[Pair] = []
        for segment in segments:
            if start is not None and segment == start.segment:
                edge = start.pk - 1 if down_ids else start.pk + 1
            else:
                edge = self.high if down_ids else self.low
            found += self._read_segment(segment, edge, down_ids, need - len(found))
            if len(found) >= need:
                break
        return found

    def _read_segment(self, segment: int, edge: int, down: bool, need: int) -> list[Pair]:
        if not self.windowed:  # the pair rows alone: one read of the index from the edge
            window: Window = (self.low, edge) if down else (edge, None)
            return self._rows(segment, window, down, need)
        found: list[Pair] = []
        size = WINDOW
        while len(found) < need and (edge >= self.low if down else edge <= self.high):
            window = (max(edge - size + 1, self.low), edge) if down else (edge, edge + size - 1)
            found += self._rows(segment, window, down, need - len(found))
            edge = window[0] - 1 if down else (window[1] or edge) + 1
            size *= 4
        return found

    def count(self) -> tuple[int, bool]:
        """How many pairs the view holds, and whether that is a lower bound (capped)."""
        if not self.windowed:
            return _stored_count(self.project, self.filters), False
        total, edge, size, windows = 0, self.low, WINDOW, 0
        while edge <= self.high and total <= COUNT_CAP and windows < COUNT_WINDOWS:
            window = (edge, edge + size - 1)
            pairs = pairs_browse(self.project, self.filters, window=window).order_by()
            total += pairs[: COUNT_CAP + 1 - total].count()
            edge, size, windows = edge + size, size * 4, windows + 1
        return min(total, COUNT_CAP), total > COUNT_CAP or edge <= self.high


def _stored_count(project: Project, filters: PairFilters) -> int:
    counted = pair_counts_of(project)
    return counted.counts.get(filters.status, 0) if filters.status else counted.total
