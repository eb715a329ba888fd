"""Release, ReleaseRecord, QuestionEdit and Evaluation moved out of review/ keeping their tables:
a database made before the move migrates forward with every row still there (SQLite and
PostgreSQL alike)."""

from __future__ import annotations

import pytest

from annotator.models import Pair
from jobs.models import Job
from projects.models import Project
from releases.models import (
    Evaluation,
    EvaluationStatus,
    QuestionEdit,
    Release,
    ReleaseRecord,
    ReleaseStatus,
)
from tests.migrating import latest, migrate_to, sql_of

BEFORE_THE_MOVE = [
    ("review", "0008_project_figures_pair_difficulty"),
    ("releases", None),
]


@pytest.mark.django_db(transaction=True)
def test_rows_made_before_the_move_are_read_through_the_new_models():
    try:
        executor = migrate_to(BEFORE_THE_MOVE)
        # The other apps stay migrated: their models as they are now, review's before the move.
        others = [leaf for leaf in latest() if leaf[0] not in ("review", "releases")]
        old = executor.loader.project_state([*others, BEFORE_THE_MOVE[0]]).apps
        user = old.get_model("auth", "User").objects.create(username="lead")
        project = old.get_model("projects", "Project").objects.create(
            slug="cars", name="Cars", categories=[{"slug": "add", "name": "Add"}], created_by=user
        )
        job = old.get_model("jobs", "Job").objects.create(
            kind="release", status="succeeded", project=project, created_by=user
        )
        pair = old.get_model("annotator", "Pair").objects.create(
            project=project,
            external_id="p1",
            number=1,
            image_a="a.png",
            image_b="b.png",
            width_a=4,
            height_a=4,
            width_b=4,
            height_b=4,
            sha256_a="a" * 64,
            sha256_b="b" * 64,
            format_a="png",
            format_b="png",
        )
        release = old.get_model("review", "Release").objects.create(
            project=project,
            name="v1",
            version=1,
            plan={"seed": 3},
            status="ready",
            job=job,
            manifest={"counts": {"total": 1}},
            created_by=user,
        )
        record = old.get_model("review", "ReleaseRecord").objects.create(
            release=release,
            pair=pair,
            position=0,
            split="test",
            category="add",
            difficulty="easy",
            data={"pair_id": pair.pk},
        )
        edit = old.get_model("review", "QuestionEdit").objects.create(
            pair=pair,
            description="A cup appears.",
            negatives=["A cup vanishes.", "A plate appears."],
            edited_by=user,
            verified=True,
            verified_by=user,
        )
        evaluation = old.get_model("review", "Evaluation").objects.create(
            release=release,
            model_name="qwen",
            coords="1000",
            text_metric="rouge",
            predictions="evaluations/p.jsonl",
            status="ready",
            grounded_f1=0.5,
            accuracy=0.75,
            created_by=user,
        )
    finally:
        migrate_to(latest())

    moved = Release.objects.get(pk=release.pk)
    assert (moved.name, moved.version, moved.status, moved.plan) == (
        "v1",
        1,
        ReleaseStatus.READY,
        {"seed": 3},
    )
    assert moved.project == Project.objects.get(slug="cars")
    assert moved.job == Job.objects.get(pk=job.pk)
    assert moved.created_by.username == "lead"
    assert moved.prefix == f"releases/cars/{moved.pk}"
    moved_record = ReleaseRecord.objects.get(pk=record.pk)
    assert (moved_record.release, moved_record.pair_id, moved_record.split) == (
        moved,
        pair.pk,
        "test",
    )
    assert list(moved.records.values_list("data", flat=True)) == [{"pair_id": pair.pk}]
    moved_edit = QuestionEdit.objects.get(pk=edit.pk)
    assert Pair.objects.get(pk=pair.pk).question_edit == moved_edit
    assert moved_edit.negatives == ["A cup vanishes.", "A plate appears."]
    assert moved_edit.verified and moved_edit.verified_by.username == "lead"
    moved_evaluation = Evaluation.objects.get(pk=evaluation.pk)
    assert list(moved.evaluations.all()) == [moved_evaluation]
    assert (moved_evaluation.status, moved_evaluation.grounded_f1, moved_evaluation.accuracy) == (
        EvaluationStatus.READY,
        0.5,
        0.75,
    )
    # New rows go on from the old ones' ids (PostgreSQL's sequences stayed with the tables).
    later = Release.objects.create(project=moved.project, name="v2", version=2)
    assert later.pk > moved.pk
    assert Evaluation.objects.create(release=later, model_name="m").pk > moved_evaluation.pk


@pytest.mark.django_db(transaction=True)
def test_the_move_changes_no_table():
    moves = [("releases", "0001_initial"), ("review", "0010_release_models_moved_out")]
    for app, name in moves:
        statements = sql_of(app, name)
        assert statements == [], f"{app}.{name} writes to the database"
    assert {
        model._meta.db_table for model in (Release, ReleaseRecord, QuestionEdit, Evaluation)
    } == {"review_release", "review_releaserecord", "review_questionedit", "review_evaluation"}
