"""Hostile uploads end to end: each refused row says why, and what is kept is served as an image.

The checks themselves are pinned one by one in tests/pairdiff/test_images.py (formats, bombs,
pixel and byte limits, corrupt files), tests/pairdiff/test_sources.py (zip and folder paths,
symlinks, zip bombs) and tests/pairdiff/test_manifest.py (path normalisation). Here they meet
the way a lead meets them: one zip through the API, one report, and the files as browsers get
them.
"""

import io
import json
import random
import re
import struct
import zipfile
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image
from rest_framework.test import APIClient

from annotator.models import Pair
from tests.factories import make_pair
from tests.images import edited_pair, encode, photo, photo_bytes

SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="9" height="9"/></svg>'
)
HTML = b"<!doctype html><html><body><script>alert(1)</script></body></html>"
PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RASTER = {"image/jpeg", "image/png", "image/webp", "image/tiff", "image/bmp"}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_declaring(width: int, height: int, idat: bytes) -> bytes:
    """A PNG whose header claims width × height, whatever its compressed data holds."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def _noise_png(side: int) -> bytes:
    """Incompressible pixels: a real image that is large in bytes."""
    return encode(Image.frombytes("L", (side, side), random.Random(side).randbytes(side * side)))


def _zip(entries: dict[str, bytes], symlinks: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in symlinks.items():
            link = zipfile.ZipInfo(name)
            link.external_attr = 0o120777 << 16  # a symbolic link, as `zip --symlinks` stores it
            archive.writestr(link, target)
    return buffer.getvalue()


@pytest.fixture
def hostile_import(project, lead, settings, django_capture_on_commit_callbacks):
    """One import through the API mixing good rows with every hostile kind; the job's report."""
    settings.DIFFMARK_MAX_IMAGE_BYTES = 100_000  # the 96×64 photos are ~15 kB
    a, b = edited_pair()
    good_b = edited_pair(30)[1]
    polyglot = a + b"<html><script>alert(1)</script></html>"  # a valid PNG with HTML after IEND
    entries = {
        "a.png": a,
        "b.png": b,
        "b2.png": good_b,
        "vector.svg": SVG,
        "vector.png": SVG,
        "page.png": HTML,
        "doc.jpg": PDF,
        "header-only.png": PNG_SIGNATURE + HTML,
        "polyglot.png": polyglot,
        "really-a-png.jpg": photo_bytes(offset=50),
        "animated.png": encode(photo(), "GIF"),
        "heavy.png": _noise_png(400),
        "wide.png": _png_declaring(8000, 6000, zlib.compress(b"\0" * 1000)),
        "bomb.png": _png_declaring(30_000, 30_000, zlib.compress(b"\0" * 1_000_000)),
        "../escape.png": b,
        "/absolute.png": b,
    }
    names = {
        "svg": "vector.svg",
        "svg-named-png": "vector.png",
        "html": "page.png",
        "pdf": "doc.jpg",
        "png-header-html": "header-only.png",
        "gif": "animated.png",
        "oversized": "heavy.png",
        "too-many-pixels": "wide.png",
        "bomb": "bomb.png",
        "zip-dotdot": "../escape.png",
        "zip-absolute": "/absolute.png",
        "zip-symlink": "link.png",
        "outside": "../../etc/passwd",
        "outside-backslash": "..\\..\\secret.png",
        "drive": "C:/Windows/win.ini",
    }
    rows = [{"id": "good", "image_a": "a.png", "image_b": "b.png"}]
    rows += [{"id": "polyglot", "image_a": "polyglot.png", "image_b": "b2.png"}]
    rows += [{"id": "renamed", "image_a": "really-a-png.jpg", "image_b": "b.png"}]
    rows += [{"id": key, "image_a": "a.png", "image_b": name} for key, name in names.items()]
    manifest = "\n".join(json.dumps(row) for row in rows).encode()
    archive = _zip(entries, {"link.png": "/etc/passwd"})
    client = APIClient()
    client.force_authenticate(lead)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/v1/projects/{project.slug}/imports/",
            {
                "manifest": SimpleUploadedFile("pairs.jsonl", manifest),
                "images": SimpleUploadedFile("images.zip", archive),
            },
            format="multipart",
        )

    assert response.status_code == 202
    return client.get(f"/api/v1/jobs/{response.json()['job']['id']}/").json()


def test_every_hostile_row_is_refused_with_its_reason(hostile_import):
    reasons = {error["id"]: error["message"] for error in hostile_import["errors"]}

    not_an_image = "image_b: not an image (could not be decoded)"
    outside = "leads outside the images folder"
    absolute = "is absolute or names a drive"
    assert reasons == {
        "svg": not_an_image,
        "svg-named-png": not_an_image,
        "html": not_an_image,
        "pdf": not_an_image,
        "png-header-html": "image_b: image is truncated or corrupt: Truncated File Read",
        "gif": "image_b: format GIF is not allowed (allowed: JPEG, PNG, WEBP, TIFF, BMP)",
        "oversized": reasons["oversized"],  # the PNG's size depends on the zlib build
        "too-many-pixels": "image_b: image is 8000×6000 = 48.0 MP, over the limit of 40.0 MP",
        "bomb": "image_b: image is 900.0 MP, over the limit of 40.0 MP",
        "zip-dotdot": f"image_b: path '../escape.png' {outside}",
        "zip-absolute": f"image_b: path '/absolute.png' {absolute}",
        "zip-symlink": "image_b: file not found in the images zip: link.png",
        "outside": f"image_b: path '../../etc/passwd' {outside}",
        "outside-backslash": f"image_b: path '..\\\\..\\\\secret.png' {outside}",
        "drive": f"image_b: path 'C:/Windows/win.ini' {absolute}",
    }
    assert re.fullmatch(
        # refused by the source before a byte is decoded, at the configured limit
        r"image_b: file is 1\d\d\.\d KB, over the limit of 97\.7 KB: heavy\.png",
        reasons["oversized"],
    )
    assert hostile_import["result"] == {"rows": 18, "imported": 3, "rejected": 15}


def test_what_was_kept_is_what_the_content_says_not_the_name(hostile_import):
    kept = {pair.external_id: pair for pair in Pair.objects.all()}

    assert sorted(kept) == ["good", "polyglot", "renamed"]
    renamed = kept["renamed"]
    assert renamed.format_a == "PNG" and renamed.image_a.name.endswith(".png")
    assert not any(p.image_a.name.endswith((".jpg", ".svg", ".html")) for p in kept.values())


def test_served_images_carry_their_sniffed_type_and_nosniff(client, hostile_import, lead):
    client.force_login(lead)
    for pair in Pair.objects.all():
        for side in ("a", "b"):
            image = client.get(reverse("annotator:pair_image", args=[pair.pk, side]))
            thumb = client.get(reverse("annotator:pair_thumb", args=[pair.pk, side]))

            format_ = pair.format_a if side == "a" else pair.format_b
            assert image["Content-Type"] == Image.MIME[format_]
            assert thumb["Content-Type"] == "image/jpeg"
            for response in (image, thumb):
                assert response.status_code == 200
                assert response["X-Content-Type-Options"] == "nosniff"
                assert response["Content-Disposition"] == "inline"


def test_the_html_in_a_polyglot_never_gets_an_html_type(client, hostile_import, lead):
    """A PNG with HTML after its end is a valid PNG, kept byte for byte (never re-encoded); the
    browser is told it is a PNG and told not to guess, so the HTML is never parsed."""
    client.force_login(lead)
    pair = Pair.objects.get(external_id="polyglot")

    response = client.get(reverse("annotator:pair_image", args=[pair.pk, "a"]))

    body = b"".join(response.streaming_content)
    assert body.endswith(b"</html>") and body == pair.image_a.read()
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "TIFF", "BMP"])
def test_every_allowed_format_is_served_as_a_raster_type(client, project, lead, fmt):
    pair = make_pair(project)
    data = photo_bytes(offset=7, fmt=fmt)
    Pair.objects.filter(pk=pair.pk).update(format_a=fmt)
    pair.image_a.storage.delete(pair.image_a.name)
    pair.image_a.storage.save(pair.image_a.name, io.BytesIO(data))
    client.force_login(lead)

    response = client.get(reverse("annotator:pair_image", args=[pair.pk, "a"]))

    assert response["Content-Type"] in RASTER
    assert response["Content-Type"] == Image.MIME[fmt]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"] == "inline"


def test_a_stored_format_outside_the_allow_list_is_never_inline(client, project, lead):
    pair = make_pair(project)
    Pair.objects.filter(pk=pair.pk).update(format_a="SVG")
    client.force_login(lead)

    response = client.get(reverse("annotator:pair_image", args=[pair.pk, "a"]))

    assert response["Content-Type"] == "application/octet-stream"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("attachment")


@pytest.mark.parametrize(
    ("name", "data"),
    [("a.svg", SVG), ("a.html", HTML), ("a.pdf", PDF), ("a.png", PNG_SIGNATURE + HTML)],
    ids=["svg", "html", "pdf", "png-header-html"],
)
def test_a_single_upload_of_a_non_image_is_refused_by_content(project, lead, name, data):
    _, b = edited_pair()
    client = APIClient()
    client.force_authenticate(lead)

    response = client.post(
        f"/api/v1/projects/{project.slug}/pairs/",
        {
            "image_a": SimpleUploadedFile(name, data, content_type="image/png"),
            "image_b": SimpleUploadedFile("b.png", b, content_type="image/png"),
        },
        format="multipart",
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == ["image_a"]
    assert error["message"].startswith(
        ("image_a: not an image", "image_a: image is truncated or corrupt")
    )
    assert not Pair.objects.exists()
