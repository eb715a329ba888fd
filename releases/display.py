"""What the release pages show of a ready release: its card, counts and files, from the manifest
and the release's folder in storage. Reads only; nothing here writes."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from django.core.files.storage import default_storage
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from annotator.models import Pair
from pairdiff.release.splits import DIFFICULTIES, SPLITS
from releases.models import Release, ReleaseStatus

log = logging.getLogger(__name__)
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)

# The files people download first, in the order they read about them; images come summarised.
MAIN_FILES = (
    "README.md",
    "manifest.json",
    "benchmark.json",
    "coco_a.json",
    "coco_b.json",
    "training.jsonl",
    "vocabulary.json",
    "questions.jsonl",
    "label_studio.json",
    "label_config.xml",
)
IMAGES = "images/"
SHARDS = "data/"  # Hugging Face Parquet shards, summarised like the images


def card_html(release: Release) -> SafeString | None:
    """The release's README.md as HTML, or None when storage has none. Raw HTML in the card is
    shown as text ("js-default" disables it), so a project description cannot inject markup."""
    try:
        with default_storage.open(f"{release.prefix}/README.md", "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
    except (FileNotFoundError, OSError):
        log.warning("release %s has no README.md in storage", release.pk)
        return None
    text = _FRONT_MATTER.sub("", text, count=1)  # the Hugging Face YAML header is for tools
    return mark_safe(MarkdownIt("js-default").render(text))  # the parser escaped all input


@dataclass
class SplitRows:
    split: str
    total: int
    rows: list[dict] = field(default_factory=list)  # {"name", "cells": [n per level], "total"}


def counts_table(manifest: dict, categories: list[dict]) -> tuple[list[str], list[SplitRows]]:
    """Difficulty columns (``none`` only when some pair has no measurable box) and, per split,
    one row per category in the project's order; categories the project dropped come last."""
    counts = manifest.get("counts", {})
    by_split = counts.get("by_split", {})
    cells = [cell for split in by_split.values() for cell in split.values()]
    levels = [*DIFFICULTIES] + (["none"] if any(cell.get("none") for cell in cells) else [])
    names = {c["slug"]: c["name"] for c in categories}
    order = {slug: i for i, slug in enumerate(names)}
    groups = []
    for split in SPLITS:
        table = by_split.get(split, {})
        group = SplitRows(split, counts.get("splits", {}).get(split, 0))
        for slug in sorted(table, key=lambda s: (order.get(s, len(order)), s)):
            cell = table[slug]
            group.rows.append(
                {
                    "name": names.get(slug, slug or "no category"),
                    "cells": [cell.get(level, 0) for level in levels],
                    "total": sum(cell.values()),
                }
            )
        groups.append(group)
    return levels, groups


@dataclass
class FileRow:
    name: str
    size: int | None
    sha256: str


@dataclass
class FileListing:
    main: list[FileRow]
    images: int
    images_size: int
    shards: int = 0
    shards_size: int = 0


def file_listing(release: Release) -> FileListing:
    files = (release.manifest or {}).get("files", {})
    main = []
    for name in MAIN_FILES:
        entry = files.get(name)
        if entry is not None:
            main.append(FileRow(name, entry["size"], entry["sha256"]))
        elif name == "manifest.json":  # it cannot list its own checksum; size from storage
            main.append(FileRow(name, _stored_size(f"{release.prefix}/{name}"), ""))
    others = sorted(n for n in files if n not in MAIN_FILES and not n.startswith((IMAGES, SHARDS)))
    main += [FileRow(n, files[n]["size"], files[n]["sha256"]) for n in others]
    images = [entry for name, entry in files.items() if name.startswith(IMAGES)]
    shards = [entry for name, entry in files.items() if name.startswith(SHARDS)]
    return FileListing(
        main=main,
        images=len(images),
        images_size=sum(entry["size"] for entry in images),
        shards=len(shards),
        shards_size=sum(entry["size"] for entry in shards),
    )


def _stored_size(name: str) -> int | None:
    try:
        return default_storage.size(name)
    except (FileNotFoundError, OSError):
        return None


def split_counts(release: Release) -> list[tuple[str, int]]:
    """Pairs per split of a ready release, in split order."""
    splits = ((release.manifest or {}).get("counts") or {}).get("splits", {})
    return [(split, splits.get(split, 0)) for split in SPLITS]


def warnings(release: Release) -> list[str]:
    """Every way a ready release differs from its plan (empty splits, left-out questions, an
    overridden baseline limit): a release with these must not read as a plain success."""
    manifest = release.manifest or {}
    return list(manifest.get("warnings", manifest.get("notes", [])))


def baselines(release: Release) -> dict | None:
    """The text-only baselines of the release's questions, as rows for the page."""
    report = (release.manifest or {}).get("text_baselines")
    if not report:
        return None
    rows = [
        {
            "name": name.replace("_", " "),
            "accuracy": result.get("accuracy"),
            "questions": result.get("questions", 0),
            "best": name == report.get("best"),
        }
        for name, result in report.get("baselines", {}).items()
    ]
    return {"rows": rows, "gate": report.get("gate", {}), "chance": report.get("chance")}


def pairs_to_fix(release: Release) -> list[Pair]:
    """The pairs a refused build named (its job's errors), in the order named, so the page can
    link each to its question."""
    if release.status != ReleaseStatus.FAILED or release.job is None:
        return []
    ids = [e["pair"] for e in release.job.errors or [] if isinstance(e.get("pair"), int)]
    found = Pair.objects.filter(pk__in=ids, project_id=release.project_id).in_bulk()
    return [found[pk] for pk in ids if pk in found]
