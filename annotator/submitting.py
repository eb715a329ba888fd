"""Drafts and submissions of an annotator's answer. Nothing an annotator did is ever lost:
drafts are kept as sent, and a submission is stored once however often it is repeated."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts.users import User
from annotator import sql
from annotator.leasing import LeaseLost, assignment_check_member, assignment_renew
from annotator.models import (
    Annotation,
    Assignment,
    AssignmentState,
    Change,
    Defect,
    Pair,
    PairEvent,
    PairEventKind,
    Tier,
)
from config import rows
from jobs.registry import Work, work_enqueue_on_commit
from pairdiff.agreement import annotations_compared
from pairdiff.answers import AnswerRules, parse_answer
from pairdiff.geometry import Frame
from projects.models import Project

MAX_DRAFT_BYTES = 256 * 1024


class SubmitConflict(Exception):
    """The submission cannot be taken in the assignment's state; `code` says which state."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class DraftSaved:
    saved_at: datetime
    expires_at: datetime | None  # None: the lease is lost, the draft is kept all the same


def answer_rules(pair: Pair) -> AnswerRules:
    return AnswerRules(
        frame_a=Frame(pair.width_a, pair.height_a),
        frame_b=Frame(pair.width_b, pair.height_b),
        categories=frozenset(pair.project.category_slugs),
        tiers=tuple(Tier.values),
        defects=frozenset(Defect.values),
    )


def _locked(assignment_id: int, user: User) -> Assignment:
    """The caller's own assignment, row-locked; DoesNotExist for anyone else's, PermissionDenied
    when the caller is no longer a member who annotates in its project."""
    statement = sql.locked(connection.vendor, connection.features.has_select_for_update)
    row = rows.fetchone(statement, [user.pk, assignment_id, user.pk])
    if row is None:
        raise Assignment.DoesNotExist("Assignment matching query does not exist.")
    at = rows.width(Assignment)
    assignment = rows.from_row(Assignment, row)
    assignment.pair = rows.from_row(Pair, row, start=at)
    assignment.pair.project = rows.from_row(Project, row, start=at + rows.width(Pair))
    assignment.member_role = row[-1]  # type: ignore[attr-defined]  # read by the member check
    assignment_check_member(assignment=assignment, user=user)
    return assignment


def assignment_draft_save(*, assignment_id: int, user: User, draft: object) -> DraftSaved:
    """Keep the draft as sent and renew the lease; the draft is kept even when the lease is lost."""
    if not isinstance(draft, dict):
        raise ValueError("a draft is a JSON object")
    if len(json.dumps(draft)) > MAX_DRAFT_BYTES:
        raise ValueError(f"a draft is at most {MAX_DRAFT_BYTES // 1024} KB")
    now = timezone.now()
    with transaction.atomic():
        assignment = _locked(assignment_id, user)
        if assignment.state in (AssignmentState.SUBMITTED, AssignmentState.SKIPPED):
            raise SubmitConflict(f"already_{assignment.state}", f"this pair was {assignment.state}")
        assignment.draft = {**draft, "saved_at": now.isoformat()}
        assignment.save(update_fields=["draft"])
        try:
            with transaction.atomic():
                assignment_renew(assignment=assignment, now=now)
        except LeaseLost:
            return DraftSaved(saved_at=now, expires_at=None)
    return DraftSaved(saved_at=now, expires_at=assignment.expires_at)


def annotation_submit(
    *, assignment_id: int, user: User, body: object, idempotency_key: str = ""
) -> tuple[Annotation, bool]:
    """Store the answer once; returns (annotation, created).

    A repeat with the same idempotency key returns the first result, also when two arrive at
    once. Raises AnswerInvalid (field errors), SubmitConflict, or Assignment.DoesNotExist.
    """
    key = key_digest(idempotency_key)
    if key:
        earlier = _by_key(user, key, assignment_id)
        if earlier is not None:
            return earlier, False
    try:
        with transaction.atomic():
            return _submit(assignment_id, user, body, key), True
    except IntegrityError:
        earlier = _by_key(user, key, assignment_id) if key else None
        if earlier is None:
            raise SubmitConflict("already_submitted", "this pair was already submitted") from None
        return earlier, False


def key_digest(idempotency_key: str) -> str:
    """What is stored of an Idempotency-Key: the SHA-256 of all of it ("" for none). Any length
    fits, and two keys that share their first 100 characters are two keys."""
    key = idempotency_key.strip()
    if not key:
        return ""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _by_key(user: User, key: str, assignment_id: int) -> Annotation | None:
    row = rows.fetchone(sql.by_key(connection.vendor), [user.pk, key])
    earlier = None if row is None else rows.from_row(Annotation, row)
    if earlier is not None and earlier.assignment_id != assignment_id:
        raise SubmitConflict("key_reused", "this idempotency key belongs to another submission")
    return earlier


def _submit(assignment_id: int, user: User, body: object, key: str) -> Annotation:
    assignment = _locked(assignment_id, user)
    if assignment.state == AssignmentState.SUBMITTED:
        raise IntegrityError("already submitted")  # resolved by the caller against the key
    if assignment.state == AssignmentState.SKIPPED:
        raise SubmitConflict("already_skipped", "this pair was skipped")
    pair = assignment.pair
    answer = parse_answer(body, answer_rules(pair))
    if assignment.state == AssignmentState.EXPIRED:  # a live lease needs no renewal to submit
        try:
            assignment_renew(assignment=assignment)
        except LeaseLost as exc:
            raise SubmitConflict("lease_lost", str(exc)) from exc
    now = timezone.now()
    # The writes through config.rows: the same statements as create/bulk_create/save, without
    # the ORM's compiling on every submit.
    (annotation,) = rows.insert(
        [
            Annotation(
                assignment=assignment,
                pair=pair,
                annotator=user,
                tier=answer.tier,
                defects=list(answer.defects),
                time_spent_ms=answer.time_spent_ms,
                idempotency_key=key,
            )
        ]
    )
    changes = rows.insert(
        [
            Change(annotation=annotation, position=i, **change.as_json())
            for i, change in enumerate(answer.changes)
        ]
    )
    annotation_changes_known(annotation, list(changes))
    assignment.state = AssignmentState.SUBMITTED
    assignment.submitted_at = now
    assignment.draft = None
    rows.update(assignment, ["state", "submitted_at", "draft"])
    submitted = _count_submitted(pair)
    rows.insert(
        [
            PairEvent(
                pair=pair,
                actor=user,
                kind=PairEventKind.SUBMITTED,
                detail={"annotation": annotation.pk},
            )
        ]
    )
    _enqueue_review(pair, annotation, submitted=submitted)
    return annotation


def annotation_changes_known(annotation: Annotation, changes: list[Change]) -> None:
    """What `annotation.changes.all()` returns, as prefetch_related leaves it, so the response
    (or the cross-check) shows the changes known without reading them back."""
    rows.related_known(annotation, "changes", changes)


def _count_submitted(pair: Pair) -> int:
    """One more submission on the pair; the new count. The UPDATE row-locks the pair until
    commit, so the count is exact even when both annotators submit at the same moment: exactly
    one of them sees the last submission. One statement with RETURNING where the database has
    it (PostgreSQL, SQLite ≥ 3.35), else the UPDATE and a read back."""
    if connection.vendor == "postgresql" or (
        connection.vendor == "sqlite" and sqlite3.sqlite_version_info >= (3, 35)
    ):
        with connection.cursor() as cursor:
            cursor.execute(sql.count_submitted(connection.vendor), [pair.pk])
            return cursor.fetchone()[0]
    Pair.objects.filter(pk=pair.pk).update(n_submitted=F("n_submitted") + 1)
    return Pair.objects.filter(pk=pair.pk).values_list("n_submitted", flat=True).get()


def _enqueue_review(pair: Pair, annotation: Annotation, *, submitted: int | None = None) -> None:
    """After commit, so a worker never reads a submission that is not there yet. ``submitted``
    is the pair's count including this annotation (default: the pair as read, plus one — for
    callers that hold the pair's row lock)."""
    if pair.is_gold:
        work_enqueue_on_commit(Work.GOLD_SCORE, annotation.pk)
    if submitted is None:
        submitted = pair.n_submitted + 1
    # The cross-check compares the first annotations_compared(overlap) answers: queue it when
    # the last of those arrives.
    if submitted == annotations_compared(pair.project.overlap):
        work_enqueue_on_commit(Work.CROSS_CHECK, pair.pk)
