"""Every data file of a release from its accepted pairs: deterministic, byte for byte."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pairdiff.labels import normalise_label
from pairdiff.labelstudio.write import labelstudio_files
from pairdiff.release.card import agreement_stats, dataset_card, release_counts
from pairdiff.release.circular import CIRCULAR_FILE, circular_rows
from pairdiff.release.coco import coco_side
from pairdiff.release.controls import identities
from pairdiff.release.hf import config_rows
from pairdiff.release.options import ReleaseOptions, strict_filter
from pairdiff.release.publish import card_header
from pairdiff.release.question_set import (
    QuestionSet,
    control_items,
    question_set,
    says_no_change,
)
from pairdiff.release.question_set import question_negatives as _question_negatives
from pairdiff.release.records import ReleasePair, benchmark_record
from pairdiff.release.slots import Prior
from pairdiff.release.splits import SPLITS, SplitItem, SplitPlan, split_assign
from pairdiff.release.swap import SWAPPED_SPLIT, swapped_questions, swapped_records
from pairdiff.release.training import VOCABULARY_FILE, TrainingSet, training_set, vocabulary

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
    # The project's rules, stated in the card: tier_rule, tier_rule_label, overlap, iou_threshold
    rules: Mapping = field(default_factory=dict)

    def as_json(self) -> dict:
        return {
            "project_slug": self.project_slug,
            "project_name": self.project_name,
            "release_name": self.release_name,
            "version": self.version,
            "licence": self.licence,
            "description": self.description,
            "rules": dict(self.rules),
        }


@dataclass(frozen=True)
class Previous:
    """What earlier releases of the project published: each released pair's split (by pair
    id) and its question (by pair id: ``{"truth": text, "row": question row}``), which later
    versions keep."""

    splits: Mapping[int | str, str] = field(default_factory=dict)
    questions: Mapping[int, Mapping] = field(default_factory=dict)
    controls: Mapping[int, Mapping] = field(default_factory=dict)  # control rows by source pair
    # Pair id and record id of the project's pairs never released: made controls' identities.
    spare: Sequence[tuple[int, str]] = ()


@dataclass
class ReleaseFiles:
    files: dict[str, bytes]
    records: list[dict]
    counts: dict
    stats: dict
    notes: list[str] = field(default_factory=list)
    report: dict = field(default_factory=dict)  # questions, baselines, training, filter, warnings
    rows: dict = field(default_factory=dict)  # hf.config_rows of the files: the shards' rows
    # The made controls' files: {path in the release: (path of the image A it is made from,
    # controls.COPY or controls.REENCODE)}; the caller writes them beside the originals.
    control_files: dict = field(default_factory=dict)


def release_files(
    pairs: Sequence[ReleasePair],
    plan: SplitPlan,
    meta: ReleaseMeta,
    *,
    negatives: Mapping[int, Sequence[str]] | None = None,
    verified: Mapping[int, Sequence[str]] | None = None,
    options: ReleaseOptions | None = None,
    on_records: Callable[[list[dict]], None] | None = None,
    derived: Mapping[int, tuple[list, str] | ValueError] | None = None,
    labelstudio: Callable[[], Mapping[str, bytes]] | None = None,
    sources: Mapping[int, str] | None = None,
    previous: Previous | None = None,
    order_swap: bool = False,
) -> ReleaseFiles:
    """The data files and the dataset card. ``verified`` and ``negatives`` hold leads'
    verified (frozen) and edited hard negatives by pair id; the others are derived from the
    ground truth. No single record fails the build: one that cannot make a question or a
    training target is left out of that file and named in ``report``. ``on_records``, when
    given, is called with the records as soon as they are made, before the questions and the
    files (work that needs only them can start); ``derived``, the derived negatives of some
    records made meanwhile (``question_set``); ``labelstudio``, when given, gives the Label
    Studio files made meanwhile (``labelstudio_files`` of the records with
    ``release_categories``)."""
    options = options or ReleaseOptions()
    left_by_filter: dict[str, int] = {}
    if options.strict:
        pairs, left_by_filter = strict_filter(pairs, no_lead=options.strict_no_lead)
    previous = previous or Previous()
    sources = sources or {}
    splits = split_assign(
        [
            SplitItem(
                p.pair_id, p.category, p.difficulty, p.content_key, sources.get(p.pair_id, "")
            )
            for p in pairs
        ],
        plan,
        previous=previous.splits,
    )
    order = {s: i for i, s in enumerate(SPLITS)}
    records = sorted(
        (_as_control(benchmark_record(p, splits.of[p.pair_id])) for p in pairs),
        key=lambda r: (order[r["split"]], r["pair_id"]),
    )
    if on_records is not None:
        on_records(records)
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
    questions = question_set(
        records,
        seed=plan.seed,
        verified=verified or {},
        edited=negatives or {},
        derived=derived,
        published=previous.questions,
        # The adversary's classifier trained on other releases: the project's earlier ones.
        reference=[q["row"] for q in previous.questions.values() if q.get("row")],
        controls=control_items(
            records, rate=options.control_rate or 0.0, seed=plan.seed, published=previous.controls
        ),
    )
    # Made controls get identities and files of their own; every row in pair order.
    questions.rows, control_files = identities(
        questions.rows, records, seed=plan.seed, spare=previous.spare
    )
    training = training_set(records, seed=plan.seed, swap_ab=options.swap_ab)
    # MinCU's order swap at test time: a copy of the test split with B first, scored beside it.
    # ``order_swap``: the test split again with B first, as split "test_swapped".
    turned_records, records_left = swapped_records(records) if order_swap else ([], 0)
    turned_rows, rows_left = swapped_questions(questions.rows, records) if order_swap else ([], 0)
    report = _report(options, left_by_filter, questions, training, splits.notes, counts, categories)
    report["order_swap"] = {
        "split": SWAPPED_SPLIT,
        "records": len(turned_records),
        "questions": len(turned_rows),
        "records_left_out": records_left,
        "questions_left_out": rows_left,
    }
    files = {
        "benchmark.json": _json(records + turned_records),
        "coco_a.json": _json(
            coco_side(records, "a", categories=categories, info=info, licence=meta.licence)
        ),
        "coco_b.json": _json(
            coco_side(records, "b", categories=categories, info=info, licence=meta.licence)
        ),
        "training.jsonl": _jsonl(training.rows),
        VOCABULARY_FILE: _json(vocabulary()),
        "questions.jsonl": _jsonl(questions.rows + turned_rows),
        # Rotated option orders for circular evaluation: a step over the final questions.
        CIRCULAR_FILE: _jsonl(circular_rows(questions.rows)),
        **(
            labelstudio()
            if labelstudio is not None
            else labelstudio_files(
                records, categories=[c["slug"] for c in categories], profile=meta.labelstudio
            )
        ),
        "README.md": dataset_card(
            meta=meta.as_json(),
            counts=counts,
            stats=stats,
            categories=categories,
            plan=plan.as_json(),
            notes=splits.notes,
            report=report,
        ).encode(),
    }
    # The Hugging Face configs of the shards releases.building writes beside these files.
    name = f"{meta.project_name} {meta.release_name}"
    rows = config_rows(files, records)  # read back once: the card and the shards use them
    header = card_header(files, records, licence=meta.licence, pretty_name=name, rows=rows)
    files["README.md"] = header.encode() + files["README.md"]
    return ReleaseFiles(
        files=files,
        records=records,
        counts=counts,
        stats=stats,
        notes=splits.notes,
        report=report,
        rows=rows,
        control_files=control_files,
    )


MIN_PAIRS_PER_CATEGORY = 5  # fewer in a category of the taxonomy: a warning


def coverage_warnings(categories: Sequence[Mapping], counts: Mapping) -> list[str]:
    """A category of the taxonomy with no pairs, or fewer than MIN_PAIRS_PER_CATEGORY, or
    none in the test split: the release cannot speak for it."""
    out = []
    for c in categories:
        slug = c["slug"]
        total = sum(sum(counts["by_split"][s].get(slug, {}).values()) for s in SPLITS)
        in_test = sum(counts["by_split"]["test"].get(slug, {}).values())
        if total == 0:
            out.append(f"coverage: category “{c['name']}” has no pairs in this release")
        elif total < MIN_PAIRS_PER_CATEGORY:
            out.append(
                f"coverage: category “{c['name']}” has only {total} pairs "
                f"(fewer than {MIN_PAIRS_PER_CATEGORY})"
            )
        elif in_test == 0:
            out.append(f"coverage: category “{c['name']}” has no test pair")
    return out


def _as_control(record: dict) -> dict:
    """A record whose answer says nothing changed stays in the release as a control: no
    change, no boxes, ``"control": true`` — never a change in benchmark.json."""
    if not says_no_change(record):
        return record
    empty = {"boxes_a": [], "boxes_b": [], "boxes_a_px": [], "boxes_b_px": [], "anchors": ""}
    return {**record, **empty, "changes": [], "control": True}


def _report(
    options: ReleaseOptions,
    left_by_filter: Mapping,
    questions: QuestionSet,
    training: TrainingSet,
    notes: Sequence[str],
    counts: Mapping,
    categories: Sequence[Mapping] = (),
) -> dict:
    """What the manifest and card say beyond counts: the filter, questions and baselines, the
    training file, and every warning a reader must see before trusting the release."""
    baselines = questions.baselines
    best = baselines.get("best_accuracy")
    over = best is not None and best > options.baseline_limit
    gate = {
        "limit": options.baseline_limit,
        "best": baselines.get("best"),
        "best_accuracy": best,
        "over_limit": over,
        "overridden": over and options.allow_baselines,
    }
    warnings = list(notes) + coverage_warnings(categories, counts)
    for item in questions.left_out:
        warnings.append(
            f"question of {item['id']} (pair {item['pair_id']}) left out: {item['reason']}"
        )
    for item in training.left_out:
        warnings.append(
            f"training target of {item['id']} (pair {item['pair_id']}) left out: {item['reason']}"
        )
    short = [
        f"{name} ({result['questions']})"
        for name, result in baselines.get("baselines", {}).items()
        if name in baselines.get("gated_names", ()) and not result.get("gated")
    ]
    if short:
        warnings.append(
            "too few questions to judge the text-only baselines "
            + ", ".join(short)
            + ": they are reported, not held to the limit"
        )
    if gate["overridden"]:
        warnings.append(
            f"the best text-only baseline ({gate['best']}) answers {best:.0%} of the questions, "
            f"above the limit of {options.baseline_limit:.0%}; a lead built the release anyway"
        )
    return {
        "options": options.as_json(),
        "strict_filter": {"applied": options.strict, "left_out": left_by_filter},
        "questions": {
            "count": len(questions.rows),
            "left_out": questions.left_out,
            "negatives": dict(sorted(questions.sources.items())),
            "twin_groups": len({r["twin_group"] for r in questions.rows if r.get("twin_group")}),
            "in_twin_groups": sum(1 for r in questions.rows if r.get("twin_group")),
            "controls": sum(1 for r in questions.rows if r.get("control")),
            "adversarial": questions.adversarial,
            "answers_by_split": _answers_by_split(questions.rows),
        },
        "text_baselines": {**baselines, "gate": gate},
        "training": {
            "count": len(training.rows),
            "swapped": training.swapped,
            "not_swappable": training.not_swappable,
            "left_out": training.left_out,
            "vocabulary": VOCABULARY_FILE,
        },
        "warnings": warnings,
    }


def _answers_by_split(rows: Sequence[Mapping]) -> dict:
    table: dict[str, dict[str, int]] = {}
    for row in rows:
        cell = table.setdefault(row["split"], {})
        cell[row["answer"]] = cell.get(row["answer"], 0) + 1
    return {s: dict(sorted(table[s].items())) for s in SPLITS if s in table}


def question_negatives(
    record: Mapping, *, entity_pool: Sequence[str] = (), prior: Prior | None = None
) -> list[str]:
    """The derived hard negatives of one record (its first change), as releases write them;
    ``prior`` is ``release_prior`` of the release's records."""
    return _question_negatives(record, entity_pool=entity_pool, prior=prior)[0]


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
    report: Mapping | None = None,
) -> bytes:
    """``manifest.json``: what the release is, its counts, and size + sha256 of every file.
    Not which questions each text-only baseline answers (``telling``, for the refusal's
    message): with the baselines' rules, that list would give the answers away."""
    report = dict(report or {})
    if isinstance(report.get("text_baselines"), Mapping):
        baselines = {k: v for k, v in report["text_baselines"].items() if k != "telling"}
        report["text_baselines"] = baselines
    return (
        json.dumps(
            {
                "format_version": FORMAT_VERSION,
                **meta.as_json(),
                "split_plan": plan.as_json(),
                "counts": counts,
                "agreement": stats,
                "notes": list(notes),
                **report,
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


def release_categories(meta: ReleaseMeta, records: Sequence[Mapping]) -> list[str]:
    """The category slugs the release's Label Studio files list."""
    return [c["slug"] for c in _categories(meta.categories, records)]


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


def _jsonl(rows: Iterable[Mapping]) -> bytes:
    return "".join(_dump(row) + "\n" for row in rows).encode()
