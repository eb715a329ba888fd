"""Model predictions over REST (leads): import them, or start a pre-annotation job."""

from __future__ import annotations

import json

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.preannotation import BACKENDS, UnknownBackend, preannotate_queue
from annotator.predictions import predictions_import
from api.annotate import ERRORS
from api.errors import error_response
from api.pairs import JobStartedSerializer, job_started, lead_project
from api.parsers import JSONParser, MultiPartParser


class PredictionsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        required=False,
        help_text='JSONL: {"pair" | "external_id", "model", "version", '
        '"confidence", "flags", "changes"} per line',
    )
    predictions = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="the same rows as a JSON list"
    )


class PredictionsReportSerializer(serializers.Serializer):
    imported = serializers.IntegerField()
    # DRF's metaclass takes declared fields out of the class, so this leaves Serializer.errors be.
    errors = serializers.ListField(child=serializers.DictField())  # type: ignore[assignment]


class PreannotateSerializer(serializers.Serializer):
    backend = serializers.ChoiceField(choices=BACKENDS)
    # Bounded: an id past the database's 64-bit range failed the job's query (a 500 while
    # tasks run eagerly), and a huge list makes a huge IN clause.
    pairs = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        required=False,
        max_length=10_000,
        help_text="default: the open pairs",
    )


@extend_schema(
    request={
        "multipart/form-data": PredictionsUploadSerializer,
        "application/json": PredictionsUploadSerializer,
    },
    responses={200: PredictionsReportSerializer, **ERRORS},
)
@api_view(["POST"])
@parser_classes([MultiPartParser, JSONParser])
def import_predictions(request: Request, slug: str) -> Response:
    """Import model predictions; every bad row is reported with its line and reason."""
    project = lead_project(request, slug)
    body = PredictionsUploadSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    if "file" in body.validated_data:
        data = body.validated_data["file"].read()
    elif "predictions" in body.validated_data:
        data = "\n".join(json.dumps(row) for row in body.validated_data["predictions"]).encode()
    else:
        return error_response("invalid", "send a JSONL file or a list of predictions", 400)
    try:
        report = predictions_import(project=project, data=data)
    except ValueError as exc:
        return error_response("invalid", str(exc), status.HTTP_400_BAD_REQUEST)
    return Response({"imported": report.imported, "errors": report.errors})


@extend_schema(request=PreannotateSerializer, responses={202: JobStartedSerializer, **ERRORS})
@api_view(["POST"])
def preannotate(request: Request, slug: str) -> Response:
    """Start a pre-annotation job; poll /api/v1/jobs/{id}/ for progress."""
    project = lead_project(request, slug)
    body = PreannotateSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        job = preannotate_queue(
            project=project,
            backend=body.validated_data["backend"],
            user=request.user,
            pair_ids=body.validated_data.get("pairs"),
        )
    except UnknownBackend as exc:
        return error_response("invalid", str(exc), status.HTTP_400_BAD_REQUEST)
    job.refresh_from_db()
    return job_started(job)
