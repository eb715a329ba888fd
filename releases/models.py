"""Releases, their records, leads' question edits and models' evaluations. The models moved
here from review/ with their tables (review_release, review_releaserecord, review_questionedit,
review_evaluation): migrations changed Django's picture of them, not the database."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotator.models import Pair
from jobs.models import Job
from projects.models import Project


class ReleaseStatus(models.TextChoices):
    BUILDING = "building", "Building"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class Release(models.Model):
    """An immutable, versioned snapshot of a project's accepted pairs. Visible to researchers
    only once ready: files, records and the manifest appear together or not at all."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="releases")
    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    plan = models.JSONField(default=dict)  # the split plan, seed included
    # ReleaseOptions: strict filter, A/B swap augmentation, baseline limit and a lead's override
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=16, choices=ReleaseStatus.choices, default=ReleaseStatus.BUILDING
    )
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL)
    manifest = models.JSONField(null=True, blank=True)
    message = models.TextField(blank=True)  # why the last build failed
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    ready_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "review_release"  # the table it had in review/
        ordering = ["-version"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="release_name_per_project"),
            models.UniqueConstraint(
                fields=["project", "version"], name="release_version_per_project"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=ReleaseStatus.values), name="release_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} {self.name} (v{self.version})"

    @property
    def prefix(self) -> str:
        """The release's folder in storage."""
        return f"releases/{self.project.slug}/{self.pk}"


class ReleaseRecord(models.Model):
    """One benchmark record of a ready release, for paginated and filtered reading."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="records")
    pair = models.ForeignKey(Pair, null=True, on_delete=models.SET_NULL, related_name="+")
    position = models.PositiveIntegerField()
    split = models.CharField(max_length=8)
    category = models.CharField(max_length=64)
    difficulty = models.CharField(max_length=8, blank=True)
    data = models.JSONField()

    class Meta:
        db_table = "review_releaserecord"
        ordering = ["release", "position"]
        indexes = [
            models.Index(
                fields=["release", "split", "category", "difficulty"],
                name="release_record_filters",
            )
        ]
        constraints = [
            models.UniqueConstraint(fields=["release", "position"], name="release_record_once")
        ]

    def __str__(self) -> str:
        return f"record {self.position} of {self.release}"


class QuestionEdit(models.Model):
    """A lead's hard negatives for a pair's multiple-choice question, replacing the derived
    ones in the next releases while the description they were written for still stands."""

    pair = models.OneToOneField(Pair, on_delete=models.CASCADE, related_name="question_edit")
    description = models.TextField()  # the true description the negatives answer
    negatives = models.JSONField()  # two sentences
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    edited_at = models.DateTimeField(auto_now=True)
    # A lead read the question against the images: its negatives are frozen and every later
    # release writes them, while the description they answer still stands.
    verified = models.BooleanField(default=False)
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    verified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "review_questionedit"

    def __str__(self) -> str:
        return f"question negatives of {self.pair}"


class EvaluationStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class Evaluation(models.Model):
    """A model's predictions scored against a ready release: one row of its leaderboard.
    ``result`` is the whole output of ``pairdiff.scoring.evaluate`` (scorer and threshold
    named); the headline figures are copied out so the leaderboard can sort on them."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="evaluations")
    model_name = models.CharField(max_length=100)
    coords = models.CharField(max_length=8)
    text_metric = models.CharField(max_length=16)
    predictions = models.CharField(max_length=255)  # the uploaded file's name in storage
    status = models.CharField(
        max_length=16, choices=EvaluationStatus.choices, default=EvaluationStatus.QUEUED
    )
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL)
    result = models.JSONField(null=True, blank=True)
    grounded_f1 = models.FloatField(null=True, blank=True)
    accuracy = models.FloatField(null=True, blank=True)
    message = models.TextField(blank=True)  # why it could not be scored
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "review_evaluation"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=EvaluationStatus.values),
                name="evaluation_status_valid",
            )
        ]

    def __str__(self) -> str:
        return f"{self.model_name} on {self.release}"
