"""Writes: pairs (projects and members: projects/). Views, commands and the API all come
through here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from annotator.models import Pair, PairEvent
from jobs.models import Job
from pairdiff import strictjson
from pairdiff.images import ImageInfo, ImageLimits, ImageRejected, inspect_with_thumbnail
from projects.models import Project


class PairRejected(ValueError):
    """A pair that cannot be imported; the message says why, in words a person can act on."""


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
    thumb_a: bytes
    thumb_b: bytes

    @property
    def content_key(self) -> tuple[str, str]:
        return (self.info_a.sha256, self.info_b.sha256)


def image_limits() -> ImageLimits:
    return ImageLimits(
        max_bytes=settings.DIFFMARK_MAX_IMAGE_BYTES, max_pixels=settings.DIFFMARK_MAX_IMAGE_PIXELS
    )


def pair_check(*, project: Project, pair_input: PairInput) -> CheckedPair:
    """Validate both images and the fields of one pair; raises PairRejected. No writes."""
    _check_storable(pair_input)
    if pair_input.category and pair_input.category not in project.category_slugs:
        raise PairRejected(
            f"category {pair_input.category!r} is not in the project's taxonomy "
            f"({', '.join(project.category_slugs)})"
        )
    limits = image_limits()
    checked = []
    for side, data in (("image_a", pair_input.image_a), ("image_b", pair_input.image_b)):
        try:
            checked.append(inspect_with_thumbnail(data, limits))
        except ImageRejected as exc:
            raise PairRejected(f"{side}: {exc}") from exc
    (info_a, thumb_a), (info_b, thumb_b) = checked
    return CheckedPair(pair_input, info_a, info_b, thumb_a, thumb_b)


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
    sha_a, sha_b = checked.content_key
    same = Pair.objects.filter(project=project, sha256_a=sha_a, sha256_b=sha_b).first()
    if same is None and checked.input.external_id:
        same = Pair.objects.filter(project=project, external_id=checked.input.external_id).first()
    return same


def pairs_store(
    *, project: Project, checked: Sequence[CheckedPair], actor=None, job: Job | None = None
) -> list[Pair]:
    """Write the images and the rows of already-checked pairs, all or nothing.

    Files are content-addressed, so the same image shared by many pairs is stored once. When the
    transaction fails, the files this call newly wrote are deleted again, so a failed batch
    leaves neither rows nor orphan files behind.
    """
    written: list[str] = []
    try:
        with transaction.atomic():
            pairs = [_pair_store(project, item, actor, job, written) for item in checked]
    except BaseException:
        for name in written:
            default_storage.delete(name)
        raise
    return pairs


def pair_create(*, project: Project, pair_input: PairInput, actor=None) -> Pair:
    """Check, deduplicate and store one pair (the upload of a single pair)."""
    checked = pair_check(project=project, pair_input=pair_input)
    duplicate = pair_find_duplicate(project=project, checked=checked)
    if duplicate is not None:
        raise PairRejected(f"duplicate of pair {duplicate.pk} ({duplicate})")
    return pairs_store(project=project, checked=[checked], actor=actor)[0]


def _pair_store(
    project: Project, item: CheckedPair, actor, job: Job | None, written: list[str]
) -> Pair:
    names = {}
    for side, data, info, thumb in (
        ("a", item.input.image_a, item.info_a, item.thumb_a),
        ("b", item.input.image_b, item.info_b, item.thumb_b),
    ):
        folder = f"{project.slug}/{info.sha256[:2]}/{info.sha256}"
        names[f"image_{side}"] = _store_file(f"pairs/{folder}{info.extension}", data, written)
        names[f"thumb_{side}"] = _store_file(f"thumbs/{folder}.jpg", thumb, written)
    pair = Pair.objects.create(
        project=project,
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
        **names,
    )
    PairEvent.objects.create(
        pair=pair, actor=actor, kind="imported", detail={"job": job.pk if job else None}
    )
    return pair


def _store_file(name: str, content: bytes, written: list[str]) -> str:
    if default_storage.exists(name):
        if default_storage.size(name) == len(content):
            return name
        default_storage.delete(name)  # cut short by a worker killed mid-write: write it again
    saved = default_storage.save(name, ContentFile(content))
    written.append(saved)
    return saved
