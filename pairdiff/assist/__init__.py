"""Assists for the annotator: what a pair's pixels say, worked out once per pair off the request
path, so that one click in the workspace boxes a change on both images, a box mirrors through
the pair's own alignment and a description is drafted from what changed.

- `align`: the A→B alignment (frame scale, translation by phase correlation, or an affine
  transform by ORB + RANSAC) with its residual;
- `components`: the difference components after alignment, each with tight boxes on A and B,
  refined by `refiner` (tight boxes at full size), `moves` and `resizes`, on `found`'s boxes;
- `colours` and `drafts`: colour names in CIELAB and the draft sentence and entity.
"""

from pairdiff.assist.align import Alignment, estimate_alignment, map_box
from pairdiff.assist.components import Assist, Component, precompute

__all__ = ["Alignment", "Assist", "Component", "estimate_alignment", "map_box", "precompute"]
