"""Agreement metrics of a project over REST (leads): the figures of the quality dashboard."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from api.serializers import ErrorSerializer
from projects import access
from review.dashboard import ProjectQuality
from review.figures import quality_read


class GridSerializer(serializers.Serializer):
    keys = serializers.ListField(child=serializers.CharField())
    labels = serializers.ListField(child=serializers.CharField())
    counts = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="counts[i][j]: annotation 1 (first submitted) said keys[i], annotation 2 keys[j]",
    )


class AnnotatorMetricsSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="user_id")
    username = serializers.CharField()
    pairs = serializers.IntegerField(help_text="annotations submitted, gold pairs included")
    timed = serializers.IntegerField(help_text="annotations with a measured time (> 0 ms)")
    median_time_ms = serializers.FloatField(allow_null=True)
    mean_time_ms = serializers.FloatField(allow_null=True)
    cross_checked = serializers.IntegerField()
    accepted = serializers.IntegerField()
    agreement_rate = serializers.FloatField(allow_null=True, help_text="accepted / cross_checked")
    gold_answered = serializers.IntegerField()
    gold_passed = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True, help_text="gold_passed / answered")
    gold_mean_score = serializers.FloatField(allow_null=True)


class AgreementMetricsSerializer(serializers.Serializer):
    """Reads a ProjectQuality; the project comes from the context."""

    project = serializers.SerializerMethodField()
    pairs = serializers.IntegerField(source="total")
    gold_pairs = serializers.IntegerField()
    status_counts = serializers.DictField(child=serializers.IntegerField())
    cross_checked = serializers.IntegerField()
    verdicts = serializers.DictField(child=serializers.IntegerField())
    reasons = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="kind of reason (tiers, category, boxes, …) → cross-checks not accepted",
    )
    agreement_rate = serializers.FloatField(
        allow_null=True, help_text="accepted verdicts / cross-checked pairs"
    )
    kappa = serializers.FloatField(allow_null=True, help_text="Cohen's kappa, quadratic weights")
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha, ordinal")
    mean_iou = serializers.FloatField(allow_null=True)
    tiers = GridSerializer()
    categories = GridSerializer()
    unmatched_changes = serializers.IntegerField()
    difficulty = serializers.DictField(child=serializers.IntegerField())
    without_boxes = serializers.IntegerField()
    annotators = AnnotatorMetricsSerializer(many=True)
    computed_at = serializers.DateTimeField(
        required=False,
        help_text="on a large project only: when the periodic job computed these figures "
        "(pairs per status are counted for each request); absent: all computed for this request",
    )

    def get_project(self, quality: ProjectQuality) -> str:
        return self.context["project"].slug


ERRORS = {401: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer}


@extend_schema(responses={200: AgreementMetricsSerializer, **ERRORS})
@api_view(["GET"])
def project_agreement(request: Request, slug: str) -> Response:
    """Agreement on tiers, boxes and categories, difficulty, and figures per annotator."""
    project = access.project_for(request.user, slug, access.Action.MANAGE)[0]
    quality, computed_at = quality_read(project)
    body = AgreementMetricsSerializer(quality, context={"project": project}).data
    if computed_at is not None:
        body["computed_at"] = computed_at.isoformat()
    return Response(body)
