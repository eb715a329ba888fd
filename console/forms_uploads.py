"""The upload page's forms: a zip of pairs with its manifest (or a Label Studio export), and one
pair by hand."""

from __future__ import annotations

import zipfile
from pathlib import PurePosixPath
from typing import cast

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile

from annotator.intake.uploads import MAX_MANIFEST_BYTES, ImportFormat
from annotator.services import PairInput
from pairdiff import strictjson
from pairdiff.manifest import MAX_ID_LENGTH, MAX_INSTRUCTION_LENGTH
from projects.models import Project

MANIFEST_SUFFIXES = (".jsonl", ".ndjson", ".csv")


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
