"""Deterministic train / val / test splits, stratified by category, with a difficulty mix."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

SPLITS = ("train", "val", "test")
DIFFICULTIES = ("easy", "medium", "hard")
MINCU_TEST_RATIO = (1, 2, 2)  # Easy : Medium : Hard in MinCU's test split


class SplitPlanInvalid(ValueError):
    """A split plan that cannot be followed; the message is meant for people."""


@dataclass(frozen=True, slots=True)
class SplitItem:
    key: int
    category: str
    difficulty: str | None


@dataclass(frozen=True, slots=True)
class SplitPlan:
    """How to split. ``test_per_category`` (an exact count per category) overrides
    ``test_fraction``; ``test_ratio`` samples the test split's difficulties in that ratio."""

    seed: int = 0
    val_fraction: float = 0.1
    test_fraction: float = 0.1
    test_per_category: int | None = None
    test_ratio: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        for name in ("val_fraction", "test_fraction"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise SplitPlanInvalid(f"{name.replace('_', ' ')} {value} must lie in [0, 1]")
        if self.val_fraction + self.test_fraction > 1:
            raise SplitPlanInvalid("val and test fractions together must not exceed 1")
        if self.test_per_category is not None and self.test_per_category < 0:
            raise SplitPlanInvalid("test pairs per category must not be negative")
        if self.test_ratio is not None and (
            len(self.test_ratio) != 3 or min(self.test_ratio) < 0 or sum(self.test_ratio) == 0
        ):
            raise SplitPlanInvalid(
                "the difficulty ratio needs three non-negative parts (easy:medium:hard), "
                "not all zero"
            )

    def as_json(self) -> dict:
        return {
            "seed": self.seed,
            "val_fraction": self.val_fraction,
            "test_fraction": self.test_fraction,
            "test_per_category": self.test_per_category,
            "test_ratio": list(self.test_ratio) if self.test_ratio else None,
        }


@dataclass
class Splits:
    of: dict[int, str] = field(default_factory=dict)  # key → split
    notes: list[str] = field(default_factory=list)  # where the plan could not be met exactly


def split_assign(items: Sequence[SplitItem], plan: SplitPlan) -> Splits:
    """Assign every item a split. The same items and seed give the same splits whatever order
    the items come in; each category is shuffled by its own seeded generator."""
    by_category: dict[str, list[SplitItem]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i.key):
        by_category[item.category].append(item)
    result = Splits()
    for category in sorted(by_category):
        group = by_category[category]
        random.Random(f"{plan.seed}:{category}").shuffle(group)
        n = len(group)
        if plan.test_per_category is not None:
            n_test = min(plan.test_per_category, n)
            if n_test < plan.test_per_category:
                result.notes.append(
                    f"{category or 'no category'}: {plan.test_per_category} test pairs asked, "
                    f"only {n} accepted"
                )
        else:
            n_test = round(n * plan.test_fraction)
        test = _pick_test(group, n_test, plan.test_ratio, category, result.notes)
        rest = [item for item in group if item.key not in test]
        n_val = min(round(n * plan.val_fraction), len(rest))
        for i, item in enumerate(rest):
            result.of[item.key] = "val" if i < n_val else "train"
        for key in test:
            result.of[key] = "test"
    return result


def _pick_test(
    group: list[SplitItem],
    n_test: int,
    ratio: tuple[int, int, int] | None,
    category: str,
    notes: list[str],
) -> set[int]:
    if ratio is None:
        return {item.key for item in group[:n_test]}
    by_level: dict[str | None, list[SplitItem]] = defaultdict(list)
    for item in group:
        by_level[item.difficulty].append(item)
    chosen: list[SplitItem] = []
    short = 0
    for level, quota in zip(DIFFICULTIES, _quotas(n_test, ratio), strict=True):
        available = by_level[level]
        chosen.extend(available[:quota])
        if len(available) < quota:
            short += quota - len(available)
            notes.append(
                f"{category or 'no category'}: {quota} {level} test pairs asked, "
                f"only {len(available)} accepted"
            )
    if short:  # keep the test split's size; fill from whatever is left, in shuffled order
        taken = {item.key for item in chosen}
        chosen.extend([item for item in group if item.key not in taken][:short])
    return {item.key for item in chosen}


def _quotas(n: int, ratio: Sequence[int]) -> list[int]:
    """``n`` split in ``ratio`` by largest remainder (ties to the earlier part)."""
    total = sum(ratio)
    exact = [n * r / total for r in ratio]
    quotas = [int(x) for x in exact]
    order = sorted(range(len(ratio)), key=lambda i: (-(exact[i] - quotas[i]), i))
    for i in order[: n - sum(quotas)]:
        quotas[i] += 1
    return quotas
