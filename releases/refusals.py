"""Why a release cannot be made as asked."""

from __future__ import annotations

from collections.abc import Sequence


class ReleaseRefused(ValueError):
    """A release that cannot be made as asked; the message is meant for people, ``field``
    names the input at fault when there is one, ``pairs`` the pairs (ids) to fix, if any."""

    def __init__(self, message: str, *, field: str = "", pairs: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.field = field
        self.pairs = list(pairs)
