"""Every pair gets a short human name: a number in its project (import order) and a source
name; existing pairs are numbered in id order, their source name taken as new pairs' is."""

from django.db import migrations, models

from pairdiff.naming import source_name

BATCH = 1000


def _backfill(apps, schema_editor):
    Pair = apps.get_model("annotator", "Pair")
    project_ids = Pair.objects.order_by().values_list("project_id", flat=True).distinct()
    for project_id in list(project_ids):
        batch = []
        rows = Pair.objects.filter(project_id=project_id).order_by("id")
        for number, pair in enumerate(rows.only("id", "external_id", "metadata").iterator(), 1):
            pair.number = number
            pair.source_name = source_name(pair.external_id, pair.metadata)
            batch.append(pair)
            if len(batch) >= BATCH:
                Pair.objects.bulk_update(batch, ["number", "source_name"])
                batch = []
        Pair.objects.bulk_update(batch, ["number", "source_name"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0014_pair_assist"),
    ]

    operations = [
        migrations.AddField(
            model_name="pair",
            name="number",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="pair",
            name="source_name",
            field=models.CharField(blank=True, default="", max_length=40),
            preserve_default=False,
        ),
        migrations.RunPython(_backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="pair",
            name="number",
            field=models.PositiveIntegerField(),
        ),
        migrations.AddConstraint(
            model_name="pair",
            constraint=models.UniqueConstraint(
                fields=("project", "number"), name="pair_number_unique"
            ),
        ),
    ]
