"""Multiple-choice hard negatives: what a release will write for each pair, and leads' edits."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from annotator.models import Pair, Project
from pairdiff.labels import normalise_label
from pairdiff.release.build import entity_pool, question_negatives
from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.records import benchmark_record
from review.models import QuestionEdit
from review.releases import release_pair
from review.standing import standing_answers, standing_rows

NEGATIVE_MAX_LENGTH = 500


class NegativesInvalid(ValueError):
    """Edited negatives that cannot stand; ``fields`` maps ``negative_1``/``negative_2``."""

    def __init__(self, fields: dict[str, str]):
        super().__init__(next(iter(fields.values())))
        self.fields = fields


@dataclass(frozen=True, slots=True)
class QuestionPreview:
    pair: Pair
    description: str
    category: str
    derived: list[str]
    edit: QuestionEdit | None

    @property
    def edited(self) -> bool:
        return self.edit is not None and self.edit.description == self.description

    @property
    def stale(self) -> bool:
        """Edited for a description that no longer stands (a lead changed the answer since)."""
        return self.edit is not None and not self.edited

    @property
    def negatives(self) -> list[str]:
        return list(self.edit.negatives) if self.edited else self.derived


def question_previews(project: Project, pairs: QuerySet[Pair]) -> list[QuestionPreview]:
    """The question of each accepted pair in ``pairs``, as the next release will write it."""
    standing = [s for s in standing_answers(pairs) if s.changes]
    pool = _project_entity_pool(project)
    edits = {
        e.pair_id: e
        for e in QuestionEdit.objects.filter(pair__in=[s.pair for s in standing]).select_related(
            "edited_by"
        )
    }
    previews = []
    for s in standing:
        record = benchmark_record(release_pair(s), "")
        previews.append(
            QuestionPreview(
                pair=s.pair,
                description=record["description"],
                category=record["category"],
                derived=question_negatives(record, entity_pool=pool),
                edit=edits.get(s.pair.pk),
            )
        )
    return previews


def question_edit_save(*, pair: Pair, negatives: list[str], user=None) -> QuestionEdit:
    """Store a lead's two negatives for the pair's current standing description."""
    standing = next(iter(standing_answers(Pair.objects.filter(pk=pair.pk))), None)
    if standing is None or not standing.changes:
        raise NegativesInvalid({"negative_1": "only accepted pairs with a change have questions"})
    description = standing.changes[0]["description"]
    if len(negatives) != 2:
        raise NegativesInvalid({"negative_1": "give exactly two negatives"})
    cleaned = [" ".join(str(n or "").split()) for n in negatives]
    problems: dict[str, str] = {}
    truth = _plain(description)
    for i, text in enumerate(cleaned, start=1):
        key = f"negative_{i}"
        if not text:
            problems[key] = "write a false description of the change"
        elif len(text) > NEGATIVE_MAX_LENGTH:
            problems[key] = f"keep it under {NEGATIVE_MAX_LENGTH} characters"
        elif _plain(text) == truth:
            problems[key] = "this is the true description; a negative must be false"
        elif _plain(text) == _plain(NO_DIFFERENCE):
            problems[key] = "“no difference” is always an option already"
    if len(cleaned) == 2 and not problems and _plain(cleaned[0]) == _plain(cleaned[1]):
        problems["negative_2"] = "the two negatives must differ"
    if problems:
        raise NegativesInvalid(problems)
    edit, _ = QuestionEdit.objects.update_or_create(
        pair=pair,
        defaults={"description": description, "negatives": cleaned, "edited_by": user},
    )
    return edit


def question_edit_reset(*, pair: Pair) -> None:
    """Back to the derived negatives."""
    QuestionEdit.objects.filter(pair=pair).delete()


def _project_entity_pool(project: Project) -> list[str]:
    """The pool a release of the project would use: the labels of every standing answer."""
    return entity_pool(
        change
        for row in standing_rows(Pair.objects.filter(project=project))
        for change in row.changes
    )


def _plain(text: str) -> str:
    return normalise_label(text.rstrip(".!? "))
