"""The Upload page's synthesis form: a zip of single photos and the options of the job."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from annotator.intake.synthesis import (
    MAX_PER_IMAGE,
    SynthesisOptions,
    SynthesisUnusable,
    synthesis_options,
)
from pairdiff.synth.custom import CATEGORIES
from pairdiff.taxonomy import VDIFF

_NAMES = {c.slug: c.name for c in VDIFF}


class SynthesisForm(forms.Form):
    images = forms.FileField(
        label="Zip of photos",
        help_text="Single photos (JPEG, PNG, WebP, TIFF), checked like every upload.",
    )
    per_image = forms.IntegerField(
        label="Pairs per photo", min_value=1, max_value=MAX_PER_IMAGE, initial=10
    )
    categories = forms.MultipleChoiceField(
        choices=[(c, _NAMES.get(c, c)) for c in CATEGORIES],
        initial=list(CATEGORIES),
        widget=forms.CheckboxSelectMultiple,
        help_text="VDiff-Bench's categories; they take turns over all the pairs.",
    )
    gold = forms.BooleanField(
        label="Mix into queues as gold pairs",
        required=False,
        help_text="At the project's gold rate. Otherwise they are regular pairs with a known "
        "answer (a synthetic benchmark or a held-out set).",
    )
    seed = forms.IntegerField(
        min_value=0, max_value=2**32 - 1, initial=0, help_text="Same photos, same seed: same pairs."
    )

    def clean_images(self):
        images = self.cleaned_data["images"]
        if not images.name.lower().endswith(".zip"):
            raise ValidationError("Send the photos as one .zip file.")
        return images

    def options(self) -> SynthesisOptions:
        data = self.cleaned_data
        try:
            return synthesis_options(
                per_image=data["per_image"],
                categories=data["categories"],
                gold=data["gold"],
                seed=data["seed"],
            )
        except SynthesisUnusable as exc:  # the fields above already bound every value
            raise ValidationError(str(exc)) from exc
