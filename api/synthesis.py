"""Synthesis over REST (leads): pairs with known answers from a zip of single photos."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.intake.synthesis import (
    MAX_PER_IMAGE,
    SynthesisUnusable,
    synthesis_options,
    synthesis_queue,
)
from api.annotate import ERRORS
from api.errors import error_response
from api.pairs import JobStartedSerializer, job_started, lead_project
from api.parsers import MultiPartParser
from pairdiff.synth.custom import CATEGORIES


class SynthesizeSerializer(serializers.Serializer):
    images = serializers.FileField(help_text="a .zip of single photos (JPEG, PNG, WebP, TIFF)")
    per_image = serializers.IntegerField(min_value=1, max_value=MAX_PER_IMAGE, default=10)
    categories = serializers.MultipleChoiceField(
        choices=CATEGORIES, required=False, help_text="VDiff-Bench categories; default all ten"
    )
    gold = serializers.BooleanField(
        default=False, help_text="mix the pairs into annotators' queues as gold pairs"
    )
    seed = serializers.IntegerField(min_value=0, max_value=2**32 - 1, default=0)


@extend_schema(
    request={"multipart/form-data": SynthesizeSerializer},
    responses={202: JobStartedSerializer, **ERRORS},
)
@api_view(["POST"])
@parser_classes([MultiPartParser])
def synthesize(request: Request, slug: str) -> Response:
    """Start a synthesis job: each photo becomes pairs whose B is A with one programmatic
    change, the known answer stored as the pair's gold answer; poll the job for progress."""
    project = lead_project(request, slug)
    body = SynthesizeSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    data = body.validated_data
    chosen = [c for c in CATEGORIES if c in data.get("categories", ())]
    try:
        options = synthesis_options(
            per_image=data["per_image"],
            categories=chosen or None,
            gold=data["gold"],
            seed=data["seed"],
        )
        job = synthesis_queue(
            project=project, images=data["images"], options=options, user=request.user
        )
    except SynthesisUnusable as exc:
        return error_response(
            "invalid", str(exc), status.HTTP_400_BAD_REQUEST, fields={exc.field: [exc.reason]}
        )
    job.refresh_from_db()
    return job_started(job)
