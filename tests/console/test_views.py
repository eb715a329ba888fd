"""Leads' pages (console/views.py): who may see them, CSRF, project settings, members, uploads
and jobs."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotator.models import Pair
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind, JobStatus
from projects.creating import project_create
from projects.models import Membership, Project, Role
from tests.conftest import member
from tests.console.helpers import _login, _settings_data, _zip
from tests.images import edited_pair, photo_bytes

# --- who may see what ------------------------------------------------------------------------


@pytest.fixture
def job(project, lead):
    return job_create(kind=JobKind.IMPORT, project=project, user=lead)


PAGES = [
    ("console:project_settings", "slug"),
    ("console:members", "slug"),
    ("console:upload", "slug"),
    ("console:jobs", "slug"),
    ("console:job", "job"),
]


def _url(name: str, arg: str, project: Project, job: Job) -> str:
    return reverse(name, args=[project.slug if arg == "slug" else job.pk])


@pytest.mark.parametrize(("name", "arg"), PAGES)
@pytest.mark.parametrize(
    ("who", "status"),
    [("outsider", 404), ("annotator_1", 403), ("researcher", 403), ("lead", 200)],
)
def test_pages_are_for_leads(client, request, project, job, name, arg, who, status):
    _login(client, request.getfixturevalue(who))
    assert client.get(_url(name, arg, project, job)).status_code == status


@pytest.mark.parametrize(("name", "arg"), PAGES)
def test_pages_send_anonymous_visitors_to_log_in(client, project, job, name, arg):
    response = client.get(_url(name, arg, project, job))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_admins_act_as_leads(client, project, job, admin_user):
    _login(client, admin_user)
    for name, arg in PAGES:
        assert client.get(_url(name, arg, project, job)).status_code == 200


POSTS = [
    ("console:member_role", {"role": "lead"}),
    ("console:member_remove", {}),
    ("console:upload_pair", {}),
]


def _post_url(name: str, project: Project, user) -> str:
    args = [project.slug] if name == "console:upload_pair" else [project.slug, user.pk]
    return reverse(name, args=args)


@pytest.mark.parametrize(("name", "data"), POSTS)
@pytest.mark.parametrize(
    ("who", "status"), [("outsider", 404), ("annotator_1", 403), ("researcher", 403)]
)
def test_actions_are_for_leads(client, request, project, annotator_2, name, data, who, status):
    _login(client, request.getfixturevalue(who))
    response = client.post(_post_url(name, project, annotator_2), data)
    assert response.status_code == status
    assert Membership.objects.get(user=annotator_2).role == Role.ANNOTATOR


@pytest.mark.parametrize(("name", "data"), POSTS)
def test_actions_answer_only_to_post(client, project, lead, annotator_2, name, data):
    response = _login(client, lead).get(_post_url(name, project, annotator_2))
    assert response.status_code == 405


@pytest.mark.parametrize(
    ("who", "status"),
    [("outsider", 403), ("annotator_1", 403), ("researcher", 403), ("lead", 200)],
)
def test_projects_are_started_by_staff_and_leads(client, request, who, status):
    _login(client, request.getfixturevalue(who))
    assert client.get(reverse("console:project_new")).status_code == status


def test_staff_may_start_a_project(client, outsider):
    outsider.is_staff = True
    outsider.save()
    _login(client, outsider)
    response = client.post(reverse("console:project_new"), _settings_data(name="Bikes"))
    assert response.status_code == 302 and response["Location"] == "/p/bikes/"
    assert Project.objects.get(slug="bikes").memberships.get().user == outsider


def test_new_project_page_needs_a_login(client, db):
    response = client.get(reverse("console:project_new"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


# --- CSRF on every form ----------------------------------------------------------------------


@pytest.fixture
def csrf_client(lead):
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)
    return client


@pytest.mark.parametrize(
    "url",
    [
        "/projects/new/",
        "/p/cars/settings/",
        "/p/cars/members/",
        "/p/cars/members/{user}/role/",
        "/p/cars/members/{user}/remove/",
        "/p/cars/upload/",
        "/p/cars/upload/pair/",
    ],
)
def test_every_form_needs_the_csrf_token(csrf_client, project, annotator_1, url):
    response = csrf_client.post(url.format(user=annotator_1.pk), {"role": "lead"})
    assert response.status_code == 403
    assert Membership.objects.get(user=annotator_1).role == Role.ANNOTATOR


def test_forms_carry_the_csrf_token(csrf_client, project, annotator_1):
    page = csrf_client.get("/p/cars/members/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = csrf_client.post(
        f"/p/cars/members/{annotator_1.pk}/role/",
        {"role": "lead", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert Membership.objects.get(user=annotator_1).role == Role.LEAD


# --- settings --------------------------------------------------------------------------------


def test_changing_the_iou_threshold_queues_a_recompute(
    client, project, lead, django_capture_on_commit_callbacks
):
    _login(client, lead)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post("/p/cars/settings/", _settings_data(project, iou_threshold="0.7"))

    assert response.status_code == 302 and response["Location"] == "/p/cars/settings/"
    job = Job.objects.get(kind=JobKind.RECOMPUTE)
    assert (job.project, job.created_by, job.status) == (project, lead, JobStatus.SUCCEEDED)
    assert len(callbacks) == 1
    project.refresh_from_db()
    assert project.iou_threshold == 0.7
    page = client.get(response["Location"]).content.decode()
    assert f'<a href="/jobs/{job.pk}/">job #{job.pk}</a>' in page


def test_changing_synonyms_queues_a_recompute_and_other_fields_do_not(client, project, lead):
    _login(client, lead)
    client.post("/p/cars/settings/", _settings_data(project, name="Cars 2", gold_percent="5"))
    assert not Job.objects.exists()
    project.refresh_from_db()
    assert (project.name, project.gold_rate) == ("Cars 2", 0.05)

    client.post("/p/cars/settings/", _settings_data(project, synonyms_text="car: auto"))
    assert Job.objects.get().kind == JobKind.RECOMPUTE


def test_settings_page_shows_the_fields_errors(client, project, lead):
    _login(client, lead)
    response = client.post(
        "/p/cars/settings/",
        _settings_data(project, overlap="0", synonyms_text="car auto"),
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 1." in body
    assert "line 1: write it as canonical: variant, variant" in body
    project.refresh_from_db()
    assert project.overlap == 2


# --- members ---------------------------------------------------------------------------------


def test_members_page_lists_members_and_adds_one(client, project, lead, annotator_1, outsider):
    _login(client, lead)
    body = client.get("/p/cars/members/").content.decode()
    assert "annotator_1" in body and "outsider" not in body

    response = client.post("/p/cars/members/", {"username": "outsider", "role": "researcher"})

    assert response.status_code == 302
    assert Membership.objects.get(project=project, user=outsider).role == Role.RESEARCHER


def test_the_last_lead_cannot_be_removed_or_demoted(client, project, lead):
    _login(client, lead)
    for url, data in (
        (f"/p/cars/members/{lead.pk}/remove/", {}),
        (f"/p/cars/members/{lead.pk}/role/", {"role": "annotator"}),
    ):
        response = client.post(url, data, follow=True)
        assert "the project&#x27;s only lead" in response.content.decode()
    assert Membership.objects.get(project=project, user=lead).role == Role.LEAD


def test_a_lead_is_removed_when_another_remains(client, project, lead):
    other = member(project, "lead_2", Role.LEAD)
    _login(client, lead)

    response = client.post(f"/p/cars/members/{other.pk}/remove/")
    assert response["Location"] == "/p/cars/members/"
    assert not Membership.objects.filter(user=other).exists()

    member(project, "lead_3", Role.LEAD)
    response = client.post(f"/p/cars/members/{lead.pk}/role/", {"role": "annotator"})
    assert response["Location"] == "/"  # a lead who stepped down leaves the page
    assert Membership.objects.get(user=lead).role == Role.ANNOTATOR


def test_changing_the_role_of_a_non_member_is_not_found(client, project, lead, outsider):
    response = _login(client, lead).post(f"/p/cars/members/{outsider.pk}/remove/")
    assert response.status_code == 404


# --- uploads ---------------------------------------------------------------------------------


def _batch(rows: list[dict], *, manifest_name: str = "manifest.jsonl") -> SimpleUploadedFile:
    files: dict[str, bytes | str] = {}
    for index in range(2):
        a, b = edited_pair(index * 11)
        files[f"a/{index}.png"], files[f"b/{index}.png"] = a, b
    files[manifest_name] = "\n".join(json.dumps(row) for row in rows) + "\n"
    return _zip(files)


ROWS = [
    {"id": "p-0", "image_a": "a/0.png", "image_b": "b/0.png", "category": "attribute"},
    {"id": "p-1", "image_a": "a/1.png", "image_b": "b/1.png", "instruction": "Recolour it"},
    {"id": "p-2", "image_a": "a/missing.png", "image_b": "b/1.png"},
]


def test_uploading_a_zip_with_its_manifest_runs_an_import_job(
    client, project, lead, django_capture_on_commit_callbacks
):
    _login(client, lead)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/p/cars/upload/", {"images": _batch(ROWS)})

    job = Job.objects.get(kind=JobKind.IMPORT)
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.status == JobStatus.SUCCEEDED
    assert job.result == {"rows": 3, "imported": 2, "rejected": 1}
    assert sorted(project.pairs.values_list("external_id", flat=True)) == ["p-0", "p-1"]

    body = client.get(response["Location"]).content.decode()
    assert "2 of 3 rows imported, 1 rejected" in body
    assert re.search(
        r'<td class="num">3</td><td><code>p-2</code></td>'
        r"<td>image_a: file not found in the images zip: a/missing.png</td>",
        body,
    )
    assert 'hx-trigger="every 1s"' not in body  # finished: no more polling


def test_a_manifest_may_come_next_to_the_zip(
    client, project, lead, django_capture_on_commit_callbacks
):
    manifest = SimpleUploadedFile("rows.csv", b"id,image_a,image_b\nc-0,a/0.png,b/0.png\n")
    _login(client, lead)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/p/cars/upload/", {"images": _batch([]), "manifest": manifest})
    assert list(project.pairs.values_list("external_id", flat=True)) == ["c-0"]


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (
            lambda: _batch(ROWS, manifest_name="batch/manifest.jsonl"),
            "Found batch/manifest.jsonl inside a folder",
        ),
        (lambda: _zip({"a.png": photo_bytes()}), "No manifest.jsonl or manifest.csv"),
        (
            lambda: _zip({"one.jsonl": "{}", "two.csv": "id"}),
            "The zip holds several manifests (one.jsonl, two.csv)",
        ),
        (lambda: SimpleUploadedFile("batch.zip", b"not a zip"), "not a readable zip file"),
    ],
)
def test_an_unusable_upload_is_refused_with_a_reason(client, project, lead, upload, message):
    response = _login(client, lead).post("/p/cars/upload/", {"images": upload()})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Job.objects.exists()


def test_job_progress_polls_every_second_while_the_job_runs(client, project, lead, job):
    _login(client, lead)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, total=40, done=10)

    fragment = client.get(f"/jobs/{job.pk}/", HTTP_HX_REQUEST="true").content.decode()

    assert fragment.startswith('<section id="job-progress"')
    assert f'hx-get="/jobs/{job.pk}/" hx-trigger="every 1s"' in fragment
    assert "25%" in fragment and "10 of 40 rows" in fragment
    assert "<html" not in fragment


def test_uploading_one_pair(client, project, lead):
    a, b = edited_pair(3)
    _login(client, lead)
    data = {
        "image_a": SimpleUploadedFile("a.png", a),
        "image_b": SimpleUploadedFile("b.png", b),
        "external_id": "one",
        "category": "object",
        "metadata": '{"source": "phone"}',
    }
    response = client.post("/p/cars/upload/pair/", data)

    pair = Pair.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/pairs/{pair.pk}/"
    assert (pair.external_id, pair.category_hint, pair.metadata) == (
        "one",
        "object",
        {"source": "phone"},
    )


def test_uploading_a_duplicate_or_broken_pair_says_why(client, project, lead):
    a, b = edited_pair(3)
    client = _login(client, lead)
    first = {"image_a": SimpleUploadedFile("a.png", a), "image_b": SimpleUploadedFile("b.png", b)}
    assert client.post("/p/cars/upload/pair/", first).status_code == 302
    again = {"image_a": SimpleUploadedFile("a.png", a), "image_b": SimpleUploadedFile("b.png", b)}
    response = client.post("/p/cars/upload/pair/", again)
    assert response.status_code == 400 and "duplicate of pair" in response.content.decode()

    broken = {
        "image_a": SimpleUploadedFile("a.png", b"not an image"),
        "image_b": SimpleUploadedFile("b.png", b),
        "metadata": "[1, 2]",
    }
    body = client.post("/p/cars/upload/pair/", broken).content.decode()
    assert "Metadata must be a JSON object" in body
    assert Pair.objects.count() == 1


# --- jobs list -------------------------------------------------------------------------------


def test_jobs_page_lists_every_kind_of_job_of_the_project(client, project, lead, db):
    other = project_create(slug="other")
    for kind in JobKind:
        job_create(kind=kind, project=project, user=lead)
    hidden = job_create(kind=JobKind.IMPORT, project=other)
    Job.objects.filter(kind=JobKind.RELEASE).update(
        status=JobStatus.FAILED, errors=[{"line": 0, "id": "", "message": "disk full"}]
    )

    body = _login(client, lead).get("/p/cars/jobs/").content.decode()

    for label in ("Import", "Pre-annotation", "Agreement recompute", "Release"):
        assert f"<td>{label}</td>" in body
    assert f'href="/jobs/{hidden.pk}/"' not in body
    assert 'class="error-count">1</a>' in body
    assert 'hx-trigger="every 2s"' in body  # queued jobs: the table refreshes itself


def test_a_job_without_a_project_is_its_creators(client, lead, outsider):
    job = job_create(kind=JobKind.RELEASE, project=None, user=outsider)
    assert _login(client, lead).get(f"/jobs/{job.pk}/").status_code == 404
    client.logout()
    assert _login(client, outsider).get(f"/jobs/{job.pk}/").status_code == 200


def test_a_job_of_another_project_is_not_found(client, project, lead):
    job = job_create(kind=JobKind.IMPORT, project=project_create(slug="other"))
    assert _login(client, lead).get(f"/jobs/{job.pk}/").status_code == 404


def test_the_settings_choose_where_drafted_descriptions_are_offered(client, project, lead):
    _login(client, lead)
    assert project.draft_descriptions == "first"
    page = client.get("/p/cars/settings/").content.decode()
    assert "On, except on gold pairs and for a pair&#x27;s second annotator" in page
    client.post("/p/cars/settings/", _settings_data(project, draft_descriptions="off"))
    project.refresh_from_db()
    assert project.draft_descriptions == "off"
    # A form that leaves the choice out keeps it; an unknown value is refused.
    client.post("/p/cars/settings/", _settings_data(project, name="Cars 2"))
    project.refresh_from_db()
    assert (project.name, project.draft_descriptions) == ("Cars 2", "off")
    response = client.post("/p/cars/settings/", _settings_data(project, draft_descriptions="x"))
    assert response.status_code == 200
    project.refresh_from_db()
    assert project.draft_descriptions == "off"
