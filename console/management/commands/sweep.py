import json

from django.core.management.base import BaseCommand

from console.maintenance import sweep_all


class Command(BaseCommand):
    help = (
        "Run every periodic repair once: expire leases, fail jobs and release builds whose "
        "process stopped (and delete their files), re-send lost work. Schedule it every few "
        "minutes when no Celery beat runs (no CELERY_BROKER_URL)."
    )

    def handle(self, *args, **options):
        self.stdout.write(json.dumps(sweep_all(), sort_keys=True))
