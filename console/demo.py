"""The demo project: real photos from scikit-image with programmatic edits as gold answers."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from annotator.intake.gold import gold_answer_set
from annotator.models import Pair
from annotator.services import PairInput, pair_check, pairs_store
from pairdiff.synth import EDIT_KINDS, SynthPair, make_pair
from projects.creating import project_create
from projects.members import membership_set, user_ensure
from projects.models import Preset, Project, Role

DEMO_SLUG = "demo"
GUIDELINES = """Compare A and B and find what changed.

Draw the changed region on both images; mark a side absent when the object was added or removed.
Name the entity on each side, pick the category and write one sentence.
Score the pair: excellent only when the change is clean, local and exactly as instructed."""


@dataclass(frozen=True)
class DemoReport:
    project: Project
    created_pairs: int
    passwords: dict[str, str]


def demo_password(username: str) -> str:
    """Development-only passwords, printed by `manage.py demo`; never use the demo in production."""
    return f"{username}-demo"


def demo_seed(
    *, pairs: int, annotators: int, seed: int, progress: Callable[[int, int], None] | None = None
) -> DemoReport:
    """Create or complete the demo project; running it again changes nothing already there."""
    project = Project.objects.filter(slug=DEMO_SLUG).first() or _project()
    passwords = {}
    usernames = [f"annotator{i}" for i in range(1, annotators + 1)]
    roles = [(name, Role.ANNOTATOR) for name in usernames]
    roles += [("lead", Role.LEAD), ("researcher", Role.RESEARCHER)]
    for username, role in roles:
        passwords[username] = demo_password(username)
        user = user_ensure(username=username, password=passwords[username])
        membership_set(project=project, user=user, role=role)
    rows = project.pairs.values_list("external_id", "sha256_a", "sha256_b")
    existing = {key for key, _, _ in rows}
    images = {(a, b) for _, a, b in rows}
    created = have = 0
    # A generated pair whose images repeat an earlier one (a short cycle of an edit's sources)
    # is skipped and the series goes on, so any --pairs gives that many distinct pairs.
    for index in range(pairs * 2 + len(EDIT_KINDS)):
        if have == pairs:
            break
        synth = make_pair(index, seed)
        if synth.key in existing:
            have += 1
        else:
            digests = (_sha256(synth.image_a), _sha256(synth.image_b))
            if digests in images:
                continue
            _store(project, synth)
            images.add(digests)
            created += 1
            have += 1
        if progress:
            progress(have, pairs)
    return DemoReport(project=project, created_pairs=created, passwords=passwords)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _project() -> Project:
    project = project_create(
        slug=DEMO_SLUG, name="Demo: edited photos", preset=Preset.VDIFF, overlap=2
    )
    project.description = "Real photos from scikit-image, each edited by a known program."
    project.guidelines = GUIDELINES
    project.entity_vocabulary = ["astronaut", "coin", "cat", "mug", "rocket", "text", "image"]
    project.gold_rate = 0.1
    project.licence = "scikit-image sample data licences (see skimage.data)"
    project.save()
    return project


@transaction.atomic
def _store(project: Project, synth: SynthPair) -> Pair:
    pair_input = PairInput(
        image_a=synth.image_a,
        image_b=synth.image_b,
        external_id=synth.key,
        instruction=synth.instruction,
        category=synth.changes[0].category if synth.changes else "",
        metadata=dict(synth.source),
    )
    pair = pairs_store(
        project=project, checked=[pair_check(project=project, pair_input=pair_input)]
    )[0]
    gold_answer_set(
        pair=pair,
        source="programmatic edit",
        changes=[
            {
                "category": c.category,
                "mincu_category": c.mincu_category,
                "description": c.description,
                "entity_a": c.entity_a,
                "entity_b": c.entity_b,
                "boxes_a": [list(b) for b in c.boxes_a],
                "boxes_b": [list(b) for b in c.boxes_b],
            }
            for c in synth.changes
        ],
    )
    return pair
