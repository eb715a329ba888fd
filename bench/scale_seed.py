"""Seed a large project fast (PostgreSQL COPY): a realistic mix of pairs in every status, two
annotations and a cross-check on each finished pair, lead decisions, events, predictions with
screening flags, gold pairs with scores, members, jobs, ready releases with records and
evaluations, and edited questions. Used by bench/pages_at_scale.py and bench/crowd/.

Every pair shares the two image files of one template pair made by the real import service.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

# Shares of pairs per status (the rest are imported, untouched).
MIX = {
    "pre_annotated": 0.03,
    "in_annotation": 0.07,
    "accepted": 0.45,
    "disputed": 0.08,
    "rejected": 0.05,
    "screened_out": 0.02,
}
GOLD_SHARE = 0.01
PREDICTED_SHARE = 0.10
ENTITIES = [
    "red car",
    "blue car",
    "street lamp",
    "park bench",
    "dog",
    "cat",
    "bicycle",
    "traffic sign",
    "window",
    "door",
    "tree",
    "cloud",
    "umbrella",
    "bottle",
    "cup",
    "laptop",
    "book",
    "clock",
    "vase",
    "chair",
    "sofa",
    "bird",
    "boat",
    "kite",
    "hat",
    "shoe",
    "bag",
    "flag",
    "fence",
    "mailbox",
    "statue",
    "fountain",
    "sign board",
    "chimney",
    "balloon",
]
PLACES = ["on the left", "in the middle", "at the back", "near the door", "on the table"]
VERBS = ["Recolour", "Remove", "Add", "Move", "Resize", "Replace"]
PASSWORD = "scale-bench-password"


@dataclass
class Seeded:
    """What a bench needs to know of the seeded project."""

    slug: str
    project_id: int
    pairs: int
    annotators: list[str]
    leads: list[str]
    researcher: str
    disputed_pair: int = 0
    accepted_pair: int = 0
    release_id: int = 0
    job_id: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def _columns(model, names: Iterable[str]) -> list[str]:
    return [model._meta.get_field(n).column for n in names]


def _copy(conn, model, names: list[str], rows: Iterable[tuple]) -> int:
    """COPY ``rows`` into the model's table; returns how many."""
    columns = ", ".join(f'"{c}"' for c in _columns(model, names))
    n = 0
    with (
        conn.cursor() as cur,
        cur.copy(f'COPY "{model._meta.db_table}" ({columns}) FROM STDIN') as copy,
    ):
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def _next_id(conn, model) -> int:
    table = model._meta.db_table
    return conn.execute(f'SELECT COALESCE(MAX(id), 0) + 1 FROM "{table}"').fetchone()[0]


def _set_sequence(conn, model) -> None:
    table = model._meta.db_table
    conn.execute(
        f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
        f'(SELECT COALESCE(MAX(id), 1) FROM "{table}"))'
    )


def _change(rng: random.Random, categories: list[str], width: int, height: int) -> dict:
    entity = rng.choice(ENTITIES)
    w, h = rng.randint(20, width // 2), rng.randint(20, height // 2)
    x, y = rng.randint(0, width - w), rng.randint(0, height - h)
    return {
        "category": rng.choice(categories),
        "description": f"The {entity} {rng.choice(PLACES)} changed.",
        "entity_a": entity,
        "entity_b": entity,
        "boxes_a": [[x, y, x + w, y + h]],
        "boxes_b": [[x, y, x + w, y + h]],
    }


def _statuses(n: int, rng: random.Random) -> list[str]:
    statuses = []
    for _ in range(n):
        roll, edge = rng.random(), 0.0
        status = "imported"
        for name, share in MIX.items():
            edge += share
            if roll < edge:
                status = name
                break
        statuses.append(status)
    return statuses


def seed_project(
    *,
    slug: str,
    n_pairs: int,
    database_url: str,
    n_annotators: int = 100,
    open_only: bool = False,
    seed: int = 28,
) -> Seeded:
    """Create the project and its people with Django, then COPY everything else. With
    ``open_only`` every pair is left imported (a crowd's queue) and nothing else is seeded."""
    import psycopg
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from annotator.models import (
        Annotation,
        Assignment,
        Change,
        GoldAnswer,
        Pair,
        PairEvent,
        Prediction,
    )
    from annotator.services import PairInput, pair_create
    from bench.scale_seed_releases import seed_releases
    from jobs.models import Job
    from projects.creating import project_create
    from projects.models import Membership
    from releases.models import Evaluation, QuestionEdit, Release, ReleaseRecord
    from review.models import Agreement, GoldScore, Resolution
    from tests.images import edited_pair

    started = time.perf_counter()
    rng = random.Random(seed)
    project = project_create(slug=slug, name=f"Scale {n_pairs:,}", overlap=2)
    categories = project.category_slugs
    a, b = edited_pair(size=(640, 480))
    template = pair_create(project=project, pair_input=PairInput(a, b, external_id="tpl"))
    width, height = template.width_a, template.height_a
    User = get_user_model()
    hashed = make_password(PASSWORD)
    names = [f"ann{i:03d}" for i in range(n_annotators)]
    leads, researcher = ["lead0", "lead1"], "researcher0"
    users = User.objects.bulk_create(
        [User(username=name, password=hashed) for name in [*names, *leads, researcher]]
    )
    by_name = {u.username: u.pk for u in users}
    Membership.objects.bulk_create(
        [Membership(project=project, user_id=by_name[n], role="annotator") for n in names]
        + [Membership(project=project, user_id=by_name[n], role="lead") for n in leads]
        + [Membership(project=project, user_id=by_name[researcher], role="researcher")]
    )
    annotator_ids = [by_name[n] for n in names]
    lead_id = by_name[leads[0]]
    now = datetime.now(UTC)
    result = Seeded(slug, project.pk, n_pairs, names, leads, researcher)
    rows: dict[str, int] = {}

    with psycopg.connect(database_url, autocommit=False) as conn:
        pair_id = _next_id(conn, Pair)
        statuses = ["imported"] * n_pairs if open_only else _statuses(n_pairs, rng)
        first = pair_id

        def pairs() -> Iterator[tuple]:
            for i, status in enumerate(statuses):
                made = now - timedelta(days=30) + timedelta(seconds=i * 2)
                entity = rng.choice(ENTITIES)
                done = status in ("accepted", "disputed", "rejected")
                taken = 2 if done else (1 + (i % 2) if status == "in_annotation" else 0)
                submitted = 2 if done else (1 if status == "in_annotation" else 0)
                yield (
                    first + i,
                    project.pk,
                    f"img-{i:07d}",
                    i + 2,  # the template pair is #1
                    f"photo-{i // 4:06d}",
                    template.image_a.name,
                    template.image_b.name,
                    width,
                    height,
                    width,
                    height,
                    f"{i:064x}",
                    f"{i + 1:064x}",
                    "PNG",
                    "PNG",
                    template.thumb_a.name,
                    template.thumb_b.name,
                    f"{rng.choice(VERBS)} the {entity} {rng.choice(PLACES)}.",
                    rng.choice(categories),
                    "{}",
                    status,
                    taken,
                    submitted,
                    not open_only and rng.random() < GOLD_SHARE,
                    0,
                    made,
                    made + timedelta(hours=rng.randint(0, 500)),
                )

        pair_fields = [
            "id", "project", "external_id", "number", "source_name", "image_a", "image_b",
            "width_a", "height_a", "width_b", "height_b", "sha256_a", "sha256_b", "format_a",
            "format_b", "thumb_a", "thumb_b", "instruction", "category_hint", "metadata",
            "status", "n_taken", "n_submitted", "is_gold", "queue_priority", "created_at",
            "updated_at",
        ]  # fmt: skip
        rows["pairs"] = _copy(conn, Pair, pair_fields, pairs())
        _set_sequence(conn, Pair)
        if open_only:
            conn.commit()
            result.rows, result.seconds = rows, time.perf_counter() - started
            return result
        gold = {
            pk
            for (pk,) in conn.execute(
                f'SELECT id FROM "{Pair._meta.db_table}" WHERE project_id = %s AND is_gold',
                [project.pk],
            )
        }

        assignment_id = _next_id(conn, Assignment)
        annotation_id = _next_id(conn, Annotation)
        assignments: list[tuple] = []
        annotations: list[tuple] = []
        changes: list[tuple] = []
        agreements: list[tuple] = []
        resolutions: list[tuple] = []
        events: list[tuple] = []
        scores: list[tuple] = []
        disputed = accepted = 0
        for i, status in enumerate(statuses):
            pk = first + i
            events.append((pk, None, "imported", "{}", now - timedelta(days=30)))
            n_done = {"accepted": 2, "disputed": 2, "rejected": 2, "in_annotation": 1}.get(
                status, 0
            )
            if not n_done:
                continue
            people = rng.sample(annotator_ids, 2)
            answer = _change(rng, categories, width, height)
            made: list[int] = []
            for k in range(n_done):
                at = now - timedelta(days=20) + timedelta(seconds=i * 3 + k)
                assignments.append(
                    (assignment_id, pk, people[k], "submitted", at, at + timedelta(hours=1), at)
                )
                tier = "excellent" if status != "disputed" or k == 0 else "good"
                annotations.append(
                    (annotation_id, assignment_id, pk, people[k], tier, "[]",
                     rng.randint(4000, 90000), "", at)
                )  # fmt: skip
                mine = dict(answer)
                if status == "disputed" and k == 1:
                    mine = _change(rng, categories, width, height)
                changes.append(
                    (annotation_id, 0, mine["category"], mine["description"], mine["entity_a"],
                     mine["entity_b"], json.dumps(mine["boxes_a"]), json.dumps(mine["boxes_b"]))
                )  # fmt: skip
                events.append((pk, people[k], "leased", "{}", at - timedelta(minutes=1)))
                events.append((pk, people[k], "submitted", "{}", at))
                if pk in gold:
                    scores.append((annotation_id, rng.random(), rng.random() > 0.2, "{}", at))
                made.append(annotation_id)
                assignment_id += 1
                annotation_id += 1
            if status == "in_annotation" and i % 2:
                at = now - timedelta(minutes=5)
                assignments.append(
                    (assignment_id, pk, people[1], "leased", at, at + timedelta(hours=1), None)
                )
                assignment_id += 1
            if n_done == 2:
                verdict = "accepted" if status == "accepted" else status
                reasons = (
                    []
                    if verdict == "accepted"
                    else [{"code": "change[0].side_b", "message": "boxes differ"}]
                )
                matched = {
                    "index_1": 0, "index_2": 0, "agrees": verdict == "accepted",
                    "category_agrees": True, "entity_a_agrees": True, "entity_b_agrees": True,
                    "side_a": {"matched": [[0, 0, 0.9]], "agrees": True},
                    "side_b": {"matched": [[0, 0, 0.2]], "agrees": verdict == "accepted"},
                }  # fmt: skip
                agreements.append(
                    (pk, made[0], made[1], verdict, json.dumps(reasons), json.dumps([matched]),
                     0.9 if verdict == "accepted" else 0.3,
                     json.dumps([answer]) if verdict == "accepted" else None, "{}", now)
                )  # fmt: skip
                events.append((pk, None, "agreement", "{}", now - timedelta(days=19)))
                if status == "accepted":
                    accepted = pk
                    if rng.random() < 0.08:
                        resolutions.append(
                            (pk, lead_id, "accept_1", json.dumps({"changes": [answer]}), "", "",
                             "disputed", "accepted", now - timedelta(days=10))
                        )  # fmt: skip
                        events.append((pk, lead_id, "resolution:accept_1", "{}", now))
                elif status == "rejected":
                    resolutions.append(
                        (pk, lead_id, "reject", None, "unusable", "", "disputed", "rejected",
                         now - timedelta(days=10))
                    )  # fmt: skip
                    events.append((pk, lead_id, "resolution:reject", "{}", now))
                else:
                    disputed = pk
        result.disputed_pair, result.accepted_pair = disputed, accepted
        rows["assignments"] = _copy(
            conn, Assignment,
            ["id", "pair", "annotator", "state", "leased_at", "expires_at", "submitted_at"],
            assignments,
        )  # fmt: skip
        rows["annotations"] = _copy(
            conn, Annotation,
            ["id", "assignment", "pair", "annotator", "tier", "defects", "time_spent_ms",
             "idempotency_key", "created_at"],
            annotations,
        )  # fmt: skip
        rows["changes"] = _copy(
            conn, Change,
            ["annotation", "position", "category", "description", "entity_a", "entity_b",
             "boxes_a", "boxes_b"],
            changes,
        )  # fmt: skip
        rows["agreements"] = _copy(
            conn, Agreement,
            ["pair", "annotation_1", "annotation_2", "status", "reasons", "changes", "mean_iou",
             "consensus", "policy", "computed_at"],
            agreements,
        )  # fmt: skip
        rows["resolutions"] = _copy(
            conn, Resolution,
            ["pair", "lead", "decision", "answer", "reason", "comment", "status_before",
             "status_after", "created_at"],
            resolutions,
        )  # fmt: skip
        rows["events"] = _copy(conn, PairEvent, ["pair", "actor", "kind", "detail", "at"], events)
        rows["gold_scores"] = _copy(
            conn, GoldScore, ["annotation", "score", "passed", "details", "created_at"], scores
        )
        gold_answers = [
            (pk, json.dumps([_change(rng, categories, width, height)]), "bench", now)
            for pk in sorted(gold)
        ]
        rows["gold_answers"] = _copy(
            conn, GoldAnswer, ["pair", "changes", "source", "created_at"], gold_answers
        )
        flags = ["no_visible_change", "unrelated_changes", "artefacts"]
        predictions = (
            (first + i, "pixeldiff", "1", rng.random(), "[]",
             json.dumps([rng.choice(flags)] if rng.random() < 0.3 else []), "", "{}", now)
            for i in range(n_pairs)
            if rng.random() < PREDICTED_SHARE
        )  # fmt: skip
        rows["predictions"] = _copy(
            conn, Prediction,
            ["pair", "model_name", "model_version", "confidence", "changes", "flags", "error",
             "reasons", "created_at"],
            predictions,
        )  # fmt: skip
        copied: list[type] = [Assignment, Annotation, Change, Agreement, Resolution, PairEvent]
        for model in [*copied, GoldScore, GoldAnswer, Prediction]:
            _set_sequence(conn, model)
        conn.commit()

        jobs = (
            (project.pk, rng.choice(["import", "preannotate", "recompute", "release"]),
             "succeeded", lead_id, "{}", 1000, 1000, "[]", "{}", "", "",
             now - timedelta(hours=k), now - timedelta(hours=k), now - timedelta(hours=k))
            for k in range(300)
        )  # fmt: skip
        rows["jobs"] = _copy(
            conn, Job,
            ["project", "kind", "status", "created_by", "params", "total", "done", "errors",
             "result", "message", "runner", "created_at", "started_at", "finished_at"],
            jobs,
        )  # fmt: skip
        _set_sequence(conn, Job)
        conn.commit()

    seed_releases(project, rng, now, lead_id, by_name[researcher], rows)
    accepted_ids = list(
        Pair.objects.filter(project=project, status="accepted")
        .order_by("pk")
        .values_list("pk", flat=True)[:500]
    )
    QuestionEdit.objects.bulk_create(
        [
            QuestionEdit(
                pair_id=pk,
                description="The thing changed.",
                negatives=["The sky turned green.", "A dog appeared."],
                edited_by_id=lead_id,
                verified=k % 3 == 0,
            )
            for k, pk in enumerate(accepted_ids)
        ]
    )
    rows["question_edits"] = len(accepted_ids)
    result.release_id = Release.objects.filter(project=project).order_by("-version")[0].pk
    result.job_id = Job.objects.filter(project=project).order_by("-pk")[0].pk
    rows["records"] = ReleaseRecord.objects.filter(release__project=project).count()
    rows["evaluations"] = Evaluation.objects.filter(release__project=project).count()
    result.rows, result.seconds = rows, time.perf_counter() - started
    return result
