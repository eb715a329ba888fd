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
