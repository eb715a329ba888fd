"""Personas and a project to work in; every test's files go to its own folder."""

from __future__ import annotations

import pytest

from annotator.models import Preset, Role
from annotator.services import membership_set, project_create, user_ensure

PASSWORD = "correct horse battery staple"


def pytest_collection_modifyitems(config, items):
    """Tests marked `postgres` need real row locks; they run in CI's PostgreSQL pass."""
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        return
    keep = [item for item in items if item.get_closest_marker("postgres") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def project(db):
    return project_create(slug="cars", name="Cars", preset=Preset.MINCU)


def member(project, username: str, role: Role | str):
    user = user_ensure(username=username, password=PASSWORD)
    membership_set(project=project, user=user, role=Role(role))
    return user


@pytest.fixture
def annotator_1(project):
    return member(project, "annotator_1", Role.ANNOTATOR)


@pytest.fixture
def annotator_2(project):
    return member(project, "annotator_2", Role.ANNOTATOR)


@pytest.fixture
def lead(project):
    return member(project, "lead", Role.LEAD)


@pytest.fixture
def researcher(project):
    return member(project, "researcher", Role.RESEARCHER)


@pytest.fixture
def outsider(db):
    return user_ensure(username="outsider", password=PASSWORD)
