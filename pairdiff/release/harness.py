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
from collections import Counter
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
    questions: Sequence[Mapping],
    *,
    project_slug: str,
    read_image: Callable[[str], bytes],
    checksums: Mapping[str, str] | None = None,
) -> Iterator[tuple[str, bytes]]:
    """One TSV per evaluation split (val, test) with questions, one at a time; each holds its
    images in base64, VLMEvalKit's self-contained form. The train split has none: harnesses
    evaluate, and base64 of every image would cost a third more than the images.
    ``checksums[path]`` (sha256), when given, lets an image several rows share be encoded once."""
    name = task_name(project_slug)
    for split in EVAL_SPLITS:
        rows = [q for q in questions if q.get("split", "train") == split]
        if not rows:
            continue
        encode = _encoder(rows, read_image, checksums or {})
        header = ["index", "id", "image", "image_path", "question", *LETTERS, "answer",
                  "category", "split"]  # fmt: skip
        parts = [_tsv_line(header).encode(), b"\n"]
        for index, q in enumerate(rows):
            paths = [q["image_a"], q["image_b"]]
            before = _tsv_line([index, q["id"]])
            after = _tsv_line(
                [repr(paths), q["question"], *(q["options"][letter] for letter in LETTERS),
                 q["answer"], q["category"], split]
            )  # fmt: skip
            # The images' cell as repr() of the list of base64 strings (VLMEvalKit's list
            # form), built as bytes: base64 needs no quoting, and a csv writer scanning
            # 100 KB of it per row took most of the file's time.
            images = b"['" + b"', '".join(encode(p) for p in paths) + b"']"
            parts += [before.encode(), b"\t", images, b"\t", after.encode(), b"\n"]
        yield f"vlmevalkit/{name}_{split}.tsv", b"".join(parts)


def _encoder(
    rows: Sequence[Mapping], read_image: Callable[[str], bytes], checksums: Mapping[str, str]
) -> Callable[[str], bytes]:
    """base64 of an image by path; an image several rows share (by sha256) is kept encoded."""
    shared = Counter(checksums.get(q[side]) for q in rows for side in ("image_a", "image_b"))
    kept: dict[str, bytes] = {}

    def encode(path: str) -> bytes:
        key = checksums.get(path)
        if key is None or shared[key] < 2:
            return base64.b64encode(read_image(path))
        if key not in kept:
            kept[key] = base64.b64encode(read_image(path))
        return kept[key]

    return encode


def _tsv_line(cells: Sequence) -> str:
    """Cells as a csv writer with tabs writes them (quoted where they must be), no newline."""
    out = io.StringIO()
    csv.writer(out, delimiter="\t", lineterminator="").writerow(cells)
    return out.getvalue()
