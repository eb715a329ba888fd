"""A Label Studio import that reads what the labelling config says: an "entities" text split on
the comma the config shows, and a preview that shows a sample task, counts a problem shared by
many tasks once, and fills the mapping box with every value that maps to nothing."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.models import Change, Pair
from tests.annotator.intake.labelstudio.test_importing import (
    AGREED,
    TWO_BY_TWO,
    _box,
    _import,
    _task,
    _text,
    _zip_all,
    images,  # noqa: F401 (the fixture)
)

CONFIG = b"""<View>
  <Image name="image_a" value="$image_a"/>
  <RectangleLabels name="box_a" toName="image_a"><Label value="attribute"/></RectangleLabels>
  <Image name="image_b" value="$image_b"/>
  <RectangleLabels name="box_b" toName="image_b"><Label value="attribute"/></RectangleLabels>
  <TextArea name="description" toName="image_a"/>
  <TextArea name="entities" toName="image_a" placeholder="entity on A, entity on B"/>
</View>"""


def _annotation(by: int, *, label: str = "attribute", entities: str = "ball, cup") -> dict:
    result = [_box("a", AGREED, label), _box("b", AGREED, label)]
    result += [_text("description", "The ball became a cup."), _text("entities", entities)]
    return {"id": by * 100 + len(entities), "completed_by": by, "result": result, "task": 1}


def test_entities_split_on_the_comma_the_config_shows(project, images):  # noqa: F811
    tasks = [_task(101, 1, [_annotation(7)])]
    report, job = _import(project, images, tasks, config=CONFIG)

    assert job.status == "succeeded", job.errors
    change = Change.objects.get()
    assert (change.entity_a, change.entity_b) == ("ball", "cup")


def test_the_preview_shows_a_sample_groups_a_problem_and_prefills_the_mapping(
    client,
    project,
    lead,
    images,  # noqa: F811
):
    tasks = [
        _task(101, 1, [_annotation(7)]),
        *[_task(100 + n, n, [_annotation(7, label="Colour swap")]) for n in (2, 3, 4)],
    ]
    client.force_login(lead)
    response = client.post(
        "/p/cars/upload/",
        {
            "source_format": "label-studio",
            "images": SimpleUploadedFile("i.zip", _zip_all(images)),
            "manifest": SimpleUploadedFile("export.json", json.dumps(tasks).encode()),
            "config": SimpleUploadedFile("config.xml", CONFIG),
        },
    )

    assert response.status_code == 200
    page = response.content.decode()
    preview = response.context["preview"]
    assert Pair.objects.count() == 0
    assert "entities split on &#x27;,&#x27;" in page
    # The sample: the first task to import, as it would go in.
    assert preview.sample["line"] == 1 and preview.sample["image_a"].endswith("pair1_a.png")
    [change] = preview.sample["annotation"]["changes"]
    assert (change["entity_a"], change["entity_b"]) == ("ball", "cup")
    assert "<dt>Image A</dt><dd><code>/data/upload/3/1a2b3c4d-pair1_a.png</code></dd>" in page
    # Three tasks with the same unknown label: one row, counted.
    [group] = preview.problem_groups
    assert (group["count"], group["tasks"]) == (3, [2, 3, 4])
    assert "&#x27;Colour swap&#x27; is no category" in group["message"].replace("'", "&#x27;")
    assert page.count("is no category of the project") == 1
    # The mapping box holds every unknown value, ready to fill in.
    assert "category:\n  Colour swap: &#x27;&#x27;\n</textarea>" in page
    assert "# category: one of attribute, counting, object, relation" in page


def test_a_lead_mapping_is_kept_and_the_skeleton_shown_beside_it(client, project, lead, images):  # noqa: F811
    tasks = [*TWO_BY_TWO, _task(103, 3, [_annotation(7, label="Colour swap")])]
    client.force_login(lead)
    response = client.post(
        "/p/cars/upload/",
        {
            "source_format": "label-studio",
            "images": SimpleUploadedFile("i.zip", _zip_all(images)),
            "manifest": SimpleUploadedFile("export.json", json.dumps(tasks).encode()),
            "config": SimpleUploadedFile("config.xml", CONFIG),
            "mapping": "tier: {}",
        },
    )
    page = response.content.decode()
    assert ">tier: {}</textarea>" in page
    assert "Values found that map to nothing: add these" in page
