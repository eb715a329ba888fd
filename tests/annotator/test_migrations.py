"""GoldAnswer moved from review/ to annotator/ keeping its table (review_goldanswer): a database
made before the move migrates forward with every known answer still there (SQLite and
PostgreSQL alike)."""

from __future__ import annotations

import pytest

from annotator.models import GoldAnswer, Pair
from tests.migrating import latest, migrate_to, sql_of

BEFORE_THE_MOVE = [
    ("annotator", "0017_pair_list_indexes"),
    ("review", "0008_project_figures_pair_difficulty"),
]


@pytest.mark.django_db(transaction=True)
def test_gold_answers_made_before_the_move_are_read_through_the_new_model():
    try:
        executor = migrate_to(BEFORE_THE_MOVE)
        # The other apps stay at their latest: the old models as the database has them now.
        old = executor.loader.project_state(list(executor.loader.applied_migrations)).apps
        user = old.get_model("auth", "User").objects.create(username="lead")
        project = old.get_model("projects", "Project").objects.create(
            slug="cars", name="Cars", categories=[{"slug": "add", "name": "Add"}], created_by=user
        )
        pair = old.get_model("annotator", "Pair").objects.create(
            project=project,
            number=1,
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
            is_gold=True,
        )
        known = [{"category": "add", "boxes_a": [], "boxes_b": [[0, 0, 2, 2]]}]
        gold = old.get_model("review", "GoldAnswer").objects.create(
            pair=pair, changes=known, source="synthetic", created_by=user
        )
    finally:
        migrate_to(latest())

    moved = GoldAnswer.objects.get(pk=gold.pk)
    assert (moved.changes, moved.source, moved.created_by.username) == (known, "synthetic", "lead")
    assert Pair.objects.get(pk=pair.pk).gold == moved
    # New rows go on from the old ones' ids (the table and its sequence did not change).
    other = Pair.objects.create(
        project_id=project.pk,
        number=2,
        external_id="p2",
        image_a="a.png",
        image_b="b.png",
        width_a=4,
        height_a=4,
        width_b=4,
        height_b=4,
        sha256_a="c" * 64,
        sha256_b="d" * 64,
        format_a="png",
        format_b="png",
    )
    assert GoldAnswer.objects.create(pair=other, changes=[]).pk > moved.pk


@pytest.mark.django_db(transaction=True)
def test_the_move_changes_no_table():
    moves = [("annotator", "0018_goldanswer_moved_in"), ("review", "0009_goldanswer_moved_out")]
    for app, name in moves:
        statements = sql_of(app, name)
        assert statements == [], f"{app}.{name} writes to the database"
    assert GoldAnswer._meta.db_table == "review_goldanswer"
