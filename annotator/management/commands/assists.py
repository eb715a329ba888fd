from django.core.management.base import BaseCommand, CommandError

from annotator.assists import pairs_assist_compute
from annotator.models import Pair
from projects.models import Project


class Command(BaseCommand):
    help = (
        "Work out the assists (click-to-box, alignment, drafts) of a project's pairs that have "
        "none of the current version: pairs stored before assists existed, or whose worker "
        "never ran. Safe to run again."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, slug, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project with slug {slug!r}")
        ids = list(Pair.objects.filter(project=project).values_list("pk", flat=True))
        done = pairs_assist_compute(ids)
        self.stdout.write(f"{done} of {len(ids)} pairs in {project.slug} got their assists")
