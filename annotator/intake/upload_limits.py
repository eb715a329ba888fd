"""Image uploads measured while they stream in, never read whole before the size check.

A 200 MB file sent as image_a used to be spooled to disk by Django and then read into memory
whole before pairdiff.images refused it (+200 MB per request). Here an upload handler counts
each file's bytes as the chunks arrive and skips the rest of a file once it passes the limit;
what is kept is read only after its size was checked against the same limit.
"""

from __future__ import annotations

from typing import cast

from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest

from annotator.services import image_limits
from pairdiff.images import format_sizes

IMAGE_FIELDS = ("image_a", "image_b")


class ImageSizeLimit(FileUploadHandler):
    """First in the handler chain: a file in ``fields`` (IMAGE_FIELDS) over the limit is
    skipped (its bytes are read and dropped chunk by chunk), and ``refused`` keeps the bytes
    seen so far."""

    def __init__(
        self,
        request: HttpRequest | None = None,
        *,
        max_bytes: int,
        fields: tuple[str, ...] = IMAGE_FIELDS,
    ) -> None:
        super().__init__(request)
        self.max_bytes = max_bytes
        self.fields = fields
        self.refused: dict[str, int] = {}
        self._received = 0

    def new_file(self, field_name, *args, **kwargs) -> None:
        super().new_file(field_name, *args, **kwargs)
        self._received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self._received += len(raw_data)
        if self.field_name in self.fields and self._received > self.max_bytes:
            self.refused[self.field_name] = self._received
            raise SkipFile()
        return raw_data  # the next handler (memory or temporary file) keeps it

    def file_complete(self, file_size: int) -> None:
        return None


def image_size_limit(request: HttpRequest) -> ImageSizeLimit:
    """Put the limit in front of the request's upload handlers; call before the body is read
    (a view under csrf_exempt, which checks CSRF itself afterwards)."""
    return upload_size_limit(request, max_bytes=image_limits().max_bytes, fields=IMAGE_FIELDS)


def upload_size_limit(
    request: HttpRequest, *, max_bytes: int, fields: tuple[str, ...]
) -> ImageSizeLimit:
    """``image_size_limit`` for the files of other ``fields`` and another limit."""
    limit = ImageSizeLimit(request, max_bytes=max_bytes, fields=fields)
    if not hasattr(request, "_files"):  # not parsed yet (else too late: the size check below)
        # A list until the body is parsed (Django then freezes it into an ImmutableList).
        cast("list[FileUploadHandler]", request.upload_handlers).insert(0, limit)
    return limit


def image_size_errors(limit: ImageSizeLimit, files) -> dict[str, str]:
    """Field → message for every image over the limit: skipped while streaming, or (parsed
    before the limit was in place) by its size, before anything reads it."""
    errors = {}
    for field in IMAGE_FIELDS:
        upload: UploadedFile | None = files.get(field)
        size = limit.refused.get(field) or ((upload.size or 0) if upload is not None else 0)
        if size > limit.max_bytes:
            shown, most = format_sizes(size, limit.max_bytes)
            at_least = "at least " if field in limit.refused else ""
            errors[field] = f"{field}: file is {at_least}{shown}, over the limit of {most}"
    return errors
