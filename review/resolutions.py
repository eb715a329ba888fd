"""Leads' decisions on pairs. The annotations are never overwritten; every decision is a new
Resolution row (who, when, before, after), and the latest one stands."""

from __future__ import annotations

from django.db import transaction

from annotator.models import Pair, PairEvent, PairEventKind, PairStatus
from annotator.submitting import answer_rules
from pairdiff.answers import AnswerInvalid, parse_answer
from review.agreement import agreement_compute
from review.models import Decision, Resolution
from webhooks.models import EventKind, ObjectKind
from webhooks.outbox import webhook_emit


class ResolutionRefused(ValueError):
    """The decision does not fit the pair's state (e.g. accepting an annotation it lacks)."""


def resolution_record(
    *,
    pair_id: int,
    lead,
    decision: Decision,
    answer: object = None,
    reason: str = "",
    comment: str = "",
) -> Resolution:
    """Record a lead's decision and move the pair. Raises AnswerInvalid (a merged answer that
    breaks the rules, fields prefixed "answer.", or a reject without a reason) or
    ResolutionRefused. Takes the pair's row lock."""
    decision = Decision(decision)
    if decision == Decision.REJECT and not reason.strip():
        raise AnswerInvalid({"reason": ["say why the pair is rejected"]})
    with transaction.atomic():
        pair = Pair.objects.select_for_update().select_related("project").get(pk=pair_id)
        before = pair.status
        resolution = Resolution.objects.create(
            pair=pair,
            lead=lead,
            decision=decision,
            answer=_standing_answer(pair, decision, answer),
            reason=reason.strip()[:500],
            comment=comment.strip(),
            status_before=before,
            status_after=before,
        )
        if decision == Decision.REOPEN:
            # The latest resolution is now a reopen, so the cross-check decides again.
            if agreement_compute(pair_id=pair.pk) is None:
                Pair.objects.filter(pk=pair.pk).update(status=PairStatus.IN_ANNOTATION)
            pair.refresh_from_db(fields=["status"])
        else:
            pair.status = (
                PairStatus.REJECTED if decision == Decision.REJECT else PairStatus.ACCEPTED
            )
            pair.save(update_fields=["status", "updated_at"])
        resolution.status_after = pair.status
        resolution.save(update_fields=["status_after"])
        PairEvent.objects.create(
            pair=pair,
            actor=lead,
            kind=PairEventKind(f"resolution:{decision}"),
            detail={"resolution": resolution.pk, "before": before, "after": pair.status},
        )
        if decision != Decision.REOPEN:  # a reopened pair is the cross-check's again
            webhook_emit(pair.project, EventKind.PAIR_RESOLVED, ObjectKind.PAIR, pair)
    return resolution


def _standing_answer(pair: Pair, decision: Decision, answer: object) -> dict | None:
    if decision in (Decision.ACCEPT_1, Decision.ACCEPT_2):
        agreement = getattr(pair, "agreement", None)
        if agreement is None:
            raise ResolutionRefused("the pair has no cross-checked annotations to accept")
        chosen = agreement.annotation_1 if decision == Decision.ACCEPT_1 else agreement.annotation_2
        return {"changes": [c.as_json() for c in chosen.changes.all()], "annotation": chosen.pk}
    if decision == Decision.MERGE:
        body = answer if isinstance(answer, dict) else {}
        # The lead's answer is checked like an annotator's; its tier is the lead's verdict.
        try:
            checked = parse_answer(
                {"tier": "excellent", "changes": body.get("changes")}, answer_rules(pair)
            )
        except AnswerInvalid as exc:
            raise AnswerInvalid({f"answer.{k}": v for k, v in exc.fields.items()}) from exc
        return {"changes": checked.as_json()["changes"]}
    return None
