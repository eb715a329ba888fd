"""Starting a project: its slug, preset taxonomy and overlap."""

from __future__ import annotations

from django.utils.text import slugify

from pairdiff.taxonomy import preset_categories
from projects.models import Preset, Project


def project_create(
    *,
    slug: str,
    name: str = "",
    preset: str = Preset.MINCU,
    overlap: int = 2,
    user=None,
    categories: list[dict[str, str]] | None = None,
) -> Project:
    """Create a project with a preset taxonomy (or the given custom categories)."""
    if slug != slugify(slug) or not slug:
        raise ValueError(f"{slug!r} is not a valid slug (lowercase letters, digits, hyphens)")
    if not 1 <= overlap <= 10:
        raise ValueError("overlap must be between 1 and 10")
    if Project.objects.filter(slug=slug).exists():
        raise ValueError(f"a project with slug {slug!r} already exists")
    if preset == Preset.CUSTOM:
        if not categories:
            raise ValueError("a custom taxonomy needs at least one category")
    else:
        categories = preset_categories(preset)
    return Project.objects.create(
        slug=slug,
        name=name or slug.replace("-", " ").title(),
        preset=preset,
        categories=categories,
        overlap=overlap,
        created_by=user,
    )
