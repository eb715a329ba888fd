"""Build time of a release of N accepted pairs (default 10,000), in this process.

    .venv/bin/python bench/build_release.py [--pairs 10000] [--postgres [--database NAME]]
        [--size 640x480] [--profile FILE] [--hashes FILE]

Seeds N accepted pairs straight into the database (two annotations each, an agreement with
its consensus, four categories, boxes of every difficulty) with JPEG originals on the local
filesystem storage; every pair has its own B file (a shared A), so the build checks and
copies 2·N originals as a real one does (the shared A file is hashed once per build, as any
original several pairs use; the Parquet ``images`` config holds N + 1 distinct images).
Prints the time of each phase and the sizes of the files written, the build's CPU time (and
its worker processes') and the load average. Seeding is not part of the timing. ``--profile
FILE`` runs the build under cProfile (this process only), writes its stats to FILE and prints
the functions that took the most time.
``--hashes FILE`` writes the sha256 of every file of the release (to compare builds).
``--database`` (or ``DIFFMARK_BENCH_DB``) names the PostgreSQL database, which is
dropped and created again.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import logging
import os
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import LOCAL_POSTGRES, recreate_database  # noqa: E402

if TYPE_CHECKING:
    from projects.models import Project

CATEGORIES = ["attribute", "object", "counting", "relation"]


def _setup_django(workdir: Path, postgres: bool, database: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-0123456789-abcdefghijklmnop")
    os.environ["MEDIA_ROOT"] = str(workdir / "media")
    os.environ.pop("CELERY_BROKER_URL", None)
    if postgres:
        os.environ["DATABASE_URL"] = LOCAL_POSTGRES + database
        recreate_database(os.environ["DATABASE_URL"])
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _originals(media: Path, n: int, size: tuple[int, int]) -> tuple[str, str, list[str]]:
    """One A file, N distinct B files (bytes after the JPEG end marker make each unique)."""
    from tests.images import edited_pair

    a, b = edited_pair(size=size)
    from io import BytesIO

    from PIL import Image

    def jpeg(png: bytes) -> bytes:
        out = BytesIO()
        Image.open(BytesIO(png)).convert("RGB").save(out, format="JPEG", quality=92)
        return out.getvalue()

    a, b = jpeg(a), jpeg(b)
    folder = media / "bench"
    folder.mkdir(parents=True)
    (folder / "a.jpg").write_bytes(a)
    names = []
    for i in range(n):
        (folder / f"{i}_b.jpg").write_bytes(b + f"pair {i}".encode())
        names.append(f"bench/{i}_b.jpg")
    return "bench/a.jpg", hashlib.sha256(a).hexdigest(), names


def _seed(n: int, size: tuple[int, int], media: Path) -> Project:
    from annotator.models import Annotation, Assignment, Pair, PairStatus
    from projects.creating import project_create
    from projects.members import membership_set, user_ensure
    from projects.models import Role
    from review.models import Agreement

    width, height = size
    project = project_create(slug="bench", name="Release bench")
    users = [user_ensure(username=f"bench{i}", password="bench-only") for i in (1, 2)]
    for user in users:
        membership_set(project=project, user=user, role=Role.ANNOTATOR)
    a_name, a_sha, b_names = _originals(media, n, size)
    b_sha = [hashlib.sha256((media / name).read_bytes()).hexdigest() for name in b_names]
    for start in range(0, n, 2000):
        chunk = range(start, min(n, start + 2000))
        pairs = Pair.objects.bulk_create(
            Pair(
                project=project,
                number=i + 1,
                external_id=f"bench-{i}",
                image_a=a_name,
                image_b=b_names[i],
                width_a=width,
                height_a=height,
                width_b=width,
                height_b=height,
                sha256_a=a_sha,
                sha256_b=b_sha[i],
                format_a="JPEG",
                format_b="JPEG",
                status=PairStatus.ACCEPTED,
                n_taken=2,
                n_submitted=2,
            )
            for i in chunk
        )
        assignments = Assignment.objects.bulk_create(
            Assignment(pair=p, annotator=u, state="submitted", expires_at=p.created_at)
            for p in pairs
            for u in users
        )
        annotations = Annotation.objects.bulk_create(
            Annotation(assignment=s, pair=s.pair, annotator=s.annotator, tier="excellent")
            for s in assignments
        )
        Agreement.objects.bulk_create(
            Agreement(
                pair=p,
                annotation_1=annotations[2 * k],
                annotation_2=annotations[2 * k + 1],
                status="accepted",
                mean_iou=0.9,
                consensus=[_change(i, width, height)],
            )
            for k, (i, p) in enumerate(zip(chunk, pairs, strict=True))
        )
    return project


def _change(i: int, width: int, height: int) -> dict:
    share = (0.6, 0.4, 0.2, 0.08)[i % 4]  # easy, medium, medium, hard
    w, h = round(width * share**0.5), round(height * share**0.5)
    box = [10, 10, 10 + min(w, width - 10), 10 + min(h, height - 10)]
    category = CATEGORIES[(i // 4) % 4]
    return {
        "category": category,
        "description": f"The red cup {i} turned blue.",
        "entity_a": "cup",
        "entity_b": "cup",
        "boxes_a": [box],
        "boxes_b": [box],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument(
        "--database",
        default=os.environ.get("DIFFMARK_BENCH_DB", "diffmark_bench_release"),
        help="PostgreSQL database to drop and create (with --postgres)",
    )
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--profile", metavar="FILE", help="run the build under cProfile")
    parser.add_argument(
        "--hashes",
        metavar="FILE",
        help="write the sha256 of every file of the release to FILE (to compare two builds)",
    )
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    size = (width, height)
    with tempfile.TemporaryDirectory(prefix="diffmark-bench-release-") as tmp:
        workdir = Path(tmp)
        _setup_django(workdir, args.postgres, args.database)
        started = time.perf_counter()
        project = _seed(args.pairs, size, workdir / "media")
        print(f"seeded {args.pairs} accepted pairs in {time.perf_counter() - started:.1f} s")

        from annotator.models import Pair
        from pairdiff.release.options import ReleaseOptions
        from pairdiff.release.splits import MINCU_TEST_RATIO, SplitPlan
        from releases.building import release_build, release_register
        from review.standing import standing_answers

        started = time.perf_counter()
        n = sum(1 for _ in standing_answers(Pair.objects.filter(project=project)))
        print(f"read {n} standing answers: {time.perf_counter() - started:.1f} s")

        plan = SplitPlan(seed=0, test_per_category=500, test_ratio=MINCU_TEST_RATIO)
        # The seeded descriptions differ only in a number, so a text-only classifier answers
        # most questions and the gate would refuse the release: built with a lead's override
        # (the baselines are measured all the same).
        options = ReleaseOptions(allow_baselines=True)
        release = release_register(project=project, name="bench", plan=plan, options=options)
        logging.basicConfig(format="  %(message)s")
        logging.getLogger("releases.building").setLevel(logging.INFO)
        profile = cProfile.Profile() if args.profile else None
        started, cpu = time.perf_counter(), time.process_time()
        children = _children_cpu()
        if profile:
            profile.enable()
        release = release_build(release.pk)
        if profile:
            profile.disable()
            profile.dump_stats(args.profile)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        children = _children_cpu() - children
        load = (
            Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
        )
        if release.status != "ready":
            raise SystemExit(f"release failed: {release.message}")
        manifest = release.manifest
        assert manifest is not None  # a ready release has its manifest
        files = manifest["files"]
        data = {k: v["size"] for k, v in files.items() if not k.startswith("images/")}
        images = sum(v["size"] for k, v in files.items() if k.startswith("images/"))
        backend = "PostgreSQL" if args.postgres else "SQLite"
        print(
            f"release of {n} pairs built in {elapsed:.1f} s on {backend} "
            f"({n / elapsed:.0f} pairs/s), {release.records.count()} records"
        )
        print(
            f"  CPU time of this process {cpu:.1f} s, of its worker processes {children:.1f} s; "
            f"load average {' '.join(load) or 'unknown'}"
        )
        print(f"  splits: {manifest['counts']['splits']}")
        print(f"  images: {len(files) - len(data)} files, {images / 1e6:.0f} MB")
        for name, size_bytes in sorted(data.items()):
            print(f"  {name}: {size_bytes / 1e6:.2f} MB")
        if args.hashes:
            _write_hashes(workdir / "media" / release.prefix, Path(args.hashes))
        if profile:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(40)


def _children_cpu() -> float:
    """User and system CPU seconds of the child processes that ended (the build's workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _write_hashes(folder: Path, out: Path) -> None:
    """``sha256  path`` of every file under ``folder``, sorted by path."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        lines.append(f"{digest}  {path.relative_to(folder)}\n")
    out.write_text("".join(lines))
    print(f"  sha256 of {len(lines)} files written to {out}")


if __name__ == "__main__":
    main()
