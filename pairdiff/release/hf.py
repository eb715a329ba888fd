"""Hugging Face ``datasets`` Parquet shards of a release (pure: bytes in, bytes out).

One config per file kind — ``benchmark`` (benchmark records), ``questions`` (questions.jsonl)
and ``training`` (training.jsonl) — in ``data/<config>/<split>-00000-of-00001.parquet``, declared
in the dataset card's YAML header (``hf_yaml``), so ``datasets.load_dataset(<folder>, "questions")``
or ``load_dataset("parquet", data_dir=<folder>/data/benchmark)`` read them. The ``benchmark``
and ``questions`` rows carry both images: ``image_a``/``image_b`` are Image columns holding the
original bytes (never re-encoded) and their path in the release, so
``load_dataset(folder, "questions", split="test")[0]["image_a"]`` is a picture with no join,
and the Hub's viewer shows them; ``image_a_path``/``image_b_path`` name the files in
``images/``. Training rows name their images by path (a trainer reads ``images/``). Boxes come
in [0, 1000] (``boxes_a``) and pixels (``boxes_a_px``). Columns follow the rows' fields: a field
whose values are all text, numbers, booleans, lists of numbers or lists of boxes gets that type
(a list empty in every row, such as side A's boxes when every change adds an object, is a list
of boxes); anything else (nested objects, mixed types) is stored as JSON text, so new fields
never break a build.

Files are deterministic for a given pyarrow version: same rows and images, same bytes.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

CONFIGS = ("benchmark", "questions", "training")
WITH_IMAGES = ("benchmark", "questions")  # configs whose rows carry both pictures
HF_SPLITS = {"train": "train", "val": "validation", "test": "test", "test_swapped": "test_swapped"}
SHARD_ROWS = 500  # rows per shard of a config without pictures
IMAGE_SHARD_ROWS = 100  # with them: a shard is built in memory, so keep it to a few hundred MB
IMAGE_COLUMNS = ("image_a", "image_b")


def config_rows(files: Mapping[str, bytes], records: Sequence[Mapping]) -> dict[str, list[dict]]:
    """The rows of each config: benchmark records, and the lines of questions.jsonl and
    training.jsonl (read back from the bytes the release writes, so they are what it ships)."""
    return {
        "benchmark": [_with_entities(r) for r in records],
        "questions": [_flat_options(q) for q in _lines(files.get("questions.jsonl", b""))],
        "training": _lines(files.get("training.jsonl", b"")),
    }


def config_splits(rows: Mapping[str, Sequence[Mapping]]) -> dict[str, list[str]]:
    """Which splits each config has rows in (a row without ``split`` is train: training.jsonl
    holds the train split only); configs without rows are left out."""
    out = {}
    for config in CONFIGS:
        present = {_split(row) for row in rows.get(config, [])}
        splits = [s for s in HF_SPLITS if s in present]
        if splits:
            out[config] = splits
    return out


def shard_rows(config: str) -> int:
    return IMAGE_SHARD_ROWS if config in WITH_IMAGES else SHARD_ROWS


def shard_names(config: str, split: str, rows: int) -> list[str]:
    count = max(1, math.ceil(rows / shard_rows(config)))
    return [f"data/{config}/{split}-{i:05d}-of-{count:05d}.parquet" for i in range(count)]


def parquet_shards(
    rows: Mapping[str, Sequence[Mapping]],
    *,
    read_image: Callable[[str], bytes],
    columns_of: Mapping[str, Mapping[str, str]] | None = None,
    configs: Sequence[str] = CONFIGS,
) -> Iterator[tuple[str, bytes]]:
    """``(name, bytes)`` of every shard of ``configs``, one at a time (a shard's pictures are
    read when it is written, so memory holds one shard). ``read_image(path)`` gives an image's
    original bytes; ``columns_of[config]``, when given, is ``column_types`` of the config's
    rows."""
    for config, splits in config_splits(rows).items():
        if config not in configs:
            continue
        every = rows[config]
        columns = columns_of[config] if columns_of else column_types(every, config=config)
        size = shard_rows(config)
        for split in splits:
            selected = [row for row in every if _split(row) == split]
            names = shard_names(config, split, len(selected))
            for index, name in enumerate(names):
                chunk = selected[index * size : (index + 1) * size]
                yield name, _parquet(_with_images(chunk, columns, read_image), columns)


def hf_yaml(splits: Mapping[str, Sequence[str]], *, licence: str, pretty_name: str) -> str:
    """The card's YAML header: licence, names, and one config per file kind with its splits."""
    lines = [
        "---",
        "license: other",
        f"license_name: {json.dumps(licence or 'not specified by the project')}",
        f"pretty_name: {json.dumps(pretty_name, ensure_ascii=False)}",
        "task_categories:",
        "- image-text-to-text",
        "- visual-question-answering",
        "configs:",
    ]
    for config, present in splits.items():
        lines.append(f"- config_name: {config}")
        if config == "benchmark":
            lines.append("  default: true")
        lines.append("  data_files:")
        for split in present:
            lines += [
                f"  - split: {HF_SPLITS[split]}",
                f"    path: data/{config}/{split}-*.parquet",
            ]
    lines.append("---")
    return "\n".join(lines) + "\n"


def features_json(columns: Mapping[str, str]) -> dict:
    """The ``datasets`` Features of the columns, as stored in the Parquet schema metadata."""
    kinds = {
        "string": {"dtype": "string", "_type": "Value"},
        "json": {"dtype": "string", "_type": "Value"},
        "int64": {"dtype": "int64", "_type": "Value"},
        "float64": {"dtype": "float64", "_type": "Value"},
        "bool": {"dtype": "bool", "_type": "Value"},
        "numbers": {"feature": {"dtype": "float64", "_type": "Value"}, "_type": "List"},
        "boxes": {
            "feature": {"feature": {"dtype": "float64", "_type": "Value"}, "_type": "List"},
            "_type": "List",
        },
        "image": {"_type": "Image"},
    }
    return {name: kinds[kind] for name, kind in columns.items()}


def column_types(rows: Sequence[Mapping], *, config: str = "benchmark") -> dict[str, str]:
    """Each column's kind (string, json, int64, float64, bool, numbers, boxes, image); an image
    field of the rows becomes its picture (in WITH_IMAGES configs) and its path."""
    names: dict[str, None] = {}
    for row in rows:
        for key in row:
            names.setdefault(key, None)
    columns = {}
    for name in names:
        if name in IMAGE_COLUMNS:
            if config in WITH_IMAGES:
                columns[name] = "image"
            columns[f"{name}_path"] = "string"
            continue
        values = [row.get(name) for row in rows if row.get(name) is not None]
        columns[name] = _kind(values)
    return columns


def _kind(values: list) -> str:
    kinds = {_value_kind(v) for v in values}
    if kinds == {"int64", "float64"}:
        return "float64"
    if kinds == {"empty"}:  # a list empty in every row: "empty" is no column type
        return "boxes"
    if len(kinds) == 1:
        return kinds.pop()
    if kinds <= {"numbers", "boxes", "empty"} and kinds & {"numbers", "boxes"}:
        return "boxes" if "boxes" in kinds else "numbers"
    return "json" if kinds else "string"


def _value_kind(value: object) -> str:
    kind = _PLAIN_KINDS.get(type(value))  # exact types first: the isinstance chain is slow
    if kind is not None:
        return kind
    if type(value) is list and value:
        if all(type(v) is int or type(v) is float for v in value):
            return "numbers"
        if all(
            type(v) is list and all(type(c) is int or type(c) is float for c in v) for v in value
        ):
            return "boxes"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        if not value:
            return "empty"
        if all(_number(v) for v in value):
            return "numbers"
        if all(isinstance(v, list) and all(_number(c) for c in v) for v in value):
            return "boxes"
    return "json"


_PLAIN_KINDS = {bool: "bool", int: "int64", float: "float64", str: "string"}


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _with_images(
    rows: Sequence[Mapping], columns: Mapping[str, str], read_image: Callable[[str], bytes]
) -> list[dict]:
    """The rows with each image field as its picture (original bytes and path) where the
    columns hold pictures, and as its path."""
    out = []
    for row in rows:
        row = dict(row)
        for side in IMAGE_COLUMNS:
            path = row.pop(side, None)
            row[f"{side}_path"] = path
            if columns.get(side) == "image":
                row[side] = {"bytes": read_image(path), "path": path} if path else None
        out.append(row)
    return out


def _parquet(rows: Sequence[Mapping], columns: Mapping[str, str]) -> bytes:
    # Imported here: only a release build writes Parquet, and pyarrow would add about 60 MiB to
    # every web process that loads the release modules (issue #17's memory goal).
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = {
        "string": pa.string(),
        "json": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "numbers": pa.list_(pa.float64()),
        "boxes": pa.list_(pa.list_(pa.float64())),
        "image": pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
    }
    data = {name: _column([row.get(name) for row in rows], kind) for name, kind in columns.items()}
    schema = pa.schema(
        [pa.field(name, arrow[kind]) for name, kind in columns.items()],
        metadata={"huggingface": json.dumps({"info": {"features": features_json(columns)}})},
    )
    table = pa.Table.from_pydict(data, schema=schema)
    sink = io.BytesIO()
    # Images are stored as they are: JPEG and PNG bytes do not compress, and hashing them for
    # a dictionary would only cost time.
    images = [name for name, kind in columns.items() if kind == "image"]
    pq.write_table(
        table,
        sink,
        compression={name: "none" if name in images else "zstd" for name in columns},
        use_dictionary=[name for name in columns if name not in images],
        row_group_size=20 if images else 100,
    )
    return sink.getvalue()


def _column(values: list, kind: str) -> list:
    """One column's cells as pyarrow takes them: JSON as text, numbers as floats."""
    if kind == "json":
        dump = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode  # json.dumps's own
        return [None if v is None else dump(v) for v in values]
    if kind in ("numbers", "boxes", "float64"):
        return [None if v is None else _floats(v) for v in values]
    return values


def _floats(value: Any) -> Any:
    if isinstance(value, list):
        if all(type(v) is int or type(v) is float for v in value):  # the common case at once
            return [float(v) for v in value]
        return [_floats(v) for v in value]
    return float(value)


def _with_entities(record: Mapping) -> dict:
    entities = list(record.get("entities") or ["", ""]) + ["", ""]
    return {**record, "entity_a": entities[0], "entity_b": entities[1]}


def _flat_options(question: dict) -> dict:
    """Options also as columns A–D, as multiple-choice harnesses read them."""
    options = question.get("options")
    if not isinstance(options, Mapping):
        return question
    return {**question, **{str(k): v for k, v in options.items() if str(k) not in question}}


def _split(row: Mapping) -> str:
    return row.get("split") or "train"


def _lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]
