from django.core.management.base import BaseCommand, CommandError

from annotator.preannotation import BACKENDS, UnknownBackend, preannotate_run, predictor_for
from jobs.lifecycle import job_create
from jobs.models import JobKind, JobStatus
from projects.models import Project


class Command(BaseCommand):
    help = "Run a pre-annotation job in this process: a predictor over the project's open pairs."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--backend", required=True, help=f"one of {', '.join(BACKENDS)}")

    def handle(self, *args, project, backend, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"no project with slug {project!r}")
        try:
            predictor = predictor_for(backend, questions=found.judge_prompt)
        except UnknownBackend as exc:
            raise CommandError(str(exc)) from exc
        job = job_create(kind=JobKind.PREANNOTATE, project=found, params={"backend": backend})
        preannotate_run(job=job, predictor=predictor)
        job.refresh_from_db()
        for error in job.errors:
            self.stdout.write(f"failed {error['id']}: {error['message']}")
        self.stdout.write(f"job {job.pk} {job.status}: {job.message}")
        if job.status != JobStatus.SUCCEEDED:
            raise CommandError(f"job {job.pk} ended {job.status}")
