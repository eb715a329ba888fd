"""The members page's forms: adding someone to a project, changing a member's role."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from projects.members import membership_set, user_ensure
from projects.models import Membership, Project, Role


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
