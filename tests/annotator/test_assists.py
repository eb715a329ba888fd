"""Assists on the server: computed after a pair is stored, given to the workspace with drafts only
where the project offers them, and counted per annotator when a draft was kept unchanged."""

from __future__ import annotations

import pytest

from annotator.assists import (
    draft_acceptance,
    drafts_offered,
    pairs_assist_compute,
    workspace_assist,
)
from annotator.leasing import assignment_lease_next, assignment_lease_pair
from annotator.models import PairAssist
from annotator.submitting import annotation_submit
from annotator.workspace import workspace_context
from projects.models import DraftDescriptions
from tests.factories import answer, make_pair


def test_storing_a_pair_computes_its_assist_after_the_commit(
    project, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        pair = make_pair(project)
    row = PairAssist.objects.get(pair=pair)
    assert row.error == "" and row.alignment["kind"] == "scale"
    (found,) = row.components  # edited_pair recolours one patch
    assert found["boxes_a"] and found["boxes_b"] and found["draft"].endswith(".")


def test_a_pair_without_an_assist_is_annotated_by_hand(project, annotator_1):
    make_pair(project)  # no commit callbacks ran: no assist yet
    assignment = assignment_lease_next(project=project, user=annotator_1)
    assert workspace_context(assignment)["config"]["assist"] is None


def test_unreadable_images_store_the_reason_and_offer_nothing(project, annotator_1, monkeypatch):
    pair = make_pair(project)
    monkeypatch.setattr("annotator.assists.precompute", _broken)
    pairs_assist_compute([pair.pk])
    assert PairAssist.objects.get(pair=pair).error == "image A: cannot decode (broken)"
    assignment = assignment_lease_next(project=project, user=annotator_1)
    assert workspace_assist(assignment) is None


def _broken(*args, **kwargs):
    from pairdiff.assist import Assist

    return Assist(None, error="image A: cannot decode (broken)")


@pytest.fixture
def assisted(project):
    pair = make_pair(project)
    pairs_assist_compute([pair.pk])
    return pair


@pytest.mark.parametrize(
    ("setting", "gold", "first", "second"),
    [
        (DraftDescriptions.FIRST, False, True, False),
        (DraftDescriptions.FIRST, True, False, False),
        (DraftDescriptions.ON, True, True, True),
        (DraftDescriptions.OFF, False, False, False),
    ],
)
def test_drafts_follow_the_project_setting_gold_pairs_and_the_second_annotator(
    project, assisted, annotator_1, annotator_2, setting, gold, first, second
):
    project.draft_descriptions = setting
    project.save(update_fields=["draft_descriptions"])
    assisted.is_gold = gold
    assisted.save(update_fields=["is_gold"])
    one = assignment_lease_pair(pair=assisted, user=annotator_1)
    two = assignment_lease_pair(pair=assisted, user=annotator_2)
    assert one is not None and two is not None
    assert (drafts_offered(one), drafts_offered(two)) == (first, second)
    given = workspace_assist(two)
    assert given["drafts"] is second
    assert all(("draft" in c) is second for c in given["components"])
    assert all(c["boxes_a"] for c in given["components"])  # click-to-box either way


def test_agreement_statistics_count_drafts_kept_unchanged_per_annotator(
    project, assisted, annotator_1, annotator_2
):
    draft = PairAssist.objects.get(pair=assisted).components[0]["draft"]
    one = assignment_lease_next(project=project, user=annotator_1)
    two = assignment_lease_next(project=project, user=annotator_2)
    annotation_submit(
        assignment_id=one.pk, user=annotator_1, body=answer(description=draft), idempotency_key="1"
    )
    annotation_submit(
        assignment_id=two.pk, user=annotator_2, body=answer(description=draft), idempotency_key="2"
    )
    # The second annotator was offered no draft ("first"): only the first one counts.
    assert draft_acceptance(project) == {annotator_1.pk: (1, 1)}
    project.draft_descriptions = DraftDescriptions.ON
    project.save(update_fields=["draft_descriptions"])
    assert draft_acceptance(project) == {annotator_1.pk: (1, 1), annotator_2.pk: (1, 1)}


def test_an_edited_draft_is_not_counted_as_kept(project, assisted, annotator_1):
    one = assignment_lease_next(project=project, user=annotator_1)
    annotation_submit(
        assignment_id=one.pk,
        user=annotator_1,
        body=answer(description="The patch turned blue."),
        idempotency_key="1",
    )
    assert draft_acceptance(project) == {annotator_1.pk: (1, 0)}


def test_the_command_fills_in_the_pairs_without_an_assist(project):
    from io import StringIO

    from django.core.management import CommandError, call_command

    first, second = make_pair(project), make_pair(project)
    pairs_assist_compute([first.pk])
    out = StringIO()
    call_command("assists", "cars", stdout=out)
    assert out.getvalue().strip() == "1 of 2 pairs in cars got their assists"
    assert PairAssist.objects.filter(pair=second, error="").exists()
    with pytest.raises(CommandError, match="no project"):
        call_command("assists", "nope")
