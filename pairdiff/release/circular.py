"""The rotated option orders of a release's questions, for circular evaluation (pure).

MMBench's CircularEval asks each question once per rotation of its options: a model that
favours a letter, or the first option, gets some rotation wrong. This step runs over the final
questions, whatever made them: each question of n options gives n - 1 variants, the options
shifted by 1 … n - 1 places, with the answer's letter moved along. A variant keeps every field
of its question (images, pair, split, category) and adds ``rotation_of`` (its question's id)
and ``rotation`` (the shift); its id is ``<question id>@c<shift>``. They are written to
``questions_circular.jsonl``, apart from ``questions.jsonl``, so plain accuracy and the files
that harnesses read are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

CIRCULAR_FILE = "questions_circular.jsonl"


def rotation_id(question_id: object, shift: int) -> str:
    return f"{question_id}@c{shift}"


def rotations(question: Mapping) -> list[dict]:
    """The n - 1 rotations of one question (none for a question without options)."""
    options = question.get("options")
    if not isinstance(options, Mapping) or len(options) < 2:
        return []
    letters = list(options)
    sentences = [options[letter] for letter in letters]
    answer_at = letters.index(question["answer"])
    out = []
    for shift in range(1, len(letters)):
        turned = sentences[-shift:] + sentences[:-shift]  # option i moves to i + shift
        out.append(
            {
                **{k: v for k, v in question.items() if k not in _FLAT},
                "id": rotation_id(question["id"], shift),
                "rotation_of": question["id"],
                "rotation": shift,
                "options": dict(zip(letters, turned, strict=True)),
                "answer": letters[(answer_at + shift) % len(letters)],
            }
        )
    return out


def circular_rows(questions: Iterable[Mapping]) -> Iterator[dict]:
    """Every rotation of every question, in the questions' order."""
    for question in questions:
        yield from rotations(question)


_FLAT = frozenset(("A", "B", "C", "D"))  # option columns of a flattened row, never copied
