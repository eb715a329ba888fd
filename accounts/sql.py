"""The accounts app's hand-written SQL: the API token's user, asked on every API request.

Why hand-written: compiling a queryset costs the ORM about a millisecond of CPU per statement,
more than the database spends answering it (bench/RESULTS.md, "profile_hot.py"); the statement
is a string built once per database from the models' metadata with config/rows.py, which reads
the user back as a model instance and prepares the statement on PostgreSQL. It is read on every
request, so a revoked token fails at once.

Pinned by tests/api/test_hot_queries.py (the token is each request's first statement),
tests/api/test_prepared_statements.py (prepared on PostgreSQL) and tests/accounts.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model

from accounts.models import ApiToken
from config import rows


@cache
def token_user(vendor: str) -> str:
    """The token's id and last use, then the user's columns (parameter: the key's hash); no
    row for an unknown or revoked token."""
    user = get_user_model()
    t, u, qn = rows.qn("t"), rows.qn("u"), rows.qn
    return (
        f"SELECT {t}.{qn('id')}, {t}.{qn('last_used_at')}, {rows.columns(user, 'u')} "
        f"FROM {rows.table(ApiToken)} {t} INNER JOIN {rows.table(user)} {u} "
        f"ON {u}.{qn('id')} = {t}.{qn('user_id')} "
        f"WHERE {t}.{qn('key_hash')} = %s AND {t}.{qn('revoked_at')} IS NULL"
    )
