from django.core.management.base import BaseCommand, CommandError

from annotator.intake.labelstudio.plan import AUTHOR_PREFIX, is_author_name
from projects.members import membership_set, user_ensure
from projects.models import Project, Role


class Command(BaseCommand):
    help = "Create the user if needed and give them a role in a project."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("username")
        parser.add_argument("role", choices=Role.values)
        parser.add_argument("--password", default=None)

    def handle(self, *args, slug, username, role, password, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project with slug {slug!r}")
        if is_author_name(username):
            # Accounts of Label Studio authors must stay impossible to log in as or to reuse.
            raise CommandError(f"{username!r}: names starting {AUTHOR_PREFIX!r} are reserved")
        user = user_ensure(username=username, password=password)
        membership_set(project=project, user=user, role=Role(role))
        self.stdout.write(f"{user.username} is now {role} in {project.slug}")
