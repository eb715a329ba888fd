"""Where a bulk import's images come from: a folder or a zip file, read safely by name."""

from __future__ import annotations

import os
import stat
import zipfile
from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType
from typing import Self

from pairdiff.images import ImageRejected, format_sizes
from pairdiff.manifest import safe_relative_path

_MIB = 1024**2


class SourceError(ValueError):
    """The images folder or zip cannot be used at all; str() says why."""


class ImageSource(ABC):
    """Files under one root, read by manifest name; row-level problems raise ImageRejected."""

    place = "the images source"

    def __init__(self, max_entry_bytes: int) -> None:
        self._max_entry_bytes = max_entry_bytes
        self._index: dict[str, str] | None = None

    @abstractmethod
    def read(self, name: str) -> bytes:
        """The file's bytes, at most max_entry_bytes of them."""

    @abstractmethod
    def names(self) -> list[str]:
        """Safe relative names of the readable files, sorted."""

    @abstractmethod
    def close(self) -> None:
        """Release the open zip file, if any."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _relative(self, name: str) -> str:
        try:
            return safe_relative_path(name)
        except ValueError as exc:
            raise ImageRejected(f"unsafe image path: {exc}") from exc

    def _check_size(self, size: int, name: str) -> None:
        if size > self._max_entry_bytes:
            size_text, limit = format_sizes(size, self._max_entry_bytes)
            raise ImageRejected(f"file is {size_text}, over the limit of {limit}: {name}")

    def _not_found(self, name: str) -> ImageRejected:
        guess = self._guess(name)
        hint = f" (did you mean {guess}?)" if guess else ""
        return ImageRejected(f"file not found in {self.place}: {name}{hint}")

    def _guess(self, name: str) -> str | None:
        # The usual misses: a different letter case, or a zip made from the folder itself,
        # which puts every file under one extra top-level directory.
        if self._index is None:
            self._index = {}
            for present in self.names():
                self._index.setdefault(present.lower(), present)
                if "/" in present:
                    self._index.setdefault(present.split("/", 1)[1].lower(), present)
        return self._index.get(name.lower())


def open_source(
    path: str | os.PathLike[str],
    *,
    max_entry_bytes: int = 50 * _MIB,
    max_total_bytes: int = 20 * 1024**3,
) -> ImageSource:
    """A folder or a zip file (recognised by content) to read images from; else SourceError."""
    root = Path(path)
    if root.is_dir():
        return _FolderSource(root, max_entry_bytes)
    if not root.is_file():
        raise SourceError(f"images folder or zip not found: {root}")
    if not zipfile.is_zipfile(root):
        raise SourceError(f"{root.name} is neither a folder nor a zip file")
    return _ZipSource(root, max_entry_bytes, max_total_bytes)


class _FolderSource(ImageSource):
    place = "the images folder"

    def __init__(self, root: Path, max_entry_bytes: int) -> None:
        super().__init__(max_entry_bytes)
        self._root = root.resolve()

    def read(self, name: str) -> bytes:
        relative = self._relative(name)
        # The lexical check in safe_relative_path cannot see symlinks; the resolved path can.
        real = Path(os.path.realpath(self._root / relative))
        if not real.is_relative_to(self._root):
            raise ImageRejected(f"image path leads outside the images folder: {relative}")
        try:
            info = real.stat()
            if not stat.S_ISREG(info.st_mode):
                raise ImageRejected(f"not a file in the images folder: {relative}")
            self._check_size(info.st_size, relative)
            with real.open("rb") as file:
                # Asked for its size: read(limit) would allocate the whole limit first. The file
                # may grow after stat(); never hold more than the limit in memory.
                data = file.read(info.st_size + 1)
                if len(data) > info.st_size:
                    data += file.read(self._max_entry_bytes + 1 - len(data))
        except (FileNotFoundError, NotADirectoryError):
            raise self._not_found(relative) from None
        except OSError as exc:
            raise ImageRejected(f"file cannot be read: {relative} ({exc.strerror})") from exc
        self._check_size(len(data), relative)
        return data

    def names(self) -> list[str]:
        found = []
        for folder, _dirs, files in os.walk(self._root):
            for file_name in files:
                path = Path(folder, file_name)
                real = Path(os.path.realpath(path))
                if real.is_relative_to(self._root) and real.is_file():
                    found.append(path.relative_to(self._root).as_posix())
        return sorted(found)

    def close(self) -> None:
        """Nothing to release for a folder."""


class _ZipSource(ImageSource):
    place = "the images zip"

    def __init__(self, path: Path, max_entry_bytes: int, max_total_bytes: int) -> None:
        super().__init__(max_entry_bytes)
        try:
            self._zip = zipfile.ZipFile(path)
        except Exception as exc:
            # zipfile raises BadZipFile, OSError, ValueError, EOFError... on a damaged central
            # directory; all of them mean the same thing to the person importing.
            raise SourceError(f"zip file {path.name} is corrupt: {exc}") from exc
        infos = self._zip.infolist()
        total = sum(info.file_size for info in infos)
        if total > max_total_bytes:
            self._zip.close()
            size, limit = format_sizes(total, max_total_bytes)
            raise SourceError(f"zip declares {size} of files, over the limit of {limit}")
        # None marks a name that several entries share: reading it would be a guess.
        self._entries: dict[str, zipfile.ZipInfo | None] = {}
        for info in infos:
            name = _entry_name(info)
            if name is not None:
                self._entries[name] = None if name in self._entries else info

    def read(self, name: str) -> bytes:
        relative = self._relative(name)
        if relative not in self._entries:
            raise self._not_found(relative)
        info = self._entries[relative]
        if info is None:
            raise ImageRejected(f"the images zip holds several files named {relative}")
        self._check_size(info.file_size, relative)
        if info.flag_bits & 0x1:
            raise ImageRejected(f"file is encrypted in the images zip: {relative}")
        try:
            with self._zip.open(info) as file:
                # The declared size may lie (zip bomb); never inflate past the limit.
                data = file.read(self._max_entry_bytes + 1)
        except Exception as exc:
            # Damaged entries surface as BadZipFile (CRC), zlib.error, EOFError,
            # NotImplementedError (compression method)...: all mean "cannot be read".
            raise ImageRejected(f"file cannot be read from the zip: {relative} ({exc})") from exc
        self._check_size(len(data), relative)
        return data

    def names(self) -> list[str]:
        return sorted(self._entries)

    def close(self) -> None:
        self._zip.close()


def _entry_name(info: zipfile.ZipInfo) -> str | None:
    """The entry's safe name, or None when it must never be readable."""
    if info.is_dir() or stat.S_ISLNK(info.external_attr >> 16):
        return None
    try:
        return safe_relative_path(info.filename)
    except ValueError:
        return None
