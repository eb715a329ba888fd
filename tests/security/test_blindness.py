"""Annotators are blind: on every page and endpoint they can reach they see the images, the
instruction and their own work — never a verdict, an agreement figure, a gold answer, a category
hint, the metadata of the edit, or another annotator's work.

The walk covers a pair the annotator holds (another annotator already answered it), a pair they
submitted (cross-checked: disputed) and a gold pair they submitted (scored). To cover a new page
or endpoint, add its URL to ``annotator_urls``.
"""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next
from annotator.models import Assignment, PairStatus
from annotator.submitting import annotation_submit
from review.agreement import agreement_compute, gold_score_compute
from tests.factories import answer, make_pair

# Words only someone else's work, a gold answer or the edit metadata contain.
OTHER = "zebra"  # annotator_2's entity and description
GOLD = "giraffe"  # the known answer of the gold pair
EDIT = {"edit": "add_noise", "sigma": 9.61, "generator": "okapi-synth"}
HINT = "object"  # the category hint of every pair (the gold category on the gold pair)
SECRET_WORDS = [OTHER, GOLD, "add_noise", "9.61", "okapi-synth"]
# What a verdict or an agreement figure looks like on a page.
SECRET_HTML = [
    r"st-(accepted|disputed|rejected)\b",
    r">\s*(Accepted|Disputed|Rejected)\s*<",
    r"Category hint",
    r"mean IoU",
    r"Known answer",
    r"badge gold",
    r"gold \d\.\d\d",
]
# What they look like in a JSON body (keys, and values of a pair's status).
SECRET_KEYS = {
    "category_hint",
    "metadata",
    "is_gold",
    "gold",
    "agreement",
    "accepted",
    "disputed",
    "rejected",
    "accepted_by",
    "mean_iou",
    "reasons",
    "gold_score",
}


def _submit(user, pair_id: int, body: dict):
    assignment = Assignment.objects.get(pair_id=pair_id, annotator=user)
    return annotation_submit(assignment_id=assignment.pk, user=user, body=body)[0]


@pytest.fixture
def world(project, annotator_1, annotator_2, lead):
    other = answer(
        category=HINT, entity_a=OTHER, entity_b=OTHER, description=f"A {OTHER} appeared."
    )
    mine = answer(boxes_b=[[50, 30, 70, 50]])  # disagrees with `other`: a dispute
    fields = {"category": HINT, "metadata": EDIT, "instruction": "add a little noise"}

    held = make_pair(project, **fields)
    for user, body in ((annotator_2, other), (annotator_1, mine)):
        assignment_lease_next(project=project, user=user)
        _submit(user, held.pk, body)
    agreement_compute(pair_id=held.pk)
    held.refresh_from_db()
    assert held.status == PairStatus.DISPUTED

    gold = make_pair(project, **fields)
    known = answer(category=HINT, entity_a=GOLD, entity_b=GOLD, description=f"A {GOLD} left.")
    gold_answer_set(pair=gold, changes=known["changes"], source="synthetic")
    project.gold_rate = 1.0
    project.save(update_fields=["gold_rate"])
    gold_lease = assignment_lease_next(project=project, user=annotator_1)
    assert gold_lease.pair_id == gold.pk
    gold_score_compute(annotation_id=_submit(annotator_1, gold.pk, mine).pk)
    project.gold_rate = 0.0
    project.save(update_fields=["gold_rate"])

    holding = make_pair(project, **fields)
    assignment_lease_next(project=project, user=annotator_2)
    _submit(annotator_2, holding.pk, other)
    lease = assignment_lease_next(project=project, user=annotator_1)
    assert lease.pair_id == holding.pk
    return {
        "project": project,
        "held": held,
        "gold": gold,
        "gold_lease": gold_lease,
        "holding": holding,
        "lease": lease,
        "held_assignment": Assignment.objects.get(pair=held, annotator=annotator_1),
        "annotator": annotator_1,
    }


def annotator_urls(world) -> list[tuple[str, str]]:
    """Every page and endpoint an annotator can reach about these pairs and their project."""
    slug = world["project"].slug
    pairs = [world[name].pk for name in ("held", "gold", "holding")]
    assignments = [world["lease"].pk, world["held_assignment"].pk, world["gold_lease"].pk]
    urls = [
        ("GET", "/"),
        ("GET", f"/p/{slug}/"),
        ("POST", f"/p/{slug}/next/"),
        ("GET", "/api/v1/projects/"),
        ("GET", f"/api/v1/projects/{slug}/"),
        ("POST", f"/api/v1/projects/{slug}/next/"),
        ("GET", f"/api/v1/projects/{slug}/pairs/"),
        ("GET", f"/api/v1/projects/{slug}/disputes/"),
        ("GET", f"/api/v1/projects/{slug}/agreement/"),
        ("GET", f"/api/v1/projects/{slug}/releases/"),
        ("GET", f"/review/{slug}/disputes/"),
        ("GET", f"/review/{slug}/spot-check/"),
        ("GET", f"/review/{slug}/dashboard/"),
        ("GET", f"/review/{slug}/releases/"),
        ("GET", f"/review/{slug}/questions/"),
        ("GET", f"/p/{slug}/jobs/"),
        ("POST", f"/p/{slug}/ahead/"),
        ("GET", "/account/tokens/"),
    ]
    for pk in pairs:
        urls += [
            ("GET", f"/pairs/{pk}/"),
            ("GET", f"/api/v1/pairs/{pk}/"),
            ("GET", f"/review/pairs/{pk}/"),
            ("GET", f"/review/pairs/{pk}/question/"),
        ]
    for pk in assignments:
        urls += [
            ("GET", f"/a/{pk}/"),
            ("PUT", f"/api/v1/assignments/{pk}/draft/"),
            ("POST", f"/api/v1/assignments/{pk}/submit/"),
            # Gold feedback is a project setting, off by default (and in this walk).
            ("GET", f"/review/assignments/{pk}/gold-feedback/"),
        ]
    return urls


def _secret_pattern(word: str) -> str:
    if re.fullmatch(r"[\d.]+", word):
        return rf"(?<![\d.]){re.escape(word)}(?![\d])"
    return re.escape(word)


def leaks(body: str) -> list[str]:
    """What in a response body an annotator must not see."""
    # A number counts whole: "9.61" inside a timestamp's "29.619" is no leak.
    found = [w for w in SECRET_WORDS if re.search(_secret_pattern(w), body)]
    found += [pattern for pattern in SECRET_HTML if re.search(pattern, body)]
    try:
        data = json.loads(body)
    except ValueError:
        return found
    return found + sorted(_secret_keys(data))


def _secret_keys(data: object) -> set[str]:
    if isinstance(data, dict):
        found = {key for key in data if key in SECRET_KEYS}
        for value in data.values():
            found |= _secret_keys(value)
        if data.get("status") in ("accepted", "disputed", "rejected"):
            found.add(f"status={data['status']}")
        return found
    if isinstance(data, list):
        return set().union(*(_secret_keys(item) for item in data)) if data else set()
    return set()


@pytest.mark.django_db
def test_an_annotator_sees_no_verdict_hint_metadata_gold_answer_or_others_work(world):
    client = Client()
    client.force_login(world["annotator"])
    body = json.dumps(answer())  # the draft and submit of their own answer
    found = {}
    for method, url in annotator_urls(world):
        response = client.generic(method, url, body, content_type="application/json")
        assert response.status_code < 500, (method, url)
        pages = [response]
        if response.status_code in (301, 302):
            pages.append(client.get(response["Location"]))
        for page in pages:
            readable = page.get("Content-Type", "").startswith(("text/", "application/json"))
            if readable and (problems := leaks(page.content.decode())):
                found[f"{method} {url}"] = problems
    assert found == {}


@pytest.mark.django_db
def test_the_walk_would_see_a_leak(world, lead):
    """The same walk as the lead finds what annotators must not see: the checks can fail."""
    client = Client()
    client.force_login(lead)
    held = world["held"].pk
    assert leaks(client.get(f"/pairs/{held}/").content.decode())
    assert "accepted_by" in leaks(client.get("/api/v1/projects/cars/").content.decode())
    assert "metadata" in leaks(client.get(f"/api/v1/pairs/{held}/").content.decode())


@pytest.mark.django_db
def test_the_submit_of_a_gold_pair_answers_with_the_annotators_own_work(world, annotator_2):
    project = world["project"]
    project.gold_rate = 1.0
    project.save(update_fields=["gold_rate"])
    gold_lease = assignment_lease_next(project=project, user=annotator_2)
    assert gold_lease.pair_id == world["gold"].pk
    client = Client()
    client.force_login(annotator_2)

    response = client.post(
        f"/api/v1/assignments/{gold_lease.pk}/submit/",
        json.dumps(answer()),
        content_type="application/json",
    )
    annotation = response.json()["annotation"]
    gold_score_compute(annotation_id=annotation["id"])

    assert response.status_code == 201
    assert annotation["changes"] == answer()["changes"]
    assert leaks(response.content.decode()) == []
    assert leaks(client.get(f"/pairs/{gold_lease.pair_id}/").content.decode()) == []
