import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from annotator.intake.importing import ImportUnusable
from annotator.intake.labelstudio.importing import labelstudio_import
from annotator.intake.labelstudio.plan import LSInput, labelstudio_preview
from annotator.services import image_limits
from jobs.lifecycle import job_create
from jobs.models import JobKind
from pairdiff.sources import SourceError, open_source
from projects.models import Project

EXIT_ALL_IMPORTED, EXIT_SOME_REJECTED, EXIT_UNUSABLE = 0, 1, 2


class Command(BaseCommand):
    help = (
        "Import the pairs, annotations and predictions of a Label Studio JSON export. Exit code "
        "0: every task and annotation imported; 1: some rejected (the good ones are in); "
        "2: unusable input. --dry-run prints the mapping and the counts and writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("export", type=Path, help="Label Studio export in the JSON format")
        parser.add_argument("--project", required=True)
        parser.add_argument(
            "--images",
            type=Path,
            default=None,
            help="folder or zip holding the images (default: the export's folder)",
        )
        parser.add_argument(
            "--config",
            type=Path,
            default=None,
            help="the project's labelling config (Settings → Labeling Interface → Code), "
            "which says which Image tag shows which data key; inferred when absent",
        )
        parser.add_argument(
            "--mapping",
            type=Path,
            default=None,
            help="JSON or YAML: Label Studio values → categories, tiers, absent side; authors",
        )
        parser.add_argument("--dry-run", action="store_true", help="print the plan only")

    def handle(self, *args, export, project, images, config, mapping, dry_run, **options):
        code = self._run(export, project, images or export.parent, config, mapping, dry_run)
        if code:
            sys.exit(code)

    def _run(self, export, slug, images, config, mapping, dry_run) -> int:
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            self.stderr.write(f"error: no project with slug {slug!r}")
            return EXIT_UNUSABLE
        try:
            given = LSInput(
                export=export.read_bytes(),
                config=config.read_bytes() if config else None,
                mapping=mapping.read_bytes() if mapping else None,
            )
        except OSError as exc:
            self.stderr.write(f"error: cannot read {exc.filename}: {exc.strerror or exc}")
            return EXIT_UNUSABLE
        if dry_run:
            return self._dry_run(project, given, images)
        params = {"format": "label-studio", "export": str(export), "images": str(images)}
        params |= {"config_path": str(config or ""), "mapping_path": str(mapping or "")}
        job = job_create(kind=JobKind.IMPORT, project=project, params=params)
        try:
            report = labelstudio_import(
                project=project, given=given, images=images, job=job, progress=self._progress
            )
        except ImportUnusable as exc:
            self.stderr.write(f"error: {exc}")
            return EXIT_UNUSABLE
        self.stderr.write("")
        self.stdout.write("\n".join(report.mapping))
        for label, rows in (("note", report.notes), ("rejected", report.errors)):
            for row in rows:
                task_id = f" (id {row.external_id})" if row.external_id else ""
                self.stdout.write(f"{label} task {row.line}{task_id}: {row.message}")
        result = report.as_result()
        self.stdout.write(
            f"job {job.pk}: {result['imported']} of {report.rows} tasks imported with "
            f"{result['annotations']} annotations and {result['predictions']} predictions, "
            f"{result['rejected']} rejected"
        )
        return EXIT_ALL_IMPORTED if report.complete else EXIT_SOME_REJECTED

    def _dry_run(self, project: Project, given: LSInput, images: Path) -> int:
        try:
            with open_source(images, max_entry_bytes=image_limits().max_bytes) as source:
                preview = labelstudio_preview(project=project, given=given, source=source)
        except (ImportUnusable, SourceError) as exc:
            self.stderr.write(f"error: {exc}")
            return EXIT_UNUSABLE
        self.stdout.write("\n".join(preview.mapping))
        self.stdout.write("Authors:")
        self.stdout.write("\n".join(f"  {line}" for line in preview.authors) or "  none")
        self.stdout.write("Counts (dry run, nothing written):")
        for what, count in preview.counts.items():
            self.stdout.write(f"  {what}: {count}")
        for label, rows in (("note", preview.notes), ("problem", preview.problems)):
            for row in rows:
                task_id = f" (id {row.external_id})" if row.external_id else ""
                self.stdout.write(f"{label} task {row.line}{task_id}: {row.message}")
        return EXIT_ALL_IMPORTED if not preview.problems else EXIT_SOME_REJECTED

    def _progress(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        self.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", ending="")
        self.stderr.flush()
