"""Deterministic train / val / test splits, stratified by category, with a difficulty mix."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

SPLITS = ("train", "val", "test")
DIFFICULTIES = ("easy", "medium", "hard")
MINCU_TEST_RATIO = (1, 2, 2)  # Easy : Medium : Hard in MinCU's test split


class SplitPlanInvalid(ValueError):
    """A split plan that cannot be followed; the message is meant for people, ``field`` names
    the SplitPlan field at fault ("" when it is about several)."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class SplitItem:
    """One pair to split. ``content`` (sha256 of the images, an external id) seeds its place;
    database keys never do, so importing the same pairs in another order splits them alike."""

    key: int | str
    category: str
    difficulty: str | None
    content: str = ""
    source: str = ""  # the source photo (``sources.source_groups``): one split for all of it

    @property
    def seed_key(self) -> str:
        return self.content or str(self.key)


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
                raise SplitPlanInvalid(
                    f"{name.replace('_', ' ')} {value} must lie in [0, 1]", field=name
                )
        if self.val_fraction + self.test_fraction > 1:
            raise SplitPlanInvalid("val and test fractions together must not exceed 1")
        if self.test_per_category is not None and self.test_per_category < 0:
            raise SplitPlanInvalid(
                "test pairs per category must not be negative", field="test_per_category"
            )
        if self.test_ratio is not None and (
            len(self.test_ratio) != 3 or min(self.test_ratio) < 0 or sum(self.test_ratio) == 0
        ):
            raise SplitPlanInvalid(
                "the difficulty ratio needs three non-negative parts (easy:medium:hard), "
                "not all zero",
                field="test_ratio",
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
    of: dict[int | str, str] = field(default_factory=dict)  # key → split
    notes: list[str] = field(default_factory=list)  # every deviation from the plan, for people


def split_assign(
    items: Sequence[SplitItem],
    plan: SplitPlan,
    *,
    previous: Mapping[int | str, str] | None = None,
) -> Splits:
    """Assign every item a split: an item a release of the project published keeps its split
    there (``previous``, by key); the items of one source photo share one split — the split
    an earlier item of the source has, else one allocated to the whole source as a unit by
    ``split_plain``. Only new sources are allocated, so a later version moves no pair."""
    previous = previous or {}
    units: dict[str, list[SplitItem]] = defaultdict(list)
    for item in items:
        units[item.source or f"item:{item.seed_key}"].append(item)
    fixed: dict[str, str] = {}
    result = Splits()
    for unit, members in sorted(units.items()):
        known = Counter(previous[m.key] for m in members if m.key in previous)
        if known:
            split, _ = max(known.items(), key=lambda kv: (kv[1], -SPLITS.index(kv[0])))
            fixed[unit] = split
            if len(known) > 1:
                result.notes.append(
                    f"source {unit[:12]}: its pairs were released in {', '.join(sorted(known))}; "
                    f"each keeps its split, new pairs of it go to {split}"
                )
    free = {u: m for u, m in units.items() if u not in fixed}
    reps = [
        SplitItem(
            key=unit,
            category=Counter(m.category for m in members).most_common(1)[0][0],
            difficulty=members[0].difficulty,
            content=unit,
        )
        for unit, members in sorted(free.items())
    ]
    grouped = len(reps) < len(items)
    plain = split_plain(reps, plan, pairs=len(items)) if grouped else split_plain(items, plan)
    if grouped and _held_out_empty(plain) and len(reps) >= 3:
        # Too few sources per category to keep one of each in train: the sources are split
        # as one pool (a held-out split without some categories beats no held-out split).
        pooled = split_plain([replace(r, category=POOLED) for r in reps], plan, pairs=len(items))
        if not _held_out_empty(pooled):
            plain = pooled
            plain.notes.append(
                f"too few source photos per category to stratify: the {len(reps)} sources were "
                "split without regard to category"
            )
    result.notes.extend(plain.notes)
    if grouped and _held_out_empty(plain):
        result.notes.append(
            f"the {len(items)} pairs come from {len(units)} source photos, each kept in one split"
        )
    for unit, members in units.items():
        for m in members:
            if m.key in previous:
                result.of[m.key] = previous[m.key]
            elif unit in fixed:
                result.of[m.key] = fixed[unit]
            else:
                result.of[m.key] = plain.of[unit] if grouped else plain.of[m.key]
    return result


POOLED = "all sources"


def _held_out_empty(splits: Splits) -> bool:
    return any(n.split(" is empty")[0] in ("val", "test") for n in splits.notes)


def split_plain(items: Sequence[SplitItem], plan: SplitPlan, *, pairs: int | None = None) -> Splits:
    """Assign every item a split, each item on its own.

    Sizes are allocated over the whole release, not rounded per category: the plan's val and
    test counts (fraction × all pairs, rounded) are shared among the categories by largest
    remainder, after every category with at least 3 pairs got one val and one test pair (and
    keeps one for train). ``test_per_category`` asks an exact test count per category instead.
    Inside a category, pairs are ordered by a hash of the seed and their content, so the same
    pairs and seed give the same splits whatever order they come in. Every way the result
    differs from the plan is written into ``notes``.
    """
    by_category: dict[str, list[SplitItem]] = defaultdict(list)
    for item in items:
        by_category[item.category].append(item)
    for group in by_category.values():
        group.sort(key=lambda i: (_rank(plan.seed, i), str(i.key)))
    sizes = {c: len(g) for c, g in sorted(by_category.items())}
    result = Splits()
    if plan.test_per_category is not None:
        test = {c: min(plan.test_per_category, n) for c, n in sizes.items()}
        for c, n in sizes.items():
            if n < plan.test_per_category:
                result.notes.append(
                    f"{_name(c)}: {plan.test_per_category} test pairs asked, only {n} accepted"
                )
    else:
        reserve = 2 if plan.val_fraction > 0 else 1
        zero = {c: 0 for c in sizes}
        test = _allocate(sizes, plan.test_fraction, zero, "test", result.notes, reserve=reserve)
    left = {c: sizes[c] - test[c] for c in sizes}
    val = _allocate(left, plan.val_fraction, test, "val", result.notes, total=sum(sizes.values()))
    if plan.test_per_category is not None:
        _keep_minimum(sizes, val, test, plan, result.notes)
    for category, group in sorted(by_category.items()):
        chosen = _pick_test(group, test[category], plan.test_ratio, category, result.notes)
        rest = [item for item in group if item.key not in chosen]
        for i, item in enumerate(rest):
            result.of[item.key] = "val" if i < val[category] else "train"
        for key in chosen:
            result.of[key] = "test"
    for split, fraction in (("val", plan.val_fraction), ("test", plan.test_fraction)):
        asked = (
            fraction > 0
            if split == "val" or plan.test_per_category is None
            else (plan.test_per_category > 0)
        )
        if asked and items and split not in result.of.values():
            result.notes.append(
                f"{split} is empty: {len(items) if pairs is None else pairs} accepted pairs "
                "are too few for the plan"
            )
    return result


def _rank(seed: int, item: SplitItem) -> str:
    return hashlib.sha256(f"{seed}:{item.seed_key}".encode()).hexdigest()


def _name(category: str) -> str:
    return category or "no category"


def _allocate(
    sizes: dict[str, int],
    fraction: float,
    other: dict[str, int],
    split: str,
    notes: list[str],
    *,
    total: int | None = None,
    reserve: int = 1,
) -> dict[str, int]:
    """Pairs of ``split`` per category: one for each category of ≥ 3 pairs (when the plan
    asks for the split at all), then the rest of round(fraction × total) by largest remainder
    of each category's exact share. ``sizes`` is what each category has left for this split;
    ``other`` what an earlier split took; ``reserve`` pairs of a category of ≥ 3 stay for the
    later splits (one for train, one more for val), one of a smaller category for train."""
    total = sum(sizes.values()) if total is None else total
    target = round(total * fraction)
    room = {c: max(n - (reserve if n + other[c] >= 3 else 1), 0) for c, n in sizes.items()}
    alloc = {c: 0 for c in sizes}
    if fraction <= 0:
        return alloc
    for c, n in sizes.items():
        if n + other[c] >= 3 and room[c] >= 1:
            alloc[c] = 1
    floor_total = sum(alloc.values())
    if floor_total > target:
        notes.append(
            f"{split}: one pair for each category with at least 3 pairs makes {floor_total} "
            f"{split} pairs where the plan's {fraction:g} of {total} asks {target}"
        )
    remaining = max(target - floor_total, 0)
    whole = sum(sizes.values()) or 1
    exact = {c: sizes[c] * remaining / whole for c in sizes}
    for c in sizes:
        alloc[c] += min(int(exact[c]), room[c] - alloc[c])
    order = sorted(sizes, key=lambda c: (-(exact[c] - int(exact[c])), -sizes[c], c))
    short = target - sum(alloc.values())
    while short > 0:
        grown = False
        for c in order:
            if short > 0 and alloc[c] < room[c]:
                alloc[c] += 1
                short -= 1
                grown = True
        if not grown:
            break
    if short > 0:
        notes.append(
            f"{split}: {target} pairs asked ({fraction:g} of {total}), only "
            f"{target - short} could be taken without emptying a category's train pairs"
        )
    return alloc


def _keep_minimum(
    sizes: dict[str, int],
    val: dict[str, int],
    test: dict[str, int],
    plan: SplitPlan,
    notes: list[str],
) -> None:
    """With an exact test count per category, a category of ≥ 3 still keeps one val pair."""
    for c, n in sizes.items():
        if n >= 3 and plan.val_fraction > 0 and val[c] == 0 and test[c] >= n - 1 and test[c] > 1:
            test[c] -= 1
            val[c] = 1
            notes.append(f"{_name(c)}: one test pair moved to val so val is not empty")


def _pick_test(
    group: list[SplitItem],
    n_test: int,
    ratio: tuple[int, int, int] | None,
    category: str,
    notes: list[str],
) -> set[int | str]:
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
