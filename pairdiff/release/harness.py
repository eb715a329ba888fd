"""The release as the two evaluation harnesses researchers use read it (pure).

- lmms-eval: ``lmms_eval/<task>/`` with one YAML per task (the questions, and grounding scored
  with Grounded F1) over the release's Parquet shards, and ``utils.py``
  (``pairdiff.release.lmms_utils``), which scores with ``pairdiff.scoring``. Run lmms-eval from
  the release folder (the YAMLs name the shards by relative path), e.g.
  ``lmms-eval --include_path lmms_eval/<task> --tasks <task>_questions``.
- VLMEvalKit: ``vlmevalkit/<name>_<split>.tsv`` for val and test, in its multiple-choice layout:
  ``index``, ``image`` (both images, base64, as a list — VLMEvalKit's multi-image form),
  ``image_path`` (their paths in the release), ``question``, ``A``–``D``, ``answer``, plus
  ``category``, ``split`` and ``id``.
"""

from __future__ import annotations

import base64
import csv
import io
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from pairdiff.release.hf import HF_SPLITS

LETTERS = ("A", "B", "C", "D")
EVAL_SPLITS = ("val", "test")


def task_name(project_slug: str) -> str:
    return "diffmark_" + re.sub(r"[^a-z0-9]+", "_", project_slug.lower()).strip("_")


def lmms_eval_files(*, project_slug: str, splits: Mapping[str, Sequence[str]]) -> dict[str, bytes]:
    """The task YAMLs (one per config that exists: questions, grounding on benchmark) and
    utils.py; each task runs on the test split, or the last split the release has."""
    name = task_name(project_slug)
    folder = f"lmms_eval/{name}"
    files = {f"{folder}/utils.py": Path(__file__).with_name("lmms_utils.py").read_bytes()}
    tasks = (
        ("questions", "questions", "doc_to_text_question", "process_question", "accuracy",
         "aggregate_accuracy", 16),
        ("benchmark", "grounding", "doc_to_text_grounding", "process_grounding", "grounded_f1",
         "aggregate_grounded_f1", 512),
    )  # fmt: skip
    for config, task, to_text, process, metric, aggregate, tokens in tasks:
        if config not in splits:
            continue
        split = "test" if "test" in splits[config] else splits[config][-1]
        yaml = "\n".join(
            [
                f"task: {name}_{task}",
                "dataset_path: parquet",
                "dataset_kwargs:",
                "  data_files:",
                f"    {HF_SPLITS[split]}: data/{config}/{split}-*.parquet",
                f"test_split: {HF_SPLITS[split]}",
                "output_type: generate_until",
                "doc_to_visual: !function utils.doc_to_visual",
                f"doc_to_text: !function utils.{to_text}",
                f"doc_to_target: {'answer' if config == 'questions' else 'description'}",
                "generation_kwargs:",
                f"  max_new_tokens: {tokens}",
                "  temperature: 0",
                "  do_sample: false",
                f"process_results: !function utils.{process}",
                "metric_list:",
                f"  - metric: {metric}",
                f"    aggregation: !function utils.{aggregate}",
                "    higher_is_better: true",
                "metadata:",
                "  version: 1",
                "",
            ]
        )
        files[f"{folder}/{name}_{task}.yaml"] = yaml.encode()
    return files


def vlmevalkit_tsvs(
    questions: Sequence[Mapping], *, project_slug: str, read_image: Callable[[str], bytes]
) -> Iterator[tuple[str, bytes]]:
    """One TSV per evaluation split (val, test) with questions, one at a time; each holds its
    images in base64, VLMEvalKit's self-contained form. The train split has none: harnesses
    evaluate, and base64 of every image would cost a third more than the images."""
    name = task_name(project_slug)
    for split in EVAL_SPLITS:
        rows = [q for q in questions if q.get("split", "train") == split]
        if not rows:
            continue
        out = io.StringIO()
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(
            ["index", "id", "image", "image_path", "question", *LETTERS, "answer", "category",
             "split"]
        )  # fmt: skip
        for index, q in enumerate(rows):
            paths = [q["image_a"], q["image_b"]]
            images = [base64.b64encode(read_image(p)).decode("ascii") for p in paths]
            writer.writerow(
                [index, q["id"], repr(images), repr(paths), q["question"],
                 *(q["options"][letter] for letter in LETTERS), q["answer"], q["category"], split]
            )  # fmt: skip
        yield f"vlmevalkit/{name}_{split}.tsv", out.getvalue().encode()
