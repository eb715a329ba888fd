"""MinCU's token format in a model's answer: ``<loc_i>`` anchors of each side after the entity,
an optional pair of fine-box groups after the description (pure; ``reader`` turns them into
boxes)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pairdiff.anchors import parse_tokens
from pairdiff.vlm.result import excerpt

_ENTITY_SPLIT = re.compile(r"\s*(?:->|→|\|)\s*")
LOC = re.compile(r"<loc_[^<>\s]*>")
_ANCHOR = re.compile(r"<loc_(?:[0-9]|null)>")
ANCHOR_RUN = re.compile(r"(?:<loc_[^<>\s]*>\s*)+")
# MinCU's spatial chains: A's anchors between <src_start> and <src_end>, B's between
# <edit_start> and <edit_end>, regions separated by <box_sep> (the release's training targets).
_CHAINS = re.compile(
    r"<src_start>(?P<a>(?:\s*<(?:loc_[^<>\s]*|box_sep)>)*)\s*<src_end>\s*"
    r"<edit_start>(?P<b>(?:\s*<(?:loc_[^<>\s]*|box_sep)>)*)\s*<edit_end>"
)
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# A fine-box group: [] , [x1, y1, x2, y2] or [[...], [...]] (one level of nesting).
_GROUP = r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]"
TWO_GROUPS = re.compile(rf"({_GROUP})\s*[,;]?\s*({_GROUP})\s*\.?\s*$")
ONE_GROUP = re.compile(rf"({_GROUP})\s*\.?\s*$")


def anchor_cell_box(region: Iterable[int]) -> list[int] | None:
    """The ``[0, 1000]`` box covering anchor cells ``(i1, j1, i2, j2)``; None when reversed.

    Cell ``i`` spans ``[100 i, 100 (i + 1)]``: the coordinates that map to ``<loc_i>``.
    """
    i1, j1, i2, j2 = region
    if i1 > i2 or j1 > j2:
        return None
    return [100 * i1, 100 * j1, 100 * (i2 + 1), 100 * (j2 + 1)]


def split_sides(anchors: str) -> tuple[str, str] | str:
    """A's and B's anchor strings from the run of tokens after the entity, or a reason."""
    tokens = LOC.findall(anchors)
    bad = [t for t in tokens if not _ANCHOR.fullmatch(t)]
    if bad:
        return f"{bad[0]} is not one of <loc_0>..<loc_9> or <loc_null>"
    runs = anchors.split()
    if len(runs) == 2 and not any(map(_anchor_problem, runs)):
        return runs[0], runs[1]
    nulls = [i for i, t in enumerate(tokens) if t == "<loc_null>"]
    if len(tokens) > 1 and nulls == [len(tokens) - 1]:
        split = len(tokens) - 1
    elif len(tokens) > 1 and nulls == [0]:
        split = 1
    elif not nulls and len(tokens) == 8:
        split = 4  # spaced-out tokens: one region per side is the only reading
    else:
        split = 0
    a, b = "".join(tokens[:split]), "".join(tokens[split:])
    if split and not _anchor_problem(a) and not _anchor_problem(b):
        return a, b
    return (
        f"cannot tell A's anchors from B's in {excerpt(anchors, 80)!r} "
        "(write A's tokens, a space, then B's tokens or <loc_null>)"
    )


def _anchor_problem(tokens: str) -> str:
    """Why ``tokens`` is not one side's anchors, or ""."""
    try:
        parse_tokens(tokens)
    except ValueError as exc:
        return str(exc)
    return ""


def unchain(line: str) -> str:
    """A line with MinCU chain markers as the plain token format: A's tokens, a space, B's."""
    m = _CHAINS.search(line)
    if m is None:
        return line
    a, b = ("".join(LOC.findall(m.group(side))) for side in ("a", "b"))
    return f"{line[: m.start()]}{a} {b}{line[m.end() :]}"


def token_entities(text: str) -> tuple[str, str]:
    entity = text.strip().rstrip(":").strip()
    parts = _ENTITY_SPLIT.split(entity, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (entity, entity)
