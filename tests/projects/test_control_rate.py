"""The no-difference control rate is a project setting: the model's default, the settings
form, the REST project, the release options and ``build_release --control-rate``."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from console.forms import ProjectForm
from pairdiff.release.options import ReleaseOptions
from projects.creating import project_create
from projects.models import Preset
from releases.building import release_options
from releases.models import Release
from tests.conftest import PASSWORD
from tests.console.helpers import _settings_data


def test_a_new_project_asks_for_controls_at_ten_percent(db):
    project = project_create(slug="bikes", name="Bikes", preset=Preset.MINCU)
    assert project.question_control_rate == 0.1
    assert release_options(project=project, options=None).control_rate == 0.1
    asked = release_options(project=project, options=ReleaseOptions(control_rate=0.25))
    assert asked.control_rate == 0.25  # a release may ask for another rate
    project.question_control_rate = 0.0
    assert release_options(project=project, options=None).control_rate == 0.0


def test_a_release_may_ask_for_no_controls_where_the_project_has_some(db):
    project = project_create(slug="bikes", name="Bikes", preset=Preset.MINCU)
    asked = release_options(project=project, options=ReleaseOptions(control_rate=0.0))
    assert asked.control_rate == 0.0
    assert release_options(project=project, options=ReleaseOptions()).control_rate == 0.1


@pytest.mark.parametrize(("value", "valid"), [("-1", False), ("20", True), ("50.5", False)])
def test_the_settings_form_takes_a_control_percent(project, value, valid):
    form = ProjectForm(_settings_data(control_percent=value))
    assert form.is_valid() is valid, form.errors


def test_the_settings_set_the_control_rate_and_blank_keeps_it(db, outsider):
    form = ProjectForm(_settings_data(control_percent="20"))
    assert form.is_valid(), form.errors
    project = form.save_new(user=outsider)
    assert project.question_control_rate == 0.2
    form = ProjectForm(_settings_data(project, control_percent=""), instance=project)
    assert form.is_valid(), form.errors
    form.save_changes()
    project.refresh_from_db()
    assert project.question_control_rate == 0.2
    assert ProjectForm(instance=project).fields["control_percent"].initial == 20


def test_the_rest_project_shows_the_control_rate(client, project, lead):
    client.login(username="lead", password=PASSWORD)
    response = client.get(f"/api/v1/projects/{project.slug}/")
    assert response.status_code == 200, response.content
    assert response.json()["question_control_rate"] == project.question_control_rate


def test_build_release_takes_a_control_rate(project):
    with pytest.raises(CommandError, match="control rate"):
        call_command(
            "build_release", "--project", project.slug, "--name", "v1", "--control-rate", "0.9"
        )
    assert not Release.objects.filter(project=project).exists()
