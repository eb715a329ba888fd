"""Category taxonomies shipped as project presets."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Category:
    slug: str
    name: str
    hint: str = ""


MINCU: tuple[Category, ...] = (
    Category("attribute", "Attribute", "colour, material, pattern or state of one object"),
    Category("object", "Object", "an object added, removed or replaced"),
    Category("counting", "Counting", "the number of instances changed"),
    Category("relation", "Relation", "position or spatial relation changed"),
)

VDIFF: tuple[Category, ...] = (
    Category("position", "Position", "an object moved"),
    Category("motion", "Motion", "pose or action changed"),
    Category("regional_colour", "Regional colour", "colour of one region changed"),
    Category("global_colour", "Global colour", "colour of the whole image shifted"),
    Category("appear_disappear", "Appear / disappear", "an object added or removed"),
    Category("noise_resolution", "Noise / resolution", "noise, compression or resolution"),
    Category("texture", "Texture", "texture, sharpness or blur"),
    Category("replacement_size", "Replacement / size", "an object replaced or resized"),
    Category("ocr_text", "OCR / text", "written text changed"),
    Category("lighting", "Lighting", "brightness, exposure or shadows"),
)

PRESETS: dict[str, tuple[Category, ...]] = {"mincu": MINCU, "vdiff": VDIFF}


def preset_categories(name: str) -> list[dict[str, str]]:
    """The preset's categories as the JSON a Project stores; KeyError for an unknown preset."""
    return [{"slug": c.slug, "name": c.name, "hint": c.hint} for c in PRESETS[name]]
