"""Made controls' identities and files (pure): a re-encoded B, a spare pair's number and id."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from pairdiff.release.control_images import (
    B_OF_COPY,
    B_OF_REENCODE,
    COPY,
    REENCODE,
    control_file,
    reencoded,
)
from pairdiff.release.controls import identities


def _photo(fmt: str, size: tuple[int, int] = (48, 64), **save) -> bytes:
    """Smooth shading with a little grain, as a photo crop."""
    rng = np.random.default_rng(3)
    y, x = np.mgrid[0 : size[0], 0 : size[1]] % 64
    base = np.stack([x * 3, y * 4, (x + y) * 2], axis=-1).astype(float)
    pixels = np.clip(base + rng.normal(0, 4, base.shape), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format=fmt, **save)
    return out.getvalue()


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)


def test_a_png_is_encoded_again_with_other_bytes_and_the_same_pixels():
    for level in (1, 6, 9):
        a = _photo("PNG", compress_level=level)
        b = reencoded(a)
        assert b != a and (_pixels(b) == _pixels(a)).all()
        assert abs(len(b) / len(a) - 1) < 0.1  # (Pillow's deflate may not be this zlib)
        assert reencoded(a) == b  # deterministic: a later version writes the same file


def test_a_jpeg_is_saved_again_at_its_own_quality():
    a = _photo("JPEG", size=(240, 320), quality=80)
    b = reencoded(a)
    assert b != a
    assert np.abs(_pixels(b) - _pixels(a)).mean() < 2  # one more save's rounding
    assert abs(len(b) / len(a) - 1) < 0.1


def _record(pid: int, split: str = "test") -> dict:
    return {"id": f"cam-{pid:04d}", "pair_id": pid, "split": split,
            "image_a": f"images/{pid}_a.png", "image_b": f"images/{pid}_b.png"}  # fmt: skip


def _control_of(record: dict) -> dict:
    return {**record, "image_b": record["image_a"], "control": True,
            "control_of": record["pair_id"]}  # fmt: skip


def test_a_control_takes_a_spare_pair_in_the_released_range_and_rows_go_in_pair_order():
    records = [_record(p) for p in (2, 5, 9)]
    rows = [*records, _control_of(records[0])]
    spare = [(40, "cam-0040"), (7, "cam-0007")]
    out, files = identities(rows, records, seed=0, spare=spare)
    control = next(r for r in out if r.get("control"))
    assert (control["pair_id"], control["id"]) == (7, "cam-0007")  # 7 lies among 2, 5, 9
    assert (control["image_a"], control["image_b"]) == ("images/7_a.png", "images/7_b.png")
    # Pair 2's image A is the only one of its bytes: the control's A is re-encoded too.
    assert files == {"images/7_a.png": ("images/2_a.png", REENCODE),
                     "images/7_b.png": ("images/2_a.png", B_OF_REENCODE)}  # fmt: skip
    assert [r["pair_id"] for r in out] == [2, 5, 7, 9]


def test_without_a_spare_pair_a_control_gets_a_new_number_and_an_id_of_its_sources_form():
    records = [_record(p) for p in (2, 5, 9)]
    out, _ = identities([*records, _control_of(records[1])], records, seed=0)
    control = next(r for r in out if r.get("control"))
    assert control["pair_id"] == 10 and control["id"] == "cam-0010"
    assert control["image_b"] == "images/10_b.png"


def test_a_published_control_keeps_its_identity_unless_a_released_pair_took_it():
    records = [_record(p) for p in (2, 5, 9)]
    published = {**_control_of(records[0]), "pair_id": 7, "id": "cam-0007",
                 "image_a": "images/7_a.png", "image_b": "images/7_b.png"}  # fmt: skip
    out, _ = identities([*records, published], records, seed=0, spare=[(8, "cam-0008")])
    assert next(r for r in out if r.get("control"))["pair_id"] == 7
    taken = [*records, _record(7)]
    out, _ = identities([*taken, published], taken, seed=0, spare=[(8, "cam-0008")])
    assert next(r for r in out if r.get("control"))["id"] == "cam-0008"


def test_a_photo_several_pairs_show_is_copied_and_a_lone_one_re_encoded():
    records = [{**_record(p), "content_key": f"{photo}:{p}"}
               for p, photo in ((2, "aaa"), (3, "aaa"), (9, "bbb"))]  # fmt: skip
    rows = [*records, _control_of(records[0]), _control_of(records[2])]
    _, files = identities(rows, records, seed=0)
    kinds = {path: how for path, (_, how) in files.items()}
    assert sorted(kinds.values()) == sorted([COPY, B_OF_COPY, REENCODE, B_OF_REENCODE])


def test_a_controls_files_differ_from_each_other_and_from_the_original():
    for original in (_photo("PNG", compress_level=6), _photo("JPEG", size=(240, 320))):
        for a_how, b_how in ((COPY, B_OF_COPY), (REENCODE, B_OF_REENCODE)):
            a, b = control_file(original, a_how), control_file(original, b_how)
            assert b != a and b != original
            assert (a == original) == (a_how == COPY)
            if original.startswith(b"\x89PNG"):
                assert (_pixels(a) == _pixels(original)).all()
                assert (_pixels(b) == _pixels(original)).all()


def test_a_published_control_keeps_how_its_files_were_made():
    records = [_record(p) for p in (2, 5, 9)]  # pair 2's photo is its own: REENCODE now
    published = {**_control_of(records[0]), "pair_id": 7, "id": "cam-0007", "control_a": COPY,
                 "image_a": "images/7_a.png", "image_b": "images/7_b.png"}  # fmt: skip
    out, files = identities([*records, published], records, seed=0)
    assert files["images/7_a.png"][1] == COPY and files["images/7_b.png"][1] == B_OF_COPY
    assert next(r for r in out if r.get("control"))["control_a"] == COPY
