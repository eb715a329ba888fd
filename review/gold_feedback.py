"""Feedback on a gold pair, for the annotator who just submitted it: their own boxes against the
known answer. Nothing else — no other annotator's work, no agreement figure — and only in a
short window right after submitting, so it teaches without turning gold pairs into a key."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from annotator.models import Assignment, AssignmentState
from projects.access import Action, project_role, role_may

WINDOW = timedelta(minutes=10)


def gold_feedback_for(*, assignment_id: int, user, now=None) -> dict | None:
    """{pair, sides, yours, known} for the caller's own just-submitted gold pair in a project
    that shows gold feedback; None otherwise (not theirs, not gold, not submitted, too late, or
    the caller no longer annotates in the project: membership is checked on every read)."""
    now = now or timezone.now()
    assignment = (
        Assignment.objects.select_related("pair__project", "pair__gold", "annotation")
        .filter(pk=assignment_id, annotator=user, state=AssignmentState.SUBMITTED)
        .first()
    )
    if assignment is None or assignment.submitted_at is None:
        return None
    pair = assignment.pair
    if not role_may(project_role(user, pair.project), Action.ANNOTATE):
        return None
    gold = getattr(pair, "gold", None)
    if not (pair.project.gold_feedback and pair.is_gold and gold is not None):
        return None
    if now - assignment.submitted_at > WINDOW:
        return None
    yours = [
        {"boxes_a": c.boxes_a, "boxes_b": c.boxes_b, "entity_a": c.entity_a, "entity_b": c.entity_b}
        for c in assignment.annotation.changes.order_by("position")
    ]
    known = [
        {
            "boxes_a": c.get("boxes_a", []),
            "boxes_b": c.get("boxes_b", []),
            "entity_a": c.get("entity_a", ""),
            "entity_b": c.get("entity_b", ""),
        }
        for c in gold.changes
    ]
    return {
        "pair": pair.pk,
        "sides": {
            "a": {"width": pair.width_a, "height": pair.height_a},
            "b": {"width": pair.width_b, "height": pair.height_b},
        },
        "yours": yours,
        "known": known,
    }
