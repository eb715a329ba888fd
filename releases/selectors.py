"""Reads of releases: the ones a user may see."""

from __future__ import annotations

from django.db.models import QuerySet

from projects import access
from projects.models import Project, Role
from releases.models import Release, ReleaseStatus


def releases_visible(user, project: Project, *, role: Role | None = None) -> QuerySet[Release]:
    """Releases of the project the user may read (rule: access.release_may_read); ``role`` when
    the caller knows it already."""
    role = role if role is not None else access.project_role(user, project)
    releases = Release.objects.filter(project=project).select_related("project", "job")
    if access.release_may_read(role, ready=False):
        return releases
    if access.release_may_read(role, ready=True):
        return releases.filter(status=ReleaseStatus.READY)
    return releases.none()


def release_visible(user, pk: int) -> Release | None:
    release = Release.objects.select_related("project").filter(pk=pk).first()
    if release is None or not releases_visible(user, release.project).filter(pk=pk).exists():
        return None
    return release
