"""Database constraints shared by every app's models."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


def choices_check(
    field: str, choices: type[models.TextChoices], name: str
) -> models.CheckConstraint:
    """The column holds one of ``choices`` (the database refuses anything else)."""
    return models.CheckConstraint(condition=Q(**{f"{field}__in": choices.values}), name=name)
