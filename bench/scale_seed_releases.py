"""The releases of a seeded large project (``scale_seed``): five ready releases, the newest with
a record per accepted pair (PostgreSQL COPY) and a scored leaderboard."""

from __future__ import annotations

import json
from datetime import timedelta


def seed_releases(project, rng, now, lead_id: int, researcher_id: int, rows: dict) -> None:
    """Five ready releases; the newest holds a record per accepted pair (up to 100,000) and
    twelve scored evaluations, its leaderboard."""
    from django.db import connection

    from annotator.models import Pair
    from releases.models import Evaluation, Release, ReleaseRecord

    splits = ["train", "val", "test"]
    accepted = list(
        Pair.objects.filter(project=project, status="accepted")
        .order_by("pk")
        .values_list("pk", "category_hint")[:100_000]
    )
    releases = []
    for version in range(1, 6):
        count = len(accepted) * version // 5
        by_split = {s: count // 3 for s in splits}
        manifest = {
            "counts": {"splits": by_split, "by_split": {}},
            "files": {},
            "warnings": [],
        }
        releases.append(
            Release.objects.create(
                project=project,
                name=f"v{version}",
                version=version,
                status="ready",
                manifest=manifest,
                created_by_id=lead_id,
                ready_at=now - timedelta(days=6 - version),
            )
        )
    newest = releases[-1]
    records = (
        (newest.pk, pk, position, splits[position % 3], category,
         rng.choice(["easy", "medium", "hard"]),
         json.dumps({"id": f"img-{pk}", "category": category, "changes": []}))
        for position, (pk, category) in enumerate(accepted)
    )  # fmt: skip
    raw = connection.connection  # Django's own psycopg connection, inside its transaction
    with (
        raw.cursor() as cur,
        cur.copy(
            f'COPY "{ReleaseRecord._meta.db_table}" (release_id, pair_id, position, split, '
            "category, difficulty, data) FROM STDIN"
        ) as copy,
    ):
        for row in records:
            copy.write_row(row)
    slugs = project.category_slugs
    for k in range(12):
        f1 = round(rng.uniform(0.2, 0.8), 3)
        by_category = {c: {"grounded_f1": rng.random(), "accuracy": rng.random()} for c in slugs}
        by_difficulty = {
            d: {"grounded_f1": rng.random(), "accuracy": rng.random()}
            for d in ("easy", "medium", "hard")
        }
        result = {
            "grounding": {
                "grounded_f1": f1, "miou": rng.random(), "map": {"mean": rng.random()},
                "hallucination_rate": rng.random() / 4, "records": len(accepted) // 3,
                "splits": ["test"], "by_category": by_category, "by_difficulty": by_difficulty,
            },
            "questions": {
                "accuracy": rng.random(), "questions": len(accepted) // 3, "splits": ["test"],
                "by_category": by_category, "by_difficulty": by_difficulty,
            },
            "unparseable": {"rate": 0.01},
            "text_metric": {"name": "rouge_l", "threshold": 0.5},
        }  # fmt: skip
        Evaluation.objects.create(
            release=newest,
            model_name=f"model-{k}",
            coords="pixels",
            text_metric="rouge_l",
            predictions=f"evaluations/model-{k}.jsonl",
            status="ready",
            result=result,
            grounded_f1=f1,
            accuracy=result["questions"]["accuracy"],
            created_by_id=researcher_id,
            finished_at=now,
        )
