"""Agreement, gold scores, resolutions and the project's stored figures (known answers are
annotator.GoldAnswer; releases are an app of their own, releases/)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotator.models import Annotation, Pair
from projects.models import Project


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


class Decision(models.TextChoices):
    ACCEPT_1 = "accept_1", "Accept annotation 1"
    ACCEPT_2 = "accept_2", "Accept annotation 2"
    MERGE = "merge", "Accept an edited answer"
    REJECT = "reject", "Reject"
    REOPEN = "reopen", "Reopen"


class Resolution(models.Model):
    """A lead's decision on a pair. Append-only: the latest one stands, the annotations that
    led to it are never touched, and a reopen is a decision too."""

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="resolutions")
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    # The answer that now stands (changes as in the submit body); None for reject and reopen.
    answer = models.JSONField(null=True, blank=True)
    reason = models.CharField(max_length=500, blank=True)
    comment = models.TextField(blank=True)
    status_before = models.CharField(max_length=16)
    status_after = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(decision__in=Decision.values), name="resolution_decision_valid"
            )
        ]

    def __str__(self) -> str:
        return f"{self.decision} on {self.pair} by {self.lead}"


class ProjectFigures(models.Model):
    """Figures that read the whole project (the quality dashboard, the accepted pairs by
    category and difficulty, the question prior, annotations per member), kept for projects too
    large to compute them on every request: review.figures refreshes them from a periodic job
    and every page that shows them says when they were computed."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="figures")
    quality = models.JSONField()  # review.dashboard.ProjectQuality, as review.figures writes it
    breakdown = models.JSONField()  # review.standing.accepted_breakdown
    prior = models.JSONField()  # releases.questions' prior of the next release's questions
    submitted = models.JSONField()  # user id (as text) → annotations submitted in the project
    pairs = models.PositiveIntegerField()  # the project's size then
    seconds = models.FloatField()  # how long the computation took
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"figures of {self.project} at {self.computed_at:%Y-%m-%d %H:%M}"


class PairDifficulty(models.Model):
    """The MinCU difficulty of an accepted pair's standing answer, written with ProjectFigures:
    the pairs browser's difficulty filter reads it on large projects."""

    pair = models.OneToOneField(
        Pair, primary_key=True, on_delete=models.CASCADE, related_name="difficulty_figure"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    level = models.CharField(max_length=8)

    class Meta:
        indexes = [models.Index(fields=["project", "level", "pair"], name="pair_difficulty_filter")]

    def __str__(self) -> str:
        return f"{self.pair_id}: {self.level}"
