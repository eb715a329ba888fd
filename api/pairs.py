"""Pairs, imports and jobs over REST (leads)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.intake.importing import ImportUnusable
from annotator.intake.labelstudio.plan import LSInput
from annotator.intake.labelstudio.upload import (
    labelstudio_check_files,
    labelstudio_preview_zip,
    labelstudio_queue,
    labelstudio_stage,
)
from annotator.intake.upload_limits import ImageSizeLimit, image_size_errors, image_size_limit
from annotator.intake.uploads import ImportFormat, import_queue
from annotator.models import Pair, PairStatus
from annotator.selectors import project_pairs
from annotator.services import PairInput, PairRejected, pair_create
from api.annotate import ERRORS
from api.errors import error_response
from api.pagination import CURSOR, PAGE, paginated
from api.parsers import MultiPartParser, query_text
from api.serializers import StrictJSONField
from config.paging import IdCursorPagination, IdsFirstPagination
from jobs.models import Job
from pairdiff.manifest import metadata_problem
from projects import access
from projects.models import Project


class PairSerializer(serializers.ModelSerializer):
    image_a = serializers.SerializerMethodField()
    image_b = serializers.SerializerMethodField()
    agreement = serializers.SerializerMethodField()

    class Meta:
        model = Pair
        fields = [
            "id",
            "external_id",
            "status",
            "instruction",
            "category_hint",
            "metadata",
            "is_gold",
            "image_a",
            "image_b",
            "n_submitted",
            "agreement",
            "created_at",
        ]

    def _image(self, pair: Pair, side: str) -> dict:
        return {
            "url": reverse("annotator:pair_image", args=[pair.pk, side]),
            "width": getattr(pair, f"width_{side}"),
            "height": getattr(pair, f"height_{side}"),
            "sha256": getattr(pair, f"sha256_{side}"),
            "format": getattr(pair, f"format_{side}"),
        }

    def get_image_a(self, pair: Pair) -> dict:
        return self._image(pair, "a")

    def get_image_b(self, pair: Pair) -> dict:
        return self._image(pair, "b")

    def get_agreement(self, pair: Pair) -> dict | None:
        agreement = getattr(pair, "agreement", None)
        if agreement is None:
            return None
        return {
            "status": agreement.status,
            "mean_iou": agreement.mean_iou,
            "reasons": agreement.reasons,
        }


class PairUploadSerializer(serializers.Serializer):
    image_a = serializers.FileField()
    image_b = serializers.FileField()
    external_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
    instruction = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    category = serializers.CharField(required=False, allow_blank=True, max_length=64)
    metadata = StrictJSONField(required=False, help_text="a JSON object")

    def validate_metadata(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("metadata must be a JSON object")
        if problem := metadata_problem(value):
            raise serializers.ValidationError(problem)
        return value


class ImportSerializer(serializers.Serializer):
    manifest = serializers.FileField(
        help_text="JSONL or CSV: image_a, image_b, id, …; or a Label Studio JSON export"
    )
    images = serializers.FileField(help_text="a .zip holding the files the manifest names")
    format = serializers.ChoiceField(choices=ImportFormat.choices, default=ImportFormat.MANIFEST)
    config = serializers.FileField(
        required=False,
        help_text="label-studio: the project's labelling config (XML), which says which Image "
        "tag shows which data key; inferred from the export when absent",
    )
    mapping = serializers.FileField(
        required=False,
        help_text="label-studio: JSON or YAML mapping of Label Studio values to categories, "
        "tiers and the absent side, and of Label Studio users to members (authors)",
    )
    dry_run = serializers.BooleanField(
        default=False,
        help_text="label-studio: answer 200 with the mapping and counts; nothing is written",
    )


class LabelStudioPreviewSerializer(serializers.Serializer):
    mapping = serializers.ListField(child=serializers.CharField())
    counts = serializers.DictField(child=serializers.IntegerField())
    authors = serializers.ListField(child=serializers.CharField())
    problems = serializers.ListField(child=serializers.DictField())
    notes = serializers.ListField(child=serializers.DictField())


class PreviewSerializer(serializers.Serializer):
    preview = LabelStudioPreviewSerializer()


class JobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField()

    class Meta:
        model = Job
        fields = [
            "id",
            "kind",
            "status",
            "total",
            "done",
            "percent",
            "errors",
            "result",
            "message",
            "created_at",
            "started_at",
            "finished_at",
        ]


class JobStartedSerializer(serializers.Serializer):
    job = JobSerializer()


def job_started(job: Job, **more: object) -> Response:
    """202 with the queued job (and whatever else started with it): poll /jobs/{id}/."""
    return Response({"job": JobSerializer(job).data, **more}, status=status.HTTP_202_ACCEPTED)


def lead_project(request: Request, slug: str) -> Project:
    """The project if the caller leads it (projects.access: 404 outsiders, 403 other roles)."""
    return access.project_for(request.user, slug, access.Action.MANAGE)[0]


@extend_schema(
    methods=["GET"],
    parameters=[
        OpenApiParameter("status", str, enum=PairStatus.values),
        OpenApiParameter("category", str),
        OpenApiParameter("gold", bool),
        PAGE,
        CURSOR,
    ],
    responses={200: paginated("Pair", PairSerializer(many=True), cursor=True), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    request={"multipart/form-data": PairUploadSerializer},
    responses={201: PairSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
@parser_classes([MultiPartParser])
def project_pairs_view(request: Request, slug: str) -> Response:
    """List a project's pairs (filters: status, category, gold) or upload one pair."""
    limit = image_size_limit(request._request) if request.method == "POST" else None
    project = lead_project(request, slug)
    if limit is not None:
        return _upload(request, project, limit)
    pairs = project_pairs(project, status=query_text(request, "status"))
    pairs = pairs.select_related("agreement")
    if category := query_text(request, "category"):
        pairs = pairs.filter(category_hint=category)
    if (gold := request.query_params.get("gold")) in ("true", "false"):
        pairs = pairs.filter(is_gold=gold == "true")
    # ?page=N as always (ids first: deep pages cost little more than the first); ?cursor= (empty
    # for the first page) walks by id instead, each page as cheap as the first.
    paginator = IdCursorPagination() if "cursor" in request.query_params else IdsFirstPagination()
    page = paginator.paginate_queryset(pairs, request)
    return paginator.get_paginated_response(PairSerializer(page, many=True).data)


def _upload(request: Request, project: Project, limit: ImageSizeLimit) -> Response:
    too_large = image_size_errors(limit, request.FILES)
    if too_large:  # checked before anything reads a file (a 200 MB one cost 200 MB of memory)
        fields = {field: [message] for field, message in too_large.items()}
        return error_response("invalid", next(iter(too_large.values())), 400, fields)
    upload = PairUploadSerializer(data=request.data)
    upload.is_valid(raise_exception=True)
    data = upload.validated_data
    pair_input = PairInput(
        image_a=data["image_a"].read(),
        image_b=data["image_b"].read(),
        external_id=data.get("external_id", ""),
        instruction=data.get("instruction", ""),
        category=data.get("category", ""),
        metadata=data.get("metadata") or {},
    )
    try:
        pair = pair_create(project=project, pair_input=pair_input, actor=request.user)
    except PairRejected as exc:
        at_fault = {exc.field: [str(exc)]} if exc.field else None
        return error_response("invalid", str(exc), 400, at_fault)
    return Response(PairSerializer(pair).data, status=status.HTTP_201_CREATED)


@extend_schema(responses={200: PairSerializer, **ERRORS})
@api_view(["GET"])
def pair_detail(request: Request, pk: int) -> Response:
    """One pair, with its agreement once there is one (leads)."""
    pair = get_object_or_404(Pair.objects.select_related("project", "agreement"), pk=pk)
    if not access.role_may(access.project_role(request.user, pair.project), access.Action.MANAGE):
        return error_response("not_found", "no such pair", status.HTTP_404_NOT_FOUND)
    return Response(PairSerializer(pair).data)


@extend_schema(
    request={"multipart/form-data": ImportSerializer},
    responses={200: PreviewSerializer, 202: JobStartedSerializer, **ERRORS},
)
@api_view(["POST"])
@parser_classes([MultiPartParser])
def imports(request: Request, slug: str) -> Response:
    """Start a bulk import (a manifest and a zip of images); poll the job for progress. A Label
    Studio export may come with its labelling config and a value mapping; ``dry_run`` previews."""
    project = lead_project(request, slug)
    upload = ImportSerializer(data=request.data)
    upload.is_valid(raise_exception=True)
    if upload.validated_data["format"] == ImportFormat.LABEL_STUDIO:
        return _labelstudio_import(request, project, upload.validated_data)
    try:
        job = import_queue(
            project=project,
            manifest=upload.validated_data["manifest"],
            images=upload.validated_data["images"],
            user=request.user,
            source_format=upload.validated_data["format"],
        )
    except ValueError as exc:
        return error_response("invalid", str(exc), status.HTTP_400_BAD_REQUEST)
    job.refresh_from_db()
    return job_started(job)


def _labelstudio_import(request: Request, project: Project, data: dict) -> Response:
    files = {
        "export": data["manifest"],
        "images": data["images"],
        "config": data.get("config"),
        "mapping": data.get("mapping"),
    }
    try:
        labelstudio_check_files(**files)
        if data["dry_run"]:
            given = LSInput(
                export=files["export"].read(),
                config=files["config"].read() if files["config"] else None,
                mapping=files["mapping"].read() if files["mapping"] else None,
            )
            preview = labelstudio_preview_zip(project=project, given=given, images=files["images"])
            return Response({"preview": preview.as_json()})
        mapping = files["mapping"].read() if files["mapping"] else None
        token = labelstudio_stage(
            project=project,
            export=files["export"],
            images=files["images"],
            config=files["config"],
            mapping=mapping,
        )
        job = labelstudio_queue(project=project, token=token, user=request.user)
    except (ValueError, ImportUnusable) as exc:
        return _refused(exc)
    job.refresh_from_db()
    return job_started(job)


def _refused(exc: ValueError) -> Response:
    """400 naming the upload at fault (ImportUnusable.field), else the export."""
    message = str(exc)
    field = getattr(exc, "field", "") or "manifest"
    return error_response("invalid", message, status.HTTP_400_BAD_REQUEST, {field: [message]})


@extend_schema(responses={200: JobSerializer, **ERRORS})
@api_view(["GET"])
def job_detail(request: Request, pk: int) -> Response:
    """Status, progress and per-item errors of a background job (its project's leads)."""
    job = get_object_or_404(Job.objects.select_related("project"), pk=pk)
    # The page's rule: a project's jobs are its current leads' (a lead removed since the job
    # started no longer reads its report); a job without a project is its creator's.
    if not access.job_may_view(request.user, job):
        return error_response("not_found", "no such job", status.HTTP_404_NOT_FOUND)
    return Response(JobSerializer(job).data)
