"""The dataset card (README.md) of a release."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence

from pairdiff.release.splits import DIFFICULTIES, SPLITS


def release_counts(records: Sequence[Mapping]) -> dict:
    """``{"total", "splits": {split: n}, "by_split": {split: {category: {difficulty: n}}}}``;
    a pair without a measurable box counts under difficulty ``"none"``."""
    by_split: dict[str, dict[str, dict[str, int]]] = {s: {} for s in SPLITS}
    for record in records:
        cell = by_split[record["split"]].setdefault(record["category"], {})
        level = record["difficulty"] or "none"
        cell[level] = cell.get(level, 0) + 1
    return {
        "total": len(records),
        "splits": {s: sum(sum(c.values()) for c in by_split[s].values()) for s in SPLITS},
        "by_split": {s: {c: by_split[s][c] for c in sorted(by_split[s])} for s in SPLITS},
    }


def agreement_stats(records: Sequence[Mapping]) -> dict:
    ious = [
        r["agreement"]["mean_iou"] for r in records if r["agreement"].get("mean_iou") is not None
    ]
    decided = Counter(r["agreement"].get("decided_by", "agreement") for r in records)
    return {
        "pairs": len(records),
        "mean_iou": round(statistics.fmean(ious), 4) if ious else None,
        "median_iou": round(statistics.median(ious), 4) if ious else None,
        "accepted_by_agreement": decided.get("agreement", 0),
        "accepted_by_lead": decided.get("lead", 0),
    }


def dataset_card(
    *,
    meta: Mapping,
    counts: Mapping,
    stats: Mapping,
    categories: Sequence[Mapping],
    plan: Mapping,
    notes: Sequence[str],
) -> str:
    names = {c["slug"]: c["name"] for c in categories}
    lines = [
        f"# {meta['project_name']} — {meta['release_name']} (version {meta['version']})",
        "",
        meta.get("description") or "An image-pair change benchmark built with Diffmark.",
        "",
        f"- Licence: {meta.get('licence') or 'not specified by the project'}",
        f"- Pairs: {counts['total']} "
        + "("
        + ", ".join(f"{s} {counts['splits'][s]}" for s in SPLITS)
        + ")",
        f"- Split seed: {plan['seed']}; stratified by category"
        + (
            f"; test difficulty easy:medium:hard = {':'.join(map(str, plan['test_ratio']))}"
            if plan.get("test_ratio")
            else ""
        ),
        "- Every pair was annotated by two people working blind and kept only when both rated it "
        "excellent and their boxes, labels and categories agreed, or when a lead resolved it.",
        "",
        "## Counts per split, category and difficulty",
        "",
    ]
    for split in SPLITS:
        table = counts["by_split"][split]
        lines += [f"### {split} ({counts['splits'][split]})", ""]
        if not table:
            lines += ["No pairs.", ""]
            continue
        levels = [*DIFFICULTIES] + (["none"] if any("none" in c for c in table.values()) else [])
        lines.append("| category | " + " | ".join(levels) + " | total |")
        lines.append("|---" * (len(levels) + 2) + "|")
        for category, cell in table.items():
            row = [str(cell.get(level, 0)) for level in levels]
            name = names.get(category, category)
            lines.append(f"| {name} | " + " | ".join(row) + f" | {sum(cell.values())} |")
        lines.append("")
    lines += [
        "## Agreement",
        "",
        f"- Mean IoU of the two annotations' matched boxes: {_figure(stats['mean_iou'])} "
        f"(median {_figure(stats['median_iou'])})",
        f"- Accepted on agreement: {stats['accepted_by_agreement']}; "
        f"resolved by a lead: {stats['accepted_by_lead']}",
        "",
    ]
    if notes:
        lines += ["## Where the split plan could not be met", ""]
        lines += [f"- {note}" for note in notes] + [""]
    lines += [
        "## Files",
        "",
        "- `benchmark.json` — one record per pair: split, both images and sizes, category, "
        "difficulty, description, entities, boxes in [0,1000] and in pixels, anchor tokens, "
        "agreement figures, source metadata",
        "- `coco_a.json`, `coco_b.json` — COCO detection files per side (image id = pair id)",
        "- `training.jsonl` — train split: entity → anchors → description → boxes targets",
        "- `questions.jsonl` — four-option questions with hard negatives and “no difference”",
        "- `label_studio.json` — the pairs as Label Studio tasks with their boxes, and "
        "`label_config.xml`, the labelling config that reads them",
        "- `data/<config>/<split>-*.parquet` — Hugging Face configs benchmark, questions and "
        "training (declared in this card's header), both images as Image columns, boxes in "
        '[0,1000] and pixels: `datasets.load_dataset(<folder>, "questions")`',
        "- `croissant.json` — ML Croissant metadata (`mlcroissant.Dataset(jsonld=...)`)",
        "- `lmms_eval/` — an lmms-eval task (questions, and grounding scored by Grounded F1); "
        "`vlmevalkit/` — the val and test questions as VLMEvalKit multiple-choice TSVs",
        "- `images/` — the original files, byte for byte",
        "- `manifest.json` — sizes and sha256 of every file",
        "",
    ]
    return "\n".join(lines)


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
