"""pixeldiff's fast paths give what the plain computations they replace give."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage as ndi
from skimage import data as samples
from skimage.color import rgb2lab
from skimage.metrics import structural_similarity

from pairdiff.pixeldiff import Settings, whole
from pairdiff.pixeldiff.decode import common_frame
from pairdiff.pixeldiff.maps import (
    REACH,
    _cleaned,
    changed_mask,
    differing_box,
    maps,
    score_map,
    threshold,
    to_lab,
)
from pairdiff.pixeldiff.morphology import dilate, erode
from pairdiff.pixeldiff.whole import (
    _fine,
    _fine_box,
    _fine_like,
    _tile_means,
    _touched,
    fit_tone,
    spread,
    texture,
)


def _disk(radius: int) -> np.ndarray:
    yy, xx = np.mgrid[-radius : radius + 1, -radius : radius + 1]
    return xx * xx + yy * yy <= radius * radius


def _photo(size: int = 512) -> np.ndarray:
    return np.asarray(Image.fromarray(samples.astronaut()).resize((size, size)))


@pytest.mark.parametrize("radius", [1, 2, 4, 6])
def test_disk_morphology_is_scipys_pixel_for_pixel(radius):
    rng = np.random.default_rng(radius)
    for shape, density in [((40, 57), 0.3), ((64, 64), 0.8), ((9, 31), 0.5), ((50, 50), 0.02)]:
        mask = rng.random(shape) < density
        assert np.array_equal(dilate(mask, radius), ndi.binary_dilation(mask, _disk(radius)))
        assert np.array_equal(erode(mask, radius), ndi.binary_erosion(mask, _disk(radius)))


def test_lab_is_skimages():
    rgb = _photo(128)
    assert np.abs(to_lab(rgb) - rgb2lab(rgb)).max() < 0.05


def test_ssim_part_of_the_score_is_skimages_map():
    a = _photo(96)
    b = a.copy()
    b[20:60, 30:70] = b[20:60, 30:70] // 2 + 40  # a faded square: structure and colour change
    lab_a, lab_b = to_lab(a), to_lab(b)
    _, ssim = structural_similarity(
        lab_a[..., 0],
        lab_b[..., 0],
        data_range=100.0,
        full=True,
        gaussian_weights=True,
        sigma=1.5,
        use_sample_covariance=False,
    )
    s = Settings(delta_e=1e9)  # ΔE out of the way: the score is SSIM's alone
    expected = (1.0 - ssim) / 2.0 / s.dissimilarity
    assert np.abs(score_map(lab_a, lab_b, s) - expected).max() < 1e-2


def test_a_local_edit_is_scored_only_around_it_and_exactly_as_over_the_whole_frame():
    a = _photo()
    b = a.copy()
    b[300:340, 100:180] = b[300:340, 100:180][..., [1, 2, 0]]  # a recoloured patch
    box = differing_box(a, b, 2 * REACH)
    assert box == (slice(300 - 18, 340 + 18), slice(100 - 18, 180 + 18))
    m = maps(a, b, Settings())
    assert np.array_equal(m.lab_b, to_lab(b))
    assert np.array_equal(m.score, score_map(to_lab(a), to_lab(b), Settings()))
    assert m.score[box].max() > 1.0  # the edit is there, and nothing outside the box
    assert not m.score[:200].any()


def test_identical_and_everywhere_different_pairs_take_the_plain_path():
    a = _photo(64)
    assert differing_box(a, a, 2 * REACH) is None
    assert not maps(a, a, Settings()).score.any()
    rng = np.random.default_rng(0)
    grain = np.clip(a + rng.normal(0, 2, a.shape), 0, 255).astype(np.uint8)
    assert differing_box(a, grain, 2 * REACH) == (slice(0, 64), slice(0, 64))
    m = maps(a, grain, Settings())
    assert np.array_equal(m.score, score_map(to_lab(a), to_lab(grain), Settings()))


@pytest.mark.parametrize("local", [False, True], ids=["whole frame", "local edit"])
def test_the_second_maps_against_the_same_b_is_the_plain_one_to_the_bit(local):
    """The tone-fitted A is scored against B with B's Lab and B's filtered planes from the
    first maps: exactly what scoring it from scratch gives, in the same box or another."""
    a = _photo(160)
    b = np.clip(a.astype(int) * 5 // 4 + 3, 0, 255).astype(np.uint8)  # brighter everywhere
    b[40:80, 50:110] = b[40:80, 50:110][..., [2, 0, 1]]
    fitted = fit_tone(a, b)
    if local:  # A's tone-fitted twin differs from B only around the patch: another box
        fitted = b.copy()
        fitted[40:80, 50:110] = a[40:80, 50:110]
    first = maps(a, b, Settings())
    assert first.box == (slice(0, 160), slice(0, 160)) and "mean_l" in first.planes
    again = maps(fitted, b, Settings(), first)
    plain = maps(fitted, b, Settings())
    assert again.lab_b is first.lab_b
    assert np.array_equal(again.lab_b, plain.lab_b)
    assert np.array_equal(again.score, plain.score)
    assert np.array_equal(again.lab_a, plain.lab_a)
    assert (again.planes is first.planes) is not local


def test_the_cielab_toe_is_the_linear_part_below_the_knee():
    """Dark pixels take the linear toe, the rest the cube root: a near-black photo (most
    pixels below the knee) converts as the per-pixel formula says."""
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 24, (64, 48, 3), dtype=np.uint8)
    rgb[::7] = rng.integers(0, 256, (10, 48, 3), dtype=np.uint8)
    assert np.abs(to_lab(rgb) - rgb2lab(rgb)).max() < 0.05


def test_a_whole_number_shrink_is_the_box_average_within_a_level():
    big = np.asarray(Image.fromarray(samples.astronaut()).resize((1024, 1024)))
    frames = common_frame(big, big, 512)
    box = np.asarray(Image.fromarray(big).resize((512, 512), Image.Resampling.BOX))
    assert frames.a.shape == (512, 512, 3)
    assert np.abs(frames.a.astype(int) - box).max() <= 1


def test_the_mask_and_the_fine_detail_are_worked_out_around_the_edit_exactly():
    a = _photo()
    b = a.copy()
    b[10:60, 400:470] = 255 - b[10:60, 400:470]  # an inverted patch near the top edge
    lab_a, lab_b = to_lab(a), to_lab(b)
    s = Settings()
    score = score_map(lab_a, lab_b, s)
    levels = threshold(score, s)
    frame_radius = max(1, round(s.close * float(np.hypot(512, 512))))
    everywhere = _cleaned(score, levels, frame_radius, max(4, round(s.min_area * 512 * 512)))
    assert everywhere.any()
    assert np.array_equal(changed_mask(score, levels, s), everywhere)
    box = _fine_box(lab_b, lab_a)
    assert np.array_equal(_fine_like(lab_b, _fine(lab_a), box), _fine(lab_b))
    assert _fine_box(lab_a, lab_a) is None
    assert np.array_equal(_fine_like(lab_a, _fine(lab_a), None), _fine(lab_a))


def test_spread_counts_the_tiles_a_tile_by_tile_mean_counts():
    def by_tile_means(changed: np.ndarray) -> float:
        h, w = changed.shape
        ys = np.linspace(0, h, min(8, h) + 1).astype(int)
        xs = np.linspace(0, w, min(8, w) + 1).astype(int)
        means = [
            changed[y0:y1, x0:x1].astype(np.float32).mean()
            for y0, y1 in zip(ys[:-1], ys[1:], strict=True)
            for x0, x1 in zip(xs[:-1], xs[1:], strict=True)
        ]
        return float(np.mean(np.array(means) >= 0.1))

    rng = np.random.default_rng(0)
    for shape in [(512, 512), (300, 451), (37, 5), (3, 200), (1, 1)]:
        for density in (0.0, 0.05, 0.1, 0.12, 0.5):
            changed = rng.random(shape) < density
            assert spread(changed) == by_tile_means(changed)
        every_tenth = np.zeros(shape, bool)
        every_tenth.ravel()[::10] = True  # shares right at the tenth
        assert spread(every_tenth) == by_tile_means(every_tenth)


def test_texture_measures_again_only_the_tiles_a_local_edit_touches():
    a = _photo()
    b = a.copy()
    grain = np.random.default_rng(0).integers(-20, 21, (40, 80, 3))
    b[300:340, 100:180] = np.clip(b[300:340, 100:180] + grain, 0, 255).astype(np.uint8)
    lab_a, lab_b = to_lab(a), to_lab(b)
    fine_a, fine_b = _fine(lab_a), _fine(lab_b)
    touched = _touched(fine_a.shape, _fine_box(lab_b, lab_a))
    assert 0 < touched.sum() < touched.size // 4
    d = fine_b - fine_a
    ea = _tile_means(fine_a * fine_a)
    for values, elsewhere in [(fine_b * fine_b, ea), (d * d, 0.0), (d * fine_a, 0.0)]:
        assert np.array_equal(_tile_means(values, touched, elsewhere), _tile_means(values))


def _grainy_or_blurred(a: np.ndarray, rows: slice, cols: slice, kind: str) -> np.ndarray:
    b = a.copy()
    patch = b[rows, cols].astype(float)
    if kind == "grain":
        patch += np.random.default_rng(1).normal(0, 25, patch.shape)
    else:
        patch = ndi.uniform_filter(patch, (9, 9, 1))
    b[rows, cols] = np.clip(patch, 0, 255).astype(np.uint8)
    return b


@pytest.mark.parametrize("kind", ["grain", "blur"])
@pytest.mark.parametrize("side", [60, 120, 130, 190, 260, 512])
def test_texture_skips_only_edits_too_small_to_be_global(kind, side, monkeypatch):
    """Heavy grain or blur over a square of `side` pixels (of 512): texture answers as it does
    when it measures every tile, and skips the measuring only where too few tiles changed."""
    share = Settings().global_spread
    a = _photo()
    b = _grainy_or_blurred(a, slice(0, side), slice(0, side), kind)
    lab_a, lab_b = to_lab(a), to_lab(b)
    touched = int(_touched(lab_a.shape, _fine_box(lab_b, lab_a)).sum())
    found = texture(lab_a, lab_b, share)
    monkeypatch.setattr(whole, "_may_reach", lambda *args: True)
    assert found == texture(lab_a, lab_b, share)
    assert whole._may_reach.__module__ != whole.__name__  # the patch was in force
    monkeypatch.undo()
    assert whole._may_reach(touched, 64, share) == (touched >= 9)
    if side == 512:
        assert found is not None and found.kind == ("noise" if kind == "grain" else "blur")


@pytest.mark.parametrize("tiles", [4, 16, 64])
@pytest.mark.parametrize("share", [0.1, 0.35, 0.6, 0.9])
def test_the_skip_bound_holds_for_any_count_of_textured_tiles(tiles, share):
    """Below the bound, even if every touched tile had changed, neither share is reached."""
    for touched in range(tiles + 1):
        if whole._may_reach(touched, tiles, share):
            continue
        assert touched / tiles < share  # noise: changed tiles over all tiles
        for textured in range(math.ceil(0.25 * tiles), tiles + 1):
            assert min(touched, textured) / textured < share  # blur: over the textured
