"""Known answers, agreement and resolutions."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotator.models import Pair


class GoldAnswer(models.Model):
    """The known answer of a gold pair. `changes` has the shape of the submit body's changes
    (boxes in pixels of each side's frame)."""

    pair = models.OneToOneField(Pair, on_delete=models.CASCADE, related_name="gold")
    changes = models.JSONField()
    source = models.CharField(max_length=100, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"gold answer of {self.pair}"
