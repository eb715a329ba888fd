"""Joining regions that are one change: a move, a change of count, one edit in several places."""

from __future__ import annotations

import numpy as np

from pairdiff.pixeldiff.local import Local


def group(changes: list[Local]) -> list[Local]:
    """A disappearance and a look-alike appearance are a move; look-alike disappearances (or
    appearances) are a change of count; look-alike edits in place (both eyes recoloured) are
    one edit. Returned largest first."""
    gone = [c for c in changes if c.kind == "disappear"]
    new = [c for c in changes if c.kind == "appear"]
    rest = [c for c in changes if c.kind not in ("disappear", "appear")]
    pairs = sorted(
        (float(np.linalg.norm(d.colour - p.colour)), i, j)
        for i, d in enumerate(gone)
        for j, p in enumerate(new)
        if _alike(d, p)
    )
    used_d: set[int] = set()
    used_p: set[int] = set()
    moves = []
    for _, i, j in pairs:
        if i in used_d or j in used_p:
            continue
        used_d.add(i)
        used_p.add(j)
        d, p = gone[i], new[j]
        strength = max(d.strength, p.strength)
        moves.append(Local("move", d.boxes_a, p.boxes_b, d.area + p.area, strength, "", d.colour))
    out = moves + _join([c for i, c in enumerate(gone) if i not in used_d], "count")
    out += _join([c for j, c in enumerate(new) if j not in used_p], "count")
    for kind in ("lighting", "colour", "noise", "blur", "resize", "move", "text", "other"):
        out += _join([c for c in rest if c.kind == kind], kind)
    return sorted(out, key=lambda c: -c.area * c.strength)


def _size(c: Local) -> int:
    b = (c.boxes_a or c.boxes_b)[0]
    return (b[2] - b[0]) * (b[3] - b[1])


def _alike(c: Local, d: Local) -> bool:
    ratio = _size(c) / max(1, _size(d))
    return (
        c.detail == d.detail
        and 0.4 <= ratio <= 2.5
        and float(np.linalg.norm(c.colour - d.colour)) < 15.0
    )


def _join(items: list[Local], kind: str) -> list[Local]:
    """Look-alike items as one change of `kind`; moves, text and "other" are never joined."""
    groups: list[list[Local]] = []
    for c in sorted(items, key=lambda c: -c.area):
        # Single linkage: coins run from dark to bright, each like its neighbour in the row.
        home = (
            None
            if kind in ("other", "move")
            else next((g for g in groups if any(_alike(m, c) for m in g)), None)
        )
        if home is None:
            groups.append([c])
        else:
            home.append(c)
    out = []
    for g in groups:
        if len(g) == 1:
            out.append(g[0])
            continue
        first = g[0]
        detail = first.detail
        if kind == "count":
            detail = "disappeared" if first.kind == "disappear" else "appeared"
        out.append(
            Local(
                kind,
                [b for c in g for b in c.boxes_a],
                [b for c in g for b in c.boxes_b],
                sum(c.area for c in g),
                max(c.strength for c in g),
                detail,
                first.colour,
            )
        )
    return out
