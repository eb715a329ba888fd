import os
import stat
import zipfile
from pathlib import Path

import pytest

from pairdiff.images import ImageRejected
from pairdiff.sources import SourceError, open_source


def _folder(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return path


def _patch_headers(path: Path, *, local_offset: int, central_offset: int, value: bytes) -> None:
    """Overwrite one field in every local and central header of a zip."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        start = data.find(signature)
        while start != -1:
            data[start + offset : start + offset + len(value)] = value
            start = data.find(signature, start + 4)
    path.write_bytes(bytes(data))


def _rejection(source, name: str) -> str:
    with pytest.raises(ImageRejected) as info:
        source.read(name)
    return str(info.value)


@pytest.fixture
def root(tmp_path):
    return _folder(tmp_path / "images", {"a.png": b"A", "sub/b.png": b"B"})


@pytest.fixture
def outside(tmp_path):
    return _folder(tmp_path / "outside", {"secret.png": b"S"})


def test_folder_reads_files_by_manifest_name(root):
    with open_source(root) as source:
        assert source.names() == ["a.png", "sub/b.png"]
        assert [source.read(n) for n in ("a.png", "sub/b.png", "sub\\b.png", "./sub//b.png")] == [
            b"A",
            b"B",
            b"B",
            b"B",
        ]


def test_folder_reports_a_missing_file(root):
    with open_source(root) as source:
        assert _rejection(source, "sub/c.png") == "file not found in the images folder: sub/c.png"
        assert _rejection(source, "a.png/x.png") == (
            "file not found in the images folder: a.png/x.png"
        )


def test_folder_suggests_a_name_that_differs_in_case(tmp_path):
    root = _folder(tmp_path, {"Sub/Photo.PNG": b"P"})

    with open_source(root) as source:
        assert _rejection(source, "sub/photo.png") == (
            "file not found in the images folder: sub/photo.png (did you mean Sub/Photo.PNG?)"
        )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../outside/secret.png", "path '../outside/secret.png' leads outside the images folder"),
        ("..\\outside\\secret.png", "path '..\\\\outside\\\\secret.png' leads outside the images"),
        ("/etc/passwd", "path '/etc/passwd' is absolute or names a drive"),
        ("C:\\x.png", "path 'C:\\\\x.png' is absolute or names a drive"),
        ("\\\\server\\share\\x.png", "is absolute or names a drive"),
        ("", "path is empty"),
        ("a\x00.png", "contains a NUL byte"),
    ],
)
def test_folder_refuses_unsafe_names(root, outside, name, message):
    with open_source(root) as source:
        reason = _rejection(source, name)

    assert reason.startswith("unsafe image path: ") and message in reason


def test_folder_refuses_symlinks_that_lead_outside(root, outside):
    (root / "link.png").symlink_to(outside / "secret.png")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "inside.png").symlink_to(root / "a.png")

    with open_source(root) as source:
        assert _rejection(source, "link.png") == (
            "image path leads outside the images folder: link.png"
        )
        assert _rejection(source, "linked/secret.png") == (
            "image path leads outside the images folder: linked/secret.png"
        )
        assert source.read("inside.png") == b"A"
        assert source.names() == ["a.png", "inside.png", "sub/b.png"]


def test_folder_opened_through_a_symlink_still_reads(tmp_path, root):
    (tmp_path / "alias").symlink_to(root, target_is_directory=True)

    with open_source(tmp_path / "alias") as source:
        assert source.read("sub/b.png") == b"B"


def test_folder_refuses_what_is_not_a_regular_file(root):
    os.mkfifo(root / "pipe.png")

    with open_source(root) as source:
        assert _rejection(source, "sub") == "not a file in the images folder: sub"
        assert _rejection(source, "pipe.png") == "not a file in the images folder: pipe.png"


def test_folder_refuses_a_file_over_the_entry_limit(tmp_path):
    root = _folder(tmp_path, {"big.png": b"x" * 101, "ok.png": b"x" * 100})

    with open_source(root, max_entry_bytes=100) as source:
        assert source.read("ok.png") == b"x" * 100
        assert _rejection(source, "big.png") == (
            "file is 101 bytes, over the limit of 100 bytes: big.png"
        )


def _stat_then_grow(monkeypatch, path: Path, extra: bytes) -> None:
    """The file gets `extra` appended right after the source took its size."""
    real_stat, target = Path.stat, path.resolve()

    def stat_then_grow(self, *args, **kwargs):
        result = real_stat(self, *args, **kwargs)
        if self == target:
            with path.open("ab") as file:
                file.write(extra)
        return result

    monkeypatch.setattr(Path, "stat", stat_then_grow)


def test_folder_reads_a_file_that_grew_after_its_size_was_taken(tmp_path, monkeypatch):
    root = _folder(tmp_path, {"a.png": b"x" * 50})
    _stat_then_grow(monkeypatch, root / "a.png", b"y" * 30)

    with open_source(root, max_entry_bytes=100) as source:
        assert source.read("a.png") == b"x" * 50 + b"y" * 30


def test_folder_refuses_a_file_that_grew_past_the_limit_after_its_size_was_taken(
    tmp_path, monkeypatch
):
    root = _folder(tmp_path, {"a.png": b"x" * 50})
    _stat_then_grow(monkeypatch, root / "a.png", b"y" * 5000)

    with open_source(root, max_entry_bytes=100) as source:
        assert _rejection(source, "a.png") == (
            "file is 101 bytes, over the limit of 100 bytes: a.png"
        )


def test_zip_reads_entries_by_manifest_name(tmp_path):
    path = _zip(
        tmp_path / "pairs.zip",
        {"a.png": b"A", "sub/": b"", "sub/b.png": b"B", "win\\c.png": b"C"},
    )

    with open_source(path) as source:
        assert source.names() == ["a.png", "sub/b.png", "win/c.png"]
        assert [source.read(n) for n in ("a.png", "sub\\b.png", "./win/c.png")] == [
            b"A",
            b"B",
            b"C",
        ]


def test_zip_is_recognised_by_content_not_by_name(tmp_path):
    path = _zip(tmp_path / "upload.bin", {"a.png": b"A"})

    with open_source(path) as source:
        assert source.read("a.png") == b"A"


def test_zip_reports_a_missing_file_and_suggests_the_wrapped_folder(tmp_path):
    path = _zip(tmp_path / "pairs.zip", {"images/a.png": b"A"})

    with open_source(path) as source:
        assert _rejection(source, "b.png") == "file not found in the images zip: b.png"
        assert _rejection(source, "a.png") == (
            "file not found in the images zip: a.png (did you mean images/a.png?)"
        )


def test_zip_entries_with_unsafe_names_are_never_readable(tmp_path):
    path = _zip(
        tmp_path / "evil.zip",
        {"../evil.png": b"E", "/abs.png": b"E", "C:/win.png": b"E", "ok.png": b"O"},
    )

    with open_source(path) as source:
        assert source.names() == ["ok.png"]
        assert _rejection(source, "evil.png") == "file not found in the images zip: evil.png"
        assert _rejection(source, "abs.png") == "file not found in the images zip: abs.png"
        assert _rejection(source, "../evil.png").startswith("unsafe image path: ")
        assert _rejection(source, "/abs.png").startswith("unsafe image path: ")


def test_zip_symlink_entries_are_never_readable(tmp_path):
    path = tmp_path / "links.zip"
    with zipfile.ZipFile(path, "w") as archive:
        link = zipfile.ZipInfo("link.png")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")

    with open_source(path) as source:
        assert source.names() == []
        assert _rejection(source, "link.png") == "file not found in the images zip: link.png"


def test_zip_names_shared_by_several_entries_are_ambiguous(tmp_path):
    path = _zip(tmp_path / "dup.zip", {"a.png": b"1", "./a.png": b"2", "b.png": b"B"})

    with open_source(path) as source:
        assert _rejection(source, "a.png") == "the images zip holds several files named a.png"
        assert source.read("b.png") == b"B"


def test_zip_refuses_an_entry_declared_over_the_limit(tmp_path):
    path = _zip(tmp_path / "big.zip", {"big.png": b"\x00" * 1000, "ok.png": b"\x00" * 100})

    with open_source(path, max_entry_bytes=100) as source:
        assert source.read("ok.png") == b"\x00" * 100
        assert _rejection(source, "big.png") == (
            "file is 1000 bytes, over the limit of 100 bytes: big.png"
        )


def test_zip_bomb_with_a_lying_size_header_is_refused(tmp_path):
    path = _zip(tmp_path / "bomb.zip", {"bomb.png": b"\x00" * (20 * 1024**2)})
    # Claim 100 bytes in both the local (offset 22) and central (offset 24) headers.
    _patch_headers(path, local_offset=22, central_offset=24, value=(100).to_bytes(4, "little"))

    with open_source(path, max_entry_bytes=1000) as source:
        reason = _rejection(source, "bomb.png")

    assert reason.startswith("file cannot be read from the zip: bomb.png (")


def test_zip_encrypted_entry_is_refused(tmp_path):
    path = _zip(tmp_path / "secret.zip", {"a.png": b"A"})
    # General-purpose flag bit 0 marks encryption: local offset 6, central offset 8.
    _patch_headers(path, local_offset=6, central_offset=8, value=b"\x01")

    with open_source(path) as source:
        assert _rejection(source, "a.png") == "file is encrypted in the images zip: a.png"


def test_zip_declaring_too_much_in_total_is_unusable(tmp_path):
    path = _zip(tmp_path / "huge.zip", {"a.png": b"\x00" * 1024, "b.png": b"\x00" * 1024})

    with pytest.raises(SourceError) as info:
        open_source(path, max_total_bytes=2047)

    assert str(info.value) == "zip declares 2,048 bytes of files, over the limit of 2,047 bytes"


def test_zip_declaring_terabytes_is_unusable_before_any_read(tmp_path):
    path = _zip(tmp_path / "huge.zip", {"a.png": b"A"})
    _patch_headers(path, local_offset=22, central_offset=24, value=b"\xfe\xff\xff\xff")

    with pytest.raises(SourceError, match="zip declares 4.0 GB of files"):
        open_source(path, max_total_bytes=1024**3)


def test_closed_zip_source_can_no_longer_be_read(tmp_path):
    path = _zip(tmp_path / "pairs.zip", {"a.png": b"A"})

    with open_source(path) as source:
        assert source.read("a.png") == b"A"

    assert "closed" in _rejection(source, "a.png")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: None, "images folder or zip not found: "),
        (lambda p: p.write_text("id,image_a,image_b\n"), "is neither a folder nor a zip file"),
        (lambda p: p.write_bytes(b"PK\x03\x04 not really a zip"), "is neither a folder nor a zip"),
    ],
    ids=["missing", "text", "zip-magic-only"],
)
def test_unusable_sources(tmp_path, make, message):
    path = tmp_path / "images.zip"
    make(path)

    with pytest.raises(SourceError, match=message):
        open_source(path)


def test_zip_with_a_damaged_central_directory_is_unusable(tmp_path):
    path = _zip(tmp_path / "broken.zip", {"a.png": b"A"})
    data = path.read_bytes()
    path.write_bytes(data.replace(b"PK\x01\x02", b"XX\x01\x02"))

    with pytest.raises(SourceError) as info:
        open_source(path)

    assert str(info.value).startswith("zip file broken.zip is corrupt: ")
