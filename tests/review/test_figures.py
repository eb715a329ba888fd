"""Whole-project figures on large projects: stored by the periodic job, read by the pages with
their time; small projects keep computing them live."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.pair_counts import pair_counts_refresh_due
from console.pairs import PairFilters, pairs_browse
from review.dashboard import project_quality
from review.figures import (
    figures_refresh,
    figures_refresh_due,
    quality_counted_read,
    quality_from_json,
    quality_json,
    quality_read,
)
from review.models import PairDifficulty, ProjectFigures
from tests.factories import answer, make_accepted, make_pair


@pytest.fixture
def accepted(project, annotator_1, annotator_2):
    """Two accepted pairs (one easy, one hard) and one nobody touched."""
    bodies = [
        answer(boxes_a=[[0, 0, 96, 64]], boxes_b=[[0, 0, 96, 64]]),
        answer(),
    ]
    pairs = make_accepted(project, [annotator_1, annotator_2], bodies)
    make_pair(project)
    return pairs


@pytest.fixture
def large(settings):
    """Every project with more than one pair counts as large."""
    settings.DIFFMARK_FIGURES_LIVE_PAIRS = 1


def test_stored_figures_read_back_as_the_live_ones(project, accepted):
    quality = project_quality(project=project)

    assert quality_from_json(quality_json(quality)) == quality


def test_a_small_project_computes_its_figures_for_each_request(project, accepted):
    quality, computed_at = quality_read(project)

    assert computed_at is None
    assert quality == project_quality(project=project)
    assert not ProjectFigures.objects.exists()


def test_a_large_project_reads_the_stored_figures_and_counts(project, accepted, large):
    # Pairs per status on a large project are the stored ones too (issue 28: counting a
    # million pairs per request cost ~300 ms), counted again every DIFFMARK_COUNTS_SECONDS.
    stored = figures_refresh(project_id=project.pk)
    make_pair(project)  # after the figures were computed

    quality, computed_at, counted_at = quality_counted_read(project)

    assert computed_at == stored.computed_at
    assert counted_at == stored.computed_at
    assert quality.status_counts["imported"] == 1  # as counted with the figures
    assert quality.verdicts == project_quality(project=project).verdicts

    assert pair_counts_refresh_due(now=counted_at + timedelta(seconds=61)) == [project.pk]
    quality, _, counted_at = quality_counted_read(project)
    assert quality.status_counts["imported"] == 2
    assert counted_at > stored.computed_at


def test_the_dashboard_says_how_fresh_its_figures_are(client, project, accepted, lead, large):
    figures_refresh(project_id=project.pk)
    client.force_login(lead)

    page = client.get(f"/review/{project.slug}/dashboard/").content.decode()

    assert "data-figures-at=" in page
    assert "Figures as of" in page


def test_the_dashboard_of_a_small_project_has_no_freshness_note(client, project, accepted, lead):
    client.force_login(lead)

    page = client.get(f"/review/{project.slug}/dashboard/").content.decode()

    assert "data-figures-at=" not in page


def test_the_api_names_when_stored_figures_were_computed(client, project, accepted, lead, large):
    stored = figures_refresh(project_id=project.pk)
    client.force_login(lead)

    body = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()

    assert body["computed_at"] == stored.computed_at.isoformat()
    assert body["status_counts"]["accepted"] == 2


def test_the_difficulty_filter_of_a_large_project_reads_the_stored_levels(project, accepted, large):
    figures_refresh(project_id=project.pk)
    easy, hard = accepted

    assert dict(PairDifficulty.objects.values_list("pair_id", "level")) == {
        easy.pk: "easy",
        hard.pk: "hard",
    }
    assert list(pairs_browse(project, PairFilters(difficulty="hard"))) == [hard]


def test_members_of_a_large_project_show_the_stored_counts(
    client, project, accepted, lead, annotator_1, large
):
    figures_refresh(project_id=project.pk)
    client.force_login(lead)

    response = client.get(f"/p/{project.slug}/members/")

    member = next(m for m in response.context["members"] if m.user_id == annotator_1.pk)
    assert member.n_submitted == 2
    assert "data-figures-at=" in response.content.decode()


def test_the_periodic_job_refreshes_large_projects_once_their_figures_are_old(
    project, accepted, settings
):
    settings.DIFFMARK_FIGURES_SECONDS = 600
    assert figures_refresh_due() == []  # small: nothing stored

    settings.DIFFMARK_FIGURES_LIVE_PAIRS = 1
    assert figures_refresh_due() == [project.pk]
    assert figures_refresh_due() == []  # fresh

    later = timezone.now() + timedelta(seconds=601)
    assert figures_refresh_due(now=later) == [project.pk]


def test_the_sweep_command_refreshes_the_figures_that_are_due(project, accepted, large):
    import io

    from django.core.management import call_command

    call_command("sweep", stdout=io.StringIO())

    assert ProjectFigures.objects.filter(project=project).exists()
