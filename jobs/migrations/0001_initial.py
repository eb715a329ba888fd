"""Job moves here from annotator/ with its table (annotator_job): only Django's picture of the
model changes, the database does not."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('annotator', '0011_idempotency_key_digest'),
        ('projects', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Job',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('import', 'Import'), ('preannotate', 'Pre-annotation'), ('recompute', 'Agreement recompute'), ('release', 'Release'), ('evaluate', 'Evaluation'), ('synthesize', 'Synthesis')], max_length=16)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='queued', max_length=16)),
                        ('params', models.JSONField(blank=True, default=dict)),
                        ('total', models.PositiveIntegerField(default=0)),
                        ('done', models.PositiveIntegerField(default=0)),
                        ('errors', models.JSONField(blank=True, default=list)),
                        ('result', models.JSONField(blank=True, default=dict)),
                        ('message', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='jobs', to='projects.project')),
                    ],
                    options={
                        'db_table': 'annotator_job',
                        'ordering': ['-created_at'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('kind__in', ['import', 'preannotate', 'recompute', 'release', 'evaluate', 'synthesize'])), name='job_kind_valid'), models.CheckConstraint(condition=models.Q(('status__in', ['queued', 'running', 'succeeded', 'failed', 'cancelled'])), name='job_status_valid')],
                    },
                ),
            ],
        ),
    ]
