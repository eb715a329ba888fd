"""The module bundler: a bundle runs like the modules it was built from, and a module outside the
subset it translates fails the build instead of shipping something that behaves differently."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.core.files.storage import FileSystemStorage
from django.test import override_settings
from whitenoise.storage import CompressedManifestStaticFilesStorage

from config.jsbundle import BundleError, bundle
from config.staticbundles import BundleFinder, bundle_name

STATIC = Path(__file__).resolve().parents[2] / "static"

# A graph with every form the static modules use: renamed imports, a re-export, an async
# function, a class, a module imported twice (evaluated once) and side effects whose order
# shows the evaluation order.
MODULES = {
    "app/main.js": """import { shout, Counter as Tally } from "./words.js";
import { SIDES, later } from "../lib/sides.js";
globalThis.log.push("main");
const tally = new Tally();
tally.add(); tally.add();
later().then((value) => globalThis.log.push(`later ${value}`));
globalThis.log.push(shout(`${SIDES.join("+")} ${tally.n}`));
""",
    "app/words.js": """import { SIDES } from "../lib/sides.js";
globalThis.log.push("words");
export function shout(text) { return `${text}!`.toUpperCase() + ` (${SIDES.length})`; }
export class Counter {
  n = 0;
  add() { this.n += 1; }
}
""",
    "lib/sides.js": """import { base } from "./base.js";
globalThis.log.push("sides");
const SIDES = [base, "b"];
export { SIDES };
export async function later() { return `${SIDES[0]} ${"`nested`"}`; }
""",
    "lib/base.js": """globalThis.log.push("base");
export const base = "a";
""",
}
RUNNER = "globalThis.log = [];\nawait import({target});\nawait null; await null;\n"
RUNNER += "console.log(JSON.stringify(globalThis.log));\n"


def _node() -> str:
    node = shutil.which("node")
    if not node:  # `make test` installs it (scripts/test-deps.sh); never skip silently
        pytest.fail("node is missing: run scripts/test-deps.sh", pytrace=False)
    return node


def _run(folder: Path, target: str) -> list[str]:
    (folder / "run.mjs").write_text(RUNNER.format(target=json.dumps("./" + target)))
    result = subprocess.run(
        [_node(), "run.mjs"], cwd=folder, capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(result.stdout)


def test_a_bundle_runs_like_the_modules_it_was_built_from(tmp_path):
    (tmp_path / "package.json").write_text('{"type": "module"}')
    for path, source in MODULES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source)
    (tmp_path / "bundle.js").write_text(bundle("app/main.js", MODULES.__getitem__))

    as_modules = _run(tmp_path, "app/main.js")
    as_bundle = _run(tmp_path, "bundle.js")

    assert as_modules == ["base", "sides", "words", "main", "A+B 2! (2)", "later a `nested`"]
    assert as_bundle == as_modules


@pytest.mark.parametrize(
    ("source", "complaint"),
    [
        ('import tool from "./tool.js";\n', "cannot bundle 'import tool"),
        ('import * as tools from "./tool.js";\n', "cannot bundle 'import * as tools"),
        ('import "./tool.js";\n', "cannot bundle 'import \"./tool.js\";'"),
        ('import { tool } from "tools";\n', "only relative imports are bundled"),
        ("export let count = 0;\n", "cannot bundle 'export let count = 0;'"),
        ("export default 1;\n", "cannot bundle 'export default 1;'"),
        ('export { tool } from "./tool.js";\n', "cannot bundle 'export { tool } from"),
        ("export const { a, b } = pair;\n", "cannot bundle 'export const { a, b }"),
        ('import { nothing } from "./tool.js";\n', "main.js: tool.js does not export nothing"),
        ('import { tool } from "./cycle.js";\n', "import cycle: main.js → cycle.js → main.js"),
    ],
)
def test_syntax_outside_the_subset_fails_the_build(source, complaint):
    modules = {
        "main.js": source,
        "tool.js": "export function tool() {}\n",
        "cycle.js": 'import { main } from "./main.js";\nexport const tool = 1;\n',
    }
    with pytest.raises(BundleError) as error:
        bundle("main.js", modules.__getitem__)
    assert complaint in str(error.value)


@pytest.mark.parametrize("entry", ["annotator/js/main.js", "review/js/adjudicate.js"])
def test_each_screen_is_served_as_one_script_built_from_the_current_modules(entry, tmp_path):
    with override_settings(STATIC_BUNDLE_DIR=tmp_path):
        found = BundleFinder().find(bundle_name(entry))
    text = Path(found).read_text()
    assert text == bundle(entry, lambda path: (STATIC / path).read_text())
    # Every module of the screen's graph is in it, canvas kit included.
    assert "// canvas/js/state.js\n" in text
    assert f"// {entry}\n" in text
    subprocess.run([_node(), "--check", found], check=True, timeout=60)


def test_the_bundles_are_collected_with_the_static_files():
    listed = {path for finder in finders.get_finders() for path, _ in finder.list(None)}
    assert {"annotator/js/main.bundle.js", "review/js/adjudicate.bundle.js"} <= listed
    assert finders.find("annotator/js/main.bundle.js")
    assert BundleFinder().check() == []


@pytest.mark.parametrize("name", ["annotator/js/main.bundle.js", "review/js/adjudicate.bundle.js"])
def test_production_ships_the_bundle_the_tests_run_hashed_and_compressed(name, tmp_path):
    """collectstatic's storage in production (settings: DEBUG off) on the bundle alone: a
    hashed name for a year's caching, the same bytes, and a gzip copy of them."""
    source = Path(finders.find(name))
    storage = CompressedManifestStaticFilesStorage(location=tmp_path, base_url="/static/")
    with source.open("rb") as file:
        storage.save(name, file)
    origin = FileSystemStorage(location=source.parents[2])
    list(storage.post_process({name: (origin, name)}))

    hashed = tmp_path / storage.hashed_files[name]
    assert hashed.name != source.name
    assert hashed.read_bytes() == source.read_bytes()
    assert gzip.decompress(Path(f"{hashed}.gz").read_bytes()) == source.read_bytes()
