"""Helpers of the tests that move models between apps with state-only migrations: migrate the
test database to a point, and read the SQL a migration would write."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

Target = tuple[str, str | None]


def migrate_to(targets: list[Target]) -> MigrationExecutor:
    """Migrate to ``targets``; the executor returned has a fresh loader that sees what is
    applied now."""
    MigrationExecutor(connection).migrate(targets)
    return MigrationExecutor(connection)


def latest() -> list[tuple[str, str]]:
    """Every app's newest migration."""
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def sql_of(app: str, name: str) -> list[str]:
    """The statements migration ``app.name`` writes to the database (comments left out)."""
    loader = MigrationExecutor(connection).loader
    migration = loader.get_migration(app, name)
    state = loader.project_state((app, name), at_end=False)
    with connection.schema_editor(collect_sql=True, atomic=False) as editor:
        migration.apply(state, editor, collect_sql=True)
    return [sql for sql in editor.collected_sql if not sql.startswith("--")]
