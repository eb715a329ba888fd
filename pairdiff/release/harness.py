"""The release as the two evaluation harnesses researchers use read it (pure).

- lmms-eval: ``lmms_eval/<task>/`` with one YAML per task (the questions, and grounding scored
  with Grounded F1) over the release's Parquet shards, ``utils.py``
  (``pairdiff.release.lmms_utils``) and ``diffmark_scoring/``, a copy of the pure modules of
  Diffmark's scorer (``BUNDLE``, imports renamed), so the task scores with nothing but the
  harness and numpy installed. Run lmms-eval from the release folder (the YAMLs name the
  shards by relative path), e.g.
  ``lmms-eval --include_path lmms_eval/<task> --tasks <task>_questions``.
- VLMEvalKit: ``vlmevalkit/diffmark_<project>_<release>_<split>.tsv`` for val and test, in its
  multiple-choice layout: ``index``, ``image`` (both images, base64, as a list — VLMEvalKit's
  multi-image form), ``image_path`` (the names its loader writes them under), ``question``,
  ``A``–``D``, ``answer``, plus ``category``, ``split`` and ``id``. VLMEvalKit's loader decodes
  each image and saves it again under its ``image_path`` extension before the model sees it: a
  JPEG or WebP saved again as JPEG changes most of its pixels. So every image is sent as PNG (the
  original bytes of a PNG; the decoded pixels of any other format, PNG-encoded) and named
  ``.png``: what the model reads is the decoded original, pixel for pixel.
"""

from __future__ import annotations

import base64
import csv
import io
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath

from pairdiff.release.hf import HF_SPLITS

LETTERS = ("A", "B", "C", "D")
EVAL_SPLITS = ("val", "test")
# The pure modules the shipped lmms-eval scorer runs on (numpy and the standard library only),
# by their path under pairdiff/; copied as diffmark_scoring/<path>.
BUNDLE = (
    "geometry.py",
    "hungarian.py",
    "labels.py",
    "matching.py",
    "text.py",
    "release/question_words.py",
    "release/slot_draws.py",
    "release/slots.py",
    "scoring/change.py",
    "scoring/grounded.py",
    "scoring/letters.py",
    "scoring/slotmatch.py",
    "scoring/text.py",
)
_PAIRDIFF = Path(__file__).resolve().parent.parent


def task_name(project_slug: str, release_name: str = "") -> str:
    """``diffmark_<project>`` (and ``_<release>`` when given), in lower-case word characters."""
    parts = [project_slug, release_name] if release_name else [project_slug]
    return "diffmark_" + "_".join(_word(p) for p in parts)


def _word(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def lmms_eval_files(*, project_slug: str, splits: Mapping[str, Sequence[str]]) -> dict[str, bytes]:
    """The task YAMLs (one per config that exists: questions, grounding on benchmark) and
    utils.py; each task runs on the test split, or the last split the release has."""
    name = task_name(project_slug)
    folder = f"lmms_eval/{name}"
    files = {f"{folder}/utils.py": Path(__file__).with_name("lmms_utils.py").read_bytes()}
    files.update(scoring_bundle(f"{folder}/diffmark_scoring"))
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
                "lmms_eval_specific_kwargs:",
                "  default:",
                '    coords: "1000"',
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


def scoring_bundle(folder: str) -> dict[str, bytes]:
    """``BUNDLE`` as the package ``folder`` (its imports of ``pairdiff`` renamed to the
    package's own name, empty ``__init__.py`` files): the shipped scorer's code is Diffmark's."""
    package = PurePosixPath(folder).name
    files = {}
    for name in BUNDLE:
        text = (_PAIRDIFF / name).read_text()
        text = re.sub(r"^(\s*)(from|import) pairdiff\b", rf"\1\2 {package}", text, flags=re.M)
        files[f"{folder}/{name}"] = text.encode()
    for part in sorted({str(PurePosixPath(name).parent) for name in BUNDLE}):
        init = f"{folder}/__init__.py" if part == "." else f"{folder}/{part}/__init__.py"
        files[init] = b'"""A copy of the pure modules of Diffmark\'s scorer (see utils.py)."""\n'
    return files


def vlmevalkit_tsvs(
    questions: Sequence[Mapping],
    *,
    project_slug: str,
    read_image: Callable[[str], bytes],
    checksums: Mapping[str, str] | None = None,
    release_name: str = "",
) -> Iterator[tuple[str, bytes]]:
    """One TSV per evaluation split (val, test) with questions, one at a time; each holds its
    images in base64, VLMEvalKit's self-contained form. The train split has none: harnesses
    evaluate, and base64 of every image would cost a third more than the images.
    ``checksums[path]`` (sha256), when given, lets an image several rows share be encoded once."""
    name = task_name(project_slug, release_name)
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
                [repr([png_name(p) for p in paths]), q["question"],
                 *(q["options"][letter] for letter in LETTERS),
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
            return base64.b64encode(lossless_png(read_image(path)))
        if key not in kept:
            kept[key] = base64.b64encode(lossless_png(read_image(path)))
        return kept[key]

    return encode


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_MODES = frozenset(("1", "L", "LA", "I", "I;16", "P", "RGB", "RGBA"))


def png_name(path: str) -> str:
    """The name an image is sent under: its path with a ``.png`` extension."""
    return str(PurePosixPath(path).with_suffix(".png"))


def lossless_png(data: bytes) -> bytes:
    """A PNG of the image's decoded pixels: a PNG as it is, any other format decoded and
    PNG-encoded (a mode PNG cannot hold, such as CMYK, as RGB — how a loader would show it)."""
    if data.startswith(_PNG_SIGNATURE):
        return data
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.load()
        pixels = image if image.mode in _PNG_MODES else image.convert("RGB")
        out = io.BytesIO()
        pixels.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def _tsv_line(cells: Sequence) -> str:
    """Cells as a csv writer with tabs writes them (quoted where they must be), no newline."""
    out = io.StringIO()
    csv.writer(out, delimiter="\t", lineterminator="").writerow(cells)
    return out.getvalue()
