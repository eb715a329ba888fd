"""Project, Membership and Job left for projects/ and jobs/ (projects 0001, jobs 0001), keeping
their tables; pairs and predictions point at them there. The database does not change. It runs
after review 0007 re-pointed releases and evaluations: Django's state refuses to drop a model
that another app's foreign key still names."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0011_idempotency_key_digest'),
        ('jobs', '0001_initial'),
        ('projects', '0001_initial'),
        ('review', '0007_project_and_job_moved'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='prediction',
                    name='job',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='jobs.job'),
                ),
                migrations.AlterField(
                    model_name='pair',
                    name='import_job',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='pairs', to='jobs.job'),
                ),
                migrations.RemoveField(
                    model_name='membership',
                    name='project',
                ),
                migrations.RemoveField(
                    model_name='membership',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='project',
                    name='created_by',
                ),
                migrations.AlterField(
                    model_name='pair',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pairs', to='projects.project'),
                ),
                migrations.DeleteModel(
                    name='Job',
                ),
                migrations.DeleteModel(
                    name='Membership',
                ),
                migrations.DeleteModel(
                    name='Project',
                ),
            ],
        ),
    ]
