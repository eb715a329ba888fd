"""Projects and their members. Rules that must never break are constraints."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from config.constraints import choices_check

User = settings.AUTH_USER_MODEL


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    LEAD = "lead", "Lead"
    RESEARCHER = "researcher", "Researcher"


class Preset(models.TextChoices):
    MINCU = "mincu", "MinCU (4 categories)"
    VDIFF = "vdiff", "VDiff-Bench (10 categories)"
    CUSTOM = "custom", "Custom"


class TierRule(models.TextChoices):
    """Which pairs of quality tiers can make a pair benchmark data (when geometry agrees)."""

    STRICT = "strict", "Both excellent (MinCU): excellent + good goes to a lead"
    GOOD = "good", "Excellent or good from both: excellent or good + fair goes to a lead"


class RotatedBoxes(models.TextChoices):
    """What a Label Studio import does with a rotated rectangle (Diffmark boxes are upright)."""

    BOUND = "bound", "Import its upright bounding box, with a note in the report"
    REFUSE = "refuse", "Refuse the annotation that has it"


class LeaseOrder(models.TextChoices):
    """The order in which annotators are given the pairs nobody has started yet."""

    IMPORT = "import", "Import order"
    RANDOM = "random", "Random"
    PRIORITISED = "prioritised", "Prioritised: most useful first"


class DraftDescriptions(models.TextChoices):
    """Whether the workspace offers descriptions drafted from the pixels (docs/assists.md)."""

    OFF = "off", "Off"
    ON = "on", "On for every pair"
    FIRST = "first", "On, except on gold pairs and for a pair's second annotator"


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    preset = models.CharField(max_length=16, choices=Preset.choices, default=Preset.MINCU)
    # [{"slug": ..., "name": ..., "hint": ...}], from a preset or written by a lead
    categories = models.JSONField(default=list)
    overlap = models.PositiveSmallIntegerField(default=2)
    iou_threshold = models.FloatField(default=0.5)
    tier_rule = models.CharField(max_length=16, choices=TierRule.choices, default=TierRule.STRICT)
    entity_vocabulary = models.JSONField(default=list, blank=True)
    entity_synonyms = models.JSONField(default=dict, blank=True)
    guidelines = models.TextField(blank=True)
    gold_rate = models.FloatField(default=0.0)
    show_predictions = models.BooleanField(default=True)
    # Right after submitting a gold pair, the annotator sees their own boxes against the known
    # answer (never anyone else's work, never before submitting).
    gold_feedback = models.BooleanField(default=False)
    # Drafted descriptions anchor what people write: a lead chooses where they are offered.
    draft_descriptions = models.CharField(
        "drafted descriptions",
        max_length=8,
        choices=DraftDescriptions.choices,
        default=DraftDescriptions.FIRST,
    )
    licence = models.CharField(max_length=200, blank=True)
    rotated_boxes = models.CharField(
        max_length=8, choices=RotatedBoxes.choices, default=RotatedBoxes.BOUND
    )
    # The Label Studio config, the mapping read from it and the lead's value mapping of the
    # last import ({} when none): releases write label_studio.json in those names.
    labelstudio = models.JSONField(default=dict, blank=True)
    # The best text-only baseline a release's questions may reach before its build is refused.
    question_baseline_limit = models.FloatField(default=0.4)
    # The share of each split's pairs a release also asks as no-difference controls (image B
    # an unchanged copy of image A, "no difference" the truth); 0 asks none.
    question_control_rate = models.FloatField(default=0.1)
    # Screening flags (pixeldiff's, the VLM judge's) that hold a new pair back from annotators
    # until a lead accepts it (annotator/screening.py).
    screening_flags = models.JSONField(default=list, blank=True)
    judge_prompt = models.TextField(blank=True)  # "" = the built-in MinCU questions
    lease_order = models.CharField(
        max_length=16, choices=LeaseOrder.choices, default=LeaseOrder.IMPORT
    )
    # The events some webhook endpoint of the project listens to, kept by webhooks.services:
    # the services that emit an event read it from the project row they already hold, so a
    # project without webhooks pays no query for them (webhooks.outbox).
    webhook_events = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        db_table = "annotator_project"  # made there; moved without touching the table
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(overlap__gte=1) & Q(overlap__lte=10), name="project_overlap_1_to_10"
            ),
            models.CheckConstraint(
                condition=Q(iou_threshold__gt=0) & Q(iou_threshold__lte=1),
                name="project_iou_threshold_in_0_1",
            ),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0) & Q(gold_rate__lte=1), name="project_gold_rate_in_0_1"
            ),
            choices_check("preset", Preset, "project_preset_valid"),
            choices_check("tier_rule", TierRule, "project_tier_rule_valid"),
            choices_check("rotated_boxes", RotatedBoxes, "project_rotated_boxes_valid"),
            choices_check("lease_order", LeaseOrder, "project_lease_order_valid"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def category_slugs(self) -> list[str]:
        return [c["slug"] for c in self.categories]

    def category_name(self, slug: str) -> str:
        return next((c["name"] for c in self.categories if c["slug"] == slug), slug)


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotator_membership"
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_once_per_project"),
            choices_check("role", Role, "membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.role} · {self.project}"
