"""Project, Membership and Job moved out of annotator/ keeping their tables: a database made
before the move migrates forward with every row still there (SQLite and PostgreSQL alike)."""

from __future__ import annotations

import pytest

from annotator.models import Pair
from jobs.models import Job, JobKind, JobStatus
from projects.models import Membership, Project, Role
from tests.migrating import latest, migrate_to, sql_of

BEFORE_THE_MOVE = [
    ("annotator", "0011_idempotency_key_digest"),
    ("review", "0006_release_options_question_verified"),
    ("projects", None),
    ("jobs", None),
]


@pytest.mark.django_db(transaction=True)
def test_rows_made_before_the_move_are_read_through_the_new_models():
    try:
        executor = migrate_to(BEFORE_THE_MOVE)
        old = executor.loader.project_state(BEFORE_THE_MOVE[:2]).apps
        user = old.get_model("auth", "User").objects.create(username="lead")
        project = old.get_model("annotator", "Project").objects.create(
            slug="cars", name="Cars", categories=[{"slug": "add", "name": "Add"}], created_by=user
        )
        old.get_model("annotator", "Membership").objects.create(
            project=project, user=user, role="lead"
        )
        job = old.get_model("annotator", "Job").objects.create(
            kind="import", status="succeeded", project=project, created_by=user, total=3, done=3
        )
        pair = old.get_model("annotator", "Pair").objects.create(
            project=project,
            import_job=job,
            external_id="p1",
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
    finally:
        migrate_to(latest())

    moved = Project.objects.get(pk=project.pk)
    assert (moved.slug, moved.name, moved.category_slugs) == ("cars", "Cars", ["add"])
    assert moved.created_by.username == "lead"
    assert Membership.objects.get(project=moved).role == Role.LEAD
    moved_job = Job.objects.get(pk=job.pk)
    assert (moved_job.kind, moved_job.status, moved_job.percent) == (
        JobKind.IMPORT,
        JobStatus.SUCCEEDED,
        100,
    )
    assert moved_job.project == moved
    assert Pair.objects.get(pk=pair.pk).import_job == moved_job
    assert list(moved.pairs.values_list("external_id", flat=True)) == ["p1"]
    # New rows go on from the old ones' ids (PostgreSQL's sequences moved with the tables).
    assert Project.objects.create(slug="bikes", name="Bikes").pk > moved.pk
    assert Job.objects.create(kind=JobKind.RECOMPUTE, project=moved).pk > moved_job.pk


@pytest.mark.django_db(transaction=True)
def test_the_move_changes_no_table():
    moves = [
        ("projects", "0001_initial"),
        ("jobs", "0001_initial"),
        ("review", "0007_project_and_job_moved"),
        ("annotator", "0012_project_membership_job_moved_out"),
    ]
    for app, name in moves:
        statements = sql_of(app, name)
        assert statements == [], f"{app}.{name} writes to the database"
    assert {Project._meta.db_table, Membership._meta.db_table, Job._meta.db_table} == {
        "annotator_project",
        "annotator_membership",
        "annotator_job",
    }
