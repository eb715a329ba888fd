"""What the workspace page needs to know about one assignment."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from annotator.models import Assignment, Defect, Tier


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
        "idempotency_key": f"assignment-{assignment.pk}",
        "expires_at": assignment.expires_at.isoformat(),
        "lease_seconds": settings.DIFFMARK_LEASE_SECONDS,
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
    }
