from django.core.management.base import BaseCommand, CommandError

from console.demo import demo_seed
from console.demo_work import demo_work


class Command(BaseCommand):
    help = "Create (or complete) the demo project from real photos with programmatic edits."

    def add_arguments(self, parser):
        parser.add_argument("--pairs", type=int, default=36)
        parser.add_argument("--annotators", type=int, default=2)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--worked",
            type=int,
            default=18,
            help="pairs two simulated annotators answer (verdicts, disputes, a release); at most "
            "half of --pairs, the rest are left for people trying the workspace",
        )

    def handle(self, *args, pairs, annotators, seed, worked, **options):
        if pairs < 0 or annotators < 1 or worked < 0:
            raise CommandError("--pairs and --worked must be ≥ 0 and --annotators ≥ 1")
        report = demo_seed(pairs=pairs, annotators=annotators, seed=seed, progress=self._progress)
        self.stderr.write("")
        # Half the pairs at most: the rest are for the people trying the workspace.
        work = demo_work(project=report.project, pairs=min(worked, pairs // 2))
        total = report.project.pairs.count()
        self.stdout.write(
            f"demo project '{report.project.slug}': {report.created_pairs} pairs created, "
            f"{total} in all; {work['answered']} answered by two simulated annotators"
            + ("; release demo-v1 built" if work["release"] else "")
        )
        self.stdout.write("development log-ins (never use these anywhere real):")
        for username, password in report.passwords.items():
            self.stdout.write(f"  {username:<12} {password}")

    def _progress(self, done: int, total: int) -> None:
        self.stderr.write(f"\rgenerating pairs {done}/{total}", ending="")
        self.stderr.flush()
