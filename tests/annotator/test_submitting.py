from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.leasing import assignment_lease_next, assignments_expire
from annotator.models import Annotation, Assignment, AssignmentState, Change
from annotator.submitting import SubmitConflict, annotation_submit, assignment_draft_save
from pairdiff.answers import AnswerInvalid
from tests.conftest import member
from tests.factories import answer, make_pair


@pytest.fixture
def leased(project, annotator_1):
    make_pair(project)
    return assignment_lease_next(project=project, user=annotator_1)


def test_submit_stores_the_answer_and_closes_the_lease(leased, annotator_1):
    annotation, created = annotation_submit(
        assignment_id=leased.pk, user=annotator_1, body=answer(), idempotency_key="k1"
    )

    leased.refresh_from_db()
    leased.pair.refresh_from_db()
    assert created and annotation.tier == "excellent"
    assert leased.state == AssignmentState.SUBMITTED and leased.draft is None
    assert leased.pair.n_submitted == 1
    [change] = annotation.changes.all()
    assert (change.boxes_a, change.boxes_b, change.entity_a) == (
        [[20, 10, 40, 30]],
        [[20, 10, 40, 30]],
        "patch",
    )


def test_submit_is_idempotent_by_key(leased, annotator_1):
    first, _ = annotation_submit(
        assignment_id=leased.pk, user=annotator_1, body=answer(), idempotency_key="k1"
    )

    again, created = annotation_submit(
        assignment_id=leased.pk, user=annotator_1, body=answer(tier="poor"), idempotency_key="k1"
    )

    assert not created and again.pk == first.pk and again.tier == "excellent"
    assert Annotation.objects.count() == 1 and Change.objects.count() == 1


def test_a_second_submit_with_another_key_is_a_conflict(leased, annotator_1):
    annotation_submit(assignment_id=leased.pk, user=annotator_1, body=answer(), idempotency_key="a")

    with pytest.raises(SubmitConflict) as exc:
        annotation_submit(
            assignment_id=leased.pk, user=annotator_1, body=answer(), idempotency_key="b"
        )
    assert exc.value.code == "already_submitted"


def test_submit_rejects_box_outside_image(leased, annotator_1):
    with pytest.raises(AnswerInvalid) as exc:
        annotation_submit(
            assignment_id=leased.pk, user=annotator_1, body=answer(boxes_b=[[50, 10, 97, 30]])
        )

    assert list(exc.value.fields) == ["changes.0.boxes_b.0"]
    assert "96×64" in exc.value.fields["changes.0.boxes_b.0"][0]
    assert Annotation.objects.count() == 0
    leased.refresh_from_db()
    assert leased.state == AssignmentState.LEASED


def test_each_side_is_checked_in_its_own_frame(project, annotator_1):
    make_pair(project, size_b=(200, 150))
    assignment = assignment_lease_next(project=project, user=annotator_1)
    body = answer(boxes_a=[[10, 10, 90, 60]], boxes_b=[[100, 80, 200, 150]])

    annotation, _ = annotation_submit(assignment_id=assignment.pk, user=annotator_1, body=body)
    assert annotation.changes.get().boxes_b == [[100, 80, 200, 150]]


def test_an_absent_side_is_an_empty_box_list(leased, annotator_1):
    body = answer(boxes_a=[], entity_a="", category="object", description="A cup appeared.")

    annotation, _ = annotation_submit(assignment_id=leased.pk, user=annotator_1, body=body)

    assert annotation.changes.get().boxes_a == []


def test_someone_elses_assignment_cannot_be_submitted(leased, annotator_2):
    with pytest.raises(Assignment.DoesNotExist):
        annotation_submit(assignment_id=leased.pk, user=annotator_2, body=answer())


def test_draft_is_kept_and_renews_the_lease(leased, annotator_1):
    before = leased.expires_at
    saved = assignment_draft_save(
        assignment_id=leased.pk, user=annotator_1, draft={"tier": "good", "changes": []}
    )

    leased.refresh_from_db()
    assert leased.draft["tier"] == "good" and "saved_at" in leased.draft
    assert saved.expires_at >= before


def test_draft_larger_than_the_cap_is_refused(leased, annotator_1):
    with pytest.raises(ValueError, match="at most"):
        assignment_draft_save(assignment_id=leased.pk, user=annotator_1, draft={"x": "y" * 300_000})


def test_an_expired_lease_with_room_left_still_submits(leased, annotator_1):
    assignments_expire(now=timezone.now() + timedelta(hours=2))

    annotation, created = annotation_submit(
        assignment_id=leased.pk, user=annotator_1, body=answer()
    )

    leased.pair.refresh_from_db()
    assert created and leased.pair.n_taken == 1 and leased.pair.n_submitted == 1


def test_a_lost_lease_refuses_the_submit_but_keeps_the_draft(project, leased, annotator_1):
    project.overlap = 1
    project.save()
    later = timezone.now() + timedelta(hours=2)
    newcomer = member(project, "a9", "annotator")
    other = assignment_lease_next(project=project, user=newcomer, now=later)
    assert other.pair == leased.pair

    saved = assignment_draft_save(assignment_id=leased.pk, user=annotator_1, draft={"tier": "good"})
    with pytest.raises(SubmitConflict) as exc:
        annotation_submit(assignment_id=leased.pk, user=annotator_1, body=answer())

    assert saved.expires_at is None and exc.value.code == "lease_lost"
    leased.refresh_from_db()
    assert leased.state == AssignmentState.EXPIRED and leased.draft["tier"] == "good"
