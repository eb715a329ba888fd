"""Idempotency keys of any length, and X-Forwarded-Proto believed only behind a proxy."""

import os
import subprocess
import sys
from pathlib import Path

from annotator.leasing import assignment_lease_next
from annotator.models import Annotation
from annotator.submitting import SubmitConflict, annotation_submit, key_digest
from tests.factories import answer, make_pair

ROOT = Path(__file__).resolve().parents[2]


def test_long_keys_sharing_their_first_100_characters_are_two_keys(project, annotator_1):
    """Keys were cut to 100 characters: the second submission below then answered with the
    first one's annotation, for another pair."""
    prefix = "client-run-" + "x" * 100
    first_pair, second_pair = make_pair(project), make_pair(project)
    results = []
    for suffix in ("-first", "-second"):
        lease = assignment_lease_next(project=project, user=annotator_1)
        results.append(
            annotation_submit(
                assignment_id=lease.pk,
                user=annotator_1,
                body=answer(),
                idempotency_key=prefix + suffix,
            )
        )

    (one, created_one), (two, created_two) = results
    assert created_one and created_two and one.pk != two.pk
    assert {one.pair_id, two.pair_id} == {first_pair.pk, second_pair.pk}
    assert one.idempotency_key == key_digest(prefix + "-first")
    assert len(one.idempotency_key) == 64


def test_a_long_key_repeated_returns_the_first_result(project, annotator_1):
    make_pair(project)
    lease = assignment_lease_next(project=project, user=annotator_1)
    key = "k" * 5000

    first, _ = annotation_submit(
        assignment_id=lease.pk, user=annotator_1, body=answer(), idempotency_key=key
    )
    again, created = annotation_submit(
        assignment_id=lease.pk, user=annotator_1, body=answer(tier="poor"), idempotency_key=key
    )

    assert not created and again.pk == first.pk and Annotation.objects.count() == 1


def test_a_key_reused_for_another_assignment_is_a_conflict(project, annotator_1):
    make_pair(project)
    make_pair(project)
    key = "same" * 40
    lease = assignment_lease_next(project=project, user=annotator_1)
    annotation_submit(assignment_id=lease.pk, user=annotator_1, body=answer(), idempotency_key=key)
    other = assignment_lease_next(project=project, user=annotator_1)

    try:
        annotation_submit(
            assignment_id=other.pk, user=annotator_1, body=answer(), idempotency_key=key
        )
    except SubmitConflict as exc:
        assert exc.code == "key_reused"
    else:
        raise AssertionError("a reused key was accepted")


def _is_secure(headers: str, **env: str) -> str:
    code = (
        "from django.test import RequestFactory; "
        f"r = RequestFactory().get('/', **{headers}); print(r.is_secure())"
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DIFFMARK_", "CELERY_"))}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_x_forwarded_proto_is_believed_only_when_a_proxy_is_configured():
    forged = "{'HTTP_X_FORWARDED_PROTO': 'https'}"

    assert _is_secure(forged) == "False"  # no proxy: a client wrote it
    assert _is_secure(forged, DIFFMARK_PROXY_COUNT="0") == "False"
    assert _is_secure(forged, DIFFMARK_PROXY_COUNT="1") == "True"
    assert _is_secure("{}", DIFFMARK_PROXY_COUNT="1") == "False"


def test_the_migration_turns_stored_keys_into_their_digest(project, annotator_1):
    """A client repeating a key stored before the digest (up to 100 characters) still gets its
    first result."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("annotator.migrations.0011_idempotency_key_digest")
    make_pair(project)
    lease = assignment_lease_next(project=project, user=annotator_1)
    first, _ = annotation_submit(assignment_id=lease.pk, user=annotator_1, body=answer())
    Annotation.objects.filter(pk=first.pk).update(idempotency_key="old-client-key")

    migration._digest(apps, None)

    again, created = annotation_submit(
        assignment_id=lease.pk, user=annotator_1, body=answer(), idempotency_key="old-client-key"
    )
    assert not created and again.pk == first.pk
