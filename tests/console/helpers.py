"""Helpers shared by the console's tests: a log-in, a complete settings form, a zip, an
accepted pair."""

from __future__ import annotations

import io
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotator.leasing import assignment_lease_next
from annotator.models import Pair, PairStatus
from annotator.submitting import annotation_submit
from projects.models import Preset, Project
from review.agreement import agreement_compute
from tests.factories import answer, make_pair

STRONG_PASSWORD = "a long passphrase nobody guesses"


def _login(client: Client, user) -> Client:
    client.force_login(user)
    return client


def _settings_data(project: Project | None = None, **changes) -> dict:
    """A complete, valid settings form; `changes` overrides fields."""
    data = {
        "name": "Cars",
        "description": "",
        "preset": Preset.MINCU,
        "categories_text": "",
        "overlap": "2",
        "iou_threshold": "0.5",
        "gold_percent": "0",
        "synonyms_text": "",
        "guidelines": "",
        "vocabulary_text": "",
        "show_predictions": "on",
        "licence": "",
    }
    if project is None:
        data["slug"] = "bikes"
    return data | changes


def _zip(files: dict[str, bytes | str]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return SimpleUploadedFile("batch.zip", buffer.getvalue(), content_type="application/zip")


def _annotate(project, user, body) -> None:
    assignment = assignment_lease_next(project=project, user=user)
    assert assignment is not None
    annotation_submit(assignment_id=assignment.pk, user=user, body=body)


def _accepted_pair(project, annotators, box) -> Pair:
    """A pair both annotators answered with the same box on both sides: accepted."""
    pair = make_pair(project)
    for user in annotators:
        _annotate(project, user, answer(boxes_a=[box], boxes_b=[box]))
    agreement_compute(pair_id=pair.pk)
    pair.refresh_from_db()
    assert pair.status == PairStatus.ACCEPTED
    return pair
