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
    """IoU figures over the pairs two different people annotated (a pair annotated once is
    compared with itself, and its IoU of 1 says nothing); accepted pairs by how they were
    decided and from which pair of tiers."""
    compared = [r for r in records if _annotators(r["agreement"]) >= 2]
    ious = [
        r["agreement"]["mean_iou"] for r in compared if r["agreement"].get("mean_iou") is not None
    ]
    decided = Counter(r["agreement"].get("decided_by", "agreement") for r in records)
    tiers: dict[str, Counter] = {"agreement": Counter(), "lead": Counter()}
    for r in records:
        by = r["agreement"].get("decided_by", "agreement")
        tiers.setdefault(by, Counter())[_tier_pair(r["agreement"])] += 1
    return {
        "pairs": len(records),
        "pairs_compared": len(compared),
        "single_annotator_pairs": len(records) - len(compared),
        "mean_iou": round(statistics.fmean(ious), 4) if ious else None,
        "median_iou": round(statistics.median(ious), 4) if ious else None,
        "accepted_by_agreement": decided.get("agreement", 0),
        "accepted_by_lead": decided.get("lead", 0),
        "tiers_by_decision": {k: dict(sorted(v.items())) for k, v in sorted(tiers.items())},
    }


def _annotators(agreement: Mapping) -> int:
    if "annotators" in agreement:
        return int(agreement["annotators"])
    return len(agreement.get("tiers") or [])


def _tier_pair(agreement: Mapping) -> str:
    tiers = list(agreement.get("tiers") or [])
    if _annotators(agreement) < 2:
        tiers = tiers[:1]
    return "+".join(sorted(tiers, key=_tier_rank)) or "no tiers"


def _tier_rank(tier: str) -> int:
    order = ("excellent", "good", "fair", "poor")
    return order.index(tier) if tier in order else len(order)


def rules_sentence(rules: Mapping, stats: Mapping | None = None) -> str:
    """How pairs got into the release: from the annotations the records count (``stats``,
    ``agreement_stats``) when given — the project's overlap may have changed since — else
    from the project's settings. Simulated annotators (``rules["simulated_annotators"]``,
    the demo's programs) are called so, never people."""
    overlap = rules.get("overlap")
    rule = rules.get("tier_rule")
    if overlap is None or rule is None:
        return "Pairs were accepted by the project's agreement rule or by a lead."
    accepted = {
        "strict": "both rated it excellent",
        "good": "both rated it excellent or good",
    }.get(rule, f"the tier rule “{rules.get('tier_rule_label') or rule}” accepted it")
    simulated = bool(rules.get("simulated_annotators"))
    one = "one simulated annotator (a program, not a person)" if simulated else "one person"
    two = (
        "two simulated annotators (programs answering from the known edits, not people) "
        "working blind"
        if simulated
        else "two people working blind"
    )
    single = (
        f"it was accepted when that answer's tier met the tier rule "
        f"({rules.get('tier_rule_label') or rule}), with no second annotation to compare, or "
        "when a lead decided it. Agreement figures below leave these single-annotator pairs out."
    )
    compared = (
        f"accepted when {accepted} and their boxes (IoU ≥ {rules.get('iou_threshold', 0.5):g}), "
        "labels and categories agreed, or when a lead decided a disputed pair."
    )
    people = rules.get("annotators")
    tail = (
        f" {people} distinct {'simulated annotators' if simulated else 'annotators'} answered "
        "the released pairs."
        if people
        else ""
    )
    return _annotated(rules, stats, one, two, single, compared, overlap) + tail


def _annotated(
    rules: Mapping,
    stats: Mapping | None,
    one: str,
    two: str,
    single: str,
    compared: str,
    overlap: object,
) -> str:
    pairs_two = None if stats is None else stats.get("pairs_compared")
    pairs_one = None if stats is None else stats.get("single_annotator_pairs")
    if pairs_two is None or pairs_one is None:
        pairs_two, pairs_one = (0, 1) if overlap == 1 else (1, 0)
    if pairs_two and pairs_one:
        return (
            f"Counted from the annotations: {pairs_two} pairs were annotated by {two} (the "
            f"first two answers compared) and {compared[0].lower() + compared[1:]} "
            f"{pairs_one} pairs were annotated by {one}: {single} (The project's overlap "
            f"setting is now {overlap}.)"
        )
    if pairs_one:
        return f"Every pair was annotated by {one} (overlap {overlap}): {single}"
    return (
        f"Every pair was annotated by {two} (overlap {overlap}; the first two answers are "
        f"compared) and {compared}"
    )


def dataset_card(
    *,
    meta: Mapping,
    counts: Mapping,
    stats: Mapping,
    categories: Sequence[Mapping],
    plan: Mapping,
    notes: Sequence[str],
    report: Mapping | None = None,
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
        f"- Split seed: {plan['seed']}; stratified by category; every pair of one source photo "
        "(same image A, or a near-duplicate by perceptual hash) in one split; a pair keeps the "
        "split an earlier release gave it"
        + (
            f"; test difficulty easy:medium:hard = {':'.join(map(str, plan['test_ratio']))}"
            if plan.get("test_ratio")
            else ""
        ),
        f"- {rules_sentence(meta.get('rules') or {}, stats)}",
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
        f"- Accepted on agreement: {stats['accepted_by_agreement']} "
        f"({_tier_counts(stats, 'agreement')}); decided by a lead: {stats['accepted_by_lead']} "
        f"({_tier_counts(stats, 'lead')})",
        f"- Pairs compared between two annotators: {stats.get('pairs_compared', stats['pairs'])}; "
        f"single-annotator pairs, left out of the IoU figures: "
        f"{stats.get('single_annotator_pairs', 0)}",
        "",
    ]
    report = report or {}
    lines += _report_lines(report)
    warnings = report.get("warnings", notes)
    if warnings:
        lines += ["## Warnings: where this release differs from its plan", ""]
        lines += [f"- {w}" for w in warnings] + [""]
    lines += [
        "## Files",
        "",
        "- `benchmark.json` — one record per pair: split, both images and sizes, category, "
        "difficulty, description, entities, boxes in [0,1000] and in pixels, anchor tokens, "
        "agreement figures, source metadata",
        "- `coco_a.json`, `coco_b.json` — COCO detection files per side (image id = pair id)",
        "- `training.jsonl` — train split: entity → anchor chains → description → fine boxes, "
        "in MinCU's 16-token vocabulary (`vocabulary.json`)",
        "- `vocabulary.json` — the 16 added tokens and the target format",
        "- `questions.jsonl` — four-option questions with hard negatives and “no difference”",
        "- `questions_circular.jsonl` — every question again with its options rotated (ids "
        "`<question id>@c<shift>`, `rotation_of` names the question), for circular accuracy "
        "(MMBench's CircularEval): a question counts only when all its orders are right",
        "- `label_studio.json` — the pairs as Label Studio tasks with their boxes, and "
        "`label_config.xml`, the labelling config that reads them",
        "- `data/<config>/<split>-*.parquet` — Hugging Face configs benchmark, questions and "
        "training (declared in this card's header), boxes in [0,1000] and pixels: "
        '`datasets.load_dataset(<folder>, "questions", split="test")[0]["image_a"]` is a '
        "picture. The benchmark and questions rows carry both images as Image columns "
        "(`image_a`, `image_b`: the original bytes) beside their paths (`image_a_path`, "
        "`image_b_path`, files in `images/`); training rows name them by path",
        "- `croissant.json` — ML Croissant metadata (`mlcroissant.Dataset(jsonld=...)`)",
        "- `lmms_eval/` — an lmms-eval task (questions, and grounding scored by Grounded F1); "
        "`vlmevalkit/` — the val and test questions as VLMEvalKit multiple-choice TSVs "
        "(`diffmark_<project>_<release>_<split>.tsv`), each image sent as PNG so that the "
        "pixels VLMEvalKit's loader writes are the original's",
        "- `images/` — the original files, byte for byte",
        "- `manifest.json` — sizes and sha256 of every file",
        "",
    ]
    return "\n".join(lines)


def _tier_counts(stats: Mapping, decision: str) -> str:
    cells = (stats.get("tiers_by_decision") or {}).get(decision) or {}
    return ", ".join(f"{tiers} {n}" for tiers, n in cells.items()) or "none"


def _report_lines(report: Mapping) -> list[str]:
    lines: list[str] = []
    strict = report.get("strict_filter") or {}
    if strict.get("applied"):
        left = strict.get("left_out") or {}
        lines += [
            "## MinCU strict filter",
            "",
            "Only pairs with two annotators who both rated them excellent, no defect flag and "
            "exactly one change"
            + (", not decided by a lead" if report["options"].get("strict_no_lead") else "")
            + ". Left out: "
            + (", ".join(f"{reason} {n}" for reason, n in left.items()) or "none")
            + ".",
            "",
        ]
    questions = report.get("questions")
    baselines = report.get("text_baselines")
    if questions is not None and baselines is not None:
        gate = baselines.get("gate", {})
        lines += [
            "## Questions and text-only baselines",
            "",
            f"- Questions: {questions['count']}; negatives "
            + (", ".join(f"{k} {v}" for k, v in questions["negatives"].items()) or "none")
            + f"; left out: {len(questions['left_out'])}",
            f"- Twin questions: {questions.get('in_twin_groups', 0)} in "
            f"{questions.get('twin_groups', 0)} groups that share one option set, each option "
            "the truth of another pair of the group (a text-only answerer is right on at most "
            f"one question of a group); no-change controls: {questions.get('controls', 0)}",
            "- Accuracy of baselines that never look at the images (chance "
            + (
                "1/4 among the four options, “no difference” being the truth of the controls"
                if baselines.get("chance", 0.34) < 0.3
                else "1/3 among the three options other than “no difference”"
            )
            + "); group accuracy: the share of twin groups wholly answered:",
        ]
        for name, result in baselines["baselines"].items():
            n = result.get("questions", 0)
            aside = "" if result.get("gated", True) else f" — {result.get('note', 'not gated')}"
            groups = (
                f"; groups {_percent(result.get('group_accuracy'))} of {result['groups']}"
                if result.get("groups")
                else ""
            )
            lines.append(
                f"  - {name}: {_percent(result.get('accuracy'))} of {n} questions{groups}{aside}"
            )
        lines += [
            f"- Best: {baselines.get('best') or '—'} at "
            f"{_percent(baselines.get('best_accuracy'))}; the project's limit is "
            f"{_percent(gate.get('limit'))}"
            + (" — exceeded, built on a lead's override" if gate.get("overridden") else ""),
            "",
        ]
    training = report.get("training")
    if training is not None:
        swap = report.get("options", {}).get("swap_ab")
        lines += [
            "## Training targets",
            "",
            f"- Targets: {training['count']}"
            + (
                f", of which {training['swapped']} with A and B swapped (MinCU's 50 % order-swap "
                f"augmentation; {training['not_swappable']} drawn pairs could not be turned "
                "around and were kept once)"
                if swap
                else ""
            ),
            "",
        ]
    return lines


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
