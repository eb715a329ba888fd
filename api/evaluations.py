"""Scoring a model against a release over REST (researchers and leads of the project)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view, parser_classes
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.intake.upload_limits import upload_size_limit
from api.annotate import ERRORS
from api.errors import error_response
from api.pagination import PAGE, paginated
from api.pairs import JobStartedSerializer, job_started
from api.parsers import FormParser, MultiPartParser
from pairdiff.scoring.predictions import COORDS
from pairdiff.scoring.text import DEFAULT, THRESHOLDS
from releases.evaluations import (
    MAX_PREDICTIONS_BYTES,
    EvaluationRefused,
    evaluation_create,
    evaluations_of,
    too_large_message,
)
from releases.models import Evaluation
from releases.selectors import release_visible


class EvaluationSerializer(serializers.ModelSerializer):
    model = serializers.CharField(source="model_name")

    class Meta:
        model = Evaluation
        fields = [
            "id",
            "model",
            "status",
            "coords",
            "text_metric",
            "grounded_f1",
            "accuracy",
            "result",
            "message",
            "created_at",
            "finished_at",
            "job",
        ]


class EvaluationCreateSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="predictions JSONL, one line per record or question")
    model = serializers.CharField(max_length=100, help_text="the model's name on the leaderboard")
    coords = serializers.ChoiceField(choices=COORDS, default="1000")
    text_metric = serializers.ChoiceField(choices=list(THRESHOLDS), default=DEFAULT)


class EvaluationStartedSerializer(JobStartedSerializer):
    evaluation = EvaluationSerializer()


@extend_schema(
    methods=["GET"],
    parameters=[PAGE],
    responses={200: paginated("Evaluation", EvaluationSerializer(many=True)), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    request={"multipart/form-data": EvaluationCreateSerializer},
    responses={202: EvaluationStartedSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
@parser_classes([MultiPartParser, FormParser])
def release_evaluations(request: Request, pk: int) -> Response:
    """The release's evaluations, best first (the leaderboard), or score a predictions file
    → 202 {job, evaluation}; poll /api/v1/jobs/{id}/. The file streams to disk with its size
    checked as it arrives; it is scored by a job, never inside this request."""
    limit = None
    if request.method == "POST":
        limit = upload_size_limit(
            request._request, max_bytes=MAX_PREDICTIONS_BYTES, fields=("file",)
        )
    release = release_visible(request.user, pk)
    if release is None:
        return error_response("not_found", "no such release", 404)
    if request.method == "GET":
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(evaluations_of(release), request)
        return paginator.get_paginated_response(EvaluationSerializer(page, many=True).data)
    data = request.data  # parsed here: the limit counts the file's bytes as they arrive
    if limit is not None and "file" in limit.refused:
        message = too_large_message(limit.refused["file"], at_least=True)
        return error_response("invalid", message, 400, {"file": [message]})
    body = EvaluationCreateSerializer(data=data)
    body.is_valid(raise_exception=True)
    try:
        evaluation = evaluation_create(
            release=release,
            model_name=body.validated_data["model"],
            coords=body.validated_data["coords"],
            text_metric=body.validated_data["text_metric"],
            data=body.validated_data["file"],
            user=request.user,
        )
    except EvaluationRefused as exc:
        fields = {exc.field: [str(exc)]} if exc.field else None
        return error_response("invalid", str(exc), 400, fields)
    evaluation.refresh_from_db()
    assert evaluation.job is not None  # registered with its scoring job
    evaluation.job.refresh_from_db()
    return job_started(evaluation.job, evaluation=EvaluationSerializer(evaluation).data)
