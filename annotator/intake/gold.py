"""Gold answers: the known answer of a pair, stored by synthesis or by the demo; agreement
scores annotations of gold pairs against it (review.agreement)."""

from __future__ import annotations

from django.db import transaction

from annotator.models import GoldAnswer, Pair


@transaction.atomic
def gold_answer_set(
    *, pair: Pair, changes: list[dict], source: str = "", user=None, mixed_in: bool = True
) -> GoldAnswer:
    """Store this known answer of `pair` (replacing an earlier one). With `mixed_in` the pair
    becomes a gold pair that every annotator's queue draws at the project's gold rate;
    without, it stays a regular pair whose answer happens to be known (a synthetic benchmark)."""
    gold, _ = GoldAnswer.objects.update_or_create(
        pair=pair, defaults={"changes": changes, "source": source, "created_by": user}
    )
    if mixed_in:
        Pair.objects.filter(pk=pair.pk).update(is_gold=True)
        pair.is_gold = True
    return gold
