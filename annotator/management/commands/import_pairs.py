import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from annotator.intake.importing import ImportUnusable, pairs_import, read_manifest
from jobs.lifecycle import job_create
from jobs.models import JobKind
from projects.models import Project

EXIT_ALL_IMPORTED, EXIT_SOME_REJECTED, EXIT_UNUSABLE = 0, 1, 2


class Command(BaseCommand):
    help = (
        "Import pairs from a JSONL or CSV manifest. Exit code 0: every row imported; "
        "1: some rows rejected (the good ones are in); 2: unusable input."
    )

    def add_arguments(self, parser):
        parser.add_argument("manifest", type=Path)
        parser.add_argument("--project", required=True)
        parser.add_argument(
            "--images",
            type=Path,
            default=None,
            help="folder or zip (default: the manifest's folder)",
        )

    def handle(self, *args, manifest, project, images, **options):
        code = self._run(manifest, project, images)
        if code:
            sys.exit(code)

    def _run(self, manifest: Path, slug: str, images: Path | None) -> int:
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            self.stderr.write(f"error: no project with slug {slug!r}")
            return EXIT_UNUSABLE
        try:
            data = read_manifest(manifest)
        except ImportUnusable as exc:
            self.stderr.write(f"error: {exc}")
            return EXIT_UNUSABLE
        job = job_create(kind=JobKind.IMPORT, project=project, params={"manifest": str(manifest)})
        try:
            report = pairs_import(
                project=project,
                manifest=data,
                manifest_name=manifest.name,
                images=images or manifest.parent,
                job=job,
                progress=self._progress,
            )
        except ImportUnusable as exc:
            self.stderr.write(f"error: {exc}")
            return EXIT_UNUSABLE
        self.stderr.write("")
        for error in report.errors:
            label = f"line {error.line}" + (f" ({error.external_id})" if error.external_id else "")
            self.stdout.write(f"rejected {label}: {error.message}")
        self.stdout.write(
            f"job {job.pk}: {len(report.imported)} of {report.rows} rows imported, "
            f"{len(report.errors)} rejected"
        )
        return EXIT_ALL_IMPORTED if report.complete else EXIT_SOME_REJECTED

    def _progress(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        self.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", ending="")
        self.stderr.flush()
