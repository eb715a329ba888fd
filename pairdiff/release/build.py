"""Every data file of a release from its accepted pairs: deterministic, byte for byte."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.labels import normalise_label
from pairdiff.labelstudio_export import labelstudio_files
from pairdiff.release.card import agreement_stats, dataset_card, release_counts
from pairdiff.release.coco import coco_side
from pairdiff.release.publish import card_header
from pairdiff.release.questions import answer_positions, hard_negatives, question_item
from pairdiff.release.records import ReleasePair, benchmark_record, training_record
from pairdiff.release.splits import SPLITS, SplitItem, SplitPlan, split_assign

FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class ReleaseMeta:
    project_slug: str
    project_name: str
    release_name: str
    version: int
    categories: tuple[Mapping, ...]  # [{"slug", "name"}], the project's taxonomy
    licence: str = ""
    description: str = ""
    labelstudio: Mapping | None = None  # the project's Label Studio import profile, if any

    def as_json(self) -> dict:
        return {
            "project_slug": self.project_slug,
            "project_name": self.project_name,
            "release_name": self.release_name,
            "version": self.version,
            "licence": self.licence,
            "description": self.description,
        }


@dataclass
class ReleaseFiles:
    files: dict[str, bytes]
    records: list[dict]
    counts: dict
    stats: dict
    notes: list[str] = field(default_factory=list)


def release_files(
    pairs: Sequence[ReleasePair],
    plan: SplitPlan,
    meta: ReleaseMeta,
    *,
    negatives: Mapping[int, Sequence[str]] | None = None,
) -> ReleaseFiles:
    """The data files and the dataset card. ``negatives`` holds leads' edited hard negatives
    by pair id; the others are derived from the ground truth (see question_negatives)."""
    splits = split_assign([SplitItem(p.pair_id, p.category, p.difficulty) for p in pairs], plan)
    order = {s: i for i, s in enumerate(SPLITS)}
    records = sorted(
        (benchmark_record(p, splits.of[p.pair_id]) for p in pairs),
        key=lambda r: (order[r["split"]], r["pair_id"]),
    )
    categories = _categories(meta.categories, records)
    # Nothing release-specific (name, version, time) in the data files: the same pairs and
    # seed give the same bytes; the manifest and the card say which release they belong to.
    info = {
        "description": meta.project_name,
        "contributor": meta.project_name,
        "url": "",
        "version": f"diffmark-release-format-{FORMAT_VERSION}",
    }
    counts = release_counts(records)
    stats = agreement_stats(records)
    files = {
        "benchmark.json": _json(records),
        "coco_a.json": _json(
            coco_side(records, "a", categories=categories, info=info, licence=meta.licence)
        ),
        "coco_b.json": _json(
            coco_side(records, "b", categories=categories, info=info, licence=meta.licence)
        ),
        "training.jsonl": _jsonl(training_record(r) for r in records if r["split"] == "train"),
        "questions.jsonl": _jsonl(_questions(records, plan.seed, negatives or {})),
        **labelstudio_files(
            records, categories=[c["slug"] for c in categories], profile=meta.labelstudio
        ),
        "README.md": dataset_card(
            meta=meta.as_json(),
            counts=counts,
            stats=stats,
            categories=categories,
            plan=plan.as_json(),
            notes=splits.notes,
        ).encode(),
    }
    # The Hugging Face configs of the shards review.releases writes beside these files.
    name = f"{meta.project_name} {meta.release_name}"
    header = card_header(files, records, licence=meta.licence, pretty_name=name)
    files["README.md"] = header.encode() + files["README.md"]
    return ReleaseFiles(
        files=files, records=records, counts=counts, stats=stats, notes=splits.notes
    )


def question_negatives(record: Mapping, *, entity_pool: Sequence[str]) -> list[str]:
    """The derived hard negatives of one record (its first change). Seeded by the pair, not
    the release, so the negatives a lead reviews are the ones releases write — as long as the
    entity labels of the accepted pairs (the stock for entity swaps) stay the same."""
    change = record["changes"][0]
    return hard_negatives(
        description=change["description"],
        category=change["category"],
        entity_a=change["entity_a"],
        entity_b=change["entity_b"],
        absent_a=not change["boxes_a"],
        absent_b=not change["boxes_b"],
        entity_pool=entity_pool,
        seed=record["pair_id"],
    )


def entity_pool(changes: Iterable[Mapping]) -> list[str]:
    """Every entity label of the changes once, sorted: the stock for entity swaps. Of labels
    equal after normalising, the smallest spelling stands, so the pool does not depend on the
    order the changes come in (a lead's preview and a release read them in different orders)."""
    seen: dict[str, str] = {}
    for change in changes:
        for label in (change.get("entity_a", ""), change.get("entity_b", "")):
            if label:
                key = normalise_label(label)
                seen[key] = min(seen.get(key, label), label)
    return sorted(seen.values())


def manifest(
    *,
    meta: ReleaseMeta,
    plan: SplitPlan,
    counts: Mapping,
    stats: Mapping,
    notes: Sequence[str],
    files: Mapping[str, tuple[int, str]],
) -> bytes:
    """``manifest.json``: what the release is, its counts, and size + sha256 of every file."""
    return (
        json.dumps(
            {
                "format_version": FORMAT_VERSION,
                **meta.as_json(),
                "split_plan": plan.as_json(),
                "counts": counts,
                "agreement": stats,
                "notes": list(notes),
                "files": {
                    name: {"size": size, "sha256": digest}
                    for name, (size, digest) in sorted(files.items())
                },
            },
            ensure_ascii=False,
            indent=2,
            sort_keys=True,
        )
        + "\n"
    ).encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _questions(records: Sequence[Mapping], seed: int, edited: Mapping[int, Sequence[str]]):
    pool = entity_pool(change for record in records for change in record["changes"])
    positions = answer_positions(len(records), seed=seed)
    for record, position in zip(records, positions, strict=True):
        negatives = edited.get(record["pair_id"]) or question_negatives(record, entity_pool=pool)
        item = question_item(
            description=record["description"],
            negatives=negatives,
            answer_position=position,
            seed=f"{seed}:{record['pair_id']}",
        )
        yield {
            "id": record["id"],
            "pair_id": record["pair_id"],
            "split": record["split"],
            "category": record["category"],
            "image_a": record["image_a"],
            "image_b": record["image_b"],
            **item,
        }


def _categories(taxonomy: Sequence[Mapping], records: Sequence[Mapping]) -> list[dict]:
    """The project's categories, plus any a record uses that the taxonomy no longer lists."""
    categories = [{"slug": c["slug"], "name": c["name"]} for c in taxonomy]
    known = {c["slug"] for c in categories}
    for record in records:
        for change in record["changes"]:
            if change["category"] not in known:
                known.add(change["category"])
                categories.append({"slug": change["category"], "name": change["category"]})
    return categories


def _json(value: object) -> bytes:
    """Sorted keys; a list one item per line, so large files stay readable and diffable."""
    if isinstance(value, list):
        items = ",\n".join(_dump(item) for item in value)
        return f"[\n{items}\n]\n".encode() if value else b"[]\n"
    return (_dump(value) + "\n").encode()


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _jsonl(rows) -> bytes:
    return "".join(_dump(row) + "\n" for row in rows).encode()
