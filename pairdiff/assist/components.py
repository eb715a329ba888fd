"""A pair's difference components after alignment, with tight boxes on A and B and a draft.

`precompute` is what the worker runs once per pair: decode, align B to A, find the changes
with pixeldiff on A and B brought onto A, tighten each box to the pixel-difference extent at
full size (a small median filter and a threshold above the pair's own noise floor keep blur
edges and JPEG ringing out), map B's boxes back through the alignment, and write a draft.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pairdiff.assist.align import Alignment, estimate_alignment, map_box
from pairdiff.assist.drafts import Evidence, draft_sentence, suggest_entity
from pairdiff.assist.found import Found, as_xyxy, extent_of, rows_joined, to_pixels
from pairdiff.assist.moves import join_moves
from pairdiff.assist.refiner import Refiner, onto_a
from pairdiff.assist.resizes import resized
from pairdiff.pixeldiff.decode import DecodeError, common_frame, decode
from pairdiff.pixeldiff.predictor import analyse
from pairdiff.pixeldiff.settings import Settings

VERSION = 1


@dataclass(frozen=True)
class Component:
    """One change the pixels show. Boxes are in each side's own pixels (none: that side is
    absent); zone_a / zone_b are where a click on that side picks it (an absent side's zone is
    the other side's box brought over). whole: a whole-image change.

    Not an ``answers.ChangeAnswer``: the workspace's suggestion for a click, with click zones,
    a draft sentence and pixeldiff's kind, written as the JSON the page reads."""

    kind: str
    category: str
    boxes_a: list[list[int]]
    boxes_b: list[list[int]]
    zone_a: list[int]
    zone_b: list[int]
    draft: str
    entity: str
    confidence: float
    whole: bool = False

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "category": self.category,
            "boxes_a": self.boxes_a,
            "boxes_b": self.boxes_b,
            "zone_a": self.zone_a,
            "zone_b": self.zone_b,
            "draft": self.draft,
            "entity": self.entity,
            "confidence": self.confidence,
            "whole": self.whole,
        }


@dataclass(frozen=True)
class Assist:
    """Everything the workspace needs for one pair; error is set (and the rest empty) when the
    images could not be analysed."""

    alignment: Alignment | None
    components: list[Component] = field(default_factory=list)
    error: str = ""

    def to_json(self) -> dict:
        return {
            "version": VERSION,
            "alignment": self.alignment.to_json() if self.alignment else None,
            "components": [c.to_json() for c in self.components],
        }


def precompute(
    image_a: bytes,
    image_b: bytes,
    *,
    categories: Sequence[str],
    vocabulary: Sequence[str] = (),
    instruction: str = "",
    settings: Settings | None = None,
) -> Assist:
    """The assist of one pair; never raises on bad images (the error says why)."""
    s = settings or Settings()
    try:
        a = decode(image_a, s.max_pixels, "A")
        b = decode(image_b, s.max_pixels, "B")
    except DecodeError as exc:
        return Assist(None, error=str(exc))
    alignment = estimate_alignment(a, b)
    lossy = any(bytes(data[:3]) == b"\xff\xd8\xff" for data in (image_a, image_b))  # JPEG
    found = _components(a, b, alignment, categories, vocabulary, instruction, s, lossy)
    return Assist(alignment, found)


def _components(
    a: np.ndarray,
    b: np.ndarray,
    alignment: Alignment,
    categories: Sequence[str],
    vocabulary: Sequence[str],
    instruction: str,
    s: Settings,
    lossy: bool = False,
) -> list[Component]:
    ha, wa = a.shape[:2]
    hb, wb = b.shape[:2]
    m = np.asarray(alignment.matrix, float)
    inverse = np.linalg.inv(m)
    b_on_a = onto_a(a, b, m)
    if alignment.is_frame_scale:
        # pixeldiff's own frame handling (and its resolution finding) for a pure resize.
        frames = common_frame(a, b, s.max_side)
    else:
        frames = common_frame(a, b_on_a, s.max_side)
    result, findings = analyse(frames, categories, s)
    refine = Refiner(a, b_on_a, frames.shape, lossy)
    found = []
    for change, finding in zip(result.changes, findings, strict=True):
        whole = finding.kind.startswith("global:")
        boxes_a = [as_xyxy(b) for b in change.boxes_a]
        boxes_b = [as_xyxy(b) for b in change.boxes_b]
        if alignment.is_frame_scale:
            # pixeldiff gave B's boxes in B's pixels; with B brought onto A they are in A's.
            boxes_b = [x for x in (map_box(inverse, b, (wa, ha)) for b in boxes_b) if x]
        if whole:
            boxes_a = boxes_b = [(0.0, 0.0, float(wa), float(ha))]
        else:
            boxes_a, boxes_b = refine.boxes(finding.kind, boxes_a, boxes_b)
        found.append(
            Found(
                finding.kind,
                finding.detail,
                change.category,
                change.description,
                float(change.confidence or 0.0),
                boxes_a,
                boxes_b,
                whole,
            )
        )
    found = join_moves(found, a, b_on_a, categories, refine)
    found = [resized(f, refine) for f in found]
    found = [rows_joined(f) for f in found]
    out = []
    for f in found:
        first_a = f.boxes_a[0] if f.boxes_a else None
        first_b = f.boxes_b[0] if f.boxes_b else None
        evidence = Evidence(
            kind=f.kind,
            detail=f.detail,
            box_a=first_a,
            box_b_on_a=first_b,
            colour_a=refine.colour(a, first_a or first_b),
            colour_b=refine.colour(b_on_a, first_b or first_a),
            size_a=(wa, ha),
            sentence=f.sentence,
            count=max(len(f.boxes_a), len(f.boxes_b)),
        )
        entity = suggest_entity(f.kind, vocabulary, instruction)
        if f.whole:
            on_b = [(0.0, 0.0, float(wb), float(hb))]
        else:
            on_b = [x for x in (map_box(m, box, (wb, hb)) for box in f.boxes_b) if x]
        zone_a = extent_of(f.boxes_a or f.boxes_b)
        zone_b = extent_of(on_b) or extent_of(
            [x for x in (map_box(m, box, (wb, hb)) for box in f.boxes_a) if x]
        )
        if zone_a is None or zone_b is None:
            continue  # B shows nothing of where it happened (outside a crop)
        out.append(
            Component(
                kind=f.kind,
                category=f.category,
                boxes_a=[to_pixels(box, (wa, ha)) for box in f.boxes_a],
                boxes_b=[to_pixels(box, (wb, hb)) for box in on_b],
                zone_a=to_pixels(zone_a, (wa, ha)),
                zone_b=to_pixels(zone_b, (wb, hb)),
                draft=draft_sentence(evidence, entity),
                entity=entity,
                confidence=f.confidence,
                whole=f.whole,
            )
        )
    return out
