"""The user types that access rules and services take (the project keeps Django's own User)."""

from __future__ import annotations

from typing import TypeAlias

from django.contrib.auth.models import AnonymousUser, User

# Whoever a request carries: the access rules answer an anonymous caller too (nobody's member).
AnyUser: TypeAlias = User | AnonymousUser

__all__ = ["AnyUser", "User"]
