"""The form of a new release: its name and split plan."""

from __future__ import annotations

import re

from django import forms

from pairdiff.release.options import ReleaseOptions
from pairdiff.release.splits import MINCU_TEST_RATIO, SplitPlan, SplitPlanInvalid

RATIO_FIELDS = ("ratio_easy", "ratio_medium", "ratio_hard")

# The form field a SplitPlanInvalid goes next to, by the plan field it names; one about several
# fields (val and test together) goes under the row of fractions.
_PLAN_FIELDS = {
    "val_fraction": "val_fraction",
    "test_fraction": "test_fraction",
    "test_per_category": "test_per_category",
    "test_ratio": "ratio_easy",
}


def _ratio_part(label: str) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        required=False,
        min_value=0,
        max_value=1000,
        widget=forms.NumberInput(attrs={"placeholder": "–", "class": "ratio-part"}),
    )


def _fraction(label: str) -> forms.FloatField:
    return forms.FloatField(
        label=label,
        initial=0.1,
        min_value=0,
        max_value=1,
        widget=forms.NumberInput(attrs={"step": "0.01"}),
    )


class ReleaseForm(forms.Form):
    """A release's name and split plan; ``plan`` is the SplitPlan once the form is valid."""

    name = forms.CharField(
        max_length=100,
        help_text="Unique in the project, e.g. v1 or 2025-06; releases never change.",
        widget=forms.TextInput(attrs={"placeholder": "v1", "autocomplete": "off"}),
    )
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**31 - 1)
    val_fraction = _fraction("Val fraction")
    test_fraction = _fraction("Test fraction")
    test_per_category = forms.IntegerField(
        label="Test pairs per category",
        required=False,
        min_value=0,
        help_text="An exact count instead of the test fraction (MinCU: 500).",
        widget=forms.NumberInput(attrs={"placeholder": "use the fraction"}),
    )
    ratio_easy = _ratio_part("Easy")
    ratio_medium = _ratio_part("Medium")
    ratio_hard = _ratio_part("Hard")
    mincu_ratio = forms.BooleanField(
        label="MinCU mix, easy : medium : hard = 1 : 2 : 2",
        required=False,  # when ticked, it takes the place of the three numbers
    )

    strict = forms.BooleanField(
        label="MinCU strict filter: two excellent answers, no defect, exactly one change",
        required=False,
    )
    strict_no_lead = forms.BooleanField(label="…and leave out pairs a lead decided", required=False)
    swap_ab = forms.BooleanField(
        label="Add MinCU's A/B order-swap augmentation to half the training targets",
        required=False,
    )
    allow_baselines = forms.BooleanField(
        label="Build even if a text-only baseline beats the project's limit (lead override)",
        required=False,
    )

    plan: SplitPlan

    @property
    def options(self) -> ReleaseOptions:
        data = self.cleaned_data
        return ReleaseOptions(
            strict=data.get("strict", False),
            strict_no_lead=data.get("strict_no_lead", False),
            swap_ab=data.get("swap_ab", False),
            allow_baselines=data.get("allow_baselines", False),
        )

    def option_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in ("strict", "strict_no_lead", "swap_ab", "allow_baselines")]

    def ratio_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in RATIO_FIELDS]

    def ratio_errors(self) -> list[str]:
        return [str(error) for name in RATIO_FIELDS for error in self.errors.get(name, [])]

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        try:
            self.plan = SplitPlan(
                seed=data["seed"],
                val_fraction=data["val_fraction"],
                test_fraction=data["test_fraction"],
                test_per_category=data.get("test_per_category"),
                test_ratio=self._ratio(data),
            )
        except SplitPlanInvalid as exc:
            self.add_error(_PLAN_FIELDS.get(exc.field), str(exc))
        return data

    def _ratio(self, data: dict) -> tuple[int, int, int] | None:
        if data.get("mincu_ratio"):
            return MINCU_TEST_RATIO
        parts = [data.get(name) for name in RATIO_FIELDS]
        if all(part is None for part in parts):
            return None
        if any(part is None for part in parts):
            raise SplitPlanInvalid(
                "the difficulty ratio needs all three parts (easy, medium, hard), or none",
                field="test_ratio",
            )
        return tuple(parts)  # type: ignore[return-value]


COORDS_CHOICES = [
    ("1000", "[0, 1000] (Qwen-VL, MinCU)"),
    ("pixel", "pixels of each image"),
    ("unit", "[0, 1]"),
]
_COORDS_FLAG = re.compile(r"--coords (1000|pixel|unit)")
_COORDS_LIST = re.compile(r"declare the space the boxes are in \([^)]*\)")


def coords_in_form_words(message: str) -> str:
    """A scorer's refusal as the release page's form says it: the command's "--coords unit" is
    the form's Box coordinates “[0, 1]”."""
    labels = dict(COORDS_CHOICES)
    message = _COORDS_FLAG.sub(lambda m: f"Box coordinates “{labels[m.group(1)]}”", message)
    return _COORDS_LIST.sub("choose the Box coordinates the file uses", message)


class EvaluationForm(forms.Form):
    """Predictions to score against a release, from the release page."""

    file = forms.FileField(label="Predictions (JSONL)")
    model = forms.CharField(label="Model", max_length=100)
    coords = forms.ChoiceField(label="Box coordinates", choices=COORDS_CHOICES, initial="1000")
