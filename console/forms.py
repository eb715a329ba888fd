"""The project form of the leads' pages: a new project and a project's settings (members:
forms_members.py; uploads: forms_uploads.py).

Every text format a lead types (categories, vocabulary, synonyms) is read by a small function
that reports each bad line by its number, so the message points at what to fix.
"""

from __future__ import annotations

from typing import cast

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify

from annotator.models import Change, Pair
from annotator.screening import FLAG_LABELS
from annotator.textformats import (
    categories_parse,
    categories_text,
    synonyms_parse,
    synonyms_text,
    vocabulary_parse,
)
from pairdiff.taxonomy import PRESETS, preset_categories
from pairdiff.vlm.judge import DEFAULT_QUESTIONS
from projects.creating import project_create
from projects.members import membership_set
from projects.models import (
    DraftDescriptions,
    LeaseOrder,
    Preset,
    Project,
    Role,
    RotatedBoxes,
    TierRule,
)


class ProjectForm(forms.ModelForm):
    """Create (with a slug) or edit (without) a project, its taxonomy and agreement policy."""

    slug = forms.SlugField(
        max_length=64,
        help_text="In URLs and the API: lowercase letters, digits, hyphens. It cannot change.",
    )
    overlap = forms.IntegerField(
        min_value=1, max_value=10, initial=2, help_text="Annotators per pair (1–10)."
    )
    iou_threshold = forms.FloatField(
        label="IoU threshold",
        max_value=1,
        initial=0.5,
        help_text="Matched boxes agree at this IoU or above; more than 0, at most 1.",
    )
    categories_text = forms.CharField(
        label="Custom categories",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text="One per line: slug | Name | hint. Used when the taxonomy is Custom.",
    )
    vocabulary_text = forms.CharField(
        label="Entity vocabulary",
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One entity label per line; offered to annotators as suggestions.",
    )
    synonyms_text = forms.CharField(
        label="Entity synonyms",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="One per line: canonical: variant, variant — e.g. car: automobile, sedan.",
    )
    gold_percent = forms.FloatField(
        label="Gold rate (%)",
        min_value=0,
        max_value=100,
        initial=0,
        help_text="Percent of each annotator's queue drawn from gold pairs (0–100).",
    )

    baseline_percent = forms.FloatField(
        label="Text-only baseline limit (%)",
        required=False,  # blank keeps the project's limit
        min_value=0,
        max_value=100,
        initial=40,
        help_text="A release is refused when a baseline that never looks at the images answers "
        "more of its questions than this (a lead may override). Chance is 33 %.",
    )
    control_percent = forms.FloatField(
        label="No-difference controls (%)",
        required=False,  # blank keeps the project's rate
        min_value=0,
        max_value=50,
        initial=10,
        help_text="Share of each split's pairs a release also asks with an unchanged image B, "
        "“no difference” being the answer: a model that always claims a change loses them.",
    )
    screening_flags = forms.MultipleChoiceField(
        label="Hold back pairs flagged",
        choices=list(FLAG_LABELS.items()),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="A new pair with any of these flags (from pre-annotation) waits on the "
        "Screening page until a lead accepts or rejects it. Pairs already started are not held.",
    )

    class Meta:
        model = Project
        fields = [
            "name",
            "slug",
            "description",
            "preset",
            "overlap",
            "iou_threshold",
            "tier_rule",
            "guidelines",
            "show_predictions",
            "gold_feedback",
            "draft_descriptions",
            "licence",
            "rotated_boxes",
            "lease_order",
            "judge_prompt",
        ]
        widgets = {
            "preset": forms.RadioSelect,
            "tier_rule": forms.RadioSelect,
            "rotated_boxes": forms.RadioSelect,
            "lease_order": forms.RadioSelect,
            "draft_descriptions": forms.RadioSelect,
            "judge_prompt": forms.Textarea(
                attrs={"rows": 5, "spellcheck": "false", "placeholder": DEFAULT_QUESTIONS}
            ),
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 10}),
        }
        help_texts = {
            "guidelines": "Markdown shown to annotators: paragraphs, # headings, - lists, "
            "**bold**, *italic*, `code`, [links](https://…). HTML is shown as text.",
            "show_predictions": "Annotators see model predictions as a starting point.",
            "gold_feedback": "Right after submitting a gold pair, annotators see their own boxes "
            "against the known answer.",
            "draft_descriptions": "With one click on a changed region the workspace can offer "
            "a description drafted from the pixels (the annotator accepts it with A or types "
            "over it). Drafts anchor what people write: keep them off where an independent "
            "second opinion matters.",
            "licence": "Written into every release's dataset card.",
            "rotated_boxes": "Label Studio imports: what to do with a rotated rectangle.",
            "lease_order": "Which unstarted pairs annotators get first; pairs someone started "
            "always come first. Prioritised: pairs where pre-annotators disagree or are unsure, "
            "and categories rare among accepted pairs.",
            "judge_prompt": "The VLM judge's questions (vlm-judge backend); {instruction} is "
            "replaced by the pair's instruction. Empty: MinCU's three questions. The answer "
            "format is always added.",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        project = self.instance
        # A radio list without the blank choice. (These are ChoiceFields; self.fields holds Fields.)
        cast(forms.ChoiceField, self.fields["preset"]).choices = Preset.choices
        cast(forms.ChoiceField, self.fields["tier_rule"]).choices = TierRule.choices
        self.fields["tier_rule"].required = False  # forms and scripts that omit it keep the rule
        cast(forms.ChoiceField, self.fields["rotated_boxes"]).choices = RotatedBoxes.choices
        self.fields["rotated_boxes"].required = False
        cast(forms.ChoiceField, self.fields["lease_order"]).choices = LeaseOrder.choices
        self.fields["lease_order"].required = False
        cast(
            forms.ChoiceField, self.fields["draft_descriptions"]
        ).choices = DraftDescriptions.choices
        self.fields["draft_descriptions"].required = False
        if project.pk:
            del self.fields["slug"]
            self.fields["categories_text"].initial = categories_text(project.categories)
            self.fields["vocabulary_text"].initial = "\n".join(project.entity_vocabulary)
            self.fields["synonyms_text"].initial = synonyms_text(project.entity_synonyms)
            self.fields["gold_percent"].initial = round(project.gold_rate * 100, 2)
            self.fields["baseline_percent"].initial = round(
                project.question_baseline_limit * 100, 2
            )
            self.fields["control_percent"].initial = round(project.question_control_rate * 100, 2)
            self.fields["screening_flags"].initial = list(project.screening_flags)
        # The agreement policy as it was, to tell whether verdicts must be recomputed.
        self._policy_before = self._policy(project)
        self._queue_before = (list(project.screening_flags), project.lease_order)

    def preset_options(self) -> list[tuple[object, str]]:
        """The taxonomy radios, each with the categories it brings."""
        hints = {name: ", ".join(c.name for c in cats) for name, cats in PRESETS.items()}
        hints[Preset.CUSTOM] = "Your own categories, one per line below."
        return [(radio, hints.get(radio.data["value"], "")) for radio in self["preset"]]

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if slug != slugify(slug):
            raise ValidationError("Use lowercase letters, digits and hyphens only.")
        return slug

    def clean_tier_rule(self) -> str:
        return self.cleaned_data["tier_rule"] or self.instance.tier_rule or TierRule.STRICT

    def clean_rotated_boxes(self) -> str:
        return self.cleaned_data["rotated_boxes"] or self.instance.rotated_boxes

    def clean_draft_descriptions(self) -> str:
        value = self.cleaned_data["draft_descriptions"]
        return value or self.instance.draft_descriptions or DraftDescriptions.FIRST

    def clean_lease_order(self) -> str:
        return self.cleaned_data["lease_order"] or self.instance.lease_order or LeaseOrder.IMPORT

    def clean_iou_threshold(self) -> float:
        value = self.cleaned_data["iou_threshold"]
        if value <= 0:
            raise ValidationError("The IoU threshold must be more than 0.")
        return value

    def clean_vocabulary_text(self) -> list[str]:
        return vocabulary_parse(self.cleaned_data["vocabulary_text"])

    def clean_synonyms_text(self) -> dict[str, list[str]]:
        return synonyms_parse(self.cleaned_data["synonyms_text"])

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        preset = data.get("preset")
        if preset == Preset.CUSTOM:
            try:
                data["categories"] = categories_parse(data.get("categories_text", ""))
            except ValidationError as exc:
                self.add_error("categories_text", exc)
        elif preset:
            data["categories"] = preset_categories(preset)
        if self.instance.pk and "categories" in data:
            self._check_categories_in_use(data["categories"])
        return data

    def _check_categories_in_use(self, categories: list[dict[str, str]]) -> None:
        """Removing a category that answers or pairs already use would orphan them."""
        kept = {c["slug"] for c in categories}
        used = set(
            Change.objects.filter(annotation__pair__project=self.instance).values_list(
                "category", flat=True
            )
        ) | set(Pair.objects.filter(project=self.instance).values_list("category_hint", flat=True))
        missing = sorted(used - kept - {""})
        if missing:
            self.add_error(
                "preset" if self.cleaned_data["preset"] != Preset.CUSTOM else "categories_text",
                f"Pairs or annotations use {', '.join(missing)}; keep these categories.",
            )

    @transaction.atomic
    def save_new(self, *, user) -> Project:
        """Create the project through the service; its creator becomes its first lead."""
        data = self.cleaned_data
        project = project_create(
            slug=data["slug"],
            name=data["name"],
            preset=data["preset"],
            overlap=data["overlap"],
            user=user,
            categories=data["categories"],
        )
        fields: tuple[str, ...]
        fields = ("description", "iou_threshold", "tier_rule", "guidelines", "show_predictions")
        fields += ("gold_feedback", "rotated_boxes")
        for name in (*fields, "licence", "lease_order", "judge_prompt"):
            setattr(project, name, data[name])
        project.draft_descriptions = data["draft_descriptions"]
        self._apply_parsed(project)
        project.save()
        membership_set(project=project, user=user, role=Role.LEAD)
        return project

    def save_changes(self) -> bool:
        """Save an edit; True when the agreement policy (IoU threshold, tier rule, synonyms)
        changed."""
        project = self.instance
        self._apply_parsed(project)
        project.save()
        return self._policy(project) != self._policy_before

    def queue_changed(self) -> tuple[bool, bool]:
        """After saving: (screening flags changed, lease order changed)."""
        flags, order = self._queue_before
        project = self.instance
        return sorted(flags) != sorted(project.screening_flags), order != project.lease_order

    @staticmethod
    def _policy(project: Project) -> tuple:
        return (project.iou_threshold, project.tier_rule, project.entity_synonyms)

    def _apply_parsed(self, project: Project) -> None:
        data = self.cleaned_data
        project.categories = data["categories"]
        project.entity_vocabulary = data["vocabulary_text"]
        project.entity_synonyms = data["synonyms_text"]
        project.gold_rate = round(data["gold_percent"] / 100, 4)
        if data.get("baseline_percent") is not None:
            project.question_baseline_limit = round(data["baseline_percent"] / 100, 4)
        if data.get("control_percent") is not None:
            project.question_control_rate = round(data["control_percent"] / 100, 4)
        project.screening_flags = list(data.get("screening_flags") or [])
