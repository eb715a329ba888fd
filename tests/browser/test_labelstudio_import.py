"""The Label Studio import page as a lead uses it: upload, read the preview, import."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from annotator.models import Annotation, Pair
from tests.browser.workspace import log_in

pytestmark = pytest.mark.browser

MINCU = Path(__file__).resolve().parents[1] / "fixtures" / "labelstudio" / "mincu"
# Set to a folder to keep the screenshots (the README's figure comes from one).
SHOT_DIR = os.environ.get("DIFFMARK_SHOTS")


def _zip(tmp_path: Path) -> Path:
    path = tmp_path / "images.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted((MINCU / "images").iterdir()):
            archive.write(file, file.name)
    return path


def test_lead_previews_a_label_studio_export_then_imports_it(
    page: Page, project, lead, tmp_path, settings
):
    project.tier_rule = "good"
    project.save(update_fields=["tier_rule"])
    log_in(page, "lead")
    page.goto(f"/p/{project.slug}/upload/")
    page.get_by_label("Label Studio JSON export").check()
    page.set_input_files("#id_images", str(_zip(tmp_path)))
    page.set_input_files("#id_manifest", str(MINCU / "export.json"))
    page.set_input_files("#id_config", str(MINCU / "label_config.xml"))
    mapping = (MINCU / "mapping.yaml").read_text()
    page.fill("#id_mapping", mapping.replace("  3 good: good\n", ""))
    page.get_by_role("button", name="Start import").click()

    expect(page.get_by_role("heading", name="Label Studio import: preview")).to_be_visible()
    expect(page.get_by_role("heading", name="Problems (4)")).to_be_visible()
    expect(page.locator("table.report")).to_contain_text("quality: '3 good' is no tier")
    if SHOT_DIR:
        page.screenshot(path=f"{SHOT_DIR}/labelstudio-preview-problems.png", full_page=True)
    page.fill("#id_mapping", mapping)  # the lead adds the missing value and looks again
    page.get_by_role("button", name="Preview again").click()
    expect(page.get_by_role("heading", name="Problems (4)")).to_have_count(0)
    expect(page.locator("pre.mapping")).to_contain_text(
        "image A: Image tag 'a', data key 'image_a'"
    )
    expect(page.locator("table.counts")).to_contain_text("Annotations to import")
    if SHOT_DIR:
        page.screenshot(path=f"{SHOT_DIR}/labelstudio-preview.png", full_page=True)
    assert Pair.objects.count() == 0

    page.get_by_role("button", name="Import now").click()
    expect(page.get_by_role("heading", name="Label Studio mapping used")).to_be_visible()
    if SHOT_DIR:
        page.screenshot(path=f"{SHOT_DIR}/labelstudio-job.png", full_page=True)
    assert Pair.objects.count() == 4 and Annotation.objects.count() == 8
