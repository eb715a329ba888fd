"""Writes of the review side: known answers (agreement and resolutions come next)."""

from __future__ import annotations

from django.db import transaction

from annotator.models import Pair
from review.models import GoldAnswer


@transaction.atomic
def gold_answer_set(*, pair: Pair, changes: list[dict], source: str = "", user=None) -> GoldAnswer:
    """Make `pair` a gold pair with this known answer (replacing an earlier one)."""
    gold, _ = GoldAnswer.objects.update_or_create(
        pair=pair, defaults={"changes": changes, "source": source, "created_by": user}
    )
    Pair.objects.filter(pk=pair.pk).update(is_gold=True)
    pair.is_gold = True
    return gold
