"""Cross-validation of two annotations of one pair: matched changes, per-side boxes, a verdict.

Reason codes, in this order: the tier code ("tier:one_good", "tier:both_good" when a tier pair
is disputed; "tier:<lower tier>" such as "tier:fair" when rejected), "change_count", then per
change in the order of ``Verdict.changes``: "change[i].category", "change[i].entity_a",
"change[i].entity_b", "change[i].side_a.null_mismatch" (or ".unmatched_boxes" and
".iou_below_threshold"), the same for side_b, "change[i].description", where i is the index in
the first annotation; a change without a counterpart gives "change[i].unmatched" (first
annotation) or "change_2[j].unmatched" (second annotation).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import astuple, dataclass, field

import numpy as np

from pairdiff.answers import Answer, ChangeAnswer
from pairdiff.geometry import Box, mean_box
from pairdiff.hungarian import best_assignment
from pairdiff.labels import label_normaliser
from pairdiff.matching import Matching, match_boxes, side_agrees
from pairdiff.text import description_similarity

TIERS: tuple[str, ...] = ("excellent", "good", "fair", "poor")  # best first
CATEGORY_BONUS = 0.25
# The cross-check compares two annotations of a pair, the first two submitted (DESIGN.md,
# "Agreement"): a project with a higher overlap collects more, and the rest are kept but never
# compared; with overlap 1 the one annotation is compared with itself.
COMPARED = 2


def annotations_compared(overlap: int) -> int:
    """How many annotations of a pair the cross-check waits for and then compares: the first
    two, or the only one when the project's overlap is 1."""
    return min(overlap, COMPARED)


@dataclass(frozen=True)
class AgreementPolicy:
    """A project's agreement settings. Tier pairs are unordered.

    ``accept_tiers``: pairs accepted when every change agrees, disputed otherwise.
    ``dispute_tiers``: pairs always disputed. Any other tier pair is rejected.
    ``description_threshold`` 0 means descriptions never block; they are only reported.
    """

    iou_threshold: float = 0.5
    description_threshold: float = 0.0
    synonyms: Mapping[str, Sequence[str]] = field(default_factory=dict)
    accept_tiers: frozenset[tuple[str, str]] = frozenset({("excellent", "excellent")})
    dispute_tiers: frozenset[tuple[str, str]] = frozenset({("excellent", "good")})
    # Defect flags that contradict an "excellent" answer (MinCU drops edits that ignore the
    # instruction or change other things): a pair that would be accepted goes to a lead.
    review_defects: frozenset[str] = frozenset({"instruction_not_followed", "unrelated_changes"})

    def __post_init__(self) -> None:
        for name in ("iou_threshold", "description_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} {value!r} must lie between 0 and 1")
        if {frozenset(p) for p in self.accept_tiers} & {frozenset(p) for p in self.dispute_tiers}:
            raise ValueError("a tier pair cannot be both accepted and disputed")

    def tier_rule(self, tier_1: str, tier_2: str) -> str:
        """ "accept", "dispute" or "reject" for two tiers, in either order."""
        pair = frozenset((tier_1, tier_2))
        if any(frozenset(p) == pair for p in self.accept_tiers):
            return "accept"
        if any(frozenset(p) == pair for p in self.dispute_tiers):
            return "dispute"
        return "reject"


@dataclass(frozen=True)
class SideAgreement:
    """Boxes of one side of two matched changes; indices are (first, second) annotation."""

    side: str
    matched: list[tuple[int, int, float]]
    unmatched_1: list[int]
    unmatched_2: list[int]
    agrees: bool
    null_consistent: bool  # both sides empty or both boxed

    @property
    def score(self) -> float:
        """Matched IoU summed over the larger box count: 1.0 for two absent sides, 0.0 for one."""
        count = max(
            len(self.matched) + len(self.unmatched_1), len(self.matched) + len(self.unmatched_2)
        )
        return 1.0 if count == 0 else math.fsum(s for _, _, s in self.matched) / count


@dataclass(frozen=True)
class ChangeAgreement:
    index_1: int | None
    index_2: int | None
    category_agrees: bool
    entity_a_agrees: bool  # only compared when both annotations box side A
    entity_b_agrees: bool
    side_a: SideAgreement
    side_b: SideAgreement
    description_similarity: float
    agrees: bool

    @property
    def geometry(self) -> float:
        return (self.side_a.score + self.side_b.score) / 2


@dataclass(frozen=True)
class Verdict:
    status: str  # "accepted" | "disputed" | "rejected"
    reasons: list[str]
    messages: dict[str, str]  # reason code → sentence for people, in the order of ``reasons``
    changes: list[ChangeAgreement]
    mean_iou: float | None
    consensus: list[ChangeAnswer] | None  # the agreed answer, in the shape of an annotator's


def compare_answers(first: Answer, second: Answer, policy: AgreementPolicy) -> Verdict:
    """The verdict on two annotations of one pair; ``first`` is the one submitted first.

    Accepted: the tier rule accepts and every change is matched and agrees; then ``consensus``
    holds, per change in the first annotation's order, the agreed category, the first
    annotation's entity labels normalised, the mean of each matched box pair rounded half up
    to whole pixels (inside both images whenever the inputs are), and the longer description,
    the first annotation's on a tie. Disputed: the tier rule accepts but something disagrees,
    or the tier rule disputes. Rejected: the tier rule rejects. Every reason is recorded.
    """
    changes = compare_changes(first.changes, second.changes, policy)
    rule = policy.tier_rule(first.tier, second.tier)
    messages: dict[str, str] = {}
    if rule != "accept":
        messages.update(_tier_reason(first.tier, second.tier, rule))
    if len(first.changes) != len(second.changes):
        messages["change_count"] = (
            f"the annotations have {len(first.changes)} and {len(second.changes)} changes"
        )
    for change in changes:
        messages.update(_change_reasons(change, policy))
    agrees = all(c.agrees for c in changes) and len(first.changes) == len(second.changes)
    status = {"accept": "accepted" if agrees else "disputed", "dispute": "disputed"}.get(
        rule, "rejected"
    )
    flagged = _contradicting_defects(first, second, policy)
    if flagged and status == "accepted":
        status = "disputed"
    if flagged and status != "rejected":
        messages["defects"] = f"an excellent answer is flagged {', '.join(flagged)}: a lead decides"
    ious = [s for c in changes for side in (c.side_a, c.side_b) for _, _, s in side.matched]
    return Verdict(
        status=status,
        reasons=list(messages),
        messages=messages,
        changes=changes,
        mean_iou=math.fsum(ious) / len(ious) if ious else None,
        consensus=_consensus(first, second, changes, policy) if status == "accepted" else None,
    )


def _contradicting_defects(first: Answer, second: Answer, policy: AgreementPolicy) -> list[str]:
    """Defect flags of ``policy.review_defects`` on an answer rated excellent, sorted."""
    found = {
        d
        for answer in (first, second)
        if answer.tier == "excellent"
        for d in answer.defects
        if d in policy.review_defects
    }
    return sorted(found)


def compare_changes(
    changes_1: Sequence[ChangeAnswer], changes_2: Sequence[ChangeAnswer], policy: AgreementPolicy
) -> list[ChangeAgreement]:
    """Pair the changes one-to-one and compare each pair; unpaired ones come last.

    The pairing maximises first the number of agreeing pairs, then the summed similarity:
    mean side score (``SideAgreement.score``) plus CATEGORY_BONUS for an equal category.
    Preferring agreement makes acceptance depend only on whether an agreeing pairing exists,
    never on the order the changes were listed in. An assigned pair whose sides share nothing
    (mean side score 0) is not a match: both changes stay unpaired.
    """
    normalise = label_normaliser(policy.synonyms)
    table = {
        (i, j): _compare_change(i, c1, j, c2, policy, normalise)
        for i, c1 in enumerate(changes_1)
        for j, c2 in enumerate(changes_2)
    }
    n_1, n_2 = len(changes_1), len(changes_2)
    # One more agreeing pair outweighs any difference in similarity (each pair ≤ 1 + bonus).
    bonus = (1 + CATEGORY_BONUS) * min(n_1, n_2) + 1
    scores = np.zeros((n_1, n_2))
    for (i, j), c in table.items():
        scores[i, j] = c.geometry + CATEGORY_BONUS * c.category_agrees + bonus * c.agrees
    rows, cols = best_assignment(scores)
    # rows come back sorted, so paired changes follow the first annotation's order.
    paired = [table[i, j] for i, j in zip(rows, cols, strict=True)]
    paired = [c for c in paired if c.geometry > 0]
    used_1 = {c.index_1 for c in paired}
    used_2 = {c.index_2 for c in paired}
    t = policy.iou_threshold
    alone_1 = [_unpaired(i, c, True, t) for i, c in enumerate(changes_1) if i not in used_1]
    alone_2 = [_unpaired(j, c, False, t) for j, c in enumerate(changes_2) if j not in used_2]
    return paired + alone_1 + alone_2


def _compare_change(
    i: int,
    c1: ChangeAnswer,
    j: int,
    c2: ChangeAnswer,
    policy: AgreementPolicy,
    normalise: Callable[[str], str],
) -> ChangeAgreement:
    side_a = _compare_side("a", c1.boxes_a, c2.boxes_a, policy.iou_threshold)
    side_b = _compare_side("b", c1.boxes_b, c2.boxes_b, policy.iou_threshold)
    category = c1.category == c2.category
    # A label names what the boxes show, so it is compared only where both drew boxes;
    # an absent side's label (or its absence in one annotation) is not a second disagreement.
    entity_a = not (c1.boxes_a and c2.boxes_a) or normalise(c1.entity_a) == normalise(c2.entity_a)
    entity_b = not (c1.boxes_b and c2.boxes_b) or normalise(c1.entity_b) == normalise(c2.entity_b)
    similarity = description_similarity(c1.description, c2.description)
    agrees = all((category, entity_a, entity_b, side_a.agrees, side_b.agrees))
    return ChangeAgreement(
        index_1=i,
        index_2=j,
        category_agrees=category,
        entity_a_agrees=entity_a,
        entity_b_agrees=entity_b,
        side_a=side_a,
        side_b=side_b,
        description_similarity=similarity,
        agrees=agrees and similarity >= policy.description_threshold,
    )


def _unpaired(index: int, change: ChangeAnswer, first: bool, threshold: float) -> ChangeAgreement:
    """A change with no counterpart, compared with an empty one: it agrees on nothing."""
    sides = [
        _compare_side(side, boxes if first else (), () if first else boxes, threshold)
        for side, boxes in (("a", change.boxes_a), ("b", change.boxes_b))
    ]
    return ChangeAgreement(
        index_1=index if first else None,
        index_2=None if first else index,
        category_agrees=False,
        entity_a_agrees=False,
        entity_b_agrees=False,
        side_a=sides[0],
        side_b=sides[1],
        description_similarity=0.0,
        agrees=False,
    )


def _compare_side(
    side: str, boxes_1: Sequence[Box], boxes_2: Sequence[Box], threshold: float
) -> SideAgreement:
    m = _match(boxes_1, boxes_2, threshold)
    return SideAgreement(
        side=side,
        matched=m.pairs,
        unmatched_1=m.unmatched_a,
        unmatched_2=m.unmatched_b,
        agrees=side_agrees(m, threshold),
        null_consistent=bool(boxes_1) == bool(boxes_2),
    )


def _match(boxes_1: Sequence[Box], boxes_2: Sequence[Box], threshold: float) -> Matching:
    """``match_boxes`` from a canonical order (box lists compared as tuples), as (1, 2).

    Several matchings can share the maximum total IoU (2/3 + 2/3 and 1 + 1/3); the one with
    the most pairs at the threshold is taken, so a pair the annotators agree on is never
    called disputed by a tie, and neither the verdict nor its breakdown depends on which
    annotator submitted first.
    """
    if [astuple(b) for b in boxes_1] > [astuple(b) for b in boxes_2]:
        return _transposed(_match(boxes_2, boxes_1, threshold))
    return match_boxes(boxes_1, boxes_2, prefer_iou=threshold)


def _transposed(m: Matching) -> Matching:
    pairs = sorted((j, i, s) for i, j, s in m.pairs)
    return Matching(pairs=pairs, unmatched_a=m.unmatched_b, unmatched_b=m.unmatched_a)


def _tier_reason(tier_1: str, tier_2: str, rule: str) -> dict[str, str]:
    def rank(tier: str) -> tuple[int, str]:
        return (TIERS.index(tier) if tier in TIERS else len(TIERS), tier)

    lower = max(tier_1, tier_2, key=rank)
    if rule == "dispute":
        code = f"tier:both_{lower}" if tier_1 == tier_2 else f"tier:one_{lower}"
        return {code: f"tiers {tier_1} and {tier_2}: the tier rule sends the pair to a lead"}
    return {f"tier:{lower}": f"tiers {tier_1} and {tier_2}: the tier rule rejects the pair"}


def _change_reasons(c: ChangeAgreement, policy: AgreementPolicy) -> dict[str, str]:
    if c.index_1 is None:
        return {f"change_2[{c.index_2}].unmatched": "a change of annotation 2 has no counterpart"}
    at = f"change[{c.index_1}]"
    if c.index_2 is None:
        return {f"{at}.unmatched": "a change of annotation 1 has no counterpart"}
    found: dict[str, str] = {}
    if not c.category_agrees:
        found[f"{at}.category"] = "the categories differ"
    for name, ok in (("entity_a", c.entity_a_agrees), ("entity_b", c.entity_b_agrees)):
        if not ok:
            found[f"{at}.{name}"] = f"the entity labels on {name[-1].upper()} differ"
    for side in (c.side_a, c.side_b):
        where, label = f"{at}.side_{side.side}", side.side.upper()
        if not side.null_consistent:
            found[f"{where}.null_mismatch"] = f"{label} is absent in one annotation only"
            continue
        if side.unmatched_1 or side.unmatched_2:
            found[f"{where}.unmatched_boxes"] = f"some boxes on {label} have no counterpart"
        low = [s for _, _, s in side.matched if s < policy.iou_threshold]
        if low:
            found[f"{where}.iou_below_threshold"] = (
                f"IoU {iou_text(min(low))} on {label} is below {policy.iou_threshold:g}"
            )
    if c.description_similarity < policy.description_threshold:
        found[f"{at}.description"] = (
            f"the descriptions are {c.description_similarity:.0%} similar, "
            f"below {policy.description_threshold:.0%}"
        )
    return {code: f"change {c.index_1 + 1}: {text}" for code, text in found.items()}


def _consensus(
    first: Answer, second: Answer, changes: list[ChangeAgreement], policy: AgreementPolicy
) -> list[ChangeAnswer]:
    normalise = label_normaliser(policy.synonyms)
    result = []
    for c in changes:
        assert c.index_1 is not None and c.index_2 is not None  # accepted: all paired
        c1, c2 = first.changes[c.index_1], second.changes[c.index_2]
        result.append(
            ChangeAnswer(
                category=c1.category,
                description=max(c1.description, c2.description, key=len),  # first on a tie
                entity_a=normalise(c1.entity_a),
                entity_b=normalise(c1.entity_b),
                boxes_a=_mean_boxes(c.side_a, c1.boxes_a, c2.boxes_a),
                boxes_b=_mean_boxes(c.side_b, c1.boxes_b, c2.boxes_b),
            )
        )
    return result


def _mean_boxes(side: SideAgreement, boxes_1: Sequence[Box], boxes_2: Sequence[Box]) -> tuple:
    return tuple(_round_box(mean_box([boxes_1[i], boxes_2[j]])) for i, j, _ in side.matched)


def _round_box(box: Box) -> Box:
    # Half up, not round(): banker's rounding sends 1.5 and 2.5 both to 2 and would collapse
    # a one-pixel box. From whole-pixel inputs the mean's x2 - x1 ≥ 1, so this never collapses.
    x1, y1, x2, y2 = (math.floor(v + 0.5) for v in astuple(box))
    return Box(x1, y1, x2, y2) if x1 < x2 and y1 < y2 else box


def iou_text(iou: float) -> str:
    """An IoU as people read it: up to four decimals (0.4999 must not read as 0.5 against a
    threshold of 0.5), and a near-miss of nothing as "< 0.01", not "0.004009"."""
    if iou <= 0:
        return "0"
    if iou < 0.01:
        return "< 0.01"
    return f"{round(iou, 4):g}"
