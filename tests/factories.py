"""Test data through the real services, with small real images made in memory."""

from __future__ import annotations

import io
import itertools
import zipfile

from annotator.intake.gold import gold_answer_set
from annotator.models import Pair
from annotator.services import PairInput, pair_create
from projects.models import Project
from tests.images import distinct_pair, edited_pair, encode, photo

_offsets = itertools.count()


def make_pair(project: Project, *, size_b: tuple[int, int] | None = None, **fields) -> Pair:
    """A distinct pair (a photo crop and its edit); B may have another size than A (96×64)."""
    a, b = distinct_pair(next(_offsets))
    if size_b is not None:
        b = encode(photo(size=size_b, offset=next(_offsets) % 200))
    return pair_create(project=project, pair_input=PairInput(a, b, **fields))


def make_pairs(project: Project, n: int) -> list[Pair]:
    return [make_pair(project) for _ in range(n)]


def answer(*, tier: str = "excellent", boxes_a=None, boxes_b=None, **change) -> dict:
    """A valid submit body for a 96×64 pair, with one change unless told otherwise."""
    body_change = {
        "category": "attribute",
        "description": "The patch changed from red to blue.",
        "entity_a": "patch",
        "entity_b": "patch",
        "boxes_a": [[20, 10, 40, 30]] if boxes_a is None else boxes_a,
        "boxes_b": [[20, 10, 40, 30]] if boxes_b is None else boxes_b,
    } | change
    return {"tier": tier, "defects": [], "time_spent_ms": 12_000, "changes": [body_change]}


def make_accepted(project: Project, annotators, bodies) -> list[Pair]:
    """Pairs both ``annotators`` answered with the same body each: accepted, with consensus."""
    from annotator.leasing import assignment_lease_next
    from annotator.submitting import annotation_submit
    from review.agreement import agreement_compute

    pairs = []
    for body in bodies:
        pair = make_pair(project)
        for user in annotators:
            assignment = assignment_lease_next(project=project, user=user)
            assert assignment is not None and assignment.pair_id == pair.pk
            annotation_submit(assignment_id=assignment.pk, user=user, body=body)
        agreement_compute(pair_id=pair.pk)
        pair.refresh_from_db()
        assert pair.status == "accepted", pair.status
        pairs.append(pair)
    return pairs


def zip_of(files: dict[str, bytes]) -> bytes:
    """A zip archive holding ``files`` (name → content)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def make_gold_car_pair(project: Project) -> Pair:
    """A real edited photo pair ("car-1") whose known answer is one attribute change: the patch
    turned blue."""
    a, b = edited_pair()
    pair = pair_create(project=project, pair_input=PairInput(a, b, external_id="car-1"))
    gold_answer_set(
        pair=pair,
        changes=[
            {
                "category": "attribute",
                "description": "The patch turned blue.",
                "entity_a": "patch",
                "entity_b": "patch",
                "boxes_a": [[20, 10, 40, 30]],
                "boxes_b": [[20, 10, 40, 30]],
            }
        ],
    )
    return pair
