from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.release.splits import (
    MINCU_TEST_RATIO,
    SplitItem,
    SplitPlan,
    SplitPlanInvalid,
    split_assign,
)


def _items(per_category: dict[str, dict[str | None, int]]) -> list[SplitItem]:
    items, key = [], 0
    for category, levels in per_category.items():
        for level, n in levels.items():
            for _ in range(n):
                key += 1
                items.append(SplitItem(key, category, level))
    return items


def _count(items, splits, split) -> Counter:
    return Counter(i.category for i in items if splits.of[i.key] == split)


def test_every_item_gets_one_split_in_the_fractions_per_category():
    items = _items({"attribute": {"easy": 100}, "object": {"hard": 50}})
    splits = split_assign(items, SplitPlan(seed=1, val_fraction=0.1, test_fraction=0.2))
    assert set(splits.of) == {i.key for i in items}
    assert _count(items, splits, "test") == {"attribute": 20, "object": 10}
    assert _count(items, splits, "val") == {"attribute": 10, "object": 5}
    assert _count(items, splits, "train") == {"attribute": 70, "object": 35}
    assert splits.notes == []


def test_same_seed_same_splits_whatever_the_input_order():
    items = _items({"attribute": {"easy": 30, "hard": 30}, "counting": {"medium": 40}})
    plan = SplitPlan(seed=7)
    assert split_assign(items, plan).of == split_assign(list(reversed(items)), plan).of


def test_another_seed_gives_other_splits():
    items = _items({"attribute": {"easy": 200}})
    first = split_assign(items, SplitPlan(seed=1)).of
    second = split_assign(items, SplitPlan(seed=2)).of
    assert first != second


def test_test_per_category_takes_exactly_that_many_with_mincu_difficulty_ratio():
    items = _items(
        {
            "attribute": {"easy": 50, "medium": 50, "hard": 50},
            "relation": {"easy": 40, "medium": 40, "hard": 40},
        }
    )
    plan = SplitPlan(seed=3, val_fraction=0.0, test_per_category=25, test_ratio=MINCU_TEST_RATIO)
    splits = split_assign(items, plan)
    test = [i for i in items if splits.of[i.key] == "test"]
    assert Counter((i.category, i.difficulty) for i in test) == {
        ("attribute", "easy"): 5,
        ("attribute", "medium"): 10,
        ("attribute", "hard"): 10,
        ("relation", "easy"): 5,
        ("relation", "medium"): 10,
        ("relation", "hard"): 10,
    }
    assert splits.notes == []


def test_the_ratio_is_met_exactly_when_enough_pairs_of_each_level_exist():
    items = _items({"object": {"easy": 2, "medium": 30, "hard": 30}})
    plan = SplitPlan(seed=0, val_fraction=0, test_per_category=10, test_ratio=(1, 2, 2))
    splits = split_assign(items, plan)
    test = [i for i in items if splits.of[i.key] == "test"]
    assert len(test) == 10
    assert Counter(i.difficulty for i in test)["easy"] == 2
    assert splits.notes == []  # 2 easy asked (10 × 1/5) and 2 there: nothing short


def test_a_short_difficulty_is_filled_from_others_and_noted():
    items = _items({"object": {"easy": 1, "medium": 30, "hard": 30}})
    plan = SplitPlan(seed=0, val_fraction=0, test_per_category=10, test_ratio=(1, 2, 2))
    splits = split_assign(items, plan)
    test = [i for i in items if splits.of[i.key] == "test"]
    assert len(test) == 10
    assert Counter(i.difficulty for i in test)["easy"] == 1
    assert splits.notes == ["object: 2 easy test pairs asked, only 1 accepted"]


def test_asking_more_test_pairs_than_accepted_keeps_one_val_and_notes_both():
    items = _items({"counting": {"hard": 4}})
    splits = split_assign(items, SplitPlan(test_per_category=500))
    assert Counter(splits.of.values()) == {"test": 3, "val": 1}
    assert splits.notes == [
        "counting: 500 test pairs asked, only 4 accepted",
        "counting: one test pair moved to val so val is not empty",
    ]


def test_asking_more_test_pairs_without_val_takes_all():
    items = _items({"counting": {"hard": 4}})
    splits = split_assign(items, SplitPlan(val_fraction=0, test_per_category=500))
    assert Counter(splits.of.values()) == {"test": 4}
    assert splits.notes == ["counting: 500 test pairs asked, only 4 accepted"]


def test_sixteen_pairs_of_one_category_get_val_and_test():
    splits = split_assign(_items({"object": {"hard": 16}}), SplitPlan())
    assert Counter(splits.of.values()) == {"train": 12, "val": 2, "test": 2}
    assert splits.notes == []


def test_ten_categories_of_five_each_get_a_test_pair_and_the_deviation_is_noted():
    items = _items({f"c{i}": {"hard": 5} for i in range(10)})
    splits = split_assign(items, SplitPlan())
    for category in {i.category for i in items}:
        assert _count(items, splits, "test")[category] == 1
        assert _count(items, splits, "val")[category] == 1
    assert splits.notes == [
        "test: one pair for each category with at least 3 pairs makes 10 test pairs where "
        "the plan's 0.1 of 50 asks 5",
        "val: one pair for each category with at least 3 pairs makes 10 val pairs where "
        "the plan's 0.1 of 50 asks 5",
    ]


def test_sizes_are_allocated_globally_by_largest_remainder():
    # Per category 0.2 × 7 = 1.4 → 1 each, 3 in all; over the release 0.2 × 21 = 4.2 → 4.
    items = _items({"a": {"hard": 7}, "b": {"hard": 7}, "c": {"hard": 7}})
    splits = split_assign(items, SplitPlan(val_fraction=0, test_fraction=0.2))
    assert sum(_count(items, splits, "test").values()) == 4
    assert splits.notes == []


def test_too_few_pairs_leave_a_split_empty_and_say_so():
    splits = split_assign(_items({"a": {"hard": 2}, "b": {"hard": 1}}), SplitPlan())
    assert set(splits.of.values()) == {"train"}
    assert splits.notes == [
        "val is empty: 3 accepted pairs are too few for the plan",
        "test is empty: 3 accepted pairs are too few for the plan",
    ]


def test_splits_follow_content_not_keys():
    """Re-importing the same pairs in another order gives them other keys, not other splits."""
    items = _items({"a": {"hard": 30}, "b": {"hard": 12}})
    content = [SplitItem(i.key, i.category, i.difficulty, f"sha-{i.key}") for i in items]
    renumbered = [SplitItem(1000 - i.key, i.category, i.difficulty, f"sha-{i.key}") for i in items]
    first = split_assign(content, SplitPlan(seed=4)).of
    second = split_assign(renumbered, SplitPlan(seed=4)).of
    assert {f"sha-{k}": v for k, v in first.items()} == {
        f"sha-{1000 - k}": v for k, v in second.items()
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {"val_fraction": -0.1},
        {"test_fraction": 1.5},
        {"val_fraction": 0.6, "test_fraction": 0.6},
        {"test_per_category": -1},
        {"test_ratio": (0, 0, 0)},
        {"test_ratio": (1, 2)},
    ],
)
def test_impossible_plans_are_refused_with_a_reason(kwargs):
    with pytest.raises(SplitPlanInvalid):
        SplitPlan(**kwargs)


@given(
    sizes=st.dictionaries(
        st.sampled_from(["attribute", "object", "counting", "relation"]),
        st.integers(min_value=0, max_value=60),
        min_size=1,
    ),
    seed=st.integers(min_value=0, max_value=10**6),
    test_fraction=st.floats(min_value=0, max_value=0.5),
)
def test_splits_partition_the_items(sizes, seed, test_fraction):
    items = _items({c: {"hard": n} for c, n in sizes.items()})
    splits = split_assign(items, SplitPlan(seed=seed, test_fraction=test_fraction))
    assert sorted(splits.of) == sorted(i.key for i in items)
    assert set(splits.of.values()) <= {"train", "val", "test"}
    for category, n in sizes.items():
        got = Counter(splits.of[i.key] for i in items if i.category == category)
        if n >= 3:  # a category of 3 or more keeps a train and a val pair, and a test pair
            assert got["train"] >= 1 and got["val"] >= 1
            assert got["test"] >= 1 or test_fraction == 0
