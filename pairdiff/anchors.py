"""MinCU anchor tokens: coarse ``<loc_i>`` cells over ``[0, 1000]`` coordinates."""

from __future__ import annotations

import re
from collections.abc import Sequence
from numbers import Real

LOC_NULL = "<loc_null>"

ThousandBox = Sequence[float]
AnchorRegion = tuple[int, int, int, int]

_TOKEN = re.compile(r"<loc_([^<>\s]*)>\s*")


def anchor_index(c: float) -> int:
    """Anchor cell ``min(floor(c / 100), 9)`` of a coordinate ``c`` in ``[0, 1000]``."""
    plain = type(c) is int or type(c) is float  # the common case, without the ABC checks
    if not plain and (isinstance(c, bool) or not isinstance(c, Real)) or not 0 <= c <= 1000:
        raise ValueError(f"coordinate {c!r} must be a number between 0 and 1000")
    # Floor division is exact where c / 100 could round up across a cell edge.
    return min(int(c // 100), 9)


def region_tokens(thousand_box: ThousandBox) -> str:
    """Four anchors in ``x1, y1, x2, y2`` order, e.g. ``<loc_1><loc_7><loc_2><loc_7>``."""
    if len(thousand_box) != 4:
        raise ValueError(f"region {list(thousand_box)!r} must have 4 coordinates")
    return "".join(f"<loc_{anchor_index(c)}>" for c in thousand_box)


def side_tokens(thousand_boxes: Sequence[ThousandBox]) -> str:
    """The anchor string of one side: its regions concatenated, or ``<loc_null>`` when absent."""
    if not thousand_boxes:
        return LOC_NULL
    return "".join(region_tokens(box) for box in thousand_boxes)


def parse_tokens(text: str) -> list[AnchorRegion] | None:
    """Anchor-index quadruples of a side's token string; None for ``<loc_null>``.

    Whitespace around tokens is allowed. Only the syntax is checked, not that x1 ≤ x2: a
    model's prediction may be well-formed yet geometrically wrong, which scoring must see.
    ValueError with a clear message for anything else.
    """
    if not isinstance(text, str):
        raise ValueError(f"anchor string {text!r} must be text")
    body = text.strip()
    if body == LOC_NULL:
        return None
    if not body:
        raise ValueError(f"anchor string {text!r}: expected anchor tokens or {LOC_NULL}")
    indices: list[int] = []
    pos = 0
    while pos < len(body):
        match = _TOKEN.match(body, pos)
        if match is None:
            raise ValueError(f"anchor string {text!r}: unexpected text {body[pos:]!r}")
        indices.append(_token_index(match.group(1), text))
        pos = match.end()
    if len(indices) % 4:
        raise ValueError(
            f"anchor string {text!r}: {len(indices)} anchors is not a whole number of regions of 4"
        )
    return [
        (indices[i], indices[i + 1], indices[i + 2], indices[i + 3])
        for i in range(0, len(indices), 4)
    ]


def _token_index(body: str, text: str) -> int:
    if body == "null":
        raise ValueError(f"anchor string {text!r}: {LOC_NULL} must stand alone")
    if not body.isascii() or not body.isdigit():
        raise ValueError(f"anchor string {text!r}: <loc_{body}> is not an anchor token")
    if len(body) != 1:
        raise ValueError(f"anchor string {text!r}: <loc_{body}> is not one of <loc_0>..<loc_9>")
    return int(body)


# MinCU's added vocabulary (16 tokens): ten anchors, the absent side, the separator between
# regions of one side, and the start and end of the source (A) and edited (B) image's chain.
BOX_SEP = "<box_sep>"
SOURCE_CHAIN = ("<src_start>", "<src_end>")
EDITED_CHAIN = ("<edit_start>", "<edit_end>")
MINCU_VOCABULARY: tuple[str, ...] = (
    *(f"<loc_{i}>" for i in range(10)),
    LOC_NULL,
    BOX_SEP,
    *SOURCE_CHAIN,
    *EDITED_CHAIN,
)


def chain_tokens(thousand_boxes: Sequence[ThousandBox], side: str) -> str:
    """One side's spatial chain: its regions' anchors separated by ``<box_sep>`` (or
    ``<loc_null>``) between the side's start and end markers; ``side`` is "a" or "b"."""
    start, end = SOURCE_CHAIN if side == "a" else EDITED_CHAIN
    body = BOX_SEP.join(region_tokens(box) for box in thousand_boxes) or LOC_NULL
    return f"{start}{body}{end}"
