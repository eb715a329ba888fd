"""List thumbnails, made from the stored original the first time a page asks for one.

An import only decodes and hashes its images: a thumbnail costs as much CPU again, and most
pairs of a big import are never shown in a list. The first request makes it, stores it
content-addressed beside the originals and records it on the pair; later ones stream it.
"""

from __future__ import annotations

import logging

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db.models.fields.files import FieldFile

from annotator.models import Pair
from pairdiff.images import ImageRejected, make_thumbnail

log = logging.getLogger(__name__)


class ThumbnailMissing(LookupError):
    """Neither a thumbnail nor an original to make one from."""


def pair_thumbnail(pair: Pair, side: str) -> FieldFile:
    """The pair's thumbnail of side "a" or "b", open for reading; made and stored first when
    the pair has none yet or its file was lost. ThumbnailMissing when the original is lost."""
    field = f"thumb_{side}"
    thumb: FieldFile = getattr(pair, field)
    if thumb:
        try:
            return thumb.open("rb")
        except OSError:
            log.warning("thumbnail %s of pair %s is lost; making it again", thumb.name, pair.pk)
    name = thumbnail_name(pair, side)
    if not default_storage.exists(name):
        _store(name, _make(pair, side))
    # A concurrent request for the same thumbnail writes the same name: no lock needed.
    Pair.objects.filter(pk=pair.pk).update(**{field: name})
    setattr(pair, field, name)
    return getattr(pair, field).open("rb")


def thumbnail_name(pair: Pair, side: str) -> str:
    """Content-addressed like the originals: pairs sharing an image share its thumbnail."""
    sha = pair.sha256_a if side == "a" else pair.sha256_b
    return f"thumbs/{pair.project.slug}/{sha[:2]}/{sha}.jpg"


def _make(pair: Pair, side: str) -> bytes:
    original = pair.image(side)
    try:
        with original.open("rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ThumbnailMissing(f"the image file of side {side} is missing") from exc
    try:
        return make_thumbnail(data)
    except ImageRejected as exc:  # checked at import, so only a file changed in storage since
        log.warning("no thumbnail for pair %s side %s: %s", pair.pk, side, exc)
        raise ThumbnailMissing(str(exc)) from exc


def _store(name: str, data: bytes) -> None:
    saved = default_storage.save(name, ContentFile(data))
    if saved != name:  # another request stored it first under the wanted name: keep that one
        default_storage.delete(saved)
