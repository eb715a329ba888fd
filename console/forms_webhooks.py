"""The lead's form for registering a webhook endpoint (webhooks.services checks the rest)."""

from __future__ import annotations

from django import forms

from webhooks.models import SUBSCRIBABLE
from webhooks.services import MAX_SECRET


class EndpointForm(forms.Form):
    url = forms.URLField(
        label="Payload URL",
        max_length=2000,
        assume_scheme="https",
        help_text="Public http(s) addresses only; private and metadata addresses are refused.",
    )
    events = forms.MultipleChoiceField(
        choices=[(kind.value, kind.value) for kind in SUBSCRIBABLE],
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Pick at least one event."},
    )
    secret = forms.CharField(
        required=False,
        max_length=MAX_SECRET,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        help_text="Signs every delivery (HMAC-SHA256). Leave empty and one is made for you, "
        "shown once.",
    )
