"""pixeldiff: the built-in pre-annotator that needs no model and no network.

Decode both images (EXIF orientation applied), bring them into one working frame, measure a
perceptual difference (CIELAB ΔE and SSIM), threshold it adaptively, clean it up, turn
connected regions into boxes on each side, recognise whole-image changes (lighting, colour
cast, noise, blur, resolution) and raise MinCU-style screening flags.
"""

from pairdiff.pixeldiff.predictor import PixelDiff
from pairdiff.pixeldiff.settings import Settings

__all__ = ["PixelDiff", "Settings"]
