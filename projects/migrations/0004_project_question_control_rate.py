from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0003_project_draft_descriptions"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="question_control_rate",
            field=models.FloatField(default=0.1),
        ),
    ]
