"""Releases over REST: leads build them, researchers list, read and download them."""

from __future__ import annotations

import logging
import mimetypes

from django.core.files.storage import default_storage
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from api.annotate import ERRORS
from api.errors import error_response
from api.pagination import PAGE, paginated
from api.pairs import JobSerializer, job_started
from api.parsers import query_text
from config.paging import IdsFirstPagination
from pairdiff.release.options import ReleaseOptions
from pairdiff.release.splits import DIFFICULTIES, SPLITS, SplitPlan, SplitPlanInvalid
from projects import access
from releases.building import ReleaseRefused, release_create
from releases.models import Release
from releases.selectors import release_visible, releases_visible

log = logging.getLogger(__name__)


class ReleaseSerializer(serializers.ModelSerializer):
    counts = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = Release
        fields = [
            "id",
            "name",
            "version",
            "status",
            "plan",
            "options",
            "counts",
            "message",
            "created_at",
            "ready_at",
            "job",
            "url",
        ]

    def get_counts(self, release: Release) -> dict | None:
        return (release.manifest or {}).get("counts")

    def get_url(self, release: Release) -> str:
        return f"/api/v1/releases/{release.pk}/"


class ReleaseDetailSerializer(ReleaseSerializer):
    manifest = serializers.JSONField()

    class Meta(ReleaseSerializer.Meta):
        fields = [*ReleaseSerializer.Meta.fields, "manifest"]


class ReleaseCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**31 - 1)
    val_fraction = serializers.FloatField(default=0.1, min_value=0, max_value=1)
    test_fraction = serializers.FloatField(default=0.1, min_value=0, max_value=1)
    test_per_category = serializers.IntegerField(required=False, allow_null=True, min_value=0)
    test_ratio = serializers.ListField(
        child=serializers.IntegerField(min_value=0),
        min_length=3,
        max_length=3,
        required=False,
        allow_null=True,
        help_text="test difficulty mix [easy, medium, hard], e.g. [1, 2, 2]",
    )
    strict = serializers.BooleanField(
        default=False,
        help_text="MinCU strict filter: two excellent answers, no defect flag, one change",
    )
    strict_no_lead = serializers.BooleanField(
        default=False, help_text="with strict: also leave out pairs a lead decided"
    )
    swap_ab = serializers.BooleanField(
        default=False, help_text="add MinCU's 50 % A/B order-swap training augmentation"
    )
    allow_baselines = serializers.BooleanField(
        default=False,
        help_text="build even if a text-only baseline beats the project's limit (lead override)",
    )

    def validate(self, data):
        try:
            data["plan"] = SplitPlan(
                seed=data["seed"],
                val_fraction=data["val_fraction"],
                test_fraction=data["test_fraction"],
                test_per_category=data.get("test_per_category"),
                test_ratio=tuple(data["test_ratio"]) if data.get("test_ratio") else None,
            )
        except SplitPlanInvalid as exc:
            raise serializers.ValidationError(str(exc)) from exc
        data["options"] = ReleaseOptions(
            strict=data["strict"],
            strict_no_lead=data["strict_no_lead"],
            swap_ab=data["swap_ab"],
            allow_baselines=data["allow_baselines"],
        )
        return data


class ReleaseStartedSerializer(serializers.Serializer):
    job = JobSerializer()
    release = ReleaseSerializer()


@extend_schema(
    methods=["GET"],
    parameters=[PAGE],
    responses={200: paginated("Release", ReleaseSerializer(many=True)), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    request=ReleaseCreateSerializer,
    responses={202: ReleaseStartedSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def project_releases(request: Request, slug: str) -> Response:
    """List the project's releases, or build a new one (leads) → 202 {job, release}."""
    project, role = access.project_for(request.user, slug, access.Action.VIEW)
    if request.method == "GET":
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(
            releases_visible(request.user, project, role=role), request
        )
        return paginator.get_paginated_response(ReleaseSerializer(page, many=True).data)
    if not access.role_may(role, access.Action.MANAGE):
        return error_response("permission_denied", "only leads build releases", 403)
    body = ReleaseCreateSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        release = release_create(
            project=project,
            name=body.validated_data["name"],
            plan=body.validated_data["plan"],
            user=request.user,
            options=body.validated_data["options"],
        )
    except ReleaseRefused as exc:
        fields = {exc.field: [str(exc)]} if exc.field else None
        return error_response("invalid", str(exc), 400, fields)
    release.refresh_from_db()
    assert release.job is not None  # registered with its build job
    return job_started(release.job, release=ReleaseSerializer(release).data)


def _release(request: Request, pk: int) -> Release | Response:
    release = release_visible(request.user, pk)
    if release is None:
        return error_response("not_found", "no such release", status.HTTP_404_NOT_FOUND)
    return release


@extend_schema(responses={200: ReleaseDetailSerializer, **ERRORS})
@api_view(["GET"])
def release_detail(request: Request, pk: int) -> Response:
    """A release with its manifest: files with size and sha256, counts, agreement figures."""
    release = _release(request, pk)
    if isinstance(release, Response):
        return release
    return Response(ReleaseDetailSerializer(release).data)


# The media type is the file's own (JSON, PNG, JPEG, Markdown…), hence */*.
@extend_schema(
    responses={
        (200, "application/json"): OpenApiTypes.ANY,
        (200, "*/*"): OpenApiTypes.BINARY,
        **ERRORS,
    }
)
@api_view(["GET"])
def release_file(request: Request, pk: int, name: str):
    """One file of a ready release, streamed; ``name`` as in the manifest (images/12_a.png)."""
    release = _release(request, pk)
    if isinstance(release, Response):
        return release
    entry = (release.manifest or {}).get("files", {}).get(name)
    if entry is None and not (name == "manifest.json" and release.manifest):
        # Only what the manifest lists, and the manifest: nothing else of storage is reachable.
        return error_response("not_found", f"the release has no file {name!r}", 404)
    path = f"{release.prefix}/{name}"
    try:
        handle = default_storage.open(path, "rb")
    except OSError:  # storage lost a file of an immutable release: say so, never a 500
        log.exception("release %s: %s is missing from storage", release.pk, path)
        return error_response(
            "unavailable", f"{name} of this release cannot be read from storage right now", 503
        )
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    response = FileResponse(
        handle,
        content_type=content_type,
        as_attachment=True,
        filename=name.rsplit("/", 1)[-1],
    )
    response["Content-Length"] = str(entry["size"] if entry else default_storage.size(path))
    if entry:
        response["ETag"] = f'"{entry["sha256"]}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, max-age=86400, immutable"  # releases never change
    return response


@extend_schema(
    parameters=[
        OpenApiParameter("split", str, enum=list(SPLITS)),
        OpenApiParameter("category", str),
        OpenApiParameter("difficulty", str, enum=[*DIFFICULTIES, "none"]),
        PAGE,
    ],
    responses={
        200: paginated("ReleaseRecord", serializers.ListField(child=serializers.DictField())),
        **ERRORS,
    },
)
@api_view(["GET"])
def release_records(request: Request, pk: int) -> Response:
    """The release's benchmark records, paginated; filters split, category, difficulty."""
    release = _release(request, pk)
    if isinstance(release, Response):
        return release
    records = release.records.order_by("position").only("data", "release")
    split, category = query_text(request, "split"), query_text(request, "category")
    level = query_text(request, "difficulty")
    if split and split not in SPLITS:
        return error_response(
            "invalid",
            f"split must be one of {', '.join(SPLITS)}",
            400,
            {"split": [f"unknown split {split!r}"]},
        )
    if level and level not in (*DIFFICULTIES, "none"):
        return error_response(
            "invalid",
            "difficulty must be easy, medium, hard or none",
            400,
            {"difficulty": [f"unknown difficulty {level!r}"]},
        )
    if split:
        records = records.filter(split=split)
    if category:
        records = records.filter(category=category)
    if level:
        records = records.filter(difficulty="" if level == "none" else level)
    paginator = IdsFirstPagination()
    page = paginator.paginate_queryset(records, request)
    assert page is not None  # None only without a page size; settings give one
    return paginator.get_paginated_response([r.data for r in page])
