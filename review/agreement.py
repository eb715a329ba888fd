"""Cross-validation and gold scoring of stored annotations, through the pure rules in pairdiff."""

from __future__ import annotations

from dataclasses import asdict

from django.db import connection, transaction

from annotator.models import Annotation, Change, Pair, PairEvent, PairEventKind, PairStatus
from annotator.submitting import annotation_changes_known
from config import rows
from jobs.lifecycle import job_finish, job_progress, job_start
from jobs.models import JobStatus
from pairdiff.agreement import (
    AgreementPolicy,
    Verdict,
    annotations_compared,
    compare_answers,
)
from pairdiff.answers import Answer
from pairdiff.gold import answer_from_changes, score_against_gold
from projects.models import Project, TierRule
from review import sql
from review.models import Agreement, GoldScore
from review.selectors import pair_is_resolved
from webhooks.models import EventKind, ObjectKind
from webhooks.outbox import webhook_emit

# The cross-check's verdicts that other systems hear of (webhooks); a rejection is not one.
VERDICT_EVENTS = {
    PairStatus.ACCEPTED: EventKind.PAIR_ACCEPTED,
    PairStatus.DISPUTED: EventKind.PAIR_DISPUTED,
}

# The project's tier rule as the pairs of tiers accepted (geometry permitting) and disputed;
# every other pair of tiers is rejected.
TIER_RULES: dict[str, tuple[frozenset, frozenset]] = {
    TierRule.STRICT: (
        frozenset({("excellent", "excellent")}),
        frozenset({("excellent", "good")}),
    ),
    TierRule.GOOD: (
        frozenset({("excellent", "excellent"), ("excellent", "good"), ("good", "good")}),
        frozenset({("excellent", "fair"), ("good", "fair")}),
    ),
}


def project_policy(project: Project) -> AgreementPolicy:
    accept, dispute = TIER_RULES[project.tier_rule]
    return AgreementPolicy(
        iou_threshold=project.iou_threshold,
        synonyms=project.entity_synonyms,
        accept_tiers=accept,
        dispute_tiers=dispute,
    )


def annotation_answer(annotation: Annotation) -> Answer:
    changes = [c.as_json() for c in annotation.changes.all()]
    answer = answer_from_changes(changes, tier=annotation.tier)
    return Answer(answer.tier, tuple(annotation.defects), annotation.time_spent_ms, answer.changes)


_AGREEMENT_COMPUTED = (
    "annotation_1",
    "annotation_2",
    "status",
    "reasons",
    "changes",
    "mean_iou",
    "consensus",
    "policy",
    "computed_at",
)


def _first_annotations(pair: Pair) -> list[Annotation]:
    """The pair's first two annotations, each with its changes known, in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(sql.first_annotations(connection.vendor), [pair.pk])
        found = cursor.fetchall()
    annotations: dict[int, Annotation] = {}
    changes: dict[int, list[Change]] = {}
    at = rows.width(Annotation)
    for row in found:
        if row[0] not in annotations:
            annotation = annotations[row[0]] = rows.from_row(Annotation, row)
            annotation.pair = pair
            changes[row[0]] = []
        if row[at] is not None:  # the change's id: NULL when the annotation has none
            changes[row[0]].append(rows.from_row(Change, row, start=at))
    for pk, annotation in annotations.items():
        annotation_changes_known(annotation, changes[pk])
    return list(annotations.values())


def agreement_compute(*, pair_id: int) -> Agreement | None:
    """Cross-check the pair's first two annotations (one, when the project's overlap is 1) and
    move the pair to accepted, disputed or rejected — unless a lead's decision stands. Safe to
    run twice (also to recompute after a policy change); None until enough annotations are
    in. Takes the pair's row lock."""
    with transaction.atomic():
        statement = sql.pair_locked(connection.vendor, connection.features.has_select_for_update)
        row = rows.fetchone(statement, [pair_id])
        if row is None:
            raise Pair.DoesNotExist("Pair matching query does not exist.")
        pair = rows.from_row(Pair, row)
        pair.project = rows.from_row(Project, row, start=rows.width(Pair))
        needed = annotations_compared(pair.project.overlap)
        annotations = _first_annotations(pair)
        if len(annotations) < needed:
            return None
        first, second = annotations[0], annotations[-1]
        policy = project_policy(pair.project)
        verdict = compare_answers(annotation_answer(first), annotation_answer(second), policy)
        # One INSERT … ON CONFLICT (pair) DO UPDATE: a recompute replaces the row in place.
        (agreement,) = rows.insert(
            [
                Agreement(
                    pair=pair,
                    annotation_1=first,
                    annotation_2=second,
                    status=verdict.status,
                    reasons=[{"code": c, "message": verdict.messages[c]} for c in verdict.reasons],
                    changes=[_change_json(c) for c in verdict.changes],
                    mean_iou=verdict.mean_iou,
                    consensus=_consensus_json(verdict),
                    policy={
                        "iou_threshold": policy.iou_threshold,
                        "tier_rule": pair.project.tier_rule,
                    },
                )
            ],
            conflict=(("pair",), _AGREEMENT_COMPUTED),
        )
        if pair.status != verdict.status and not pair_is_resolved(pair):
            pair.status = PairStatus(verdict.status)
            rows.update(pair, ["status", "updated_at"])
            rows.insert(
                [
                    PairEvent(
                        pair=pair, kind=PairEventKind.AGREEMENT, detail={"status": verdict.status}
                    )
                ]
            )
            if pair.status in VERDICT_EVENTS:
                webhook_emit(pair.project, VERDICT_EVENTS[pair.status], ObjectKind.PAIR, pair)
    return agreement


def gold_score_compute(*, annotation_id: int) -> GoldScore | None:
    """Score an annotation of a gold pair against the known answer; None for other pairs."""
    annotation = Annotation.objects.select_related("pair__project", "pair__gold").get(
        pk=annotation_id
    )
    gold = getattr(annotation.pair, "gold", None)
    if gold is None:
        return None
    score = score_against_gold(
        annotation_answer(annotation),
        answer_from_changes(gold.changes),
        project_policy(annotation.pair.project),
    )
    details = {
        "changes": [asdict(c) for c in score.changes],
        "missed": score.missed,
        "extra": score.extra,
    }
    gold_score, _ = GoldScore.objects.update_or_create(
        annotation=annotation,
        defaults={"score": score.score, "passed": score.passed, "details": details},
    )
    return gold_score


def _change_json(change) -> dict:
    data = asdict(change)
    data["geometry"] = change.geometry
    return data


def _consensus_json(verdict: Verdict) -> list[dict] | None:
    if verdict.consensus is None:
        return None
    return [c.as_json() for c in verdict.consensus]


def agreements_recompute(*, job) -> None:
    """Recompute the verdict of every cross-checked pair of the job's project (after a policy
    change); pairs a lead decided keep the lead's decision. Reports progress on the job."""
    pair_ids = list(
        Pair.objects.filter(project=job.project, n_submitted__gte=1)
        .order_by("id")
        .values_list("pk", flat=True)
    )
    job_start(job, total=len(pair_ids))
    counts: dict[str, int] = {}
    for done, pair_id in enumerate(pair_ids, start=1):
        agreement = agreement_compute(pair_id=pair_id)
        if agreement is not None:
            counts[agreement.status] = counts.get(agreement.status, 0) + 1
        if done % 50 == 0:
            job_progress(job, done=done)
    job_finish(
        job,
        status=JobStatus.SUCCEEDED,
        result=counts,
        message=f"{sum(counts.values())} verdicts recomputed",
    )
