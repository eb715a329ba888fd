"""Rules the database itself enforces, whatever code writes to it."""

import pytest
from django.db import IntegrityError, transaction

from annotator.models import Pair, PairEvent, PairEventKind
from annotator.services import PairInput, pair_create
from projects.models import Membership, Project, Role
from review.models import Decision
from tests.images import edited_pair


def _violates(fn) -> bool:
    try:
        with transaction.atomic():
            fn()
    except IntegrityError:
        return True
    return False


@pytest.mark.parametrize(
    "fields",
    [{"overlap": 0}, {"overlap": 11}, {"iou_threshold": 0}, {"gold_rate": 1.5}, {"preset": "x"}],
)
def test_project_settings_out_of_range_are_refused(db, fields):
    assert _violates(lambda: Project.objects.create(slug="p", name="P", **fields))


def test_a_user_has_one_role_per_project(project, annotator_1):
    assert _violates(
        lambda: Membership.objects.create(project=project, user=annotator_1, role=Role.LEAD)
    )


def test_same_images_cannot_be_stored_twice_in_a_project(project):
    a, b = edited_pair()
    pair = pair_create(project=project, pair_input=PairInput(a, b, external_id="one"))

    def copy():
        Pair.objects.create(
            project=project,
            number=pair.number + 1,
            external_id="two",
            image_a=pair.image_a.name,
            image_b=pair.image_b.name,
            width_a=1,
            height_a=1,
            width_b=1,
            height_b=1,
            sha256_a=pair.sha256_a,
            sha256_b=pair.sha256_b,
            format_a="PNG",
            format_b="PNG",
        )

    assert _violates(copy)


def test_external_id_is_unique_per_project_but_may_be_blank_many_times(project):
    a1, b1 = edited_pair(0)
    a2, b2 = edited_pair(10)
    a3, b3 = edited_pair(20)
    pair_create(project=project, pair_input=PairInput(a1, b1))
    pair_create(project=project, pair_input=PairInput(a2, b2))
    pair = pair_create(project=project, pair_input=PairInput(a3, b3, external_id="x"))

    assert _violates(lambda: Pair.objects.filter(pk=pair.pk - 1).update(external_id="x"))
    assert Pair.objects.filter(external_id="").count() == 2


def test_pair_status_must_be_a_known_status(project):
    a, b = edited_pair()
    pair = pair_create(project=project, pair_input=PairInput(a, b))
    assert _violates(lambda: Pair.objects.filter(pk=pair.pk).update(status="lost"))


def test_pair_event_kind_must_be_a_known_kind(project):
    a, b = edited_pair()
    pair = pair_create(project=project, pair_input=PairInput(a, b))
    assert _violates(lambda: PairEvent.objects.create(pair=pair, kind="teleported"))
    # Every lead decision has its event kind ("resolution:<decision>").
    assert {f"resolution:{d}" for d in Decision.values} <= set(PairEventKind.values)
