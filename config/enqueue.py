"""Queue Celery work without making a web request wait on, or fail because of, the broker."""

from __future__ import annotations

import logging

from celery import Task
from django.db import transaction
from kombu.exceptions import KombuError

from config.after_response import run_after_response

log = logging.getLogger(__name__)


def enqueue_on_commit(
    task: Task, *args, after_response: bool = False, detach: bool = False
) -> None:
    """Send ``task(*args)`` once the current transaction commits (at once outside one).

    The data is committed by then, so a broker that is down or stuck must not turn the request
    into an error: the send is logged and dropped, and the periodic sweeps (CELERY_BEAT_SCHEDULE)
    find the work that was never done and send it again. Publishing fails fast (settings:
    DIFFMARK_BROKER_TIMEOUT, CELERY_TASK_PUBLISH_RETRY).

    ``after_response``: work the response does not show. Without a broker it then runs once the
    request's response is sent (config.after_response), not before; with one it is sent at
    commit as any other. ``detach``: long work (a job), which must not hold the connection
    either: on a server that reads the next request only after close() it gets a thread.
    """
    if after_response:
        transaction.on_commit(lambda: _send_after_response(task, args, detach=detach))
    else:
        transaction.on_commit(lambda: enqueue(task, *args))


def _send_after_response(task: Task, args: tuple, *, detach: bool) -> None:
    if task.app.conf.task_always_eager:
        # No broker: the task's own function, here. Celery's eager apply would add a tracer, a
        # round trip of the arguments through the serializer and a result nobody reads.
        run_after_response(lambda: task(*args), detach=detach)
    else:
        enqueue(task, *args)


def enqueue(task: Task, *args) -> bool:
    """Send now; False, with a warning, when the broker refused or did not answer.

    In eager mode (no broker) the task runs in-process and its errors propagate as they are.
    """
    try:
        task.delay(*args)
    except Exception as exc:
        if task.app.conf.task_always_eager or not isinstance(exc, _broker_errors(task)):
            raise
        log.warning("could not queue %s%r, a sweep will send it again: %s", task.name, args, exc)
        return False
    return True


def _broker_errors(task: Task) -> tuple[type[BaseException], ...]:
    # The transport's own errors (redis-py's, for instance) when kombu did not wrap them.
    connection = task.app.connection_for_write()
    return (KombuError, OSError, *connection.connection_errors, *connection.channel_errors)
