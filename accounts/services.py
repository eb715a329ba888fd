"""API tokens: create, authenticate, revoke. Only a token's hash is stored."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from accounts import sql
from accounts.models import ApiToken
from accounts.users import User
from config import rows

_TOUCH_EVERY = timedelta(minutes=5)  # last_used_at is informative; don't write on every call


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(*, user: User, name: str = "") -> tuple[ApiToken, str]:
    """A new token and its secret; the secret is returned once and only its hash is kept."""
    secret = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name[:100], key_hash=token_hash(secret), prefix=secret[:8]
    )
    return token, secret


def token_authenticate(*, secret: str) -> User | None:
    """The active user a secret belongs to, or None (a hit marks the token as used)."""
    row = rows.fetchone(sql.token_user(connection.vendor), [token_hash(secret)])
    if row is None:
        return None
    user = rows.from_row(get_user_model(), row, start=2)
    if not user.is_active:
        return None
    token_id, last_used_at = row[0], rows.value(ApiToken, "last_used_at", row[1])
    now = timezone.now()
    if last_used_at is None or now - last_used_at > _TOUCH_EVERY:
        ApiToken.objects.filter(pk=token_id).update(last_used_at=now)
    return user


def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
