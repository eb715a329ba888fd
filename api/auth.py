"""Token authentication (`Authorization: Token <secret>`) and the endpoint that issues tokens."""

from __future__ import annotations

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
from api.errors import error_response


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


class TokenRequestThrottle(AnonRateThrottle):
    """Password guessing through the token endpoint: a few tries per client address."""

    scope = "auth"


@extend_schema(request=CredentialsSerializer, responses={201: TokenSerializer}, auth=[])
@api_view(["POST"])
@authentication_classes([])
@permission_classes([AllowAny])
@throttle_classes([TokenRequestThrottle])
def obtain_token(request: Request) -> Response:
    """Exchange a username and password for a new API token (shown once; keep it secret)."""
    credentials = CredentialsSerializer(data=request.data)
    credentials.is_valid(raise_exception=True)
    user = authenticate(
        request,
        username=credentials.validated_data["username"],
        password=credentials.validated_data["password"],
    )
    if user is None:
        return error_response(
            "invalid_credentials", "wrong username or password", status.HTTP_400_BAD_REQUEST
        )
    _, secret = token_create(user=user, name=credentials.validated_data.get("name", "api"))
    return Response({"token": secret}, status=status.HTTP_201_CREATED)
