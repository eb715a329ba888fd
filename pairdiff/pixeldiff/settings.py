"""Tunable options of the pixeldiff pre-annotator, with defaults measured on the demo pairs."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class Settings:
    """Every threshold in one place; scores are in units of "just visible" (1.0 = threshold)."""

    # Longest side of the common working frame; larger images are analysed downscaled.
    max_side: int = 512
    # Refuse to decode more pixels than this (a decompression bomb is an error, not a crash).
    max_pixels: int = 40_000_000
    # CIELAB ΔE (CIE76) that counts as a visible colour difference at one pixel.
    delta_e: float = 6.0
    # (1 - SSIM) / 2 on lightness that counts as a visible structural difference.
    dissimilarity: float = 0.12
    # Robust adaptive threshold: median + k·MAD of the score, never below 1.
    mad_k: float = 6.0
    # ... but never above this many times the visibility floor.
    max_threshold: float = 3.0
    # Hysteresis: a changed region grows into neighbours scoring at least this fraction.
    grow: float = 0.45
    # Morphological closing radius, as a fraction of the working frame's diagonal.
    close: float = 0.006
    # Regions smaller than this fraction of the frame are dropped as noise.
    min_area: float = 0.0002
    # Regions whose boxes come closer than this fraction of the diagonal become one region.
    merge_gap: float = 0.008
    # A change touching this share of the grid tiles may be global (lighting, tint, noise).
    global_spread: float = 0.6
    # Local changes less certain than this (faint and small) are left out.
    min_confidence: float = 0.25
    # A non-global change covering more than this share of the frame is flagged too large.
    too_large: float = 0.35
    # A second change further than this share of the diagonal from the main one is scattered.
    scatter_distance: float = 0.08
    # ... and at least this large relative to the main change.
    scatter_area: float = 0.02

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            # Zero is allowed only where it means "off" (keep every region, however faint).
            low_ok = value >= 0 if f.name == "min_confidence" else value > 0
            if isinstance(value, bool) or not isinstance(value, int | float) or not low_ok:
                raise ValueError(f"pixeldiff setting {f.name} must be a positive number")
        if self.max_side < 16:
            raise ValueError("pixeldiff setting max_side must be at least 16 pixels")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))
