"""Files researchers load without a recipe: pictures in the Parquet rows, VLMEvalKit TSVs whose
pixels survive its loader, an all-empty list column (issues #26 and #24 item 4)."""

import base64
import csv
import io

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from pairdiff.release.harness import lossless_png, task_name, vlmevalkit_tsvs
from pairdiff.release.hf import column_types, parquet_shards

rng = np.random.default_rng(7)
NOISE = rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8)  # texture JPEG mangles


def _encoded(fmt: str) -> bytes:
    out = io.BytesIO()
    Image.fromarray(NOISE).save(out, format=fmt, **({"quality": 80} if fmt != "PNG" else {}))
    return out.getvalue()


ORIGINALS = {"images/1_a.jpg": _encoded("JPEG"), "images/1_b.webp": _encoded("WEBP"),
             "images/2_a.png": _encoded("PNG"), "images/2_b.jpg": _encoded("JPEG")}  # fmt: skip
QUESTIONS = [
    {"id": f"q{i}", "split": "test", "image_a": a, "image_b": b, "question": "Which?",
     "options": {"A": "one", "B": "two", "C": "three", "D": "four"}, "answer": "B",
     "category": "object"}
    for i, (a, b) in enumerate([("images/1_a.jpg", "images/1_b.webp"),
                                ("images/2_a.png", "images/2_b.jpg")], start=1)
]  # fmt: skip


def _as_dump_image_writes(b64: str, name: str, folder) -> np.ndarray:
    """What VLMEvalKit's dump_image leaves for the model: the base64 decoded by PIL, RGBA, P
    and LA made RGB, saved under the TSV's image_path (its extension picks the format), then
    read back from that file."""
    image: Image.Image = Image.open(io.BytesIO(base64.b64decode(b64)))
    if image.mode in ("RGBA", "P", "LA"):
        image = image.convert("RGB")
    target = folder / name.replace("/", "_")
    image.save(target)
    return np.asarray(Image.open(target))


def _tsv(release_name="v3"):
    name, data = next(
        vlmevalkit_tsvs(QUESTIONS, project_slug="Shop Photos", release_name=release_name,
                        read_image=ORIGINALS.__getitem__)
    )  # fmt: skip
    return name, list(csv.DictReader(io.StringIO(data.decode()), delimiter="\t"))


def test_tsv_names_carry_project_and_release():
    name, _ = _tsv()
    assert name == "vlmevalkit/diffmark_shop_photos_v3_test.tsv"
    assert task_name("Shop Photos", "v3") == "diffmark_shop_photos_v3"


def test_jpeg_and_webp_pixels_reach_the_model_identical_to_the_decoded_originals(tmp_path):
    _, rows = _tsv()
    for row, question in zip(rows, QUESTIONS, strict=True):
        images, names = eval(row["image"]), eval(row["image_path"])
        assert all(n.endswith(".png") for n in names)
        for b64, name, side in zip(images, names, ("image_a", "image_b"), strict=True):
            seen = _as_dump_image_writes(b64, name, tmp_path)
            original = np.asarray(Image.open(io.BytesIO(ORIGINALS[question[side]])))
            assert np.array_equal(seen, original), name
    # The original bytes under their own extension, as before, lose the texture:
    jpeg = base64.b64encode(ORIGINALS["images/1_a.jpg"]).decode()
    lossy = _as_dump_image_writes(jpeg, "images/1_a.jpg", tmp_path)
    assert not np.array_equal(
        lossy, np.asarray(Image.open(io.BytesIO(ORIGINALS["images/1_a.jpg"])))
    )


def test_a_png_original_is_sent_byte_for_byte():
    assert lossless_png(ORIGINALS["images/2_a.png"]) == ORIGINALS["images/2_a.png"]


def test_an_all_empty_list_column_gets_a_real_type():
    # Side A absent in every record (every change adds an object): boxes_a is [] everywhere.
    rows = [{"id": f"r{i}", "split": "test", "boxes_a": [], "boxes_b": [[1, 2, 3, 4]]}
            for i in range(3)]  # fmt: skip
    columns = column_types(rows, config="training")
    assert columns["boxes_a"] == "boxes"
    name, data = next(parquet_shards({"training": rows}, read_image=ORIGINALS.__getitem__))
    table = pq.read_table(io.BytesIO(data))
    assert table.column("boxes_a").to_pylist() == [[], [], []]


@pytest.mark.parametrize("config", ["benchmark", "questions"])
def test_benchmark_and_question_rows_carry_both_pictures_as_their_original_bytes(config):
    rows = [dict(q, split="test", changes_json="[]") for q in QUESTIONS]
    columns = column_types(rows, config=config)
    assert columns["image_a"] == "image" and columns["image_a_path"] == "string"
    name, data = next(parquet_shards({config: rows}, read_image=ORIGINALS.__getitem__))
    assert name == f"data/{config}/test-00000-of-00001.parquet"
    table = pq.read_table(io.BytesIO(data)).to_pylist()
    assert [r["image_b"]["bytes"] for r in table] == [ORIGINALS[q["image_b"]] for q in QUESTIONS]
    assert [r["image_a"]["path"] for r in table] == [q["image_a"] for q in QUESTIONS]
