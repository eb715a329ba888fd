"""Multiple-choice hard negatives: what a release will write for each pair, and leads' edits."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils import timezone

from annotator.models import Pair
from pairdiff.labels import normalise_label
from pairdiff.release.build import question_negatives
from pairdiff.release.questions import NO_DIFFERENCE
from pairdiff.release.records import benchmark_record
from projects.models import Project
from releases.inputs import last_ready, published_questions, release_pair
from releases.models import QuestionEdit
from review.figures import prior_read
from review.standing import standing_answers

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
    def verified(self) -> bool:
        return self.edited and self.edit is not None and self.edit.verified

    @property
    def negatives(self) -> list[str]:
        return list(self.edit.negatives) if self.edit is not None and self.edited else self.derived


def question_previews(project: Project, pairs: QuerySet[Pair]) -> list[QuestionPreview]:
    """The question of each accepted pair in ``pairs``, as the next release will write it."""
    standing = [s for s in standing_answers(pairs) if s.changes]
    prior = prior_read(project)
    edits = {
        e.pair_id: e
        for e in QuestionEdit.objects.filter(pair__in=[s.pair for s in standing]).select_related(
            "edited_by"
        )
    }
    # A question a release published is kept by every later one while its truth stands.
    published, _ = published_questions(last_ready(project.pk))
    previews = []
    for s in standing:
        record = benchmark_record(release_pair(s), "")
        before = published.get(s.pair.pk)
        if before is not None and _plain(before["truth"]) == _plain(record["description"]):
            derived = [n["text"] for n in before["row"].get("negatives", [])] or [
                v
                for v in before["row"]["options"].values()
                if v not in (before["truth"], NO_DIFFERENCE)
            ]
        else:
            derived = _derived(record, prior)
        previews.append(
            QuestionPreview(
                pair=s.pair,
                description=record["description"],
                category=record["category"],
                derived=derived,
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
        # A new edit has not been checked against the images yet: verify it again.
        defaults={
            "description": description,
            "negatives": cleaned,
            "edited_by": user,
            "verified": False,
            "verified_by": None,
            "verified_at": None,
        },
    )
    return edit


def question_edit_reset(*, pair: Pair) -> None:
    """Back to the derived negatives (a verified question is no longer verified)."""
    QuestionEdit.objects.filter(pair=pair).delete()


def question_verify(*, pair: Pair, user=None) -> QuestionEdit:
    """Mark the pair's question verified: the negatives it shows now (a lead's edit, or the
    derived ones) are frozen and every later release writes them, while the description
    they answer still stands. Unverified questions are re-derived for each release."""
    preview = next(iter(question_previews(pair.project, Pair.objects.filter(pk=pair.pk))), None)
    if preview is None:
        raise NegativesInvalid({"negative_1": "only accepted pairs with a change have questions"})
    edit, _ = QuestionEdit.objects.update_or_create(
        pair=pair,
        defaults={
            "description": preview.description,
            "negatives": preview.negatives,
            "edited_by": preview.edit.edited_by if preview.edited and preview.edit else None,
            "verified": True,
            "verified_by": user,
            "verified_at": timezone.now(),
        },
    )
    return edit


def question_unverify(*, pair: Pair) -> None:
    """Back to a per-release question: an edit stays an edit, derived ones are derived again."""
    edit = QuestionEdit.objects.filter(pair=pair, verified=True).first()
    if edit is None:
        return
    if edit.edited_by_id is None:
        edit.delete()
    else:
        edit.verified, edit.verified_by, edit.verified_at = False, None, None
        edit.save(update_fields=["verified", "verified_by", "verified_at"])


def _derived(record: dict, prior: dict) -> list[str]:
    try:
        return question_negatives(record, prior=prior)
    except ValueError:  # a record that cannot make a question: the page says so, never a 500
        return ["", ""]


def _plain(text: str) -> str:
    return normalise_label(text.rstrip(".!? "))
