"""Release, ReleaseRecord, QuestionEdit and Evaluation left for releases/ (releases 0001), keeping
their tables. The database does not change."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('releases', '0001_initial'),
        ('review', '0009_goldanswer_moved_out'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(
                    model_name='questionedit',
                    name='edited_by',
                ),
                migrations.RemoveField(
                    model_name='questionedit',
                    name='pair',
                ),
                migrations.RemoveField(
                    model_name='questionedit',
                    name='verified_by',
                ),
                migrations.RemoveField(
                    model_name='release',
                    name='created_by',
                ),
                migrations.RemoveField(
                    model_name='release',
                    name='job',
                ),
                migrations.RemoveField(
                    model_name='release',
                    name='project',
                ),
                migrations.RemoveField(
                    model_name='releaserecord',
                    name='release',
                ),
                migrations.RemoveField(
                    model_name='releaserecord',
                    name='pair',
                ),
                migrations.DeleteModel(
                    name='Evaluation',
                ),
                migrations.DeleteModel(
                    name='QuestionEdit',
                ),
                migrations.DeleteModel(
                    name='Release',
                ),
                migrations.DeleteModel(
                    name='ReleaseRecord',
                ),
            ],
        ),
    ]
