"""Webhooks over REST (a project's leads): register, list, delete, send a test, read the
deliveries with every attempt, redeliver. How deliveries are signed: docs/webhooks.md."""

from __future__ import annotations

from uuid import UUID

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from api.annotate import ERRORS
from api.errors import error_response
from api.pagination import PAGE, paginated
from api.pairs import lead_project
from projects.models import Project
from webhooks.delivery import delivery_redeliver
from webhooks.models import SUBSCRIBABLE, Attempt, Delivery, Endpoint
from webhooks.services import (
    MAX_SECRET,
    EndpointRefused,
    endpoint_create,
    endpoint_delete,
    endpoint_test,
)


class EndpointSerializer(serializers.ModelSerializer):
    """An endpoint as listed: its secret is shown once, when it is registered."""

    class Meta:
        model = Endpoint
        fields = ["id", "url", "events", "created_at"]


class EndpointCreatedSerializer(EndpointSerializer):
    class Meta(EndpointSerializer.Meta):
        fields = [*EndpointSerializer.Meta.fields, "secret"]


class EndpointCreateSerializer(serializers.Serializer):
    url = serializers.URLField(max_length=2000)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=[(k.value, k.label) for k in SUBSCRIBABLE]),
        allow_empty=False,
        max_length=len(SUBSCRIBABLE),
    )
    secret = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_SECRET,
        help_text="the key of the HMAC-SHA256 signature; made (and answered once) when absent",
    )


class AttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = Attempt
        fields = [
            "number",
            "manual",
            "started_at",
            "duration_ms",
            "status_code",
            "error",
            "response",
        ]


class DeliverySerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", help_text="the X-Diffmark-Delivery header")
    event = serializers.CharField(source="event.kind")
    event_id = serializers.UUIDField(source="event.uuid", help_text="the body's id")
    attempt_log = AttemptSerializer(many=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "event",
            "event_id",
            "status",
            "attempts",
            "next_attempt_at",
            "created_at",
            "delivered_at",
            "attempt_log",
        ]


class DeliveryQueuedSerializer(serializers.Serializer):
    delivery = serializers.UUIDField()


def _endpoint(request: Request, slug: str, pk: int) -> tuple[Project, Endpoint]:
    project = lead_project(request, slug)
    return project, get_object_or_404(Endpoint, project=project, pk=pk)


@extend_schema(
    methods=["GET"],
    operation_id="projects_webhooks_list",  # not ..._retrieve, the one endpoint's
    parameters=[PAGE],
    responses={200: paginated("WebhookEndpoint", EndpointSerializer(many=True)), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    request=EndpointCreateSerializer,
    responses={201: EndpointCreatedSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def project_webhooks(request: Request, slug: str) -> Response:
    """List the project's webhook endpoints, or register one (leads). A URL that resolves to
    a loopback, private, link-local or metadata address is refused (400)."""
    project = lead_project(request, slug)
    if request.method == "GET":
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(project.webhook_endpoints.order_by("pk"), request)
        return paginator.get_paginated_response(EndpointSerializer(page, many=True).data)
    body = EndpointCreateSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        endpoint = endpoint_create(project=project, user=request.user, **body.validated_data)
    except EndpointRefused as exc:
        return error_response(
            "invalid", str(exc), status.HTTP_400_BAD_REQUEST, {exc.field: [str(exc)]}
        )
    return Response(EndpointCreatedSerializer(endpoint).data, status=status.HTTP_201_CREATED)


@extend_schema(methods=["GET"], responses={200: EndpointSerializer, **ERRORS})
@extend_schema(methods=["DELETE"], responses={204: None, **ERRORS})
@api_view(["GET", "DELETE"])
def webhook_detail(request: Request, slug: str, pk: int) -> Response:
    """One endpoint, or remove it with its deliveries (leads)."""
    _, endpoint = _endpoint(request, slug, pk)
    return _endpoint_answer(request, endpoint)


@extend_schema(
    methods=["GET"], operation_id="webhooks_retrieve", responses={200: EndpointSerializer, **ERRORS}
)
@extend_schema(methods=["DELETE"], operation_id="webhooks_destroy", responses={204: None, **ERRORS})
@api_view(["GET", "DELETE"])
def webhook(request: Request, pk: int) -> Response:
    """The same, by the endpoint's id alone (the design's ``DELETE /api/v1/webhooks/{id}/``);
    a missing id and another project's endpoint get the same 404."""
    slug = Endpoint.objects.filter(pk=pk).values_list("project__slug", flat=True).first()
    if slug is None:
        raise Http404
    _, endpoint = _endpoint(request, slug, pk)
    return _endpoint_answer(request, endpoint)


def _endpoint_answer(request: Request, endpoint: Endpoint) -> Response:
    if request.method == "GET":
        return Response(EndpointSerializer(endpoint).data)
    endpoint_delete(endpoint=endpoint)
    return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(request=None, responses={202: DeliveryQueuedSerializer, **ERRORS})
@api_view(["POST"])
def webhook_test(request: Request, slug: str, pk: int) -> Response:
    """Send the endpoint a ``webhook.test`` delivery; read its attempts under deliveries/."""
    _, endpoint = _endpoint(request, slug, pk)
    delivery = endpoint_test(endpoint=endpoint)
    return Response({"delivery": str(delivery.uuid)}, status=status.HTTP_202_ACCEPTED)


@extend_schema(
    parameters=[PAGE],
    responses={200: paginated("WebhookDelivery", DeliverySerializer(many=True)), **ERRORS},
)
@api_view(["GET"])
def webhook_deliveries(request: Request, slug: str, pk: int) -> Response:
    """The endpoint's deliveries, newest first, each with every attempt (leads)."""
    _, endpoint = _endpoint(request, slug, pk)
    deliveries = endpoint.deliveries.select_related("event").prefetch_related("attempt_log")
    paginator = PageNumberPagination()
    page = paginator.paginate_queryset(deliveries.order_by("-pk"), request)
    return paginator.get_paginated_response(DeliverySerializer(page, many=True).data)


@extend_schema(request=None, responses={202: DeliveryQueuedSerializer, **ERRORS})
@api_view(["POST"])
def webhook_redeliver(request: Request, slug: str, pk: int, delivery: UUID) -> Response:
    """Send a delivery once more, now: the same body under the same delivery id (leads)."""
    _, endpoint = _endpoint(request, slug, pk)
    found = get_object_or_404(Delivery, endpoint=endpoint, uuid=delivery)
    delivery_redeliver(found)
    return Response({"delivery": str(found.uuid)}, status=status.HTTP_202_ACCEPTED)
