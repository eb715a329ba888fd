"""Value types of the synthetic pair generator."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

Xyxy = tuple[int, int, int, int]


class EditUnfit(ValueError):
    """The photo cannot take this edit (it changed no pixel: a flat photo, a region with
    nothing to move); the attempt is skipped with this reason."""


@dataclass(frozen=True)
class SynthChange:
    """One known (gold) change; an empty side has no boxes and an empty entity.

    Not an ``answers.ChangeAnswer``: the generator's own record, with the edit's kind and
    MinCU's category next to the project's, and whole-pixel boxes as the manifest writes them."""

    kind: str
    category: str
    mincu_category: str
    description: str
    entity_a: str
    entity_b: str
    boxes_a: list[Xyxy]
    boxes_b: list[Xyxy]


@dataclass(frozen=True)
class SynthPair:
    """Two lossless PNGs and the changes that turn A into B."""

    key: str
    image_a: bytes
    image_b: bytes
    size_a: tuple[int, int]
    size_b: tuple[int, int]
    instruction: str
    source: dict[str, object]
    changes: list[SynthChange]


@dataclass(frozen=True)
class Edit:
    """What an edit function returns, before PNG encoding."""

    photo: str
    image_a: np.ndarray
    image_b: np.ndarray
    instruction: str
    changes: list[SynthChange]
    params: dict[str, object] = field(default_factory=dict)


# (VDiff-Bench category, MinCU category) of every edit kind. Counting has no VDiff-Bench slug;
# instances that vanish are what VDiff-Bench files under appear/disappear.
CATEGORIES: dict[str, tuple[str, str]] = {
    "recolour_region": ("regional_colour", "attribute"),
    "paste_object": ("appear_disappear", "object"),
    "remove_object": ("appear_disappear", "object"),
    "move_object": ("position", "relation"),
    "count_change": ("appear_disappear", "counting"),
    "change_text": ("ocr_text", "attribute"),
    "add_noise": ("noise_resolution", "attribute"),
    "blur_region": ("texture", "attribute"),
    "lighting": ("lighting", "attribute"),
    "global_colour": ("global_colour", "attribute"),
    "resize_object": ("replacement_size", "object"),
    "downscale": ("noise_resolution", "attribute"),
    "turn_object": ("motion", "attribute"),
    # Edits of any photo (pairdiff.synth.custom): one or two kinds per VDiff-Bench category.
    "region_move": ("position", "relation"),
    "region_turn": ("motion", "attribute"),  # a pose is the state of one object
    "region_recolour": ("regional_colour", "attribute"),
    "image_tint": ("global_colour", "attribute"),
    "region_remove": ("appear_disappear", "object"),
    "region_add": ("appear_disappear", "counting"),  # one more of the same: the count grows
    "region_noise": ("noise_resolution", "attribute"),
    "image_noise": ("noise_resolution", "attribute"),
    "region_pixelate": ("noise_resolution", "attribute"),
    "region_blur": ("texture", "attribute"),
    "region_sharpen": ("texture", "attribute"),
    "region_pattern": ("texture", "attribute"),
    "region_resize": ("replacement_size", "object"),
    "region_replace": ("replacement_size", "object"),
    "text_alter": ("ocr_text", "attribute"),
    "text_write": ("ocr_text", "object"),
    "image_light": ("lighting", "attribute"),
    "region_light": ("lighting", "attribute"),
}


def change(
    kind: str,
    description: str,
    entity_a: str,
    entity_b: str,
    boxes_a: list[Xyxy],
    boxes_b: list[Xyxy],
) -> SynthChange:
    """A change of `kind`, its categories filled in; an empty side gets an empty entity."""
    category, mincu = CATEGORIES[kind]
    return SynthChange(
        kind=kind,
        category=category,
        mincu_category=mincu,
        description=description,
        entity_a=entity_a if boxes_a else "",
        entity_b=entity_b if boxes_b else "",
        boxes_a=list(boxes_a),
        boxes_b=list(boxes_b),
    )
