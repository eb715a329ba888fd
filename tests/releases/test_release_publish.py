"""Every release loads in researchers' tools: Hugging Face datasets (offline), mlcroissant,
lmms-eval's task files, VLMEvalKit's TSV."""

import base64
import csv
import importlib.util
import io
import json
import subprocess
import sys
import textwrap

import pytest
import yaml
from django.conf import settings

from pairdiff.release.splits import SplitPlan
from releases.building import release_build, release_register
from releases.evaluations import release_truth
from releases.models import ReleaseStatus
from tests.factories import answer, make_accepted
from tests.releases.test_releases import _bodies


@pytest.fixture
def folder(project, annotator_1, annotator_2):
    pairs = make_accepted(project, [annotator_1, annotator_2], _bodies(12))
    plan = SplitPlan(seed=1, val_fraction=0.25, test_fraction=0.25)
    release = release_build(release_register(project=project, name="v1", plan=plan).pk)
    assert release.status == ReleaseStatus.READY
    return settings.MEDIA_ROOT / release.prefix, release, pairs


def _python(code: str, tmp_path) -> dict:
    """Run ``code`` in a fresh interpreter, offline, with its caches in tmp; its last stdout
    line is JSON."""
    env = {
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(settings.BASE_DIR),
    }
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_parquet_configs_load_with_datasets_offline_and_decode_both_images(folder, tmp_path):
    path, release, pairs = folder
    records, questions = release_truth(release)
    got = _python(
        f"""
        import hashlib, json, datasets
        folder = {str(path)!r}
        out = {{}}
        for config in ("benchmark", "questions", "training"):
            ds = datasets.load_dataset(folder, config)
            out[config] = {{split: ds[split].num_rows for split in ds}}
        bench = datasets.load_dataset(folder, "benchmark")
        row = next(r for split in bench for r in bench[split])
        out["row"] = {{k: row[k] for k in ("id", "boxes_a", "boxes_a_px", "boxes_b", "entity_b",
                                           "image_a_path", "image_b_path")}}
        # The pictures are in the rows: no join, no recipe.
        out["image_a"] = [type(row["image_a"]).__name__, list(row["image_a"].size)]
        out["image_b"] = list(row["image_b"].size)
        out["features"] = {{k: str(v) for k, v in bench[next(iter(bench))].features.items()}}
        split = next(iter(bench))
        raw = bench[split].cast_column("image_a", datasets.Image(decode=False))
        out["bytes"] = {{r["image_a_path"]: hashlib.sha256(r["image_a"]["bytes"]).hexdigest()
                        for r in raw}}
        test = datasets.load_dataset(folder, "questions", split="test")
        out["question_image"] = [type(test[0]["image_a"]).__name__, list(test[0]["image_b"].size)]
        plain = datasets.load_dataset("parquet", data_dir={str(path / "data" / "questions")!r})
        q = next(r for split in plain for r in plain[split])
        out["question"] = {{k: q[k] for k in ("id", "A", "B", "C", "D", "answer")}}
        print(json.dumps(out))
        """,
        tmp_path,
    )
    names = {"train": "train", "val": "validation", "test": "test", "test_swapped": "test_swapped"}
    per_split: dict[str, int] = {}
    for record in records:  # the benchmark config holds the released records, not the swapped copy
        if record["split"] != "test_swapped":
            key = names[record["split"]]
            per_split[key] = per_split.get(key, 0) + 1
    questions_per_split: dict[str, int] = {}
    for question in questions:
        key = names[question["split"]]
        questions_per_split[key] = questions_per_split.get(key, 0) + 1
    assert got["benchmark"] == per_split and got["questions"] == questions_per_split
    assert got["training"] == {"train": per_split["train"]}
    files = release.manifest["files"]
    assert all(files[name]["sha256"] == sha for name, sha in got["bytes"].items())  # originals
    by_id = {r["id"]: r for r in records}
    truth = by_id[got["row"]["id"]]
    assert got["row"]["boxes_a"] == truth["boxes_a"] and got["row"]["boxes_b"] == truth["boxes_b"]
    assert got["row"]["boxes_a_px"] == truth["boxes_a_px"]
    assert got["row"]["entity_b"] == truth["entities"][1]
    assert [got["row"]["image_a_path"], got["row"]["image_b_path"]] == [
        truth["image_a"],
        truth["image_b"],
    ]
    assert got["image_a"] == ["PngImageFile", truth["size_a"]]
    assert got["image_b"] == truth["size_b"] and got["question_image"] == ["PngImageFile", [96, 64]]
    assert got["features"]["image_a"].startswith("Image(") and "List(" in got["features"]["boxes_a"]
    question = next(q for q in questions if q["id"] == got["question"]["id"])
    assert got["question"] == {
        "id": question["id"],
        **question["options"],
        "answer": question["answer"],
    }


def test_the_card_declares_one_config_per_file_kind(folder):
    path, release, _ = folder
    card = (path / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    configs = {c["config_name"]: c["data_files"] for c in header["configs"]}
    assert set(configs) == {"benchmark", "questions", "training"}  # pictures are in the rows
    for config, files in configs.items():
        for entry in files:
            assert list(path.glob(entry["path"])), (config, entry)
    assert header["license"] == "other"


def test_croissant_validates_with_no_error_and_reads_the_records(folder, tmp_path):
    path, release, _ = folder
    records, questions = release_truth(release)
    got = _python(
        f"""
        import json, mlcroissant as mlc
        dataset = mlc.Dataset(jsonld={str(path / "croissant.json")!r})
        issues = dataset.metadata.ctx.issues
        rows = list(dataset.records("questions"))
        bench = list(dataset.records("benchmark"))
        print(json.dumps({{"errors": sorted(issues.errors), "questions": len(rows),
                          "benchmark": len(bench),
                          "image": type(bench[0]["benchmark/image_a"]).__name__}}))
        """,
        tmp_path,
    )
    assert got == {
        "errors": [],
        "questions": len(questions),
        "benchmark": len([r for r in records if r["split"] != "test_swapped"]),
        "image": "PngImageFile",
    }
    document = json.loads((path / "croissant.json").read_text())
    shas = {d["name"]: d.get("sha256") for d in document["distribution"]}
    assert shas["benchmark.json"] == release.manifest["files"]["benchmark.json"]["sha256"]


def _function_loader():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", node.value))
    return Loader


def test_the_lmms_eval_task_scores_with_the_project_s_scorer(folder, tmp_path):
    path, release, _ = folder
    records, questions = release_truth(release)
    task = path / "lmms_eval" / "diffmark_cars"
    config = yaml.load((task / "diffmark_cars_questions.yaml").read_text(), _function_loader())
    assert config["task"] == "diffmark_cars_questions"
    assert config["process_results"] == ("function", "utils.process_question")
    pattern = next(iter(config["dataset_kwargs"]["data_files"].values()))
    assert list(path.glob(pattern))
    grounding = yaml.load((task / "diffmark_cars_grounding.yaml").read_text(), _function_loader())
    assert grounding["metric_list"][0]["metric"] == "grounded_f1"

    spec = importlib.util.spec_from_file_location("release_utils", task / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    docs = [{**q, **q["options"]} for q in questions]
    right = [utils.process_question(d, [f"Answer: {d['answer']}"])["accuracy"] for d in docs]
    wrong = utils.process_question(docs[0], ["A or B"])["accuracy"]
    assert utils.aggregate_accuracy(right) == 1.0 and wrong["right"] is False
    assert "A." in utils.doc_to_text_question(docs[0])

    def doc(record):
        return {**record, "changes": json.dumps(record["changes"])}

    answers = [
        utils.process_grounding(doc(r), [json.dumps({"changes": r["changes"]})])["grounded_f1"]
        for r in records
    ]
    assert utils.aggregate_grounded_f1(answers) == 1.0
    half = answers[: len(answers) // 2] + [
        utils.process_grounding(doc(r), ["no idea"])["grounded_f1"]
        for r in records[len(answers) // 2 :]
    ]
    assert 0 < utils.aggregate_grounded_f1(half) < 1


def test_the_vlmevalkit_tsv_holds_both_images_and_the_options(folder):
    path, release, pairs = folder
    _, questions = release_truth(release)
    test = [q for q in questions if q["split"] == "test"]
    with open(path / "vlmevalkit" / "diffmark_cars_v1_test.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert list(rows[0]) == [
        "index", "id", "image", "image_path", "question", "A", "B", "C", "D", "answer",
        "category", "split",
    ]  # fmt: skip
    assert [r["id"] for r in rows] == [q["id"] for q in test]
    first, question = rows[0], test[0]
    images = eval(first["image"])  # VLMEvalKit's toliststr reads the list this way
    assert len(images) == 2
    assert base64.b64decode(images[0]) == (path / question["image_a"]).read_bytes()
    assert eval(first["image_path"]) == [  # the names VLMEvalKit writes them under: PNG
        question["image_a"].rsplit(".", 1)[0] + ".png",
        question["image_b"].rsplit(".", 1)[0] + ".png",
    ]
    assert {k: first[k] for k in "ABCD"} == question["options"]
    assert first["answer"] == question["answer"] and first["index"] == "0"
    assert io.BytesIO(base64.b64decode(images[1])).read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_shipped_lmms_eval_scorer_needs_only_numpy_and_gives_diffmark_s_numbers(
    folder, tmp_path
):
    from pairdiff.scoring.evaluate import evaluate
    from pairdiff.scoring.text import text_scorer

    path, release, _ = folder
    records = [r for r in release_truth(release)[0] if r["split"] != "test_swapped"]
    answers = []
    for i, r in enumerate(records):
        changes = [dict(c) for c in r["changes"]]
        if i % 3 == 1:  # a contradicted description
            changes[0]["description"] = "The whole image became noisy."
        if i % 3 == 2 and changes[0]["boxes_b"]:  # a box off by half its size
            x1, y1, x2, y2 = changes[0]["boxes_b"][0]
            changes[0]["boxes_b"] = [[x1 + (x2 - x1) // 2, y1, x2 + (x2 - x1) // 2, y2]]
        answers.append(json.dumps({"changes": changes}))
    lines = [json.dumps({"id": r["id"], "text": a, "task": "changes"}) for r, a in
             zip(records, answers, strict=True)]  # fmt: skip
    expected = evaluate(records=records, questions=[], data=("\n".join(lines) + "\n").encode(),
                        coords="1000", scorer=text_scorer())["grounding"]  # fmt: skip
    docs = [{**r, "changes": json.dumps(r["changes"])} for r in records]
    (tmp_path / "docs.json").write_text(json.dumps({"docs": docs, "answers": answers}))
    task = path / "lmms_eval" / "diffmark_cars"
    got = _python(
        f"""
        import json, sys, warnings
        class Blocked:  # nothing of Diffmark, nor what its scorer needs beyond numpy
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("pairdiff", "scipy", "pycocotools", "imagecodecs",
                                          "django", "pandas", "torch"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Blocked())
        sys.path.insert(0, {str(task)!r})
        import utils
        given = json.load(open({str(tmp_path / "docs.json")!r}))
        items = []
        for doc, answer in zip(given["docs"], given["answers"]):
            utils.doc_to_text_grounding(doc, {{"coords": "1000"}})
            items.append(utils.process_grounding(doc, [answer])["grounded_f1"])
        scores = utils.grounding_scores(items)
        # A model writing pixels ten times too large: every box outside [0, 1000], a warning.
        far = [dict(item, text=json.dumps({{"changes": [{{"boxes_a": [[5000, 5000, 9000, 9000]],
               "boxes_b": []}}]}})) for item in items]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            utils.aggregate_grounded_f1(far)
        print(json.dumps({{"scores": scores, "f1": utils.aggregate_grounded_f1(items),
                          "warned": [str(w.message) for w in caught]}}))
        """,
        tmp_path,
    )
    keys = ("grounded_f1", "precision", "recall", "miou", "hallucination_rate", "true_positives")
    assert {k: got["scores"][k] for k in keys} == {k: expected[k] for k in keys}
    assert got["scores"]["by_category"] == expected["by_category"]
    assert 0 < got["f1"] < 1 and got["f1"] == expected["grounded_f1"]
    assert any("outside the frame" in w for w in got["warned"])


def test_a_release_builds_when_side_a_is_absent_in_every_answer(project, annotator_1, annotator_2):
    # Issue #24 item 4: boxes_a empty in every record failed the build with KeyError 'empty'.
    bodies = [
        answer(category="object", description=f"A cup was added on shelf {i}.", entity_a="",
               entity_b="cup", boxes_a=[], boxes_b=[[0, 0, 60, 50]])
        for i in range(6)
    ]  # fmt: skip
    make_accepted(project, [annotator_1, annotator_2], bodies)
    plan = SplitPlan(seed=1, val_fraction=0.2, test_fraction=0.2)
    release = release_build(release_register(project=project, name="v1", plan=plan).pk)
    assert release.status == ReleaseStatus.READY, release.message
    shard = next(n for n in release.manifest["files"] if n.startswith("data/benchmark/"))
    import pyarrow.parquet as pq

    table = pq.read_table(settings.MEDIA_ROOT / release.prefix / shard)
    kind = table.schema.field("boxes_a").type  # a list of boxes, as when some are drawn
    assert str(kind.value_type.value_type) == "double"
    assert all(v == [] for v in table.column("boxes_a").to_pylist())
