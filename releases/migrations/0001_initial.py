"""Release, ReleaseRecord, QuestionEdit and Evaluation move here from review/ with their tables
(review_release, review_releaserecord, review_questionedit, review_evaluation): only Django's
picture of the models changes, the database does not."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('review', '0008_project_figures_pair_difficulty'),
        ('annotator', '0017_pair_list_indexes'),
        ('jobs', '0002_job_runner'),
        ('projects', '0003_project_draft_descriptions'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='QuestionEdit',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('description', models.TextField()),
                        ('negatives', models.JSONField()),
                        ('edited_at', models.DateTimeField(auto_now=True)),
                        ('verified', models.BooleanField(default=False)),
                        ('verified_at', models.DateTimeField(blank=True, null=True)),
                        ('edited_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('pair', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='question_edit', to='annotator.pair')),
                        ('verified_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'review_questionedit',
                    },
                ),
                migrations.CreateModel(
                    name='Release',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('version', models.PositiveIntegerField()),
                        ('plan', models.JSONField(default=dict)),
                        ('options', models.JSONField(blank=True, default=dict)),
                        ('status', models.CharField(choices=[('building', 'Building'), ('ready', 'Ready'), ('failed', 'Failed')], default='building', max_length=16)),
                        ('manifest', models.JSONField(blank=True, null=True)),
                        ('message', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('ready_at', models.DateTimeField(blank=True, null=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('job', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='jobs.job')),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='releases', to='projects.project')),
                    ],
                    options={
                        'db_table': 'review_release',
                        'ordering': ['-version'],
                    },
                ),
                migrations.CreateModel(
                    name='Evaluation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('model_name', models.CharField(max_length=100)),
                        ('coords', models.CharField(max_length=8)),
                        ('text_metric', models.CharField(max_length=16)),
                        ('predictions', models.CharField(max_length=255)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('ready', 'Ready'), ('failed', 'Failed')], default='queued', max_length=16)),
                        ('result', models.JSONField(blank=True, null=True)),
                        ('grounded_f1', models.FloatField(blank=True, null=True)),
                        ('accuracy', models.FloatField(blank=True, null=True)),
                        ('message', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('job', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='jobs.job')),
                        ('release', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='evaluations', to='releases.release')),
                    ],
                    options={
                        'db_table': 'review_evaluation',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='ReleaseRecord',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('position', models.PositiveIntegerField()),
                        ('split', models.CharField(max_length=8)),
                        ('category', models.CharField(max_length=64)),
                        ('difficulty', models.CharField(blank=True, max_length=8)),
                        ('data', models.JSONField()),
                        ('pair', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='annotator.pair')),
                        ('release', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='records', to='releases.release')),
                    ],
                    options={
                        'db_table': 'review_releaserecord',
                        'ordering': ['release', 'position'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='release',
                    constraint=models.UniqueConstraint(fields=('project', 'name'), name='release_name_per_project'),
                ),
                migrations.AddConstraint(
                    model_name='release',
                    constraint=models.UniqueConstraint(fields=('project', 'version'), name='release_version_per_project'),
                ),
                migrations.AddConstraint(
                    model_name='release',
                    constraint=models.CheckConstraint(condition=models.Q(('status__in', ['building', 'ready', 'failed'])), name='release_status_valid'),
                ),
                migrations.AddConstraint(
                    model_name='evaluation',
                    constraint=models.CheckConstraint(condition=models.Q(('status__in', ['queued', 'ready', 'failed'])), name='evaluation_status_valid'),
                ),
                migrations.AddIndex(
                    model_name='releaserecord',
                    index=models.Index(fields=['release', 'split', 'category', 'difficulty'], name='release_record_filters'),
                ),
                migrations.AddConstraint(
                    model_name='releaserecord',
                    constraint=models.UniqueConstraint(fields=('release', 'position'), name='release_record_once'),
                ),
            ],
        ),
    ]
