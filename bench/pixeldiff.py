"""Accuracy and speed of the built-in `pixeldiff` pre-annotator on generated pairs.

    .venv/bin/python bench/pixeldiff.py [--seeds 5] [--first-seed 0] [--per-kind 1]
                                        [--speed-pairs 24]
    .venv/bin/python bench/pixeldiff.py --synthesized [--photos DIR] [--per-image 10]
                                        [--seeds 1]

Pairs come from the demo generator (real photos, programmatic edits, known boxes). Seed s
supplies the pairs 12·(s·per_kind + j) + k for every kind k, so every seed shows each kind at a
different turn of its sources (which photo, object, tint; local or global lighting and noise).

With --synthesized the pairs are made the way `manage.py synthesize` makes them (any photo,
regions found in it, all ten VDiff-Bench categories): from the photos in DIR, or by default
from scikit-image photos the demo never uses (both motorcycle views, the retina, the clock,
the cells, the text), so pixeldiff is measured on pairs it was not tuned on.

Per edit kind and per VDiff-Bench category:
  iou      mean IoU of the best-matching predicted box to each true box, per side (sides that
           are truly absent are excluded)
  r@.5     recall: true boxes whose best match has IoU >= 0.5
  p@.5     precision: predicted boxes with IoU >= 0.5 to some true box on the same side
  cat      the best-matching predicted change has the true category
  absent   a truly empty side was predicted empty (n/a where no side is absent)
  no-chg   the no-visible-change flag fired (always wrong here: every pair has a change)
  other    scattered / too-large flags (false alarms: every pair has one change)
Speed: pairs per second in one thread, both sides resized to 1024×1024 PNGs (decode included),
in CPU time (one worker's cost) and wall time, with the load average.
"""

from __future__ import annotations

import os

# One worker = one thread: keep numpy's and scipy's pools from borrowing other cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import io  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Iterable, Iterator  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

from PIL import Image  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pairdiff.geometry import Box, iou  # noqa: E402
from pairdiff.pixeldiff import PixelDiff  # noqa: E402
from pairdiff.predict import NO_VISIBLE_CHANGE, PredictedChange, PredictionResult  # noqa: E402
from pairdiff.synth import EDIT_KINDS, TWINS, SynthPair, make_pair  # noqa: E402
from pairdiff.synth.custom import CATEGORIES as SYNTH_CATEGORIES  # noqa: E402
from pairdiff.synth.custom import photo_load, plan, synthesize  # noqa: E402
from pairdiff.taxonomy import VDIFF  # noqa: E402

CATEGORIES = [c.slug for c in VDIFF]


@dataclass
class Tally:
    pairs: int = 0
    ious: list[float] = field(default_factory=list)
    predicted: int = 0
    precise: int = 0
    category: int = 0
    absent: int = 0
    absent_ok: int = 0
    no_change: int = 0
    other_flags: int = 0

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)

    def row(self, label: str) -> str:
        n = max(1, len(self.ious))
        mean = sum(self.ious) / n
        recall = sum(v >= 0.5 for v in self.ious) / n
        precision = f"{self.precise / self.predicted:5.2f}" if self.predicted else "  n/a"
        absent = f"{self.absent_ok}/{self.absent}" if self.absent else "n/a"
        return (
            f"{label:<26}{self.pairs:>4}{len(self.ious):>6}{mean:>7.2f}{recall:>7.2f}"
            f"{precision:>7}{self.category / self.pairs:>7.2f}{absent:>8}"
            f"{self.no_change:>7}{self.other_flags:>7}"
        )


HEADER = (
    f"{'kind / category':<26}{'pairs':>4}{'boxes':>6}{'iou':>7}{'r@.5':>7}{'p@.5':>7}"
    f"{'cat':>7}{'absent':>8}{'no-chg':>7}{'other':>7}"
)


def _boxes(xyxy: list[tuple[int, int, int, int]]) -> list[Box]:
    return [Box(*b) for b in xyxy]


def _best(truth: list[Box], predicted: list[Box]) -> float:
    return max((iou(t, p) for t in truth for p in predicted), default=0.0)


def score(pair: SynthPair, result: PredictionResult) -> Tally:
    tally = Tally(pairs=1)
    tally.no_change = int(NO_VISIBLE_CHANGE in result.flags)
    tally.other_flags = len([f for f in result.flags if f != NO_VISIBLE_CHANGE])
    sides = ("boxes_a", "boxes_b")
    for side in sides:
        truth = [b for c in pair.changes for b in _boxes(getattr(c, side))]
        predicted = [b for c in result.changes for b in getattr(c, side)]
        tally.ious += [_best([t], predicted) for t in truth]
        tally.predicted += len(predicted)
        tally.precise += sum(_best(truth, [p]) >= 0.5 for p in predicted)
    for true in pair.changes:

        def match(c: PredictedChange, true=true) -> float:
            return max(_best(_boxes(getattr(true, s)), list(getattr(c, s))) for s in sides)

        best = max(result.changes, key=match, default=None)
        if best is not None and match(best) > 0:
            tally.category += int(best.category == true.category)
        for side in sides:
            if not getattr(true, side):
                tally.absent += 1
                tally.absent_ok += int(best is not None and not getattr(best, side))
    return tally


def label(pair: SynthPair) -> str:
    scope = pair.source.get("scope")
    kind = str(pair.source["edit"])
    return f"{kind} ({scope})" if scope else kind


def demo_pairs(seeds: range, per_kind: int) -> Iterator[SynthPair]:
    for seed in seeds:
        for j in range(per_kind):
            for k in range(len(EDIT_KINDS)):
                # the first pair of each twin group: one pair per kind and turn
                yield make_pair((len(EDIT_KINDS) * (seed * per_kind + j) + k) * TWINS, seed)


def _png(pixels) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def bench_photos(folder: Path | None) -> list[tuple[str, bytes]]:
    """(name, bytes) of the photos to synthesize from: a folder's, or scikit-image's that the
    demo never edits."""
    if folder is not None:
        return [(p.name, p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()]
    from skimage import data

    left, right = data.stereo_motorcycle()[:2]
    return [
        ("motorcycle_left.png", _png(left)),
        ("motorcycle_right.png", _png(right)),
        ("retina.png", _png(data.retina()[::3, ::3])),
        ("clock.png", _png(data.clock())),
        ("cell.png", _png(data.cell())),
        ("text.png", _png(data.text())),
    ]


def synthesized_pairs(
    photos: list[tuple[str, bytes]], per_image: int, seeds: range, skipped: list[str]
) -> Iterator[SynthPair]:
    loaded = [photo_load(data, name) for name, data in photos]
    for seed in seeds:
        for slot in plan(len(loaded), per_image, SYNTH_CATEGORIES):
            outcome = synthesize(loaded[slot.photo], slot, seed=seed)
            if outcome.pair is None:
                skipped.append(f"{loaded[slot.photo].name} #{slot.index} {slot.category}")
            else:
                yield outcome.pair


def accuracy(predictor: PixelDiff, pairs: Iterable[SynthPair]) -> None:
    by_kind: dict[str, Tally] = defaultdict(Tally)
    by_category: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    errors = []
    for pair in pairs:
        result = predictor.predict(pair.image_a, pair.image_b, categories=CATEGORIES)
        if result.error:
            errors.append(f"{pair.key}: {result.error}")
        tally = score(pair, result)
        by_kind[label(pair)].add(tally)
        by_category[pair.changes[0].category].add(tally)
        total.add(tally)
    print(HEADER)
    for name in sorted(by_kind, key=lambda n: (_kind_rank(n.split(" ")[0]), n)):
        print(by_kind[name].row(name))
    print("-" * len(HEADER))
    for name in [c for c in CATEGORIES if c in by_category]:
        print(by_category[name].row(name))
    print("-" * len(HEADER))
    print(total.row("all"))
    for line in errors:
        print("error:", line)


def _kind_rank(kind: str) -> int:
    return EDIT_KINDS.index(kind) if kind in EDIT_KINDS else len(EDIT_KINDS)


def _resized(data: bytes, side: int) -> bytes:
    img = Image.open(io.BytesIO(data)).convert("RGB").resize((side, side), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def speed(predictor: PixelDiff, n: int, side: int = 1024) -> None:
    pairs = [make_pair(i * TWINS, 100) for i in range(n)]
    data = [(_resized(p.image_a, side), _resized(p.image_b, side)) for p in pairs]
    predictor.predict(*data[0], categories=CATEGORIES)  # warm-up (imports, caches)
    times, cpu = [], 0.0
    for a, b in data:
        start, start_cpu = time.perf_counter(), time.process_time()
        predictor.predict(a, b, categories=CATEGORIES)
        times.append(time.perf_counter() - start)
        cpu += time.process_time() - start_cpu
    times.sort()
    mean = sum(times) / len(times)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    # CPU time is what one worker spends per pair; on a shared, loaded machine wall time
    # also counts the waits for a core.
    print(
        f"speed at {side}x{side}: {len(times)} pairs, {len(times) / cpu:.2f} pairs/s per worker "
        f"in CPU time ({1000 * cpu / len(times):.0f} ms a pair); wall {1 / mean:.2f} pairs/s "
        f"(mean {1000 * mean:.0f} ms, p95 {1000 * p95:.0f} ms, one thread); "
        f"load average {' '.join(_loadavg())}"
    )


def _loadavg() -> list[str]:
    try:
        return Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        return ["n/a"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--per-kind", type=int, default=1)
    parser.add_argument("--speed-pairs", type=int, default=24)
    parser.add_argument("--synthesized", action="store_true", help="pairs from any photo")
    parser.add_argument("--photos", type=Path, default=None, help="folder of photos")
    parser.add_argument("--per-image", type=int, default=10)
    args = parser.parse_args()
    predictor = PixelDiff()
    started = time.perf_counter()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.synthesized:
        photos = bench_photos(args.photos)
        skipped: list[str] = []
        print(
            f"pixeldiff v{predictor.version} on synthesized pairs: {len(photos)} photos "
            f"({', '.join(n for n, _ in photos)}), {args.per_image} pairs each, "
            f"seeds {seeds.start}-{seeds.stop - 1}"
        )
        accuracy(predictor, synthesized_pairs(photos, args.per_image, seeds, skipped))
        for line in skipped:
            print("skipped (no visible, confined edit found):", line)
    else:
        print(
            f"pixeldiff v{predictor.version}: seeds {seeds.start}-{seeds.stop - 1}, "
            f"{args.per_kind} pair(s) per kind and seed, {len(EDIT_KINDS)} kinds"
        )
        accuracy(predictor, demo_pairs(seeds, args.per_kind))
        speed(predictor, args.speed_pairs)
    print(f"bench ran {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
