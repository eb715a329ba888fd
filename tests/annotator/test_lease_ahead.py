"""The lease ahead: the pair after the current one, leased early so the workspace can preload
its images, and handed out by `next` once the current one is done."""

from django.urls import reverse

from annotator.leasing import assignment_lease_ahead, assignment_lease_next, assignment_skip
from annotator.models import AssignmentState
from annotator.submitting import annotation_submit
from tests.factories import answer, make_pairs


def test_the_lease_ahead_is_the_pair_next_hands_out_after_submit(project, annotator_1):
    first_pair, second_pair, _ = make_pairs(project, 3)
    current = assignment_lease_next(project=project, user=annotator_1)
    assert current.pair == first_pair

    ahead = assignment_lease_ahead(project=project, user=annotator_1)
    assert ahead.pair == second_pair and ahead.state == AssignmentState.LEASED
    # Asked again (a reload), the same lease: never more than one ahead.
    assert assignment_lease_ahead(project=project, user=annotator_1).pk == ahead.pk
    # Until the current pair is done, `next` resumes it.
    assert assignment_lease_next(project=project, user=annotator_1).pk == current.pk

    annotation_submit(assignment_id=current.pk, user=annotator_1, body=answer())
    assert assignment_lease_next(project=project, user=annotator_1).pk == ahead.pk


def test_a_skip_also_moves_on_to_the_lease_ahead(project, annotator_1):
    make_pairs(project, 2)
    current = assignment_lease_next(project=project, user=annotator_1)
    ahead = assignment_lease_ahead(project=project, user=annotator_1)
    assignment_skip(assignment=current, user=annotator_1, reason="blurry")
    assert assignment_lease_next(project=project, user=annotator_1).pk == ahead.pk


def test_no_lease_ahead_without_a_current_pair_or_when_nothing_is_left(project, annotator_1):
    make_pairs(project, 1)
    assert assignment_lease_ahead(project=project, user=annotator_1) is None
    assignment_lease_next(project=project, user=annotator_1)
    assert assignment_lease_ahead(project=project, user=annotator_1) is None


def test_the_endpoint_names_the_images_of_the_pair_ahead(client, project, annotator_1):
    pairs = make_pairs(project, 2)
    client.force_login(annotator_1)
    url = reverse("annotator:lease_ahead", args=[project.slug])
    assert client.get(url).status_code == 405
    assert client.post(url).json() == {"assignment": None, "images": []}  # no current pair yet

    assignment_lease_next(project=project, user=annotator_1)
    body = client.post(url).json()
    assert body["images"] == [
        reverse("annotator:pair_image", args=[pairs[1].pk, side]) for side in ("a", "b")
    ]
    # Leased to this annotator, so its images are theirs to fetch now.
    assert client.get(body["images"][0]).status_code == 200


def test_the_endpoint_is_for_members_who_annotate(client, project, researcher, outsider):
    url = reverse("annotator:lease_ahead", args=[project.slug])
    client.force_login(researcher)
    assert client.post(url).status_code == 403
    client.force_login(outsider)
    assert client.post(url).status_code == 404


def _live(project, user) -> list:
    from django.utils import timezone

    from annotator.models import Assignment

    return list(
        Assignment.objects.filter(
            annotator=user,
            pair__project=project,
            state=AssignmentState.LEASED,
            expires_at__gt=timezone.now(),
        )
    )


def test_reopening_submitted_answers_never_holds_more_live_leases_than_the_rule(
    project, annotator_1
):
    """Issue 24 item 9: reopening five submitted answers gave five live leases at once."""
    from annotator.leasing import MAX_LIVE_LEASES
    from annotator.revising import annotation_reopen
    from annotator.submitting import SubmitConflict

    make_pairs(project, 5)
    submitted = []
    for _ in range(5):
        lease = assignment_lease_next(project=project, user=annotator_1)
        annotation_submit(assignment_id=lease.pk, user=annotator_1, body=answer())
        submitted.append(lease)

    refused = 0
    for lease in submitted:
        try:
            annotation_reopen(assignment_id=lease.pk, user=annotator_1)
        except SubmitConflict as exc:
            assert exc.code == "leases"
            refused += 1
        assert len(_live(project, annotator_1)) <= MAX_LIVE_LEASES

    assert MAX_LIVE_LEASES == 2 and refused == 3


def test_reopening_an_answer_gives_back_the_unused_lease_ahead(project, annotator_1):
    from annotator.models import Assignment
    from annotator.revising import annotation_reopen

    make_pairs(project, 4)
    done = assignment_lease_next(project=project, user=annotator_1)
    annotation_submit(assignment_id=done.pk, user=annotator_1, body=answer())
    current = assignment_lease_next(project=project, user=annotator_1)
    ahead = assignment_lease_ahead(project=project, user=annotator_1)

    annotation_reopen(assignment_id=done.pk, user=annotator_1)

    assert {a.pk for a in _live(project, annotator_1)} == {done.pk, current.pk}
    ahead = Assignment.objects.select_related("pair").get(pk=ahead.pk)
    assert ahead.state == AssignmentState.EXPIRED and ahead.pair.n_taken == 0
