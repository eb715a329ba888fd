"""The annotator loop over REST: lease the next pair, save drafts, submit, skip."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.users import User
from annotator.leasing import assignment_lease_next_in, assignment_skip
from annotator.models import Assignment
from annotator.submitting import SubmitConflict, annotation_submit, assignment_draft_save
from api.errors import error_response
from api.serializers import (
    AnswerSerializer,
    DraftSavedSerializer,
    ErrorSerializer,
    LeaseSerializer,
    SubmitResultSerializer,
)
from pairdiff.answers import AnswerInvalid

ERRORS = {400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer}
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key", str, OpenApiParameter.HEADER, description="a repeat returns the first result"
)


# One instance each, reused: a serializer deep-copies its declared fields when first used, which
# cost more than the rest of the response; the representation itself keeps no state.
_LEASE = LeaseSerializer()
_SUBMIT_RESULT = SubmitResultSerializer()


def _annotator(request: Request) -> User:
    """The caller: IsAuthenticated, the API's default permission, lets no one else this far."""
    user = request.user
    assert user.is_authenticated
    return user


def _image(pair, side: str) -> dict:
    width, height = (pair.width_a, pair.height_a) if side == "a" else (pair.width_b, pair.height_b)
    url = reverse("annotator:pair_image", args=[pair.pk, side])
    return {"url": url, "width": width, "height": height}


def _lease_body(assignment: Assignment) -> dict:
    pair = assignment.pair
    return {
        "assignment": {
            "id": assignment.pk,
            "expires_at": assignment.expires_at,
            "pair": {
                "id": pair.pk,
                "external_id": pair.external_id,
                "instruction": pair.instruction,
                "image_a": _image(pair, "a"),
                "image_b": _image(pair, "b"),
            },
        }
    }


@extend_schema(request=None, responses={200: LeaseSerializer, 204: None, **ERRORS})
@api_view(["POST"])
def lease_next(request: Request, slug: str) -> Response:
    """Lease the next pair for the caller (or resume their live lease); 204 when none is left."""
    _, assignment = assignment_lease_next_in(slug=slug, user=request.user)
    if assignment is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    return Response(_LEASE.to_representation(_lease_body(assignment)))


@extend_schema(request=AnswerSerializer, responses={200: DraftSavedSerializer, **ERRORS})
@api_view(["PUT"])
def draft(request: Request, pk: int) -> Response:
    """Save a draft (any part of the submit body) and renew the lease."""
    try:
        saved = assignment_draft_save(
            assignment_id=pk, user=_annotator(request), draft=request.data
        )
    except ValueError as exc:
        return error_response("invalid", str(exc), status.HTTP_400_BAD_REQUEST)
    except SubmitConflict as exc:
        return error_response(exc.code, str(exc), status.HTTP_409_CONFLICT)
    lease = "lost" if saved.expires_at is None else "held"
    body = {"saved_at": saved.saved_at, "expires_at": saved.expires_at, "lease": lease}
    return Response(DraftSavedSerializer(body).data)


@extend_schema(
    request=AnswerSerializer,
    parameters=[IDEMPOTENCY_KEY],
    responses={201: SubmitResultSerializer, 200: SubmitResultSerializer, **ERRORS},
)
@api_view(["POST"])
def submit(request: Request, pk: int) -> Response:
    """Submit the answer; 201 the first time, 200 with the same result for a repeated key."""
    try:
        annotation, created = annotation_submit(
            assignment_id=pk,
            user=_annotator(request),
            body=request.data,
            idempotency_key=request.headers.get("Idempotency-Key", ""),
        )
    except AnswerInvalid as exc:
        return error_response("invalid", str(exc), status.HTTP_400_BAD_REQUEST, exc.fields)
    except SubmitConflict as exc:
        return error_response(exc.code, str(exc), status.HTTP_409_CONFLICT)
    code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
    return Response(_SUBMIT_RESULT.to_representation({"annotation": annotation}), status=code)


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500)


@extend_schema(request=SkipSerializer, responses={204: None, **ERRORS})
@api_view(["POST"])
def skip(request: Request, pk: int) -> Response:
    """Pass on the pair: it goes back to the pool for others, never to the caller."""
    assignment = get_object_or_404(
        Assignment.objects.select_related("pair__project"), pk=pk, annotator=request.user
    )
    body = SkipSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        assignment_skip(
            assignment=assignment,
            user=_annotator(request),
            reason=body.validated_data.get("reason", ""),
        )
    except ValueError as exc:
        return error_response("already_submitted", str(exc), status.HTTP_409_CONFLICT)
    return Response(status=status.HTTP_204_NO_CONTENT)
