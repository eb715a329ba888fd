from django.core.management.base import BaseCommand, CommandError

from projects.creating import project_create
from projects.models import Preset


class Command(BaseCommand):
    help = "Create an empty project with a taxonomy preset."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--preset", choices=[Preset.MINCU, Preset.VDIFF], default=Preset.MINCU)
        parser.add_argument("--overlap", type=int, default=2)

    def handle(self, *args, slug, name, preset, overlap, **options):
        try:
            project = project_create(slug=slug, name=name, preset=preset, overlap=overlap)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        categories = ", ".join(project.category_slugs)
        self.stdout.write(
            f"created project {project.slug} ({project.name}); overlap {project.overlap}; "
            f"categories: {categories}"
        )
