"""Leads' pages: project settings, members, uploads, jobs, the pairs browser and pair history."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotator.leasing import assignment_lease_next
from annotator.models import Assignment, Pair, PairStatus, Prediction
from annotator.submitting import annotation_submit
from annotator.textformats import (
    categories_parse,
    guidelines_html,
    synonyms_parse,
    vocabulary_parse,
)
from console.forms import MemberForm, ProjectForm
from jobs.lifecycle import job_create
from jobs.models import Job, JobKind, JobStatus
from projects.creating import project_create
from projects.models import Membership, Preset, Project, Role
from review.agreement import agreement_compute
from review.models import Decision
from review.resolutions import resolution_record
from tests.conftest import PASSWORD, member
from tests.factories import answer, make_pair
from tests.images import edited_pair, photo_bytes

STRONG_PASSWORD = "a long passphrase nobody guesses"


def _login(client: Client, user) -> Client:
    client.force_login(user)
    return client


def _settings_data(project: Project | None = None, **changes) -> dict:
    """A complete, valid settings form; `changes` overrides fields."""
    data = {
        "name": "Cars",
        "description": "",
        "preset": Preset.MINCU,
        "categories_text": "",
        "overlap": "2",
        "iou_threshold": "0.5",
        "gold_percent": "0",
        "synonyms_text": "",
        "guidelines": "",
        "vocabulary_text": "",
        "show_predictions": "on",
        "licence": "",
    }
    if project is None:
        data["slug"] = "bikes"
    return data | changes


def _zip(files: dict[str, bytes | str]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return SimpleUploadedFile("batch.zip", buffer.getvalue(), content_type="application/zip")


def _annotate(project, user, body) -> None:
    assignment = assignment_lease_next(project=project, user=user)
    assert assignment is not None
    annotation_submit(assignment_id=assignment.pk, user=user, body=body)


def _accepted_pair(project, annotators, box) -> Pair:
    """A pair both annotators answered with the same box on both sides: accepted."""
    pair = make_pair(project)
    for user in annotators:
        _annotate(project, user, answer(boxes_a=[box], boxes_b=[box]))
    agreement_compute(pair_id=pair.pk)
    pair.refresh_from_db()
    assert pair.status == PairStatus.ACCEPTED
    return pair


# --- the text formats ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("attribute", [{"slug": "attribute", "name": "Attribute", "hint": ""}]),
        (
            "noise_level | Noise | grain added\n\n# a comment\nlight | Lighting",
            [
                {"slug": "noise_level", "name": "Noise", "hint": "grain added"},
                {"slug": "light", "name": "Lighting", "hint": ""},
            ],
        ),
        (
            "  ocr-text |  | text changed ",
            [{"slug": "ocr-text", "name": "Ocr text", "hint": "text changed"}],
        ),
    ],
)
def test_custom_categories_are_read_from_lines(text, expected):
    assert categories_parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one category"),
        ("# only a comment", "at least one category"),
        ("Colour | Colour", "line 1: 'Colour' is not a slug"),
        ("colour\nshape\ncolour | Again", "line 3: 'colour' is listed twice"),
        ("a | b | c | d", "line 1: at most three parts"),
        ("-dash", "line 1: '-dash' is not a slug"),
        ("x" * 65, "is not a slug"),
    ],
)
def test_custom_categories_report_the_bad_line(text, message):
    with pytest.raises(ValidationError) as raised:
        categories_parse(text)
    assert message in " ".join(raised.value.messages)


def test_synonyms_are_read_and_variants_equal_to_their_canonical_dropped():
    text = "car: automobile, Cars, sedan\ntruck: lorry\ncar: auto, sedan"
    assert synonyms_parse(text) == {"car": ["automobile", "sedan", "auto"], "truck": ["lorry"]}
    assert synonyms_parse("") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("car automobile", "line 1: write it as canonical: variant, variant"),
        ("car:", "line 1: write it as canonical"),
        (": automobile", "line 1: write it as canonical"),
        ("car: auto\nbus: auto", "line 2: 'auto' already belongs to 'car'"),
        ("car: auto\nauto: vehicle", "line 2: 'auto' is already a variant of 'car'"),
        ("car: van\nvan: lorry", "line 2: 'van' is already a variant of 'car'"),
        ("van: lorry\ncar: van", "line 2: 'van' is a canonical name of its own"),
    ],
)
def test_synonyms_refuse_malformed_and_ambiguous_lines(text, message):
    with pytest.raises(ValidationError) as raised:
        synonyms_parse(text)
    assert message in " ".join(raised.value.messages)


def test_vocabulary_keeps_one_label_per_normalised_name():
    assert vocabulary_parse("car\nCars\n\nthe car\ntraffic light\n") == ["car", "traffic light"]
    with pytest.raises(ValidationError, match="line 2"):
        vocabulary_parse("car\n" + "x" * 201)


def test_guidelines_render_a_safe_markdown_subset():
    text = (
        "# Rules\nCompare **A** and *B*, see `<b>` and [docs](https://x.org/a_b?q=1&r=2).\n\n"
        "- one\n- two\n\n1. first\n2. second\n\n"
        '<script>alert(1)</script> [bad](javascript:alert(1)) <img src=x onerror="y">'
    )
    assert str(guidelines_html(text)) == (
        "<h3>Rules</h3>\n"
        "<p>Compare <strong>A</strong> and <em>B</em>, see <code>&lt;b&gt;</code> and "
        '<a href="https://x.org/a_b?q=1&amp;r=2" rel="nofollow noopener noreferrer">docs</a>.</p>\n'
        "<ul><li>one</li><li>two</li></ul>\n"
        "<ol><li>first</li><li>second</li></ol>\n"
        "<p>&lt;script&gt;alert(1)&lt;/script&gt; [bad](javascript:alert(1)) "
        "&lt;img src=x onerror=&quot;y&quot;&gt;</p>"
    )


# --- the project form ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "valid"),
    [
        ("overlap", "0", False),
        ("overlap", "1", True),
        ("overlap", "10", True),
        ("overlap", "11", False),
        ("iou_threshold", "0", False),
        ("iou_threshold", "0.01", True),
        ("iou_threshold", "1", True),
        ("iou_threshold", "1.01", False),
        ("gold_percent", "-1", False),
        ("gold_percent", "100", True),
        ("gold_percent", "100.5", False),
        ("baseline_percent", "-1", False),
        ("baseline_percent", "25", True),
        ("baseline_percent", "100.5", False),
        ("slug", "Bikes", False),
        ("slug", "bikes_2", True),
        ("slug", "cars", False),  # taken by the project fixture
    ],
)
def test_project_form_checks_ranges_and_slugs(project, field, value, valid):
    form = ProjectForm(_settings_data(**{field: value}))
    assert form.is_valid() is valid, form.errors
    if not valid:
        assert field in form.errors


def test_the_settings_set_the_text_only_baseline_limit_and_blank_keeps_it(db, outsider):
    form = ProjectForm(_settings_data(baseline_percent="25"))
    assert form.is_valid(), form.errors
    project = form.save_new(user=outsider)
    assert project.question_baseline_limit == 0.25
    form = ProjectForm(_settings_data(project, baseline_percent=""), instance=project)
    assert form.is_valid(), form.errors
    form.save_changes()
    project.refresh_from_db()
    assert project.question_baseline_limit == 0.25


def test_custom_taxonomy_needs_valid_category_lines(db):
    form = ProjectForm(_settings_data(preset=Preset.CUSTOM, categories_text=""))
    assert not form.is_valid()
    assert "at least one category" in " ".join(form.errors["categories_text"])

    form = ProjectForm(_settings_data(preset=Preset.CUSTOM, categories_text="glare | Glare"))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["categories"] == [{"slug": "glare", "name": "Glare", "hint": ""}]


def test_creating_a_project_makes_its_creator_lead(db, outsider):
    form = ProjectForm(
        _settings_data(gold_percent="12.5", synonyms_text="car: auto", vocabulary_text="car")
    )
    assert form.is_valid(), form.errors

    project = form.save_new(user=outsider)

    project.refresh_from_db()
    assert (project.slug, project.created_by, project.gold_rate) == ("bikes", outsider, 0.125)
    assert project.entity_synonyms == {"car": ["auto"]}
    assert project.entity_vocabulary == ["car"]
    assert project.category_slugs == ["attribute", "object", "counting", "relation"]
    assert Membership.objects.get(project=project, user=outsider).role == Role.LEAD


def test_editing_cannot_drop_a_category_pairs_use(project):
    make_pair(project, category="counting")
    form = ProjectForm(
        _settings_data(project, preset=Preset.CUSTOM, categories_text="attribute"),
        instance=project,
    )
    assert not form.is_valid()
    assert "use counting" in " ".join(form.errors["categories_text"])


# --- the member form -------------------------------------------------------------------------


def test_member_form_adds_an_existing_account_without_a_password(project, outsider):
    form = MemberForm({"username": "outsider", "role": "annotator"}, project=project)
    assert form.is_valid(), form.errors
    form.save()
    assert Membership.objects.get(project=project, user=outsider).role == Role.ANNOTATOR
    outsider.refresh_from_db()
    assert outsider.check_password(PASSWORD)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"username": "nobody", "role": "lead"}, "username", "no account named 'nobody'"),
        (
            {"username": "outsider", "role": "lead", "password": STRONG_PASSWORD},
            "password",
            "already has an account",
        ),
        ({"username": "newbie", "role": "lead", "password": "1234"}, "password", "too short"),
        ({"username": "lead", "role": "annotator"}, "username", "already a member"),
        ({"username": "Outsider", "role": "lead"}, "username", "did you mean outsider?"),
        ({"username": "bad name!", "role": "lead"}, "username", "Enter a valid username"),
        ({"username": "outsider", "role": "owner"}, "role", "Select a valid choice"),
    ],
)
def test_member_form_refuses(project, lead, outsider, data, field, message):
    form = MemberForm(data, project=project)
    assert not form.is_valid()
    assert message in " ".join(form.errors[field])


def test_member_form_creates_a_new_account_only_with_a_password(project):
    form = MemberForm(
        {"username": "newbie", "role": "researcher", "password": STRONG_PASSWORD}, project=project
    )
    assert form.is_valid(), form.errors
    form.save()
    user = get_user_model().objects.get(username="newbie")
    assert user.check_password(STRONG_PASSWORD)
    assert Membership.objects.get(project=project, user=user).role == Role.RESEARCHER


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


def test_project_page_shows_leads_the_manage_links_and_annotators_none(
    client, project, lead, annotator_1
):
    manage = [
        reverse("console:project_settings", args=["cars"]),
        reverse("console:members", args=["cars"]),
        reverse("console:upload", args=["cars"]),
        reverse("console:jobs", args=["cars"]),
        reverse("review:disputes", args=["cars"]),
        reverse("review:spot_check", args=["cars"]),
        "/review/cars/dashboard/",
    ]
    body = _login(client, lead).get("/p/cars/").content.decode()
    assert all(f'href="{url}"' in body for url in manage)
    client.logout()
    body = _login(client, annotator_1).get("/p/cars/").content.decode()
    assert not any(f'href="{url}"' in body for url in manage)


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


# --- the pairs browser -----------------------------------------------------------------------


def _pair_links(body: str) -> set[int]:
    return {int(pk) for pk in re.findall(r'class="pair-tile" href="/pairs/(\d+)/"', body)}


def test_pairs_browser_filters(client, project, lead, annotator_1, annotator_2):
    easy = _accepted_pair(project, [annotator_1, annotator_2], [0, 0, 96, 64])
    hard = _accepted_pair(project, [annotator_1, annotator_2], [20, 10, 40, 30])
    hinted = make_pair(project, category="counting")
    flagged = make_pair(project)
    Prediction.objects.create(pair=flagged, model_name="diff", flags=["tiny_change", "blur"])
    Prediction.objects.create(pair=hinted, model_name="diff", flags=["tiny"])
    leased = make_pair(project)
    Assignment.objects.create(pair=leased, annotator=lead, expires_at="2999-01-01T00:00Z")
    _login(client, lead)

    def shown(query: str) -> set[int]:
        response = client.get(f"/p/cars/?{query}")
        assert response.status_code == 200
        return _pair_links(response.content.decode())

    everything = {easy.pk, hard.pk, hinted.pk, flagged.pk, leased.pk}
    assert shown("") == everything
    assert shown("status=accepted") == {easy.pk, hard.pk}
    assert shown("difficulty=easy") == {easy.pk}
    assert shown("difficulty=hard&status=accepted") == {hard.pk}
    assert shown("difficulty=medium") == set()
    assert shown("category=counting") == {hinted.pk}
    assert shown("category=attribute") == {easy.pk, hard.pk}  # from the annotations' changes
    assert shown("flag=tiny") == {hinted.pk}
    assert shown("flag=tiny_change") == {flagged.pk}
    assert shown("annotator=annotator_2") == {easy.pk, hard.pk}
    assert shown("annotator=lead") == {leased.pk}
    assert shown("status=bogus&difficulty=impossible") == everything  # unknown values: ignored


def test_pairs_browser_keeps_filters_across_pages(client, project, lead):
    for _ in range(49):
        make_pair(project)
    body = _login(client, lead).get("/p/cars/?status=imported").content.decode()
    assert "Page 1 of 2" in body
    assert 'href="?status=imported&amp;page=2"' in body
    second = client.get("/p/cars/?status=imported&page=2").content.decode()
    assert len(_pair_links(second)) == 1


def test_tiles_show_the_difficulty_of_accepted_pairs(
    client, project, lead, annotator_1, annotator_2
):
    _accepted_pair(project, [annotator_1, annotator_2], [0, 0, 96, 64])
    body = _login(client, lead).get("/p/cars/").content.decode()
    assert '<span class="badge diff-easy"' in body


# --- a pair's history ------------------------------------------------------------------------


def test_pair_history_shows_leads_everything_that_happened(
    client, project, lead, annotator_1, annotator_2
):
    pair = make_pair(project)
    _annotate(project, annotator_1, answer(entity_a="red patch"))
    _annotate(project, annotator_2, answer(tier="good", entity_a="patch"))
    agreement_compute(pair_id=pair.pk)
    resolution_record(
        pair_id=pair.pk, lead=lead, decision=Decision.ACCEPT_1, comment="Box 1 is tighter."
    )

    body = _login(client, lead).get(f"/pairs/{pair.pk}/").content.decode()

    for text in (
        "annotator_1",
        "annotator_2",
        "Excellent",
        "Good",
        "red patch",  # annotation 1's entity
        "tier:one_good",  # the agreement's reason
        "Accept annotation 1</strong> by lead",
        "disputed → accepted",
        "Box 1 is tighter.",
        '<span class="event-kind">leased</span>',
        '<span class="event-kind">resolution:accept_1</span>',
        '<rect class="mark-1" x="20" y="10" width="20" height="20"',
    ):
        assert text in body, text
    assert body.count('<span class="badge lease-submitted">') == 2


def test_an_annotator_with_a_lease_sees_no_other_annotation(
    client, project, lead, annotator_1, annotator_2
):
    pair = make_pair(project)
    _annotate(project, annotator_1, answer(description="Only annotator one wrote this."))
    assignment_lease_next(project=project, user=annotator_2)

    body = _login(client, annotator_2).get(f"/pairs/{pair.pk}/").content.decode()

    assert "Only annotator one wrote this." not in body
    assert "annotator_1" not in body
    assert "History" not in body and "mark-1" not in body


def test_pairs_browser_searches_id_instruction_and_entity(
    client, project, lead, annotator_1, annotator_2
):
    boxed = _accepted_pair(project, [annotator_1, annotator_2], [20, 10, 40, 30])  # entity "patch"
    told = make_pair(project, instruction="Make the sky purple")
    named = make_pair(project, external_id="street-0042")
    _login(client, lead)

    def shown(query: str) -> set[int]:
        return _pair_links(client.get(f"/p/cars/?{query}").content.decode())

    assert shown("q=PURPLE") == {told.pk}
    assert shown("q=patch") == {boxed.pk}
    assert shown("q=street-00") == {named.pk}
    assert shown(f"q={told.pk}") >= {told.pk}
    assert shown("q=nothing-like-this") == set()
    assert shown("q=patch&status=imported") == set()  # with the other filters
    body = client.get("/p/cars/?q=purple").content.decode()
    assert 'value="purple"' in body and "Clear filters" in body  # kept in the box


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
