"""Assists: what a pair's pixels say, computed by a worker after import and synthesis, and what
the workspace is given of it (docs/assists.md)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from celery import shared_task

from annotator.models import Assignment, AssignmentState, Change, Pair, PairAssist
from config.enqueue import enqueue_on_commit
from pairdiff.assist import precompute
from pairdiff.assist.components import VERSION
from projects.models import DraftDescriptions

log = logging.getLogger(__name__)


def pair_assist_compute(pair: Pair) -> PairAssist:
    """Work out (again) and store the assist of one pair."""
    project = pair.project
    with pair.image_a.open("rb") as a, pair.image_b.open("rb") as b:
        data_a, data_b = a.read(), b.read()
    assist = precompute(
        data_a,
        data_b,
        categories=project.category_slugs,
        vocabulary=project.entity_vocabulary,
        instruction=pair.instruction,
    )
    stored = assist.to_json()
    row, _ = PairAssist.objects.update_or_create(
        pair=pair,
        defaults={
            "version": VERSION,
            "alignment": stored["alignment"],
            "components": stored["components"],
            "error": assist.error[:300],
        },
    )
    return row


def pairs_assist_compute(pair_ids: Iterable[int]) -> int:
    """The assists of the pairs that have none of the current version; how many were made. A
    pair that fails is logged and left to be annotated by hand."""
    done = 0
    current = set(
        PairAssist.objects.filter(pair_id__in=list(pair_ids), version=VERSION).values_list(
            "pair_id", flat=True
        )
    )
    pairs = Pair.objects.filter(pk__in=list(pair_ids)).exclude(pk__in=current)
    for pair in pairs.select_related("project").order_by("pk"):
        try:
            pair_assist_compute(pair)
        except Exception:
            log.exception("assist of pair %s failed", pair.pk)
            continue
        done += 1
    return done


@shared_task(acks_late=True)
def precompute_assists(pair_ids: list[int]) -> int:
    """Worker: the assists of newly stored pairs (safe to run twice)."""
    return pairs_assist_compute(pair_ids)


def assists_enqueue(pairs: Iterable[Pair]) -> None:
    """Queue the assists of pairs just stored, after the transaction that stores them (never in
    the request's own time: without a broker they run after the response is sent)."""
    ids = [p.pk for p in pairs]
    if ids:
        enqueue_on_commit(precompute_assists, ids, after_response=True, detach=True)


def drafts_offered(assignment: Assignment) -> bool:
    """Whether this assignment is offered drafted descriptions: the project's setting, and with
    "first", not on gold pairs nor for a pair's second (or later) annotator."""
    project = assignment.pair.project
    if project.draft_descriptions == DraftDescriptions.ON:
        return True
    if project.draft_descriptions == DraftDescriptions.OFF or assignment.pair.is_gold:
        return False
    return not _earlier_annotator(assignment)


def _earlier_annotator(assignment: Assignment) -> bool:
    return (
        Assignment.objects.filter(pair_id=assignment.pair_id, pk__lt=assignment.pk)
        .exclude(annotator_id=assignment.annotator_id)
        .filter(state__in=[AssignmentState.LEASED, AssignmentState.SUBMITTED])
        .exists()
    )


def workspace_assist(assignment: Assignment) -> dict | None:
    """What the workspace gets: the alignment and the components, with the drafts (sentence,
    entity, category) only where they are offered; None when the pair has no assist yet."""
    row = PairAssist.objects.filter(pair_id=assignment.pair_id).first()
    if row is None or row.error or row.alignment is None:
        return None
    drafts = drafts_offered(assignment)
    keep = ("kind", "boxes_a", "boxes_b", "zone_a", "zone_b", "whole")
    components = [c if drafts else {k: c[k] for k in keep if k in c} for c in row.components]
    return {"alignment": row.alignment, "components": components, "drafts": drafts}


def draft_acceptance(project) -> dict[int, tuple[int, int]]:
    """Per annotator id: (changes submitted where drafts were offered, of those, how many kept a
    draft's sentence unchanged). A change counts as offered when its pair had drafts and they
    were offered to that annotator (the project's setting as it is now; gold pairs and second
    annotators as the rule says)."""
    drafts = {
        pair_id: {c.get("draft", "").strip() for c in components} - {""}
        for pair_id, components in PairAssist.objects.filter(
            pair__project=project, error=""
        ).values_list("pair_id", "components")
    }
    if project.draft_descriptions == DraftDescriptions.OFF or not drafts:
        return {}
    first: dict[int, int] = {}
    for pair_id, pk in (
        Assignment.objects.filter(
            pair_id__in=drafts,
            state__in=[AssignmentState.LEASED, AssignmentState.SUBMITTED],
        )
        .order_by("pk")
        .values_list("pair_id", "pk")
    ):
        first.setdefault(pair_id, pk)
    counts: dict[int, list[int]] = {}
    rows = (
        Change.objects.filter(annotation__pair_id__in=drafts)
        .values_list(
            "annotation__annotator_id",
            "annotation__pair_id",
            "annotation__assignment_id",
            "annotation__pair__is_gold",
            "description",
        )
        .order_by()
    )
    for user_id, pair_id, assignment_id, gold, description in rows:
        if project.draft_descriptions == DraftDescriptions.FIRST and (
            gold or first.get(pair_id) != assignment_id
        ):
            continue
        n = counts.setdefault(user_id, [0, 0])
        n[0] += 1
        n[1] += description.strip() in drafts[pair_id]
    return {user_id: (n[0], n[1]) for user_id, n in counts.items()}
