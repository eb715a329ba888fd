"""Writes: pairs (projects and members: projects/). Views, commands and the API all come
through here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import F, Max

from annotator.assists import assists_enqueue
from annotator.models import Pair, PairEvent, PairEventKind
from config.storage import local_path
from jobs.models import Job
from pairdiff import strictjson
from pairdiff.images import ImageInfo, ImageLimits, ImageRejected, inspect_image
from pairdiff.naming import source_name
from projects.models import Project

STORE_THREADS = 8  # concurrent file writes of one batch; S3 puts are network round trips


class PairRejected(ValueError):
    """A pair that cannot be imported; the message says why, in words a person can act on, and
    ``field`` names the input at fault ("image_a", "image_b") when it is one of them."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class PairInput:
    image_a: bytes
    image_b: bytes
    external_id: str = ""
    instruction: str = ""
    category: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckedPair:
    input: PairInput
    info_a: ImageInfo
    info_b: ImageInfo

    @property
    def content_key(self) -> tuple[str, str]:
        return (self.info_a.sha256, self.info_b.sha256)


def image_limits() -> ImageLimits:
    return ImageLimits(
        max_bytes=settings.DIFFMARK_MAX_IMAGE_BYTES, max_pixels=settings.DIFFMARK_MAX_IMAGE_PIXELS
    )


def pair_check(*, project: Project, pair_input: PairInput) -> CheckedPair:
    """Validate both images and the fields of one pair; raises PairRejected. No writes."""
    return pair_inspect(pair_input, limits=image_limits(), categories=project.category_slugs)


def pair_inspect(
    pair_input: PairInput, *, limits: ImageLimits, categories: Sequence[str]
) -> CheckedPair:
    """pair_check without Django: settings and project passed in, so import worker processes
    can run it (decode and hash both images); raises PairRejected. Thumbnails are made when
    a page first asks for one (annotator/thumbnails.py)."""
    _check_storable(pair_input)
    if pair_input.category and pair_input.category not in categories:
        raise PairRejected(
            f"category {pair_input.category!r} is not in the project's taxonomy "
            f"({', '.join(categories)})"
        )
    checked = []
    for side, data in (("image_a", pair_input.image_a), ("image_b", pair_input.image_b)):
        try:
            checked.append(inspect_image(data, limits))
        except ImageRejected as exc:
            raise PairRejected(f"{side}: {exc}", field=side) from exc
    info_a, info_b = checked
    return CheckedPair(pair_input, info_a, info_b)


def _check_storable(pair_input: PairInput) -> None:
    """Text and metadata every database can hold: no NUL or lone surrogate, finite numbers
    within 64 bits. One such value in a batch used to fail the whole batch's INSERT."""
    fields = {
        "external_id": pair_input.external_id,
        "instruction": pair_input.instruction,
        "category": pair_input.category,
        "metadata": pair_input.metadata,
    }
    try:
        strictjson.check(fields)
    except strictjson.JSONRejected as exc:
        raise PairRejected(str(exc)) from None


def pair_find_duplicate(*, project: Project, checked: CheckedPair) -> Pair | None:
    """The existing pair with the same content or the same external id, if any."""
    return pairs_find_duplicates(project=project, checked=[checked])[0]


def pairs_find_duplicates(*, project: Project, checked: Sequence[CheckedPair]) -> list[Pair | None]:
    """pair_find_duplicate for each of many pairs, in two queries rather than two per pair."""
    if not checked:
        return []
    fields = ("id", "external_id", "sha256_a", "sha256_b")
    keys = {item.content_key for item in checked}
    # Both hashes IN their sets: a few pairs more than asked at most (those sharing one image),
    # matched exactly below; an OR of one condition per pair costs more to build than to run.
    candidates = Pair.objects.filter(
        project=project,
        sha256_a__in={sha_a for sha_a, _ in keys},
        sha256_b__in={sha_b for _, sha_b in keys},
    ).only(*fields)
    by_content = {
        (p.sha256_a, p.sha256_b): p for p in candidates if (p.sha256_a, p.sha256_b) in keys
    }
    ids = {item.input.external_id for item in checked} - {""}
    by_id = {}
    if ids:
        found = Pair.objects.filter(project=project, external_id__in=ids).only(*fields)
        by_id = {pair.external_id: pair for pair in found}
    return [
        by_content.get(item.content_key) or by_id.get(item.input.external_id) for item in checked
    ]


def pairs_store(
    *,
    project: Project,
    checked: Sequence[CheckedPair],
    actor=None,
    job: Job | None = None,
    on_rows: Callable[[], None] | None = None,
) -> list[Pair]:
    """Write the images and the rows of already-checked pairs, all or nothing. ``on_rows`` runs
    inside the rows' transaction (an import's progress: it never lags what is stored).

    Files are content-addressed, so the same image shared by many pairs is stored once; they are
    written by a few threads (S3 is a round trip per file), then the rows in one transaction of
    two bulk INSERTs. When that fails, the files this call newly wrote are deleted again, so a
    failed batch leaves neither rows nor orphan files behind.
    """
    written: list[str] = []
    try:
        names = _files_store(project, checked, written)
        with transaction.atomic():
            first = pair_numbers_reserve(project=project)
            pairs = Pair.objects.bulk_create(
                [
                    _pair_row(project, item, job, names, number)
                    for number, item in enumerate(checked, first)
                ]
            )
            detail = {"job": job.pk if job else None}
            PairEvent.objects.bulk_create(
                [
                    PairEvent(pair=p, actor=actor, kind=PairEventKind.IMPORTED, detail=detail)
                    for p in pairs
                ]
            )
            if on_rows is not None:
                on_rows()
    except BaseException:
        for name in written:
            default_storage.delete(name)
        raise
    assists_enqueue(pairs)  # click-to-box and drafts, worked out off the request path
    return pairs


def pair_create(*, project: Project, pair_input: PairInput, actor=None) -> Pair:
    """Check, deduplicate and store one pair (the upload of a single pair)."""
    checked = pair_check(project=project, pair_input=pair_input)
    duplicate = pair_find_duplicate(project=project, checked=checked)
    if duplicate is not None:
        raise PairRejected(
            f"duplicate of pair {duplicate.pk} ({duplicate.external_id or duplicate})"
        )
    return pairs_store(project=project, checked=[checked], actor=actor)[0]


def _files_store(
    project: Project, checked: Sequence[CheckedPair], written: list[str]
) -> dict[str, str]:
    """Every distinct file of the pairs stored once: wanted name → the name it was saved as."""
    files: dict[str, bytes] = {}
    for item in checked:
        for name, content in _pair_files(project, item).values():
            files[name] = content
    if local_path(default_storage, "") is not None:
        # A local write is a memory copy: threads would only contend for the GIL (+50% CPU).
        return {name: _store_file(name, data, written) for name, data in files.items()}
    with ThreadPoolExecutor(max_workers=min(STORE_THREADS, len(files) or 1)) as pool:
        futures = {
            name: pool.submit(_store_file, name, data, written) for name, data in files.items()
        }
    # Leaving the pool waited for every write, so `written` is complete when one of them failed.
    return {name: future.result() for name, future in futures.items()}


def _pair_files(project: Project, item: CheckedPair) -> dict[str, tuple[str, bytes]]:
    """Field → (content-addressed name, bytes) of a pair's images."""
    files = {}
    for side, data, info in (
        ("a", item.input.image_a, item.info_a),
        ("b", item.input.image_b, item.info_b),
    ):
        folder = f"{project.slug}/{info.sha256[:2]}/{info.sha256}"
        files[f"image_{side}"] = (f"pairs/{folder}{info.extension}", data)
    return files


def pair_numbers_reserve(*, project: Project) -> int:
    """The number the next new pair of ``project`` gets (the ones after it follow).

    Caller is in a transaction and creates its pairs before committing. The no-op UPDATE takes
    the project row's write lock (PostgreSQL: the row lock; SQLite: the database write lock)
    until the commit, so two imports at once never read the same last number.
    """
    Project.objects.filter(pk=project.pk).update(slug=F("slug"))
    last = Pair.objects.filter(project=project).aggregate(last=Max("number"))["last"]
    return (last or 0) + 1


def _pair_row(
    project: Project, item: CheckedPair, job: Job | None, names: dict[str, str], number: int
) -> Pair:
    files = {field: names[name] for field, (name, _) in _pair_files(project, item).items()}
    return Pair(
        project=project,
        number=number,
        source_name=source_name(item.input.external_id, item.input.metadata),
        external_id=item.input.external_id,
        instruction=item.input.instruction,
        category_hint=item.input.category,
        metadata=item.input.metadata,
        width_a=item.info_a.width,
        height_a=item.info_a.height,
        width_b=item.info_b.width,
        height_b=item.info_b.height,
        sha256_a=item.info_a.sha256,
        sha256_b=item.info_b.sha256,
        format_a=item.info_a.format,
        format_b=item.info_b.format,
        import_job=job,
        **files,
    )


def _store_file(name: str, content: bytes, written: list[str]) -> str:
    if default_storage.exists(name):
        if default_storage.size(name) == len(content):
            return name
        default_storage.delete(name)  # cut short by a worker killed mid-write: write it again
    saved = default_storage.save(name, ContentFile(content))
    written.append(saved)  # list.append is atomic: safe from the store threads
    return saved
