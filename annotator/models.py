"""Pairs and the work done on them. Rules that must never break are constraints."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from config.constraints import choices_check
from jobs.models import Job
from pairdiff.naming import pair_name
from projects.models import Project

User = settings.AUTH_USER_MODEL


class PairStatus(models.TextChoices):
    IMPORTED = "imported", "Imported"
    PRE_ANNOTATED = "pre_annotated", "Pre-annotated"
    IN_ANNOTATION = "in_annotation", "In annotation"
    ACCEPTED = "accepted", "Accepted"
    DISPUTED = "disputed", "Disputed"
    REJECTED = "rejected", "Rejected"
    # Held back by the project's screening gate until a lead accepts or rejects it.
    SCREENED_OUT = "screened_out", "Screened out"


# Pairs that still take annotations.
OPEN_STATUSES = [PairStatus.IMPORTED, PairStatus.PRE_ANNOTATED, PairStatus.IN_ANNOTATION]


class Tier(models.TextChoices):
    EXCELLENT = "excellent", "Excellent"
    GOOD = "good", "Good"
    FAIR = "fair", "Fair"
    POOR = "poor", "Poor"


class Defect(models.TextChoices):
    INSTRUCTION_NOT_FOLLOWED = "instruction_not_followed", "Instruction not followed"
    UNRELATED_CHANGES = "unrelated_changes", "Unrelated changes elsewhere"
    ARTEFACTS = "artefacts", "Artefacts"
    AMBIGUOUS = "ambiguous", "Ambiguous"
    NO_VISIBLE_CHANGE = "no_visible_change", "No visible change"


class AssignmentState(models.TextChoices):
    LEASED = "leased", "Leased"
    SUBMITTED = "submitted", "Submitted"
    EXPIRED = "expired", "Expired"
    SKIPPED = "skipped", "Skipped"


class Pair(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="pairs")
    external_id = models.CharField(max_length=200, blank=True)
    # Its short human name, "#42 · kitchen_03" (pairdiff.naming): the number is the pair's place
    # in the project's import order (given under the project's row lock, annotator.services);
    # the source name is the photo or file it came from.
    number = models.PositiveIntegerField()
    source_name = models.CharField(max_length=40, blank=True)
    # Original bytes, never re-encoded: low-level changes vanish under recompression.
    image_a = models.FileField(max_length=300)
    image_b = models.FileField(max_length=300)
    # Size as displayed, i.e. after EXIF orientation: the frame every box of that side lives in.
    width_a = models.PositiveIntegerField()
    height_a = models.PositiveIntegerField()
    width_b = models.PositiveIntegerField()
    height_b = models.PositiveIntegerField()
    sha256_a = models.CharField(max_length=64)
    sha256_b = models.CharField(max_length=64)
    format_a = models.CharField(max_length=8)
    format_b = models.CharField(max_length=8)
    thumb_a = models.FileField(max_length=300, blank=True)
    thumb_b = models.FileField(max_length=300, blank=True)
    instruction = models.TextField(blank=True)
    category_hint = models.CharField(max_length=64, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=16, choices=PairStatus.choices, default=PairStatus.IMPORTED
    )
    # Denormalised for leasing (kept in step by the leasing services under the pair's row lock):
    # leases that count toward overlap (live or submitted), and submitted annotations.
    n_taken = models.PositiveSmallIntegerField(default=0)
    n_submitted = models.PositiveSmallIntegerField(default=0)
    # Gold pairs have a known answer; they are mixed into every annotator's queue.
    is_gold = models.BooleanField(default=False)
    # The queue's order among pairs nobody started (higher first), written by
    # annotator/priorities.py from the project's lease order; 0 for import order.
    queue_priority = models.IntegerField(default=0)
    import_job = models.ForeignKey(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="pairs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # The leads' lists read in id order, filtered or not, at any depth (config.paging).
            models.Index(fields=["project", "id"], name="pair_project_order"),
            models.Index(fields=["project", "status", "id"], name="pair_project_status_order"),
            models.Index(fields=["project", "category_hint"], name="pair_project_category"),
            # Gold pairs (1 % of a project): their count and pages (the pairs API's ?gold=).
            models.Index(
                fields=["project", "id"], condition=Q(is_gold=True), name="pair_gold_order"
            ),
            # The disputes queue (review.selectors.disputes_queue): disputed pairs, longest
            # waiting first; its pages, its count and "next dispute" read only this.
            models.Index(
                fields=["project", "updated_at", "id"],
                condition=Q(status="disputed"),
                name="pair_disputes_order",
            ),
            # The queue: open pairs, those someone already started first, then by priority.
            models.Index(
                fields=["project", "is_gold", "-n_taken", "-queue_priority", "id"],
                condition=Q(status__in=OPEN_STATUSES),
                name="pair_queue",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(n_submitted__lte=F("n_taken")), name="pair_submitted_within_taken"
            ),
            models.UniqueConstraint(
                fields=["project", "external_id"],
                condition=~Q(external_id=""),
                name="pair_external_id_unique_per_project",
            ),
            models.UniqueConstraint(
                fields=["project", "sha256_a", "sha256_b"], name="pair_content_unique_per_project"
            ),
            models.UniqueConstraint(fields=["project", "number"], name="pair_number_unique"),
            models.CheckConstraint(
                condition=Q(width_a__gt=0)
                & Q(height_a__gt=0)
                & Q(width_b__gt=0)
                & Q(height_b__gt=0),
                name="pair_sizes_positive",
            ),
            choices_check("status", PairStatus, "pair_status_valid"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        """The pair's short human name, shown wherever the pair is mentioned."""
        return pair_name(self.number, self.source_name)

    def image(self, side: str):
        return self.image_a if side == "a" else self.image_b


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

    class Meta:
        db_table = "review_goldanswer"  # the table it had in review/, kept when it moved

    def __str__(self) -> str:
        return f"gold answer of {self.pair}"


class PairEventKind(models.TextChoices):
    """What happened to a pair; the value is what the pair's history shows."""

    IMPORTED = "imported", "Imported"
    IMPORTED_FROM_LABEL_STUDIO = "imported_from_label_studio", "Imported from Label Studio"
    SCREENED_OUT = "screened_out", "Held by screening"
    SCREENING_ACCEPTED = "screening_accepted", "Released from screening"
    SCREENING_REJECTED = "screening_rejected", "Rejected at screening"
    LEASED = "leased", "Leased"
    SKIPPED = "skipped", "Skipped"
    SUBMITTED = "submitted", "Submitted"
    REOPENED_TO_EDIT = "reopened_to_edit", "Reopened to edit"
    AGREEMENT = "agreement", "Cross-checked"
    # One per lead decision (review.models.Decision): "resolution:<decision>".
    RESOLUTION_ACCEPT_1 = "resolution:accept_1", "Lead accepted annotation 1"
    RESOLUTION_ACCEPT_2 = "resolution:accept_2", "Lead accepted annotation 2"
    RESOLUTION_MERGE = "resolution:merge", "Lead accepted an edited answer"
    RESOLUTION_REJECT = "resolution:reject", "Lead rejected"
    RESOLUTION_REOPEN = "resolution:reopen", "Lead reopened"


class PairEvent(models.Model):
    """The pair's history: who did what, when. Append-only."""

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    kind = models.CharField(max_length=32, choices=PairEventKind.choices)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [choices_check("kind", PairEventKind, "pairevent_kind_valid")]
        indexes = [
            # The screening counts (annotator.screening) read these few kinds among millions
            # of events on a large project.
            models.Index(
                fields=["kind", "pair"],
                condition=Q(kind__in=["screened_out", "screening_accepted", "screening_rejected"]),
                name="pairevent_screening",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} on {self.pair_id} at {self.at:%Y-%m-%d %H:%M}"


class Assignment(models.Model):
    """One annotator's lease on one pair."""

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(User, on_delete=models.CASCADE, related_name="assignments")
    state = models.CharField(
        max_length=16, choices=AssignmentState.choices, default=AssignmentState.LEASED
    )
    leased_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    draft = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["annotator", "state"], name="assignment_annotator_state"),
            models.Index(fields=["state", "expires_at"], name="assignment_state_expiry"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "annotator"], name="assignment_once_per_annotator"
            ),
            choices_check("state", AssignmentState, "assignment_state_valid"),
        ]

    def __str__(self) -> str:
        return f"lease of pair {self.pair_id} by {self.annotator_id} ({self.state})"


class Annotation(models.Model):
    """One annotator's answer for one pair."""

    assignment = models.OneToOneField(
        Assignment, on_delete=models.CASCADE, related_name="annotation"
    )
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(User, on_delete=models.CASCADE, related_name="annotations")
    tier = models.CharField(max_length=16, choices=Tier.choices)
    defects = models.JSONField(default=list, blank=True)
    time_spent_ms = models.PositiveIntegerField(default=0)
    # The SHA-256 of the client's whole Idempotency-Key (annotator.submitting.key_digest): keys
    # cut to a length collided, and a repeat then answered with another submission's result.
    idempotency_key = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "annotator"], name="annotation_once_per_annotator"
            ),
            models.UniqueConstraint(
                fields=["annotator", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="annotation_idempotency_key_unique",
            ),
            choices_check("tier", Tier, "annotation_tier_valid"),
        ]
        # A person's annotated pairs from the index alone: the disputes queue by annotator
        # (review.selectors.disputes_queue) counts them against the disputed pairs.
        indexes = [models.Index(fields=["annotator", "pair"], name="annotation_annotator_pair")]

    def __str__(self) -> str:
        return f"annotation of pair {self.pair_id} by {self.annotator_id} ({self.tier})"


class Change(models.Model):
    """One atomic change. Boxes are [[x1, y1, x2, y2], ...] in pixels of that side's frame;
    an empty list means the entity is absent on that side."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="changes")
    position = models.PositiveSmallIntegerField(default=0)
    category = models.CharField(max_length=64)
    description = models.TextField()
    entity_a = models.CharField(max_length=200, blank=True)
    entity_b = models.CharField(max_length=200, blank=True)
    boxes_a = models.JSONField(default=list)
    boxes_b = models.JSONField(default=list)

    class Meta:
        ordering = ["position", "id"]
        # The pairs browser's and the disputes' category filter (console.pairs, review.selectors).
        indexes = [models.Index(fields=["category", "annotation"], name="change_category")]

    def __str__(self) -> str:
        return f"{self.category}: {self.description[:60]}"

    def as_json(self) -> dict:
        """The change as in the submit body."""
        return {
            "category": self.category,
            "description": self.description,
            "entity_a": self.entity_a,
            "entity_b": self.entity_b,
            "boxes_a": self.boxes_a,
            "boxes_b": self.boxes_b,
        }


class Prediction(models.Model):
    """A model's proposal for a pair; `changes` has the shape of the submit body's changes."""

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="predictions")
    model_name = models.CharField(max_length=100)
    model_version = models.CharField(max_length=100, blank=True)
    confidence = models.FloatField(null=True, blank=True)
    changes = models.JSONField(default=list)
    flags = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)  # why the model gave no usable answer, if it did not
    reasons = models.JSONField(default=dict, blank=True)  # flag → why, in words (a judge's)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "model_name", "model_version"], name="prediction_once_per_model"
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True)
                | (Q(confidence__gte=0) & Q(confidence__lte=1)),
                name="prediction_confidence_in_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model_name} {self.model_version} on pair {self.pair_id}"


class PairAssist(models.Model):
    """What a pair's pixels say, precomputed by a worker (pairdiff.assist): the A→B alignment
    and the difference components the workspace boxes with one click. One per pair; a pair
    without one is annotated by hand."""

    pair = models.OneToOneField(
        Pair, on_delete=models.CASCADE, primary_key=True, related_name="assist"
    )
    version = models.PositiveSmallIntegerField(default=0)
    alignment = models.JSONField(null=True, blank=True)
    components = models.JSONField(default=list, blank=True)
    error = models.CharField(max_length=300, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"assist of pair {self.pair_id}"


class PairCounts(models.Model):
    """A large project's pairs per status, counted by the periodic job (annotator.pair_counts)
    so that the pages listing them do not count a million rows on every request; each page
    that shows them says when they were counted. Small projects are counted live."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="pair_counts")
    counts = models.JSONField()  # status → pairs
    gold = models.PositiveIntegerField()  # gold pairs among them
    counted_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"pair counts of {self.project} at {self.counted_at:%Y-%m-%d %H:%M}"
