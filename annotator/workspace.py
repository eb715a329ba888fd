"""What the workspace page needs to know about one assignment."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from annotator.assists import workspace_assist
from annotator.models import Assignment, AssignmentState, Defect, Tier
from annotator.selectors import annotator_progress, pairs_edited_by

SKIP_REASONS = [
    "An image is broken or does not load",
    "I cannot see what changed",
    "More than one unrelated change",
    "The guidelines do not cover this pair",
]


def workspace_context(assignment: Assignment) -> dict:
    pair = assignment.pair
    project = pair.project
    predictions = []
    if project.show_predictions:
        predictions = [
            {"model": f"{p.model_name} {p.model_version}".strip(), "changes": p.changes}
            for p in pair.predictions.all()
        ]
    config = {
        "assignment": assignment.pk,
        "pair": pair.pk,
        "sides": {
            "a": {"width": pair.width_a, "height": pair.height_a},
            "b": {"width": pair.width_b, "height": pair.height_b},
        },
        "categories": project.categories,
        "vocabulary": project.entity_vocabulary,
        "tiers": [{"value": v, "label": label} for v, label in Tier.choices],
        "defects": [{"value": v, "label": label} for v, label in Defect.choices],
        "predictions": predictions,
        "draft": assignment.draft,
        # Click-to-box, mirroring through the alignment and drafts (None: by hand only).
        "assist": workspace_assist(assignment),
        "idempotency_key": f"assignment-{assignment.pk}",
        "expires_at": assignment.expires_at.isoformat(),
        "lease_seconds": settings.DIFFMARK_LEASE_SECONDS,
        # Asked after every submit when the project shows gold feedback: the page itself never
        # knows whether a pair is gold (that would change how it is answered).
        "gold_feedback": (
            reverse("review:gold_feedback", args=[assignment.pk]) if project.gold_feedback else ""
        ),
    }
    urls = {
        "image_a": reverse("annotator:pair_image", args=[pair.pk, "a"]),
        "image_b": reverse("annotator:pair_image", args=[pair.pk, "b"]),
        "draft": reverse("api:assignment-draft", args=[assignment.pk]),
        "submit": reverse("api:assignment-submit", args=[assignment.pk]),
        "skip": reverse("api:assignment-skip", args=[assignment.pk]),
        "next": reverse("annotator:lease_next", args=[project.slug]),
        "ahead": reverse("annotator:lease_ahead", args=[project.slug]),
        "home": reverse("annotator:home"),
    }
    return {
        "assignment": assignment,
        "pair": pair,
        "project": project,
        "config": config,
        "urls": urls,
        "progress": _progress(assignment),
        # A submitted answer taken back to edit: the page says so (it is not a new pair).
        "editing": bool(pairs_edited_by(assignment.annotator_id, [pair.pk])),
        "skip_reasons": SKIP_REASONS,
    }


def _progress(assignment: Assignment) -> dict[str, int]:
    """ "Pair n of N · k today" as the annotator will read it on this pair. A lease taken ahead
    (preloaded while the one before it is answered) counts the earlier live leases as done:
    they are submitted by the time this pair shows."""
    project = assignment.pair.project
    user = assignment.annotator
    counts = annotator_progress(user, project)
    live = Assignment.objects.filter(
        annotator=user,
        pair__project=project,
        state=AssignmentState.LEASED,
        expires_at__gt=timezone.now(),
    ).exclude(pk=assignment.pk)
    before = live.filter(leased_at__lt=assignment.leased_at).count()
    return {
        "n": counts["total"] + before + 1,
        "of": counts["total"] + live.count() + 1 + counts["left"],
        "today": counts["today"] + before,
    }
