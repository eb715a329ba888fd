"""Every page and API endpoint × every role, anonymous included.

A new URL without a row here fails `test_every_url_is_in_the_matrix`, so roles are decided,
not forgotten. Annotators never reach another person's work (404, as if it did not exist).
"""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from accounts.services import token_create
from annotator.leasing import assignment_lease_next
from jobs.models import Job
from releases.models import Release, ReleaseStatus
from review.models import Decision
from review.resolutions import resolution_record
from tests.factories import answer, make_pair
from webhooks.models import Endpoint
from webhooks.services import endpoint_test

ROLES = ("anonymous", "outsider", "annotator_1", "researcher", "lead")
LOGIN = 302
PUBLIC = {"login", "logout", "api:token", "api:schema", "api:docs"}


def _page(anonymous=LOGIN, outsider=404, annotator_1=403, researcher=403, lead=200):
    return dict(zip(ROLES, (anonymous, outsider, annotator_1, researcher, lead), strict=True))


def _api(anonymous=401, outsider=404, annotator_1=403, researcher=403, lead=200):
    return dict(zip(ROLES, (anonymous, outsider, annotator_1, researcher, lead), strict=True))


NOT_YOURS_PAGE = _page(annotator_1=404, researcher=404, lead=404)
NOT_YOURS_API = _api(annotator_1=404, researcher=404, lead=404)
LEADS_SEE_PAIRS = _page(annotator_1=404, researcher=404)

# (url name, method, which object the kwargs point at, expected status per role)
MATRIX = [
    ("annotator:home", "get", None, _page(outsider=200, annotator_1=200, researcher=200)),
    ("console:project", "get", "slug", _page(annotator_1=200, researcher=200)),
    ("annotator:lease_next", "post", "slug", _page(annotator_1=302, lead=302)),
    ("annotator:lease_ahead", "post", "slug", _page(annotator_1=200, lead=200)),
    ("annotator:workspace", "get", "assignment", NOT_YOURS_PAGE),
    ("annotator:annotation_edit", "post", "assignment", NOT_YOURS_PAGE),
    ("console:pair", "get", "pair", LEADS_SEE_PAIRS),
    ("annotator:pair_image", "get", "pair_side", LEADS_SEE_PAIRS),
    ("annotator:pair_thumb", "get", "pair_side", LEADS_SEE_PAIRS),
    ("console:project_new", "get", None, _page(outsider=403)),
    ("console:project_settings", "get", "slug", _page()),
    ("console:members", "get", "slug", _page()),
    ("console:member_role", "post", "member", _page(lead=302)),
    ("console:member_remove", "post", "member", _page(lead=302)),
    ("console:upload", "get", "slug", _page()),
    ("console:upload_pair", "post", "slug", _page(lead=400)),
    ("console:upload_synthesize", "post", "slug", _page(lead=400)),  # no zip sent
    ("console:jobs", "get", "slug", _page()),
    ("console:screening", "get", "slug", _page()),
    ("console:job", "get", "job", _page()),
    ("console:job_cancel", "post", "job", _page(lead=302)),
    ("console:preannotate", "post", "slug", _page(lead=302)),
    ("console:webhooks", "get", "slug", _page()),
    ("console:webhook_test", "post", "webhook", _page(lead=302)),
    ("console:webhook_delete", "post", "webhook", _page(lead=302)),
    ("console:webhook_redeliver", "post", "delivery", _page(lead=302)),
    ("review:disputes", "get", "slug", _page()),
    ("review:spot_check", "get", "slug", _page()),
    ("review:dashboard", "get", "slug", _page()),
    ("review:adjudicate", "get", "pair", _page()),
    ("review:gold_feedback", "get", "assignment", NOT_YOURS_PAGE),
    ("releases:releases", "get", "slug", _page(researcher=200)),
    ("releases:release", "get", "release", _page(annotator_1=404, researcher=200)),
    ("releases:release_retry", "post", "release", _page(lead=302)),  # refused: not failed
    # no file sent: a message and back to the release page, for those who may score
    (
        "releases:release_evaluate",
        "post",
        "release",
        _page(annotator_1=404, researcher=302, lead=302),
    ),  # noqa: E501
    ("releases:questions", "get", "slug", _page()),
    ("releases:question", "post", "accepted", _page(lead=400)),  # no negatives given
    ("accounts:tokens", "get", None, _page(outsider=200, annotator_1=200, researcher=200)),
    # the token is the researcher's: nobody else can tell it exists
    ("accounts:token_revoke", "post", "token", _page(annotator_1=404, researcher=302, lead=404)),
    ("api:project-list", "get", None, _api(outsider=200, annotator_1=200, researcher=200)),
    ("api:project-detail", "get", "slug", _api(annotator_1=200, researcher=200)),
    ("api:project-pairs", "get", "slug", _api()),
    ("api:project-imports", "post", "slug", _api(lead=415)),  # multipart only
    ("api:project-synthesize", "post", "slug", _api(lead=415)),  # multipart only
    ("api:pair-detail", "get", "pair", _api(annotator_1=404, researcher=404)),
    ("api:job-detail", "get", "job", _api(annotator_1=404, researcher=404)),
    ("api:project-disputes", "get", "slug", _api()),
    ("api:project-agreement", "get", "slug", _api()),
    ("api:pair-resolution", "post", "pair", _api(lead=400)),
    ("api:project-predictions", "post", "slug", _api(lead=400)),
    ("api:project-preannotate", "post", "slug", _api(lead=400)),
    ("api:lease-next", "post", "slug", _api(annotator_1=200, lead=200)),
    ("api:project-releases", "get", "slug", _api(annotator_1=200, researcher=200)),  # none listed
    ("api:release-detail", "get", "release", _api(annotator_1=404, researcher=200)),
    ("api:release-file", "get", "release_file", _api(annotator_1=404, researcher=200)),
    ("api:release-records", "get", "release", _api(annotator_1=404, researcher=200)),
    ("api:release-evaluations", "get", "release", _api(annotator_1=404, researcher=200)),
    # multipart only: a JSON body is refused once the caller may score (researchers, leads)
    ("api:release-evaluations", "post", "release", _api(annotator_1=404, researcher=415, lead=415)),
    ("api:project-webhooks", "get", "slug", _api()),
    ("api:project-webhooks", "post", "slug", _api(lead=400)),  # no URL given
    ("api:project-webhook", "get", "webhook", _api()),
    ("api:project-webhook", "delete", "webhook", _api(lead=204)),
    ("api:webhook", "get", "webhook_id", _api()),
    ("api:webhook", "delete", "webhook_id", _api(lead=204)),
    ("api:project-webhook-test", "post", "webhook", _api(lead=202)),
    ("api:project-webhook-deliveries", "get", "webhook", _api()),
    ("api:project-webhook-redeliver", "post", "delivery", _api(lead=202)),
    ("api:assignment-draft", "put", "assignment", NOT_YOURS_API),
    ("api:assignment-submit", "post", "assignment", NOT_YOURS_API),
    ("api:assignment-skip", "post", "assignment", NOT_YOURS_API),
]


def _names(resolver=None, namespace: str = "") -> set[str]:
    names = set()
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            if entry.namespace != "admin":
                names |= _names(entry, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            names.add(f"{namespace}{entry.name}")
    return names


def test_every_url_is_in_the_matrix():
    assert _names() - PUBLIC == {name for name, *_ in MATRIX}


@pytest.fixture
def objects(project, annotator_1, annotator_2, researcher, lead):
    pair = make_pair(project)
    make_pair(project)
    # annotator_2's lease: nobody else may see or touch it, not even a lead
    assignment = assignment_lease_next(project=project, user=annotator_2)
    job = Job.objects.create(kind="import", project=project, created_by=lead)
    accepted = make_pair(project)
    resolution_record(pair_id=accepted.pk, lead=lead, decision=Decision.MERGE, answer=answer())
    release = Release.objects.create(
        project=project,
        name="v1",
        version=1,
        status=ReleaseStatus.READY,
        manifest={"files": {"README.md": {"size": 9, "sha256": "0" * 64}}},
    )
    default_storage.save(f"{release.prefix}/README.md", ContentFile(b"# v1\n\nOK\n"))
    token, _ = token_create(user=researcher, name="laptop")
    # made as it is stored: the address check has tests of its own (tests/webhooks)
    hook = Endpoint.objects.create(
        project=project, url="http://127.0.0.1:8159/", events=["release.ready"], secret="s"
    )
    delivery = endpoint_test(endpoint=hook)
    return {
        "slug": {"slug": project.slug},
        "pair": {"pk": pair.pk},
        "pair_side": {"pk": pair.pk, "side": "a"},
        "assignment": {"pk": assignment.pk},
        "member": {"slug": project.slug, "user_id": researcher.pk},
        "job": {"pk": job.pk},
        "accepted": {"pk": accepted.pk},
        "release": {"pk": release.pk},
        "release_file": {"pk": release.pk, "name": "README.md"},
        "token": {"pk": token.pk},
        "webhook": {"slug": project.slug, "pk": hook.pk},
        "webhook_id": {"pk": hook.pk},
        "delivery": {"slug": project.slug, "pk": hook.pk, "delivery": delivery.uuid},
        None: {},
    }


@pytest.mark.parametrize(
    ("name", "method", "target", "expected"), MATRIX, ids=[m[0] for m in MATRIX]
)
@pytest.mark.parametrize("role", ROLES)
def test_role_matrix(request, objects, name, method, target, expected, role):
    client = APIClient()
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    url = reverse(name, kwargs=objects[target])

    response = (
        getattr(client, method)(url, {}, format="json") if method != "get" else client.get(url)
    )

    assert response.status_code == expected[role], f"{role} {method.upper()} {url}"
