"""Helpers shared by the bench scripts."""

from __future__ import annotations

LOCAL_POSTGRES = "postgres://postgres@127.0.0.1:5432/"


def recreate_database(url: str) -> None:
    """Drop and create the bench's own database; refuses names not made for benches."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    if not name.startswith("diffmark_bench"):
        raise SystemExit(f"refusing to recreate {name!r}: bench databases are diffmark_bench*")
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
