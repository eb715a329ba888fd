"""Forms of the leads' pages: a project's settings, its members, and pair uploads.

Every text format a lead types (categories, vocabulary, synonyms) is read by a small function
that reports each bad line by its number, so the message points at what to fix.
"""

from __future__ import annotations

import zipfile
from pathlib import PurePosixPath
from typing import cast

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile
from django.db import transaction
from django.utils.text import slugify

from annotator.models import Change, Pair
from annotator.screening import FLAG_LABELS
from annotator.services import PairInput
from annotator.textformats import (
    categories_parse,
    categories_text,
    synonyms_parse,
    synonyms_text,
    vocabulary_parse,
)
from annotator.uploads import MAX_MANIFEST_BYTES, ImportFormat
from pairdiff import strictjson
from pairdiff.manifest import MAX_ID_LENGTH, MAX_INSTRUCTION_LENGTH
from pairdiff.taxonomy import PRESETS, preset_categories
from pairdiff.vlm.judge import DEFAULT_QUESTIONS
from projects.creating import project_create
from projects.members import membership_set, user_ensure
from projects.models import (
    DraftDescriptions,
    LeaseOrder,
    Membership,
    Preset,
    Project,
    Role,
    RotatedBoxes,
    TierRule,
)

MANIFEST_SUFFIXES = (".jsonl", ".ndjson", ".csv")


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


# --- members ---------------------------------------------------------------------------------


class MemberForm(forms.Form):
    """Add someone to a project. An existing account is added as it is; a new one is created
    only when the lead gives it a password (a typo must not create a ghost account, and a
    lead must never be able to change the password of someone who already has an account)."""

    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    password = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="Only for a new account; pass it on to them. Leave empty for an existing one.",
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.project = project

    def clean_username(self) -> str:
        username = self.cleaned_data["username"].strip()
        get_user_model().username_validator(username)
        return username

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        username, password = data.get("username"), data.get("password")
        if not username:
            return data
        users = get_user_model().objects
        user = users.filter(username=username).first()
        similar = users.filter(username__iexact=username).first() if user is None else None
        if similar is not None:
            self.add_error("username", f"There is no {username!r}; did you mean {similar}?")
        elif user is None and not password:
            self.add_error(
                "username",
                f"There is no account named {username!r}. Check the spelling, or give a "
                "password to create it.",
            )
        elif user is not None and password:
            self.add_error(
                "password", f"{username!r} already has an account; leave the password empty."
            )
        elif user is None:
            try:
                validate_password(data["password"], get_user_model()(username=username))
            except ValidationError as exc:
                self.add_error("password", exc)
        elif Membership.objects.filter(project=self.project, user=user).exists():
            self.add_error("username", f"{username} is already a member; change their role below.")
        return data

    def save(self) -> Membership:
        data = self.cleaned_data
        user = user_ensure(username=data["username"], password=data["password"] or None)
        return membership_set(project=self.project, user=user, role=Role(data["role"]))


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


# --- uploads ---------------------------------------------------------------------------------


class ImportForm(forms.Form):
    """A zip of images with its manifest inside (at the top of the zip), or given next to it;
    or a zip of images with a Label Studio JSON export next to it."""

    source_format = forms.ChoiceField(
        label="What you upload",
        choices=ImportFormat.choices,
        initial=ImportFormat.MANIFEST,
        required=False,  # a form (or script) that does not say uploads a manifest
        widget=forms.RadioSelect,
    )
    images = forms.FileField(
        label="Zip of images", help_text="With manifest.jsonl or manifest.csv at its top level."
    )
    manifest = forms.FileField(
        required=False,
        label="Manifest or export",
        help_text="Optional for a manifest inside the zip; the .json export for Label Studio.",
    )
    config = forms.FileField(
        required=False,
        label="Label Studio labelling config",
        help_text="Settings → Labeling Interface → Code, saved as .xml. It says which Image tag "
        "shows which image; without it the mapping is inferred where it is unambiguous.",
    )
    mapping = forms.CharField(
        required=False,
        label="Value mapping (JSON or YAML)",
        widget=forms.Textarea(attrs={"rows": 5, "spellcheck": "false"}),
        help_text="Label Studio choices → categories, tiers, absent side; users → members. "
        "You can edit it on the preview.",
    )

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        data["source_format"] = data.get("source_format") or ImportFormat.MANIFEST
        images = data.get("images")
        if data["source_format"] == ImportFormat.LABEL_STUDIO:
            if not data.get("manifest") and "manifest" not in self.errors:
                self.add_error("manifest", "choose the Label Studio export (.json)")
            return data
        if images is not None and not data.get("manifest") and not self.errors:
            try:
                data["manifest"] = manifest_from_zip(images)
            except ValidationError as exc:
                self.add_error("images", exc)
        return data


def manifest_from_zip(upload: UploadedFile) -> UploadedFile:
    """The manifest at the top level of an uploaded zip, read out as a file of its own.

    Image paths in a manifest are relative to the zip's top, so a manifest inside a folder
    would name files the import cannot find: it is refused with a message saying so.
    """
    try:
        with zipfile.ZipFile(upload) as archive:
            names = [i.filename for i in archive.infolist() if not i.is_dir()]
            name = _manifest_name(names)
            info = archive.getinfo(name)
            if info.file_size > MAX_MANIFEST_BYTES:
                raise ValidationError(f"{name} is over {MAX_MANIFEST_BYTES // 1024**2} MB.")
            data = archive.read(info)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ValidationError(f"This is not a readable zip file ({exc}).") from exc
    finally:
        upload.seek(0)
    return SimpleUploadedFile(PurePosixPath(name).name, data, content_type="text/plain")


def _manifest_name(names: list[str]) -> str:
    candidates = [
        n
        for n in names
        if n.lower().endswith(MANIFEST_SUFFIXES) or PurePosixPath(n).name.lower() == "manifest.json"
    ]
    top = [n for n in candidates if "/" not in n.strip("/")]
    named = [n for n in top if PurePosixPath(n).stem.lower() == "manifest"]
    if len(named) == 1 or len(top) == 1:
        return (named or top)[0]
    if len(top) > 1:
        raise ValidationError(
            f"The zip holds several manifests ({', '.join(sorted(top)[:5])}); "
            "name the one to import manifest.jsonl or manifest.csv, or upload it separately."
        )
    if candidates:
        raise ValidationError(
            f"Found {candidates[0]} inside a folder; put the manifest at the top of the zip "
            "(image paths are read from there), or upload it separately."
        )
    raise ValidationError(
        "No manifest.jsonl or manifest.csv at the top of the zip; add one or upload it separately."
    )


class PairForm(forms.Form):
    """One pair: two image files and the optional fields of a manifest row."""

    image_a = forms.FileField(label="Image A")
    image_b = forms.FileField(label="Image B")
    external_id = forms.CharField(label="ID", max_length=MAX_ID_LENGTH, required=False)
    instruction = forms.CharField(
        max_length=MAX_INSTRUCTION_LENGTH,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="The edit instruction, if the pair came from one.",
    )
    category = forms.ChoiceField(label="Category hint", required=False)
    metadata = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
        help_text='A JSON object, e.g. {"source": "coco", "split": "val"}.',
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["category"]).choices = [("", "—")] + [
            (c["slug"], c["name"]) for c in project.categories
        ]

    def clean_metadata(self) -> dict:
        text = self.cleaned_data["metadata"].strip()
        if not text:
            return {}
        try:
            value = strictjson.loads(text)
        except strictjson.JSONRejected as exc:
            raise ValidationError(f"Not usable JSON: {exc}.") from exc
        if not isinstance(value, dict):
            raise ValidationError("Metadata must be a JSON object: {…}.")
        return value

    def pair_input(self) -> PairInput:
        data = self.cleaned_data
        return PairInput(
            image_a=data["image_a"].read(),
            image_b=data["image_b"].read(),
            external_id=data["external_id"].strip(),
            instruction=data["instruction"].strip(),
            category=data["category"],
            metadata=data["metadata"],
        )
