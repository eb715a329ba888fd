import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from annotator.importing import ImportUnusable
from annotator.jobs import job_create
from annotator.labelstudio import labelstudio_import
from annotator.models import JobKind, Project

EXIT_ALL_IMPORTED, EXIT_SOME_REJECTED, EXIT_UNUSABLE = 0, 1, 2


class Command(BaseCommand):
    help = (
        "Import the pairs and annotations of a Label Studio JSON export. Exit code 0: every "
        "task and annotation imported; 1: some rejected (the good ones are in); 2: unusable input."
    )

    def add_arguments(self, parser):
        parser.add_argument("export", type=Path, help="Label Studio export in the JSON format")
        parser.add_argument("--project", required=True)
        parser.add_argument(
            "--images",
            type=Path,
            default=None,
            help="folder or zip holding the images, found by file name (default: the export's "
            "folder)",
        )

    def handle(self, *args, export, project, images, **options):
        code = self._run(export, project, images or export.parent)
        if code:
            sys.exit(code)

    def _run(self, export: Path, slug: str, images: Path) -> int:
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            self.stderr.write(f"error: no project with slug {slug!r}")
            return EXIT_UNUSABLE
        try:
            data = export.read_bytes()
        except OSError as exc:
            self.stderr.write(f"error: cannot read export {export}: {exc.strerror or exc}")
            return EXIT_UNUSABLE
        params = {"format": "label-studio", "export": str(export), "images": str(images)}
        job = job_create(kind=JobKind.IMPORT, project=project, params=params)
        try:
            report = labelstudio_import(
                project=project, export=data, images=images, job=job, progress=self._progress
            )
        except ImportUnusable as exc:
            self.stderr.write(f"error: {exc}")
            return EXIT_UNUSABLE
        self.stderr.write("")
        for error in report.errors:
            task_id = f" (id {error.external_id})" if error.external_id else ""
            label = f"task {error.line}{task_id}"
            self.stdout.write(f"rejected {label}: {error.message}")
        result = report.as_result()
        self.stdout.write(
            f"job {job.pk}: {result['imported']} of {report.rows} tasks imported with "
            f"{result['annotations']} annotations, {result['rejected']} rejected"
        )
        return EXIT_ALL_IMPORTED if report.complete else EXIT_SOME_REJECTED

    def _progress(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        self.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", ending="")
        self.stderr.flush()
