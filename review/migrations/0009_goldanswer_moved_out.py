"""GoldAnswer left for annotator/ (annotator 0018), keeping its table review_goldanswer: the
database does not change."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0018_goldanswer_moved_in'),
        ('review', '0008_project_figures_pair_difficulty'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(
                    name='GoldAnswer',
                ),
            ],
        ),
    ]
