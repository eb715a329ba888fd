"""Token authentication (`Authorization: Token <secret>`) and the endpoint that issues tokens."""

from __future__ import annotations

import logging

from django.contrib.auth import authenticate
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    permission_classes,
    throttle_classes,
)
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle

from accounts.services import token_create
from accounts.throttle import (
    CACHE_ERRORS,
    LoginAttempt,
    login_begin,
    login_succeeded,
    too_many_message,
)
from api.errors import error_response
from api.serializers import ErrorSerializer


class TokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.TokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "Token <token> (from POST /api/v1/auth/token/)",
        }


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField()
    name = serializers.CharField(required=False, allow_blank=True, max_length=100)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


log = logging.getLogger(__name__)


class TokenRequestThrottle(AnonRateThrottle):
    """Password guessing through the token endpoint: a few tries per client address. With the
    cache down it lets requests through (the per-username limit fails open the same way)."""

    scope = "auth"

    def allow_request(self, request, view) -> bool:
        try:
            return super().allow_request(request, view)
        except CACHE_ERRORS:
            log.warning("token endpoint limit is off: the cache is unreachable", exc_info=True)
            return True


@extend_schema(
    request=CredentialsSerializer,
    responses={201: TokenSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
    auth=[],
)
@api_view(["POST"])
@authentication_classes([])
@permission_classes([AllowAny])
@throttle_classes([TokenRequestThrottle])
def obtain_token(request: Request) -> Response:
    """Exchange a username and password for a new API token (shown once; keep it secret)."""
    credentials = CredentialsSerializer(data=request.data)
    credentials.is_valid(raise_exception=True)
    username = credentials.validated_data["username"]
    # The browser log-in's per-username budget applies here too; the throttle above only
    # counts per address, which a guesser with many addresses spreads thin.
    attempt = LoginAttempt.of(request, username)
    if wait := login_begin(attempt):
        refused = error_response("throttled", too_many_message(wait), 429)
        refused["Retry-After"] = str(wait)
        return refused
    user = authenticate(request, username=username, password=credentials.validated_data["password"])
    if user is None:  # the attempt stays counted
        return error_response(
            "invalid_credentials", "wrong username or password", status.HTTP_400_BAD_REQUEST
        )
    login_succeeded(attempt)
    _, secret = token_create(user=user, name=credentials.validated_data.get("name", "api"))
    return Response({"token": secret}, status=status.HTTP_201_CREATED)
