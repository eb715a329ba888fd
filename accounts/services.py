"""API tokens: create, authenticate, revoke. Only a token's hash is stored."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiToken

_TOUCH_EVERY = timedelta(minutes=5)  # last_used_at is informative; don't write on every call


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(*, user, name: str = "") -> tuple[ApiToken, str]:
    """A new token and its secret; the secret is returned once and only its hash is kept."""
    secret = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name[:100], key_hash=token_hash(secret), prefix=secret[:8]
    )
    return token, secret


def token_authenticate(*, secret: str):
    """The active user a secret belongs to, or None (a hit marks the token as used)."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=token_hash(secret), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
