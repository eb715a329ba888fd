"""A release refused for its questions names the pairs to fix; the releases page links each one,
by its short name, to its question."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from pairdiff.release.options import ReleaseOptions
from pairdiff.release.splits import SplitPlan
from releases import building
from releases.building import ReleaseRefused, release_register
from releases.failing import release_fail
from tests.factories import answer, make_accepted


def _built(records, telling):
    gate = {"over_limit": True, "best": "length", "best_accuracy": 0.9, "limit": 0.5}
    report = {"text_baselines": {"gate": gate, "telling": telling}}
    return SimpleNamespace(records=records, report=report)


def test_the_refusal_names_the_pairs_behind_the_telling_questions():
    records = [{"id": "kitchen_03", "pair_id": 7}, {"id": "pair-9", "pair_id": 9}]
    built = _built(records, {"pair-9": ["length"], "kitchen_03": ["length", "words"]})

    with pytest.raises(ReleaseRefused) as refused:
        building._refuse_telling_questions(built, ReleaseOptions())

    assert refused.value.pairs == [9, 7]  # in the order the message names them
    assert "Fix the questions of pair-9, kitchen_03 on the questions page" in str(refused.value)


def test_the_releases_page_links_each_pair_to_fix_to_its_question(
    client, project, annotator_1, annotator_2, lead
):
    first, second = make_accepted(project, [annotator_1, annotator_2], [answer(), answer()])
    release = release_register(project=project, name="v1", plan=SplitPlan(), user=lead)
    release_fail(release, default_storage, "too easy", pairs=[second.pk, first.pk])

    client.force_login(lead)
    page = client.get(reverse("releases:releases", args=[project.slug])).content.decode()

    links = [
        f'<a href="{reverse("releases:question", args=[pair.pk])}">{pair.name}</a>'
        for pair in (second, first)
    ]
    assert f"Questions to fix: {links[0]}, {links[1]}" in page
    assert first.name == f"#{first.number}" and first.number == 1
