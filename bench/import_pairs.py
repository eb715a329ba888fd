"""Import N generated pairs through the real import service and print pairs/s.

    .venv/bin/python bench/import_pairs.py [--pairs 1000] [--size 512x384] [--zip]
        [--postgres [--database NAME]] [--profile FILE]

With --postgres the pairs go to a recreated database on the local PostgreSQL (`--database`, else
$DIFFMARK_BENCH_DB, else `diffmark_bench_import`), else to a throwaway SQLite file; files go
to a throwaway media folder. Image generation is not part of the timing. Prints wall time, the
CPU time of this process and of its worker processes, and the load average before and after.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import LOCAL_POSTGRES, recreate_database  # noqa: E402


def _setup_django(workdir: Path, postgres: bool, database: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-0123456789-abcdefghijklmnop")
    os.environ["MEDIA_ROOT"] = str(workdir / "media")
    if postgres:
        os.environ["DATABASE_URL"] = LOCAL_POSTGRES + database
        recreate_database(os.environ["DATABASE_URL"])
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _photos() -> list[np.ndarray]:
    from skimage import data

    photos = [
        data.astronaut(),
        data.coffee(),
        data.chelsea(),
        data.rocket(),
        data.hubble_deep_field(),
    ]
    return [np.asarray(Image.fromarray(p).resize((1024, 768))) for p in photos]


def _png(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def _generate(folder: Path, n: int, size: tuple[int, int]) -> bytes:
    """N distinct pairs: a crop of a real photo, and the crop with one region recoloured."""
    rng = np.random.default_rng(0)
    photos = _photos()
    width, height = size
    rows = []
    for i in range(n):
        photo = photos[i % len(photos)]
        y, x = rng.integers(0, 768 - height), rng.integers(0, 1024 - width)
        a = photo[y : y + height, x : x + width].copy()
        b = a.copy()
        bx, by = rng.integers(0, width - 64), rng.integers(0, height - 64)
        b[by : by + 64, bx : bx + 64] = b[by : by + 64, bx : bx + 64][..., ::-1]
        (folder / f"{i:05d}_a.png").write_bytes(_png(a))
        (folder / f"{i:05d}_b.png").write_bytes(_png(b))
        rows.append(
            {"id": f"bench-{i:05d}", "image_a": f"{i:05d}_a.png", "image_b": f"{i:05d}_b.png"}
        )
    return "\n".join(json.dumps(r) for r in rows).encode()


def _loadavg() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--size", default="512x384")
    parser.add_argument("--zip", action="store_true", help="read the images from a zip")
    parser.add_argument("--postgres", action="store_true", help="the local PostgreSQL")
    parser.add_argument(
        "--database",
        default=os.environ.get("DIFFMARK_BENCH_DB", "diffmark_bench_import"),
        help="PostgreSQL database to recreate (a diffmark_*bench* name)",
    )
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the import")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    size = (width, height)

    with tempfile.TemporaryDirectory(prefix="diffmark-bench-") as tmp:
        workdir = Path(tmp)
        _setup_django(workdir, args.postgres, args.database)
        from annotator.intake.importing import pairs_import
        from jobs.lifecycle import job_create
        from jobs.models import JobKind
        from projects.creating import project_create
        from projects.models import Project

        images = workdir / "images"
        images.mkdir()
        started = time.perf_counter()
        manifest = _generate(images, args.pairs, size)
        elapsed = time.perf_counter() - started
        print(f"generated {args.pairs} pairs of {args.size} PNGs in {elapsed:.1f} s")
        source: Path = images
        if args.zip:
            source = workdir / "images.zip"
            with zipfile.ZipFile(source, "w", zipfile.ZIP_STORED) as zf:
                for path in sorted(images.iterdir()):
                    zf.write(path, path.name)

        slug = f"bench-{int(time.time())}"
        project = project_create(slug=slug)
        job = job_create(kind=JobKind.IMPORT, project=project)
        load_before = _loadavg()
        profiler = cProfile.Profile() if args.profile else None
        cpu_before = os.times()
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        report = pairs_import(project=project, manifest=manifest, images=source, job=job)
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
        elapsed = time.perf_counter() - started
        cpu = os.times()
        own = cpu.user + cpu.system - cpu_before.user - cpu_before.system
        workers = (
            cpu.children_user
            + cpu.children_system
            - cpu_before.children_user
            - cpu_before.children_system
        )

        from django.db import connection

        print(f"database: {connection.vendor}; source: {'zip' if args.zip else 'folder'}")
        print(f"imported {len(report.imported)} of {report.rows} pairs in {elapsed:.1f} s")
        print(f"throughput: {len(report.imported) / elapsed:.1f} pairs/s")
        print(f"cpu: {own:.1f} s in this process + {workers:.1f} s in worker processes")
        cores = os.cpu_count()
        print(f"load average before / after: {load_before} / {_loadavg()} ({cores} cores)")
        Project.objects.filter(pk=project.pk).delete()


if __name__ == "__main__":
    main()
