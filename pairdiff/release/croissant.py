"""``croissant.json``: ML Croissant 1.0 metadata of a release (pure).

It describes the Parquet shards (``pairdiff.release.hf``) as one FileSet and one RecordSet per
config, with every column as a field (the ``image_a``/``image_b`` pictures of the ``benchmark``
and ``questions`` rows as ``sc:ImageObject`` from the shards' image bytes), and the JSON files
beside them as FileObjects with their sha256, so ``mlcroissant``
validates it and can read the records from the release folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "samplingRate": "cr:samplingRate",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
_TYPES = {
    "string": "sc:Text",
    "json": "sc:Text",
    "int64": "sc:Integer",
    "float64": "sc:Float",
    "bool": "sc:Boolean",
    "numbers": "sc:Float",
    "boxes": "sc:Text",
    "image": "sc:ImageObject",
}
_JSON_FILES = {
    "benchmark.json": ("application/json", "benchmark records, every field"),
    "questions.jsonl": ("application/jsonlines", "four-option questions"),
    "training.jsonl": ("application/jsonlines", "supervised fine-tuning targets"),
    "coco_a.json": ("application/json", "COCO detection file of side A"),
    "coco_b.json": ("application/json", "COCO detection file of side B"),
}


def croissant(
    *,
    meta: Mapping,
    columns: Mapping[str, Mapping[str, str]],
    checksums: Mapping[str, str],
    url: str = "",
) -> dict:
    """The JSON-LD document. ``columns`` maps each config to its column kinds (as
    ``hf.column_types`` gives them); ``checksums`` holds the sha256 of the release's files."""
    name = f"{meta['project_slug']}-{meta['release_name']}"
    distribution: list[dict] = [
        {
            "@type": "cr:FileObject",
            "@id": file,
            "name": file,
            "description": about,
            "contentUrl": file,
            "encodingFormat": mime,
            "sha256": checksums[file],
        }
        for file, (mime, about) in _JSON_FILES.items()
        if file in checksums
    ]
    record_sets = []
    for config, kinds in columns.items():
        fileset = f"parquet-{config}"
        distribution.append(
            {
                "@type": "cr:FileSet",
                "@id": fileset,
                "name": fileset,
                "description": f"Parquet shards of the {config} config",
                "encodingFormat": "application/x-parquet",
                "includes": f"data/{config}/*.parquet",
            }
        )
        record_set: dict[str, Any] = {
            "@type": "cr:RecordSet",
            "@id": config,
            "name": config,
            "description": f"the {config} rows (one Hugging Face config)",
            "field": [_field(config, fileset, column, kind) for column, kind in kinds.items()],
        }
        record_sets.append(record_set)
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": name,
        "description": meta.get("description")
        or f"{meta['project_name']}: an image-pair change benchmark built with Diffmark.",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "citeAs": f"@misc{{{name}, title={{{meta['project_name']} {meta['release_name']}}}, "
        f"note={{version {meta['version']}, built with Diffmark}}}}",
        "license": meta.get("licence") or "not specified by the project",
        "url": url or f"https://diffmark.invalid/releases/{name}",
        "version": f"{meta['version']}.0.0",
        "keywords": ["image pairs", "change captioning", "grounding", "multiple choice"],
        "distribution": distribution,
        "recordSet": record_sets,
    }


def croissant_bytes(document: Mapping) -> bytes:
    return (json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()


def _field(config: str, fileset: str, column: str, kind: str) -> dict:
    source: dict = {"fileSet": {"@id": fileset}, "extract": {"column": column}}
    if kind == "image":
        source["transform"] = {"jsonPath": "bytes"}
    field: dict[str, object] = {
        "@type": "cr:Field",
        "@id": f"{config}/{column}",
        "name": column,
        "dataType": _TYPES[kind],
        "source": source,
    }
    if kind in ("json", "boxes"):
        field["description"] = "JSON text" if kind == "json" else "list of boxes"
    if kind == "numbers":
        field["repeated"] = True
    if kind == "image":
        field["description"] = "the picture: its original bytes, as in images/"
    return field
