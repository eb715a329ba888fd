"""What the adjudication screen needs to know about one pair."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from annotator.models import Annotation, Defect, Pair
from pairdiff.agreement import COMPARED
from review.models import Resolution
from review.selectors import disputes_queue


def _annotation_json(annotation: Annotation, label: str) -> dict:
    return {
        "id": annotation.pk,
        "label": label,
        "annotator": annotation.annotator.username,
        "tier": annotation.tier,
        "defects": annotation.defects,
        "time_spent_ms": annotation.time_spent_ms,
        "submitted_at": annotation.created_at.isoformat(),
        "changes": [c.as_json() for c in annotation.changes.all()],
    }


def resolution_json(resolution: Resolution) -> dict:
    return {
        "id": resolution.pk,
        "decision": resolution.decision,
        "lead": resolution.lead.username if resolution.lead else "",
        "comment": resolution.comment,
        "reason": resolution.reason,
        "status_before": resolution.status_before,
        "status_after": resolution.status_after,
        "created_at": resolution.created_at.isoformat(),
        "answer": resolution.answer,
    }


def adjudication_context(pair: Pair) -> dict:
    project = pair.project
    agreement = getattr(pair, "agreement", None)
    if agreement is not None:
        annotations = [agreement.annotation_1, agreement.annotation_2]
    else:
        annotations = list(pair.annotations.order_by("created_at", "id")[:COMPARED])
    resolutions = list(pair.resolutions.select_related("lead"))
    latest = resolutions[-1] if resolutions else None
    consensus = agreement.consensus if agreement else None
    current: dict[str, Any] | None
    if latest is not None and latest.answer:
        current = {"changes": latest.answer["changes"]}
    else:
        current = {"changes": consensus} if consensus else None
    gold = getattr(pair, "gold", None)
    config = {
        "pair": pair.pk,
        "status": pair.status,
        "sides": {
            "a": {"width": pair.width_a, "height": pair.height_a},
            "b": {"width": pair.width_b, "height": pair.height_b},
        },
        "categories": project.categories,
        "vocabulary": project.entity_vocabulary,
        "annotations": [
            _annotation_json(a, f"Annotation {i}") for i, a in enumerate(annotations, start=1)
        ],
        "agreement": None
        if agreement is None
        else {
            "status": agreement.status,
            "mean_iou": agreement.mean_iou,
            "reasons": agreement.reasons,
            "changes": agreement.changes,
            "policy": agreement.policy,
        },
        "defects": [{"value": v, "label": label} for v, label in Defect.choices],
        "consensus": consensus,
        "gold": gold.changes if gold else None,
        "resolutions": [resolution_json(r) for r in resolutions],
        "current": current,
    }
    following = disputes_queue(project).exclude(pk=pair.pk).first()
    urls = {
        "image_a": reverse("annotator:pair_image", args=[pair.pk, "a"]),
        "image_b": reverse("annotator:pair_image", args=[pair.pk, "b"]),
        "resolution": reverse("api:pair-resolution", args=[pair.pk]),
        "queue": reverse("review:disputes", args=[project.slug]),
        "next": reverse("review:adjudicate", args=[following.pk]) if following else None,
    }
    return {"pair": pair, "project": project, "config": config, "urls": urls}
