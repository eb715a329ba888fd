"""Import of external model predictions (JSONL), validated like annotations."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from annotator.models import Pair, PairStatus, Prediction
from annotator.screening import pair_screen
from annotator.submitting import answer_rules
from pairdiff import strictjson
from pairdiff.answers import AnswerInvalid, parse_answer
from pairdiff.predict import FLAGS
from projects.models import Project

MAX_ROWS = 100_000


@dataclass
class PredictionsReport:
    imported: int = 0
    errors: list[dict] = field(default_factory=list)


def predictions_import(*, project: Project, data: bytes) -> PredictionsReport:
    """One JSON object per line: {"pair": id | "external_id": "...", "model": "...",
    "version": "...", "confidence": 0.8, "flags": [...], "changes": [...]} with changes as in
    the submit body. Bad lines are reported with their reason; good lines replace the
    prediction of the same model version. ValueError when the file is not usable at all."""
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise ValueError("predictions must be UTF-8 JSON lines") from None
    if len(lines) > MAX_ROWS:
        raise ValueError(f"at most {MAX_ROWS} predictions per file")
    report = PredictionsReport()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            with transaction.atomic():
                _import_row(project, line)
        except ValueError as exc:
            report.errors.append({"line": number, "message": str(exc)})
        else:
            report.imported += 1
    return report


def _import_row(project: Project, line: str) -> None:
    # The bounded reader: a line nested 100,000 deep is one unreadable line, not a 500.
    row = strictjson.loads(line)  # JSONRejected (a ValueError) names what is wrong
    if not isinstance(row, dict):
        raise ValueError("a line must be a JSON object")
    pair = _pair(project, row)
    model = row.get("model")
    if not isinstance(model, str) or not model.strip():
        raise ValueError("model: name the model")
    confidence = row.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence <= 1
    ):
        raise ValueError("confidence: a number from 0 to 1")
    flags = row.get("flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) and f in FLAGS for f in flags):
        raise ValueError(f"flags: a list of {', '.join(FLAGS)}")
    try:
        # A prediction may propose nothing, so it is checked as a "fair" answer.
        answer = parse_answer(
            {"tier": "fair", "changes": row.get("changes", [])}, answer_rules(pair)
        )
    except AnswerInvalid as exc:
        path, messages = next(iter(exc.fields.items()))
        raise ValueError(f"{path}: {messages[0]}") from None
    Prediction.objects.update_or_create(
        pair=pair,
        model_name=model.strip()[:100],
        model_version=str(row.get("version", ""))[:100],
        defaults={
            "changes": answer.as_json()["changes"],
            "flags": flags,
            "confidence": confidence,
            "error": "",
            "job": None,
        },
    )
    Pair.objects.filter(pk=pair.pk, status=PairStatus.IMPORTED).update(
        status=PairStatus.PRE_ANNOTATED
    )
    pair_screen(pair=pair, flags=flags, reasons={})


def _pair(project: Project, row: dict) -> Pair:
    pairs = Pair.objects.filter(project=project).select_related("project")
    if isinstance(row.get("pair"), int) and not isinstance(row.get("pair"), bool):
        pair = pairs.filter(pk=row["pair"]).first()
    elif isinstance(row.get("external_id"), str):
        pair = pairs.filter(external_id=row["external_id"]).first()
    else:
        raise ValueError('name the pair: "pair" (id) or "external_id"')
    if pair is None:
        raise ValueError("no such pair in this project")
    return pair
