"""Which pairs come from one source photo: the same image A (sha256) or a near-duplicate of it
(a perceptual hash a few bits apart). Every pair of one source lands in one split, so a model
is never tested on a photo it was trained on with another edit."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

HASH_BITS = 64
NEAR_BITS = 6  # differing bits of two difference hashes that still mean one photo
_BANDS = NEAR_BITS + 1  # pigeonhole: hashes within NEAR_BITS agree on at least one band


def difference_hash(data: bytes) -> int | None:
    """The 64-bit difference hash (dHash) of an image file: grey, 9x8, each bit whether a
    pixel is brighter than its right neighbour. Re-encoding, rescaling and small edits keep it
    within a few bits. None for bytes that are not an image."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.draft("L", (64, 64))  # JPEG decodes at a fraction of the size
            grey = np.asarray(img.convert("L").resize((9, 8), Image.Resampling.BOX), np.int16)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    bits = (grey[:, 1:] > grey[:, :-1]).flatten()
    return int("".join("1" if b else "0" for b in bits), 2)


def source_groups(
    items: Sequence[tuple[int | str, str, int | None]],
) -> dict[int | str, str]:
    """Each key's source: the smallest sha256 among the items joined to it by an equal image
    A sha256 or a difference hash at most NEAR_BITS apart (``items``: key, sha256 of A, hash
    or None). Near pairs are found by banding the hashes, never by comparing every two."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    hashes: dict[str, int] = {}
    for _, sha, h in items:
        find(sha)
        if h is not None:
            hashes.setdefault(sha, h)
    width = HASH_BITS // _BANDS
    for band in range(_BANDS):
        shift = band * width
        buckets: dict[int, list[str]] = {}
        for sha, h in hashes.items():
            buckets.setdefault((h >> shift) & ((1 << width) - 1), []).append(sha)
        for shas in buckets.values():
            for i, a in enumerate(shas):
                for b in shas[i + 1 :]:
                    if (hashes[a] ^ hashes[b]).bit_count() <= NEAR_BITS:
                        union(a, b)
    return {key: find(sha) for key, sha, _ in items}
