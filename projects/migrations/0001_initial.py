"""Project and Membership move here from annotator/ with their tables (annotator_project,
annotator_membership): only Django's picture of the models changes, the database does not."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('annotator', '0011_idempotency_key_digest'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Project',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField(max_length=64, unique=True)),
                        ('name', models.CharField(max_length=200)),
                        ('description', models.TextField(blank=True)),
                        ('preset', models.CharField(choices=[('mincu', 'MinCU (4 categories)'), ('vdiff', 'VDiff-Bench (10 categories)'), ('custom', 'Custom')], default='mincu', max_length=16)),
                        ('categories', models.JSONField(default=list)),
                        ('overlap', models.PositiveSmallIntegerField(default=2)),
                        ('iou_threshold', models.FloatField(default=0.5)),
                        ('tier_rule', models.CharField(choices=[('strict', 'Both excellent (MinCU): excellent + good goes to a lead'), ('good', 'Excellent or good from both: excellent or good + fair goes to a lead')], default='strict', max_length=16)),
                        ('entity_vocabulary', models.JSONField(blank=True, default=list)),
                        ('entity_synonyms', models.JSONField(blank=True, default=dict)),
                        ('guidelines', models.TextField(blank=True)),
                        ('gold_rate', models.FloatField(default=0.0)),
                        ('show_predictions', models.BooleanField(default=True)),
                        ('gold_feedback', models.BooleanField(default=False)),
                        ('licence', models.CharField(blank=True, max_length=200)),
                        ('rotated_boxes', models.CharField(choices=[('bound', 'Import its upright bounding box, with a note in the report'), ('refuse', 'Refuse the annotation that has it')], default='bound', max_length=8)),
                        ('labelstudio', models.JSONField(blank=True, default=dict)),
                        ('question_baseline_limit', models.FloatField(default=0.4)),
                        ('screening_flags', models.JSONField(blank=True, default=list)),
                        ('judge_prompt', models.TextField(blank=True)),
                        ('lease_order', models.CharField(choices=[('import', 'Import order'), ('random', 'Random'), ('prioritised', 'Prioritised: most useful first')], default='import', max_length=16)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'annotator_project',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='Membership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('annotator', 'Annotator'), ('lead', 'Lead'), ('researcher', 'Researcher')], max_length=16)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='projects.project')),
                    ],
                    options={
                        'db_table': 'annotator_membership',
                    },
                ),
                migrations.AddConstraint(
                    model_name='project',
                    constraint=models.CheckConstraint(condition=models.Q(('overlap__gte', 1), ('overlap__lte', 10)), name='project_overlap_1_to_10'),
                ),
                migrations.AddConstraint(
                    model_name='project',
                    constraint=models.CheckConstraint(condition=models.Q(('iou_threshold__gt', 0), ('iou_threshold__lte', 1)), name='project_iou_threshold_in_0_1'),
                ),
                migrations.AddConstraint(
                    model_name='project',
                    constraint=models.CheckConstraint(condition=models.Q(('gold_rate__gte', 0), ('gold_rate__lte', 1)), name='project_gold_rate_in_0_1'),
                ),
                migrations.AddConstraint(
                    model_name='project',
                    constraint=models.CheckConstraint(condition=models.Q(('preset__in', ['mincu', 'vdiff', 'custom'])), name='project_preset_valid'),
                ),
                migrations.AddConstraint(
                    model_name='project',
                    constraint=models.CheckConstraint(condition=models.Q(('tier_rule__in', ['strict', 'good'])), name='project_tier_rule_valid'),
                ),
                migrations.AddConstraint(
                    model_name='project',
                    constraint=models.CheckConstraint(condition=models.Q(('rotated_boxes__in', ['bound', 'refuse'])), name='project_rotated_boxes_valid'),
                ),
                migrations.AddConstraint(
                    model_name='project',
                    constraint=models.CheckConstraint(condition=models.Q(('lease_order__in', ['import', 'random', 'prioritised'])), name='project_lease_order_valid'),
                ),
                migrations.AddConstraint(
                    model_name='membership',
                    constraint=models.UniqueConstraint(fields=('project', 'user'), name='membership_once_per_project'),
                ),
                migrations.AddConstraint(
                    model_name='membership',
                    constraint=models.CheckConstraint(condition=models.Q(('role__in', ['annotator', 'lead', 'researcher'])), name='membership_role_valid'),
                ),
            ],
        ),
    ]
