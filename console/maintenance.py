"""Every periodic repair in one place, for deployments without Celery beat.

With a broker, beat runs the sweeps (CELERY_BEAT_SCHEDULE). Without one, imports and release
builds run inside the web request that started them, and a request killed mid-way (a gunicorn
timeout, a restart) leaves its job "running" for ever and its files behind. Two things run the
sweeps then: `manage.py sweep` (schedule it, e.g. from cron every 5 minutes) and, as a safety
net, the first request after every DIFFMARK_SWEEP_SECONDS in each process
(SweepWithoutWorkerMiddleware).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache

from annotator.sweeps import leases_expire, staged_uploads_delete
from jobs.sweeps import jobs_fail_stale, jobs_fail_unstarted, jobs_resend_queued
from jobs.tempdirs import temp_folders_delete
from releases.failing import releases_fail_stale
from review.figures import figures_refresh_due
from review.sweeps import review_work_resend
from webhooks.delivery import deliveries_resend, events_prune

log = logging.getLogger(__name__)
SWEEP_LOCK = "diffmark:sweep-on-request"


def sweep_failed_work() -> dict[str, object]:
    """Fail the jobs and release builds whose process stopped, and clean their files; without
    a broker, also send the webhook deliveries whose retry is due (after the response). Light:
    a few indexed queries when nothing is stale, so a request may run it."""
    found: dict[str, object] = {"jobs": jobs_fail_stale(), "releases": releases_fail_stale()}
    if settings.CELERY_TASK_ALWAYS_EAGER:
        found["unstarted"] = jobs_fail_unstarted()
        found["webhooks"] = deliveries_resend()
    # This host's folders of ended processes (a web worker killed mid-job): one listing of /tmp.
    found["temp_folders"] = temp_folders_delete()
    return found


def sweep_all() -> dict[str, object]:
    """Every sweep once (`manage.py sweep`). With a broker, queued work whose message was lost
    is sent again; without one, it would run here, so queued jobs are failed instead, and the
    lost cross-checks run in this process."""
    found: dict[str, object] = {"leases_expired": leases_expire(), **sweep_failed_work()}
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        found["jobs_resent"] = jobs_resend_queued()
        found["webhooks"] = deliveries_resend()
    found["webhook_events_pruned"] = events_prune()
    found["review_work"] = review_work_resend()
    found["staged_files_deleted"] = staged_uploads_delete()
    found["figures"] = figures_refresh_due()  # large projects' stored figures (review.figures)
    return found


class SweepWithoutWorkerMiddleware:
    """Without a broker, the first request after every DIFFMARK_SWEEP_SECONDS (per cache) runs
    ``sweep_failed_work`` after its response is made. With a broker it does nothing: beat
    sweeps. A failing sweep is logged; the request it rode on is answered all the same."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if settings.CELERY_TASK_ALWAYS_EAGER and settings.DIFFMARK_SWEEP_ON_REQUEST:
            try:
                if cache.add(SWEEP_LOCK, 1, settings.DIFFMARK_SWEEP_SECONDS):
                    found = sweep_failed_work()
                    if any(found.values()):
                        log.warning("swept work left by stopped processes: %s", found)
            except Exception:
                log.exception("the sweep on request failed")
        return response
