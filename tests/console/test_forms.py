"""The leads' forms (console/forms.py): the project form and the member form."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from console.forms import ProjectForm
from console.forms_members import MemberForm
from projects.models import Membership, Preset, Role
from tests.conftest import PASSWORD
from tests.console.helpers import STRONG_PASSWORD, _settings_data
from tests.factories import make_pair

# --- the project form ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "valid"),
    [
        ("overlap", "0", False),
        ("overlap", "1", True),
        ("overlap", "10", True),
        ("overlap", "11", False),
        ("iou_threshold", "0", False),
        ("iou_threshold", "0.01", True),
        ("iou_threshold", "1", True),
        ("iou_threshold", "1.01", False),
        ("gold_percent", "-1", False),
        ("gold_percent", "100", True),
        ("gold_percent", "100.5", False),
        ("baseline_percent", "-1", False),
        ("baseline_percent", "25", True),
        ("baseline_percent", "100.5", False),
        ("slug", "Bikes", False),
        ("slug", "bikes_2", True),
        ("slug", "cars", False),  # taken by the project fixture
    ],
)
def test_project_form_checks_ranges_and_slugs(project, field, value, valid):
    form = ProjectForm(_settings_data(**{field: value}))
    assert form.is_valid() is valid, form.errors
    if not valid:
        assert field in form.errors


def test_the_settings_set_the_text_only_baseline_limit_and_blank_keeps_it(db, outsider):
    form = ProjectForm(_settings_data(baseline_percent="25"))
    assert form.is_valid(), form.errors
    project = form.save_new(user=outsider)
    assert project.question_baseline_limit == 0.25
    form = ProjectForm(_settings_data(project, baseline_percent=""), instance=project)
    assert form.is_valid(), form.errors
    form.save_changes()
    project.refresh_from_db()
    assert project.question_baseline_limit == 0.25


def test_custom_taxonomy_needs_valid_category_lines(db):
    form = ProjectForm(_settings_data(preset=Preset.CUSTOM, categories_text=""))
    assert not form.is_valid()
    assert "at least one category" in " ".join(form.errors["categories_text"])

    form = ProjectForm(_settings_data(preset=Preset.CUSTOM, categories_text="glare | Glare"))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["categories"] == [{"slug": "glare", "name": "Glare", "hint": ""}]


def test_creating_a_project_makes_its_creator_lead(db, outsider):
    form = ProjectForm(
        _settings_data(gold_percent="12.5", synonyms_text="car: auto", vocabulary_text="car")
    )
    assert form.is_valid(), form.errors

    project = form.save_new(user=outsider)

    project.refresh_from_db()
    assert (project.slug, project.created_by, project.gold_rate) == ("bikes", outsider, 0.125)
    assert project.entity_synonyms == {"car": ["auto"]}
    assert project.entity_vocabulary == ["car"]
    assert project.category_slugs == ["attribute", "object", "counting", "relation"]
    assert Membership.objects.get(project=project, user=outsider).role == Role.LEAD


def test_editing_cannot_drop_a_category_pairs_use(project):
    make_pair(project, category="counting")
    form = ProjectForm(
        _settings_data(project, preset=Preset.CUSTOM, categories_text="attribute"),
        instance=project,
    )
    assert not form.is_valid()
    assert "use counting" in " ".join(form.errors["categories_text"])


# --- the member form -------------------------------------------------------------------------


def test_member_form_adds_an_existing_account_without_a_password(project, outsider):
    form = MemberForm({"username": "outsider", "role": "annotator"}, project=project)
    assert form.is_valid(), form.errors
    form.save()
    assert Membership.objects.get(project=project, user=outsider).role == Role.ANNOTATOR
    outsider.refresh_from_db()
    assert outsider.check_password(PASSWORD)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"username": "nobody", "role": "lead"}, "username", "no account named 'nobody'"),
        (
            {"username": "outsider", "role": "lead", "password": STRONG_PASSWORD},
            "password",
            "already has an account",
        ),
        ({"username": "newbie", "role": "lead", "password": "1234"}, "password", "too short"),
        ({"username": "lead", "role": "annotator"}, "username", "already a member"),
        ({"username": "Outsider", "role": "lead"}, "username", "did you mean outsider?"),
        ({"username": "bad name!", "role": "lead"}, "username", "Enter a valid username"),
        ({"username": "outsider", "role": "owner"}, "role", "Select a valid choice"),
    ],
)
def test_member_form_refuses(project, lead, outsider, data, field, message):
    form = MemberForm(data, project=project)
    assert not form.is_valid()
    assert message in " ".join(form.errors[field])


def test_member_form_creates_a_new_account_only_with_a_password(project):
    form = MemberForm(
        {"username": "newbie", "role": "researcher", "password": STRONG_PASSWORD}, project=project
    )
    assert form.is_valid(), form.errors
    form.save()
    user = get_user_model().objects.get(username="newbie")
    assert user.check_password(STRONG_PASSWORD)
    assert Membership.objects.get(project=project, user=user).role == Role.RESEARCHER
