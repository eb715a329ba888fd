"""Releases and evaluations point at projects.Project and jobs.Job: the same tables as before,
so the database does not change."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0001_initial'),
        ('projects', '0001_initial'),
        ('review', '0006_release_options_question_verified'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='evaluation',
                    name='job',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='jobs.job'),
                ),
                migrations.AlterField(
                    model_name='release',
                    name='job',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='jobs.job'),
                ),
                migrations.AlterField(
                    model_name='release',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='releases', to='projects.project'),
                ),
            ],
        ),
    ]
