"""The screening gate: pairs whose automatic screening flags the project's leads chose to act on
wait, "screened out", until a lead accepts them into the queue or rejects them (MinCU removed
12.5 % of its edited pairs this way before anyone annotated them).

Only pairs nobody has started are held: pulling a leased pair out from under an annotator would
lose their work. Gold pairs are never held (their answer is known), nor a pair a lead already
accepted at screening (a rerun of the screener must not hold it again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.db import transaction
from django.db.models import Count, QuerySet

from annotator.models import Pair, PairEvent, PairEventKind, PairStatus, Prediction
from pairdiff.predict import FLAGS as PIXELDIFF_FLAGS
from pairdiff.vlm.judge import JUDGE_FLAGS
from projects.models import Project

SCREENING_FLAGS: tuple[str, ...] = (*PIXELDIFF_FLAGS, *JUDGE_FLAGS)
FLAG_LABELS = {
    "no_visible_change": "No visible change (pixeldiff)",
    "scattered_changes": "Scattered changes (pixeldiff)",
    "change_too_large": "Change too large (pixeldiff)",
    "instruction_not_followed": "Instruction not followed (VLM judge)",
    "edit_incorrect": "Edit incorrect (VLM judge)",
    "unrelated_changes": "Unrelated changes (VLM judge)",
}
_HOLDABLE = [PairStatus.IMPORTED, PairStatus.PRE_ANNOTATED]
SCREENED_OUT, ACCEPTED, REJECTED = (
    PairEventKind.SCREENED_OUT,
    PairEventKind.SCREENING_ACCEPTED,
    PairEventKind.SCREENING_REJECTED,
)


def pair_screen(
    *, pair: Pair, flags: Iterable[str], reasons: Mapping[str, str], actor=None
) -> bool:
    """Hold `pair` back when one of `flags` is among its project's screening flags; True when
    it was held now. The status change is one conditional UPDATE (nobody started the pair), so
    it cannot race a lease: whichever commits first wins, the other changes nothing."""
    chosen = set(pair.project.screening_flags)
    held = [f for f in dict.fromkeys(flags) if f in chosen]
    if not held or pair.is_gold:
        return False
    if PairEvent.objects.filter(pair=pair, kind=ACCEPTED).exists():
        return False
    moved = Pair.objects.filter(pk=pair.pk, status__in=_HOLDABLE, n_taken=0, is_gold=False).update(
        status=PairStatus.SCREENED_OUT
    )
    if moved:
        detail = {"flags": held, "reasons": {f: reasons.get(f, "") for f in held}}
        PairEvent.objects.create(pair=pair, actor=actor, kind=SCREENED_OUT, detail=detail)
        pair.status = PairStatus.SCREENED_OUT
    return bool(moved)


def project_screen(*, project: Project) -> int:
    """Apply the project's (new) screening flags to the predictions its open, unstarted pairs
    already have; how many pairs were held."""
    held = 0
    candidates = Prediction.objects.filter(
        pair__project=project, pair__status__in=_HOLDABLE, pair__n_taken=0
    ).select_related("pair__project")
    for prediction in candidates.order_by("pair_id", "id"):
        held += pair_screen(
            pair=prediction.pair, flags=prediction.flags, reasons=prediction.reasons or {}
        )
    return held


def screened_pairs(project: Project) -> QuerySet[Pair]:
    return project.pairs.filter(status=PairStatus.SCREENED_OUT).order_by("id")


def screening_reasons(pairs: list[Pair]) -> dict[int, list[tuple[str, str]]]:
    """(flag label, reason) per held pair, from the event that held it."""
    events = PairEvent.objects.filter(pair__in=pairs, kind=SCREENED_OUT).order_by("at", "id")
    out: dict[int, list[tuple[str, str]]] = {}
    for event in events:
        reasons = event.detail.get("reasons", {})
        out[event.pair_id] = [
            (FLAG_LABELS.get(f, f), reasons.get(f, "")) for f in event.detail.get("flags", [])
        ]
    return out


@transaction.atomic
def screened_decide(*, project: Project, pair_ids: Iterable[int], accept: bool, user) -> int:
    """Accept held pairs back into the queue, or reject them; how many were decided. Pairs that
    are no longer held (another lead decided first) are left alone."""
    pairs = list(
        Pair.objects.select_for_update()
        .filter(project=project, pk__in=list(pair_ids), status=PairStatus.SCREENED_OUT)
        .order_by("id")
    )
    predicted = set(
        Prediction.objects.filter(pair__in=pairs).values_list("pair_id", flat=True).distinct()
    )
    for pair in pairs:
        if accept:
            back = PairStatus.PRE_ANNOTATED if pair.pk in predicted else PairStatus.IMPORTED
        else:
            back = PairStatus.REJECTED
        Pair.objects.filter(pk=pair.pk).update(status=back)
        PairEvent.objects.create(pair=pair, actor=user, kind=ACCEPTED if accept else REJECTED)
    return len(pairs)


def screening_counts(
    project: Project, *, status_counts: Mapping[str, int] | None = None
) -> dict[str, float | int | None]:
    """What the dashboard shows: pairs ever held, waiting, accepted back, rejected, and the
    share of all pairs screening removed (rejected or still waiting). One query for the
    events; the status counts are read too unless the caller has them."""
    if status_counts is None:
        rows = project.pairs.values("status").annotate(n=Count("id"))
        status_counts = {row["status"]: row["n"] for row in rows}
    total = sum(status_counts.values())
    waiting = status_counts.get(PairStatus.SCREENED_OUT, 0)
    events = (
        PairEvent.objects.filter(pair__project=project, kind__in=[SCREENED_OUT, ACCEPTED, REJECTED])
        .values("kind")
        .annotate(n=Count("pair", distinct=True))
    )
    by_kind = {row["kind"]: row["n"] for row in events}
    rejected = by_kind.get(REJECTED, 0)
    removed = waiting + rejected
    return {
        "held": by_kind.get(SCREENED_OUT, 0),
        "waiting": waiting,
        "accepted": by_kind.get(ACCEPTED, 0),
        "rejected": rejected,
        "removed": removed,
        "percent": round(100 * removed / total, 1) if total else None,
    }
