"""GoldAnswer moves here from review/ with its table (review_goldanswer): only Django's picture
of the models changes, the database does not. Review 0009 then drops it from review's state."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0017_pair_list_indexes'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='GoldAnswer',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('changes', models.JSONField()),
                        ('source', models.CharField(blank=True, max_length=100)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('pair', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='gold', to='annotator.pair')),
                    ],
                    options={
                        'db_table': 'review_goldanswer',
                    },
                ),
            ],
        ),
    ]
