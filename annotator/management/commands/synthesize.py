import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from annotator.intake.synthesis import SynthesisUnusable, synthesis_options, synthesis_run
from jobs.lifecycle import job_create
from jobs.models import JobKind
from pairdiff.synth.custom import CATEGORIES
from projects.models import Project

EXIT_ALL_MADE, EXIT_SOME_SKIPPED, EXIT_UNUSABLE = 0, 1, 2


class Command(BaseCommand):
    help = (
        "Make pairs with known answers from single photos (a folder or a zip): B is A with one "
        "programmatic change. Exit code 0: every planned pair made (or already there); 1: some "
        "photos or pairs skipped; 2: unusable input."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--images", required=True, type=Path, help="folder or zip of photos")
        parser.add_argument("--per-image", type=int, default=10, help="pairs per photo")
        parser.add_argument(
            "--categories",
            nargs="+",
            default=None,
            help=f"VDiff-Bench categories to make (default all): {' '.join(CATEGORIES)}",
        )
        parser.add_argument(
            "--gold", action="store_true", help="mix the pairs into queues as gold pairs"
        )
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, project, images, per_image, categories, gold, seed, **options):
        code = self._run(project, images, per_image, categories, gold, seed)
        if code:
            sys.exit(code)

    def _run(self, slug, images, per_image, categories, gold, seed) -> int:
        found = Project.objects.filter(slug=slug).first()
        if found is None:
            self.stderr.write(f"error: no project with slug {slug!r}")
            return EXIT_UNUSABLE
        # "--categories a,b" works as well as "--categories a b".
        names = [c for item in categories or [] for c in item.split(",") if c]
        try:
            chosen = synthesis_options(
                per_image=per_image, categories=names or None, gold=gold, seed=seed
            )
        except SynthesisUnusable as exc:
            self.stderr.write(f"error: {exc}")
            return EXIT_UNUSABLE
        job = job_create(kind=JobKind.SYNTHESIZE, project=found, params=chosen.as_params())
        try:
            report = synthesis_run(
                project=found, images=images, options=chosen, job=job, progress=self._progress
            )
        except SynthesisUnusable as exc:
            self.stderr.write(f"error: {exc}")
            return EXIT_UNUSABLE
        self.stderr.write("")
        for error in report.errors:
            self.stdout.write(f"skipped {error['id']}: {error['message']}")
        made = ", ".join(f"{c} {n}" for c, n in sorted(report.by_category.items()))
        self.stdout.write(
            f"job {job.pk}: {len(report.created)} pairs made ({made or 'none'}), "
            f"{report.duplicates} already there, {len(report.errors)} skipped"
        )
        return EXIT_ALL_MADE if report.complete else EXIT_SOME_SKIPPED

    def _progress(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        self.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", ending="")
        self.stderr.flush()
