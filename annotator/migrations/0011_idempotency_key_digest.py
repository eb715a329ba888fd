"""Idempotency keys are stored as the SHA-256 of the whole key (they were cut to 100 characters,
and two long keys sharing their start collided). Stored keys become their digest, so a client
repeating a key of up to 100 characters still gets its first result."""

import hashlib

from django.db import migrations, models


def _digest(apps, schema_editor):
    Annotation = apps.get_model("annotator", "Annotation")
    for pk, key in Annotation.objects.exclude(idempotency_key="").values_list(
        "pk", "idempotency_key"
    ).iterator():
        digest = hashlib.sha256(key.strip().encode("utf-8", "surrogatepass")).hexdigest()
        Annotation.objects.filter(pk=pk).update(idempotency_key=digest)


class Migration(migrations.Migration):
    dependencies = [("annotator", "0010_job_kinds_merged")]

    operations = [
        migrations.RunPython(_digest, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="annotation",
            name="idempotency_key",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
