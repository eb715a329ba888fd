"""Trigram indexes for the pairs browser's text search on PostgreSQL (console.pairs.text_match):
a case-insensitive "contains" on a pair's external id and instruction and on the entity labels
of its changes reads these instead of every row. Other databases get nothing (the search there
stays a plain scan, correct and slower). Needs the pg_trgm extension (created here; on a managed
PostgreSQL, allow it or create it once as an administrator)."""

from django.db import migrations

INDEXES = [
    ("pair_external_id_trgm", "annotator_pair", "external_id"),
    ("pair_instruction_trgm", "annotator_pair", "instruction"),
    ("change_entity_a_trgm", "annotator_change", "entity_a"),
    ("change_entity_b_trgm", "annotator_change", "entity_b"),
]


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, table, column in INDEXES:
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" '
            f'USING gin (UPPER("{column}") gin_trgm_ops)'
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _, _ in INDEXES:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


class Migration(migrations.Migration):
    dependencies = [("annotator", "0015_pair_number_source_name")]

    operations = [migrations.RunPython(create, drop)]
