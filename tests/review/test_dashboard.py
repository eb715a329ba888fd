"""The leads' quality dashboard: figures hand-computed on small real data, and who may see it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotator.intake.gold import gold_answer_set
from annotator.leasing import assignment_lease_next
from annotator.models import Pair
from annotator.submitting import annotation_submit
from projects.models import Role
from review.dashboard import project_quality
from review.models import Decision
from review.resolutions import resolution_record
from tests.conftest import PASSWORD, member
from tests.factories import answer, make_pair

SHIFTED = [[22, 12, 42, 32]]  # IoU with the default [20, 10, 40, 30] box: 324 / 476 = 81/119


def annotate(project, user, body: dict, *, seconds: float) -> None:
    """Lease the caller's next pair and submit; the cross-check and gold scoring run on commit."""
    assignment = assignment_lease_next(project=project, user=user)
    assert assignment is not None
    annotation_submit(
        assignment_id=assignment.pk, user=user, body=body | {"time_spent_ms": int(seconds * 1000)}
    )


def seed(project, first, second, capture) -> dict[str, Pair]:
    """Five cross-checked pairs, one gold, and one nobody has touched.

    tiers (1st, 2nd)  verdict    mean IoU        categories of matched changes
    p1  E, E          accepted   1               attribute, attribute
    p2  E, G          disputed   (81/119 + 1)/2  attribute, attribute
    p3  F, F          rejected   None (no box)   —
    p4  E, E          disputed   1               attribute, object; 2nd lists one more change
    g   E, E (gold)   disputed   (81/119 + 1)/2  object, attribute
    """
    extra = {
        "category": "counting",
        "description": "A second patch appeared.",
        "entity_a": "",
        "entity_b": "patch",
        "boxes_a": [],
        "boxes_b": [[50, 30, 90, 60]],
    }
    two_changes = answer(category="object")
    two_changes["changes"].append(extra)
    plan = [
        ("p1", answer(), 10, answer(), 5),
        ("p2", answer(), 20, answer(tier="good", boxes_a=SHIFTED), 5),
        ("p3", {"tier": "fair", "changes": []}, 30, {"tier": "fair", "changes": []}, 20),
        ("p4", answer(), 60, two_changes, 0),
    ]
    pairs = {}
    for name, body_1, seconds_1, body_2, seconds_2 in plan:
        pairs[name] = make_pair(project, external_id=name)
        with capture(execute=True):
            annotate(project, first, body_1, seconds=seconds_1)
        with capture(execute=True):
            annotate(project, second, body_2, seconds=seconds_2)
    pairs["g"] = make_pair(project, external_id="g")
    gold_answer_set(pair=pairs["g"], changes=answer()["changes"])
    project.gold_rate = 1.0
    project.save()
    with capture(execute=True):
        annotate(project, first, answer(category="object"), seconds=40)
    with capture(execute=True):
        annotate(project, second, answer(boxes_a=SHIFTED), seconds=15)
    pairs["untouched"] = make_pair(project, external_id="untouched")
    return pairs


@pytest.fixture
def seeded(project, annotator_1, annotator_2, django_capture_on_commit_callbacks):
    return seed(project, annotator_1, annotator_2, django_capture_on_commit_callbacks)


def test_progress_counts_pairs_by_status(project, seeded):
    quality = project_quality(project=project)

    assert quality.status_counts == {
        "imported": 1,
        "pre_annotated": 0,
        "in_annotation": 0,
        "accepted": 1,
        "disputed": 3,
        "rejected": 1,
        "screened_out": 0,
    }
    assert (quality.total, quality.gold_pairs) == (6, 1)


def test_agreement_figures_on_tiers_and_boxes(project, seeded):
    quality = project_quality(project=project)

    assert quality.verdicts == {"accepted": 1, "disputed": 3, "rejected": 1}
    # p2 and p3 fail on tiers; p4 on category and its extra change; g on category.
    assert quality.reasons == {"category": 2, "tiers": 2, "missing change": 1}
    assert quality.agreement_rate == pytest.approx(1 / 5)
    # Quadratic kappa: observed disagreement 1/5 · 1/9 over expected 33/225.
    assert quality.kappa == pytest.approx(28 / 33)
    # Ordinal alpha: coincidences o(E,E)=6, o(E,G)=o(G,E)=1, o(F,F)=2; n = 10;
    # δ²(E,G)=16, δ²(E,F)=30.25, δ²(G,F)=2.25 → 1 − 9 · 32 / 1080.
    assert quality.alpha == pytest.approx(11 / 15)
    # Mean of the per-pair means, p3 (no box) left out: (1 + 100/119 + 1 + 100/119) / 4.
    assert quality.mean_iou == pytest.approx(219 / 238)
    assert quality.tiers.counts == [[3, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]]
    assert quality.tiers.labels == ["Excellent", "Good", "Fair", "Poor"]
    assert (quality.kappa_band, quality.alpha_band) == ("almost perfect", "tentative")


def test_category_confusion_counts_matched_changes(project, seeded):
    quality = project_quality(project=project)

    grid = quality.categories
    assert grid.keys == ["attribute", "object", "counting", "relation"]
    assert grid.counts[0] == [2, 1, 0, 0]  # 1st said attribute: twice the 2nd too, once object
    assert grid.counts[1] == [1, 0, 0, 0]  # the gold pair: object, then attribute
    assert (grid.total, grid.agreeing, quality.unmatched_changes) == (4, 2, 1)


def test_figures_per_annotator(project, seeded, annotator_1, annotator_2):
    idle = member(project, "annotator_3", Role.ANNOTATOR)

    quality = project_quality(project=project)

    first, second, third = quality.annotators
    assert (first.username, first.pairs, first.cross_checked, first.accepted) == (
        "annotator_1",
        5,
        5,
        1,
    )
    assert (first.median_time_ms, first.mean_time_ms) == (30_000, 32_000)  # 10 20 30 40 60 s
    assert (first.gold_answered, first.gold_passed, first.gold_accuracy) == (1, 0, 0.0)
    assert first.gold_mean_score == pytest.approx(2 / 3)  # boxes right, category wrong
    # 0 ms means "not measured": 5 5 15 20 s are timed, p4 is not.
    assert (second.pairs, second.timed, second.median_time_ms) == (5, 4, 10_000)
    assert second.mean_time_ms == pytest.approx(11_250)
    assert (second.agreement_rate, second.gold_accuracy) == (pytest.approx(0.2), 1.0)
    assert second.gold_mean_score == pytest.approx((81 / 119 + 1 + 1) / 3)
    assert (third.user_id, third.pairs, third.agreement_rate, third.median_time_ms) == (
        idle.pk,
        0,
        None,
        None,
    )


def test_difficulty_uses_the_consensus_or_the_standing_lead_answer(project, seeded, lead):
    merged = answer(boxes_a=[[0, 0, 60, 40]])["changes"]  # 2400 / 6144 of A: easy
    resolution_record(
        pair_id=seeded["p2"].pk, lead=lead, decision=Decision.MERGE, answer={"changes": merged}
    )
    # Annotation 2 of p4: the larger box is 40×30 on B, 1200 / 6144 = 19.5%: medium.
    resolution_record(pair_id=seeded["p4"].pk, lead=lead, decision=Decision.ACCEPT_2)

    quality = project_quality(project=project)

    # p1's consensus: 20×20 boxes, 400 / 6144 = 6.5%: hard.
    assert quality.difficulty == {"easy": 1, "medium": 1, "hard": 1}
    assert quality.without_boxes == 0
    assert quality.agreement_rate == pytest.approx(1 / 5)  # lead decisions leave it alone


def test_difficulty_measures_each_side_in_its_own_frame(
    project, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    make_pair(project, size_b=(48, 32))
    # 40×30 is 19.5% of A's 96×64 (medium) but 78% of B's 48×32 (easy).
    body = answer(boxes_a=[[20, 10, 40, 30]], boxes_b=[[0, 0, 40, 30]])
    for user in (annotator_1, annotator_2):
        with django_capture_on_commit_callbacks(execute=True):
            annotate(project, user, body, seconds=10)

    quality = project_quality(project=project)

    assert quality.difficulty == {"easy": 1, "medium": 0, "hard": 0}


def test_a_new_project_has_empty_figures(project, annotator_1):
    quality = project_quality(project=project)

    assert quality.total == 0 and quality.cross_checked == 0
    assert (quality.agreement_rate, quality.kappa, quality.alpha, quality.mean_iou) == (None,) * 4
    assert quality.tiers.total == 0 and quality.categories.total == 0
    assert quality.difficulty == {"easy": 0, "medium": 0, "hard": 0}
    assert [(a.username, a.pairs) for a in quality.annotators] == [("annotator_1", 0)]


def test_with_overlap_one_there_is_nothing_to_cross_check(
    project, annotator_1, django_capture_on_commit_callbacks
):
    project.overlap = 1
    project.save()
    make_pair(project)
    with django_capture_on_commit_callbacks(execute=True):
        annotate(project, annotator_1, answer(), seconds=10)

    quality = project_quality(project=project)

    assert quality.status_counts["accepted"] == 1 and quality.difficulty["hard"] == 1
    assert quality.cross_checked == 0 and quality.annotators[0].cross_checked == 0


def test_the_page_shows_the_figures_to_a_lead(
    client, project, seeded, lead, django_assert_max_num_queries
):
    client.force_login(lead)

    # session, user, project, role, seven figures, the screening events, and whether the
    # project has stored pair counts (issue 28: large projects read them)
    with django_assert_max_num_queries(14):
        response = client.get("/review/cars/dashboard/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "20<small>%</small>" in page  # agreement rate
    assert "0.85" in page and "0.73" in page and "0.92" in page  # kappa, alpha, mean IoU
    assert "1 of 5 cross-checked pairs accepted" in page
    assert "annotator_1" in page and "annotator_2" in page
    assert "3 disputed pairs await a lead" in page


def test_the_query_count_does_not_grow_with_the_project(
    client,
    project,
    lead,
    annotator_1,
    annotator_2,
    django_capture_on_commit_callbacks,
    django_assert_num_queries,
):
    seed(project, annotator_1, annotator_2, django_capture_on_commit_callbacks)
    client.force_login(lead)
    # project+role, screening, Disputes tab, the assists behind "Drafts kept", stored counts?
    with django_assert_num_queries(14) as small:
        client.get("/review/cars/dashboard/")

    for _ in range(3):
        make_pair(project)
        for user in (annotator_1, annotator_2):
            with django_capture_on_commit_callbacks(execute=True):
                annotate(project, user, answer(), seconds=5)
    assert project_quality(project=project).cross_checked == 8

    with django_assert_num_queries(len(small.captured_queries)):
        response = client.get("/review/cars/dashboard/")
    assert response.status_code == 200


def test_a_new_project_page_reads_well(client, project, lead):
    client.force_login(lead)

    response = client.get("/review/cars/dashboard/")

    assert response.status_code == 200
    assert "No pairs in this project yet" in response.content.decode()


def test_a_project_without_annotations_shows_progress_and_waits(client, project, lead):
    make_pair(project)
    client.force_login(lead)

    page = client.get("/review/cars/dashboard/").content.decode()

    assert "Imported <b>1</b>" in page
    assert "Appears once two annotators have answered the same pair" in page
    assert "Nothing cross-checked yet" in page and "No accepted pair yet" in page


@pytest.mark.parametrize(
    ("who", "status"),
    [("lead", 200), ("annotator_1", 403), ("researcher", 403), ("outsider", 404)],
)
def test_only_leads_see_the_page(client, project, request, who, status):
    client.force_login(request.getfixturevalue(who))

    assert client.get("/review/cars/dashboard/").status_code == status


def test_an_admin_sees_every_project_page(client, project):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)
    client.force_login(admin)

    assert client.get("/review/cars/dashboard/").status_code == 200


def test_anonymous_visitors_are_sent_to_log_in(client, project):
    response = client.get("/review/cars/dashboard/")

    assert response.status_code == 302 and response.url.startswith("/login/")


def test_an_unknown_project_is_not_found(client, lead):
    client.force_login(lead)

    assert client.get("/review/nope/dashboard/").status_code == 404


@pytest.mark.parametrize(
    ("counts", "kappa", "note"),
    [
        # 10 pairs, 9 excellent/excellent and one excellent/good: κ ≈ 0 beside 90 % identical.
        (
            [[9, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
            0.0,
            "Uninformative here: 95% of tiers are “excellent”, so agreement by chance is already "
            "high and κ stays low although the tiers are identical on 90% of pairs.",
        ),
        (
            [[6, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
            None,
            "Undefined: every tier given is “excellent”, so there is no variation to agree on "
            "beyond chance. The tiers are identical on 100% of pairs.",
        ),
        ([[3, 1, 0, 0], [1, 3, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2]], 0.8, ""),  # κ speaks plainly
    ],
)
def test_kappa_is_explained_when_undefined_or_uninformative(project, counts, kappa, note):
    from dataclasses import replace

    from review.dashboard import Grid

    quality = project_quality(project=project)
    tiers = Grid(keys=quality.tiers.keys, labels=quality.tiers.labels, counts=counts)
    assert replace(quality, tiers=tiers, kappa=kappa).kappa_note == note
