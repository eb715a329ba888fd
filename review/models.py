"""Known answers, agreement and resolutions."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotator.models import Annotation, Pair


class GoldAnswer(models.Model):
    """The known answer of a gold pair. `changes` has the shape of the submit body's changes
    (boxes in pixels of each side's frame)."""

    pair = models.OneToOneField(Pair, on_delete=models.CASCADE, related_name="gold")
    changes = models.JSONField()
    source = models.CharField(max_length=100, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"gold answer of {self.pair}"


class VerdictStatus(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    DISPUTED = "disputed", "Disputed"
    REJECTED = "rejected", "Rejected"


class Agreement(models.Model):
    """The cross-check of the first two annotations of a pair; recomputed, never hand-edited."""

    pair = models.OneToOneField(Pair, on_delete=models.CASCADE, related_name="agreement")
    annotation_1 = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="+")
    annotation_2 = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=VerdictStatus.choices)
    reasons = models.JSONField(default=list)  # [{"code": ..., "message": ...}], stable order
    changes = models.JSONField(default=list)  # per matched change: which side, which IoU
    mean_iou = models.FloatField(null=True, blank=True)
    consensus = models.JSONField(null=True, blank=True)  # changes, as in the submit body
    policy = models.JSONField(default=dict)  # the thresholds it was computed with
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=VerdictStatus.values), name="agreement_status_valid"
            )
        ]

    def __str__(self) -> str:
        return f"agreement on {self.pair}: {self.status}"


class GoldScore(models.Model):
    """An annotation on a gold pair scored against the known answer (shown to leads)."""

    annotation = models.OneToOneField(
        Annotation, on_delete=models.CASCADE, related_name="gold_score"
    )
    score = models.FloatField()
    passed = models.BooleanField()
    details = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"gold score {self.score:.2f} of annotation {self.annotation_id}"
