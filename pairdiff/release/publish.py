"""The files for researchers' tools, written beside the data files of every release (pure):
Hugging Face Parquet shards, croissant.json, an lmms-eval task and VLMEvalKit TSVs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from pairdiff.release.croissant import croissant, croissant_bytes
from pairdiff.release.harness import lmms_eval_files, vlmevalkit_tsvs
from pairdiff.release.hf import (
    column_types,
    config_rows,
    config_splits,
    hf_yaml,
    parquet_shards,
)


def card_header(
    files: Mapping[str, bytes],
    records: Sequence[Mapping],
    *,
    licence: str,
    pretty_name: str,
    rows: Mapping[str, list[dict]] | None = None,
) -> str:
    """The dataset card's YAML header: the Hugging Face configs of the shards to be written;
    ``rows``, when given, is ``config_rows`` of the files and records."""
    splits = config_splits(config_rows(files, records) if rows is None else rows)
    return hf_yaml(splits, licence=licence, pretty_name=pretty_name)


def research_parts(
    files: Mapping[str, bytes],
    records: Sequence[Mapping],
    *,
    meta: Mapping,
    checksums: Mapping[str, str],
    read_image: Callable[[str], bytes],
    rows: Mapping[str, list[dict]] | None = None,
) -> tuple[Iterator[tuple[str, bytes]], Iterator[tuple[str, bytes]]]:
    """``(name, bytes)`` of every research file, one at a time, in two parts that can be read
    apart (in two threads): the tables (the configs' Parquet shards, the benchmark and
    questions rows with their pictures, the lmms-eval task, croissant.json); and the
    VLMEvalKit TSVs, mostly reading and encoding image bytes. ``files`` are the release's data
    files, ``checksums`` the sha256 of every file written so far (croissant.json),
    ``read_image(path)`` an image's bytes; ``rows``, when given, is ``config_rows`` of the
    files and records."""
    rows = config_rows(files, records) if rows is None else rows
    splits = config_splits(rows)
    columns = {config: column_types(rows[config], config=config) for config in splits}

    def tables() -> Iterator[tuple[str, bytes]]:
        yield from parquet_shards(rows, read_image=read_image, columns_of=columns)
        yield from lmms_eval_files(project_slug=meta["project_slug"], splits=splits).items()
        yield (
            "croissant.json",
            croissant_bytes(croissant(meta=meta, columns=columns, checksums=checksums)),
        )

    return tables(), research_images(rows, meta=meta, checksums=checksums, read_image=read_image)


def research_images(
    rows: Mapping[str, Sequence[Mapping]],
    *,
    meta: Mapping,
    checksums: Mapping[str, str],
    read_image: Callable[[str], bytes],
) -> Iterator[tuple[str, bytes]]:
    """The second part of ``research_parts``, one at a time: the VLMEvalKit TSVs of the
    questions (``rows["questions"]``); ``checksums`` lets an image several rows share be
    encoded once."""
    yield from vlmevalkit_tsvs(
        rows["questions"],
        project_slug=meta["project_slug"],
        release_name=meta["release_name"],
        read_image=read_image,
        checksums=checksums,
    )
