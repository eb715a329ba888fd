"""The strict release ships only what it releases: the images of a pair the strict rule leaves out
are neither copied nor listed in the manifest (its records and questions never had it)."""

from django.core.files.storage import default_storage

from pairdiff.release.options import ReleaseOptions
from pairdiff.release.splits import SplitPlan
from releases.building import release_create
from releases.models import ReleaseStatus
from tests.factories import answer, make_accepted

TWO_CHANGES = answer() | {
    "changes": [
        answer()["changes"][0],
        answer(boxes_a=[[50, 40, 70, 60]], boxes_b=[[50, 40, 70, 60]])["changes"][0],
    ]
}


def test_a_strict_release_ships_no_image_of_a_pair_it_left_out(
    project, annotator_1, annotator_2, django_capture_on_commit_callbacks
):
    kept = make_accepted(project, [annotator_1, annotator_2], [answer(), answer()])
    left = make_accepted(project, [annotator_1, annotator_2], [TWO_CHANGES])  # not one change

    with django_capture_on_commit_callbacks(execute=True):
        release = release_create(
            project=project,
            name="strict",
            plan=SplitPlan(),
            options=ReleaseOptions(strict=True),
        )
    release.refresh_from_db()

    assert release.status == ReleaseStatus.READY, release.message
    assert release.manifest["strict_filter"]["left_out"] == {"not exactly one change": 1}
    assert sorted(release.records.values_list("pair_id", flat=True)) == [p.pk for p in kept]
    images = sorted(name for name in release.manifest["files"] if name.startswith("images/"))
    assert images == sorted(f"images/{p.pk}_{side}.png" for p in kept for side in "ab")
    for side in "ab":
        assert not default_storage.exists(f"{release.prefix}/images/{left[0].pk}_{side}.png")
