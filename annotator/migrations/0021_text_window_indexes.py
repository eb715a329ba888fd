"""Covering indexes for the pairs browser's text and category filters by id window on
PostgreSQL (console.pair_pages reads a large project in id windows; console.pairs): in a
window the external id, instruction and category hint, the window's annotations and their
changes' entity labels and categories are read from these indexes alone (index-only scans),
not from the wide rows. At 1,000,000 pairs a text search's 32,768-id window took 430 ms by the
trigram indexes (which cannot be bounded by id) and 100 ms by these; the planner still takes
the trigram indexes for rare words. Also the screening flag lists seen, for the filter's
choices (a partial index: 150 ms to 13 ms). Other databases get nothing (their search stays
the plain scan)."""

from django.db import migrations

INDEXES = [
    (
        "pair_project_text",
        "annotator_pair",
        "(project_id, id) INCLUDE (external_id, instruction, category_hint)",
    ),
    ("annotation_pair_order", "annotator_annotation", "(pair_id, id)"),
    # The flags the browser offers (console.pairs._flag_lists): the distinct lists seen.
    ("prediction_flags_seen", "annotator_prediction", "(flags) WHERE flags <> '[]'::jsonb"),
    (
        "change_annotation_labels",
        "annotator_change",
        "(annotation_id) INCLUDE (entity_a, entity_b, category)",
    ),
]


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, table, columns in INDEXES:
        schema_editor.execute(f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" {columns}')


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _, _ in INDEXES:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


class Migration(migrations.Migration):
    dependencies = [("annotator", "0020_pair_disputes_order")]

    operations = [migrations.RunPython(create, drop)]
