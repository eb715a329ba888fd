"""Every pair is numbered in its project as it is stored, and named by number and source; the
migration numbers the pairs that existed before."""

from __future__ import annotations

import threading
from importlib import import_module

import pytest
from django.apps import apps
from django.db import connection

from annotator.models import Pair
from annotator.services import PairInput, pair_create
from projects.creating import project_create
from projects.models import Preset
from tests.factories import make_pair, make_pairs
from tests.images import edited_pair


def test_pairs_are_numbered_in_order_within_each_project(project):
    other = project_create(slug="boats", name="Boats", preset=Preset.MINCU)
    first = make_pairs(project, 2)
    elsewhere = make_pair(other)
    third = make_pair(project)

    assert [p.number for p in (*first, third)] == [1, 2, 3]
    assert elsewhere.number == 1


def test_a_pair_is_named_by_number_and_source(project):
    a, b = edited_pair(3)
    pair = pair_create(
        project=project,
        pair_input=PairInput(a, b, metadata={"source_files": ["kitchen/kitchen_03.jpg", "b.jpg"]}),
    )
    assert (pair.source_name, pair.name, str(pair)) == (
        "kitchen_03",
        "#1 · kitchen_03",
        "#1 · kitchen_03",
    )


def test_the_migration_numbers_existing_pairs_in_id_order(project):
    other = project_create(slug="boats", name="Boats", preset=Preset.MINCU)
    pairs = [make_pair(project), make_pair(other), make_pair(project)]
    Pair.objects.filter(pk=pairs[0].pk).update(
        metadata={"synthesized": {"photo": "kitchen_03.jpg"}}, external_id="5f1c0e9a7b2d4c6e8f10"
    )
    # As before the migration: no number, no source name (the column cannot be null any more,
    # so the backfill's input is made by scrambling the numbers it must put right).
    for pair, wrong in zip(pairs, (90, 91, 92), strict=True):
        Pair.objects.filter(pk=pair.pk).update(number=wrong, source_name="")

    migration = import_module("annotator.migrations.0015_pair_number_source_name")
    migration._backfill(apps, None)

    got = {p.pk: (p.project_id, p.number, p.source_name) for p in Pair.objects.all()}
    assert got == {
        pairs[0].pk: (project.pk, 1, "kitchen_03"),
        pairs[1].pk: (other.pk, 1, ""),
        pairs[2].pk: (project.pk, 2, ""),
    }


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_imports_at_the_same_moment_never_take_the_same_number(project):
    threads_n = 8
    errors: list[BaseException] = []
    start = threading.Barrier(threads_n)

    def work(i: int) -> None:
        try:
            start.wait()
            make_pair(project)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    assert sorted(Pair.objects.values_list("number", flat=True)) == list(range(1, threads_n + 1))
