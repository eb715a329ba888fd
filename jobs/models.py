"""Background work that people watch: its kinds, states and progress."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from config.constraints import choices_check
from projects.models import Project

User = settings.AUTH_USER_MODEL


class JobKind(models.TextChoices):
    IMPORT = "import", "Import"
    PREANNOTATE = "preannotate", "Pre-annotation"
    RECOMPUTE = "recompute", "Agreement recompute"
    RELEASE = "release", "Release"
    EVALUATE = "evaluate", "Evaluation"
    SYNTHESIZE = "synthesize", "Synthesis"


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class Job(models.Model):
    """Background work that people watch: progress, per-item errors and the result."""

    kind = models.CharField(max_length=16, choices=JobKind.choices)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    params = models.JSONField(default=dict, blank=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    result = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Last sign of life: sent (again) to the workers, started, or progressed. The sweeps re-send
    # queued jobs and fail running ones whose heartbeat is too old (jobs/sweeps.py).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # The process that claimed it, "host:pid": a sweep on that host fails the job as soon as the
    # process is gone (killed mid-way), without waiting for its heartbeat to age.
    runner = models.CharField(max_length=200, blank=True)

    class Meta:
        db_table = "annotator_job"  # made there; moved without touching the table
        ordering = ["-created_at"]
        constraints = [
            choices_check("kind", JobKind, "job_kind_valid"),
            choices_check("status", JobStatus, "job_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.status == JobStatus.SUCCEEDED else 0
        return round(100 * self.done / self.total)
