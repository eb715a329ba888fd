"""Leads over REST: the disputes queue and decisions on pairs."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.models import Pair
from api.annotate import ERRORS
from api.errors import error_response
from api.pagination import PAGE, paginated
from api.parsers import query_text
from api.serializers import StrictJSONField
from config.paging import CappedCountPagination, FlaggedCountPagination
from pairdiff.answers import AnswerInvalid
from projects import access
from projects.models import Project
from review.adjudication import resolution_json
from review.models import Decision
from review.resolutions import ResolutionRefused, resolution_record
from review.selectors import disputes_count_capped, disputes_queue


class DisputeSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    external_id = serializers.CharField()
    status = serializers.CharField()
    annotators = serializers.SerializerMethodField()
    reasons = serializers.JSONField(source="agreement.reasons")
    mean_iou = serializers.FloatField(source="agreement.mean_iou", allow_null=True)
    updated_at = serializers.DateTimeField()

    def get_annotators(self, pair: Pair) -> list[str]:
        a = pair.agreement
        return [a.annotation_1.annotator.username, a.annotation_2.annotator.username]


class ResolutionRequestSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Decision.choices)
    answer = StrictJSONField(required=False, help_text='{"changes": [...]} for merge')
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500)
    comment = serializers.CharField(required=False, allow_blank=True, max_length=5000)


class ResolutionSerializer(serializers.Serializer):
    resolution = serializers.JSONField()
    pair = serializers.JSONField()


@extend_schema(
    parameters=[
        *(OpenApiParameter(name, str) for name in ("category", "annotator", "reason")),
        PAGE,
    ],
    responses={200: paginated("Dispute", DisputeSerializer(many=True), capped=True), **ERRORS},
)
@api_view(["GET"])
def disputes(request: Request, slug: str) -> Response:
    """Disputed pairs of the project, oldest first, with the reasons (leads). Filtered by
    category or reason the count stops at 1,000 (``count_capped``: more follow), as on the
    disputes page: each disputed pair is probed for those."""
    project = get_object_or_404(Project, slug=slug)
    access.project_check(request.user, project, access.Action.MANAGE)
    filters = {k: query_text(request, k) for k in ("category", "annotator", "reason")}
    capped = disputes_count_capped(**filters)
    paginator = CappedCountPagination() if capped else FlaggedCountPagination()
    page = paginator.paginate_queryset(disputes_queue(project, **filters), request)
    return paginator.get_paginated_response(DisputeSerializer(page, many=True).data)


@extend_schema(request=ResolutionRequestSerializer, responses={201: ResolutionSerializer, **ERRORS})
@api_view(["POST"])
def resolution(request: Request, pk: int) -> Response:
    """Decide a pair: accept annotation 1 or 2, accept an edited merge, reject, or reopen."""
    pair = get_object_or_404(Pair.objects.select_related("project"), pk=pk)
    access.project_check(request.user, pair.project, access.Action.MANAGE)
    body = ResolutionRequestSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    data = body.validated_data
    try:
        decided = resolution_record(
            pair_id=pair.pk,
            lead=request.user,
            decision=data["decision"],
            answer=data.get("answer"),
            reason=data.get("reason", ""),
            comment=data.get("comment", ""),
        )
    except AnswerInvalid as exc:
        return error_response("invalid", str(exc), status.HTTP_400_BAD_REQUEST, exc.fields)
    except ResolutionRefused as exc:
        return error_response("refused", str(exc), status.HTTP_409_CONFLICT)
    return Response(
        {
            "resolution": resolution_json(decided),
            "pair": {"id": pair.pk, "status": decided.status_after},
        },
        status=status.HTTP_201_CREATED,
    )
