"""Work already done in the demo: two simulated annotators answer part of the pairs from the
known edits, so leads find verdicts and disputes, and researchers a release, on first start."""

from __future__ import annotations

from annotator.leasing import assignment_lease_next
from annotator.models import Annotation, Pair, PairStatus
from annotator.submitting import annotation_submit
from pairdiff.release.options import ReleaseOptions
from pairdiff.release.splits import SplitPlan
from pairdiff.synth import TWINS
from projects.members import SIMULATED_ANNOTATORS, membership_set, user_ensure
from projects.models import Project, Role
from releases.building import release_build, release_register
from releases.models import Release, ReleaseStatus
from review.agreement import agreement_compute

SIMULATED = SIMULATED_ANNOTATORS
RELEASE_NAME = "demo-v1"


def demo_work(*, project: Project, pairs: int) -> dict[str, int]:
    """Answer up to ``pairs`` pairs by both simulated annotators (once: a second run adds
    nothing), then build the demo release if it is not there. The fifth pair of every
    fifteen gets a "good" tier from one of them, so it goes to a lead."""
    if pairs <= 0:
        return {"answered": 0, "release": 0}
    users = [user_ensure(username=name) for name in SIMULATED]  # no password: no log-in
    for user in users:
        membership_set(project=project, user=user, role=Role.ANNOTATOR)
    done = Annotation.objects.filter(annotator=users[0]).count()
    owed = False  # a dispute due, waiting for a pair whose twin group can spare it
    for index in range(done, pairs):
        pair = _answer_next(project, users[0], index, tier="excellent")
        if pair is None:
            break
        second = _lease_pair(project, users[1], pair)
        if second is not None:
            # One pair in 5 * TWINS goes to a lead: a twin group losing a member keeps two
            # (and a third option), where one in five would break most groups. Only a pair
            # of a group of three: a group of two losing one would leave a single, which
            # no twin group asks.
            owed = owed or index % (5 * TWINS) == 4
            tier = "good" if owed and _in_full_group(project, pair) else "excellent"
            owed = owed and tier == "excellent"
            _submit(second, users[1], pair, tier=tier, nudge=1)
            agreement_compute(pair_id=pair.pk)
    built = 0
    released = Release.objects.filter(project=project, name=RELEASE_NAME).exists()
    if not released and Pair.objects.filter(project=project, status=PairStatus.ACCEPTED).exists():
        release = release_register(
            project=project,
            name=RELEASE_NAME,
            plan=SplitPlan(seed=0, test_fraction=0.25),
            options=ReleaseOptions(),  # controls at the project's rate (10 % by default)
        )
        built = int(release_build(release.pk).status == ReleaseStatus.READY)
    return {"answered": Annotation.objects.filter(annotator=users[0]).count(), "release": built}


def _in_full_group(project: Project, pair: Pair) -> bool:
    """Whether the pair's twin group (``pairdiff.synth.make_pair``) has TWINS pairs here."""
    group = (pair.metadata or {}).get("twin_group")
    if group is None:
        return True  # not a demo twin: any pair may go to a lead
    return Pair.objects.filter(project=project, metadata__twin_group=group).count() >= TWINS


def _answer_next(project: Project, user, index: int, *, tier: str) -> Pair | None:
    assignment = assignment_lease_next(project=project, user=user)
    if assignment is None:
        return None
    _submit(assignment, user, assignment.pair, tier=tier, nudge=0)
    return assignment.pair


def _lease_pair(project: Project, user, pair: Pair):
    """The second annotator's lease on the same pair (started pairs come first in the queue)."""
    assignment = assignment_lease_next(project=project, user=user)
    return assignment if assignment is not None and assignment.pair_id == pair.pk else None


def _submit(assignment, user, pair: Pair, *, tier: str, nudge: int) -> None:
    """The known answer, boxes moved by ``nudge`` pixels inside the image, as a person would."""
    changes = []
    for change in pair.gold.changes:
        changes.append(
            {
                "category": change["category"],
                "description": change["description"],
                "entity_a": change["entity_a"],
                "entity_b": change["entity_b"],
                "boxes_a": [
                    _nudged(b, nudge, pair.width_a, pair.height_a) for b in change["boxes_a"]
                ],
                "boxes_b": [
                    _nudged(b, nudge, pair.width_b, pair.height_b) for b in change["boxes_b"]
                ],
            }
        )
    body = {"tier": tier, "defects": [], "time_spent_ms": 30_000, "changes": changes}
    annotation_submit(
        assignment_id=assignment.pk, user=user, body=body, idempotency_key=f"demo-{assignment.pk}"
    )


def _nudged(box, nudge: int, width: int, height: int) -> list[int]:
    x1, y1, x2, y2 = (round(c) for c in box)
    dx = nudge if x2 + nudge <= width else -nudge if x1 - nudge >= 0 else 0
    dy = nudge if y2 + nudge <= height else -nudge if y1 - nudge >= 0 else 0
    return [x1 + dx, y1 + dy, x2 + dx, y2 + dy]
