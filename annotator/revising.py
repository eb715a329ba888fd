"""An annotator takes back a submitted answer to edit it, while the pair is not cross-checked:
the answer becomes their draft again and the lease is theirs, as if never submitted."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotator.leasing import (
    MAX_LIVE_LEASES,
    assignment_check_member,
    lease_duration,
    lease_make_room,
)
from annotator.models import Assignment, AssignmentState, Pair, PairEvent, PairEventKind
from annotator.selectors import annotation_editable
from annotator.submitting import SubmitConflict


@transaction.atomic
def annotation_reopen(*, assignment_id: int, user) -> Assignment:
    """Turn the caller's submitted answer back into their draft on a live lease.

    Locks the pair row first (a submit of the other annotator waits, then sees the pair one
    submission short, so no cross-check starts on half the answers). Raises
    Assignment.DoesNotExist for anyone else's assignment, SubmitConflict("checked") once the
    cross-check has started or for a gold pair; PermissionDenied when the caller no longer
    annotates in the project (a removed member's submitted work stays as it is).
    """
    assignment = Assignment.objects.select_related("pair__project").get(
        pk=assignment_id, annotator=user
    )
    assignment_check_member(assignment=assignment, user=user)
    pair = Pair.objects.select_for_update().select_related("project").get(pk=assignment.pair_id)
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.state != AssignmentState.SUBMITTED:
        raise SubmitConflict("not_submitted", "this pair is not submitted")
    if not annotation_editable(pair):
        raise SubmitConflict("checked", "this pair is already being cross-checked")
    now = timezone.now()
    if not lease_make_room(project=pair.project, user=user, now=now):
        raise SubmitConflict(
            "leases",
            f"you already have {MAX_LIVE_LEASES} pairs open in this project; submit or skip one "
            "first",
        )
    annotation = assignment.annotation
    draft = {
        "tier": annotation.tier,
        "defects": list(annotation.defects),
        "time_spent_ms": annotation.time_spent_ms,
        "changes": [
            {
                "category": c.category,
                "description": c.description,
                "entity_a": c.entity_a,
                "entity_b": c.entity_b,
                "boxes_a": c.boxes_a,
                "boxes_b": c.boxes_b,
            }
            for c in annotation.changes.order_by("position")
        ],
        "ui": {
            "absent_a": [not c.boxes_a for c in annotation.changes.order_by("position")],
            "absent_b": [not c.boxes_b for c in annotation.changes.order_by("position")],
        },
    }
    annotation.delete()
    assignment.state = AssignmentState.LEASED
    assignment.submitted_at = None
    assignment.expires_at = now + lease_duration()
    assignment.draft = {**draft, "saved_at": now.isoformat()}
    assignment.save(update_fields=["state", "submitted_at", "expires_at", "draft"])
    Pair.objects.filter(pk=pair.pk).update(n_submitted=F("n_submitted") - 1)
    PairEvent.objects.create(pair=pair, actor=user, kind=PairEventKind.REOPENED_TO_EDIT, detail={})
    return assignment
