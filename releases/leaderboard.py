"""What a release page shows of its evaluations: the leaderboard rows and the breakdown charts
(per category and per difficulty), as plain values the template paints as CSS bars."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pairdiff.release.splits import DIFFICULTIES
from pairdiff.scoring.text import rule_label
from releases.forms import coords_in_form_words
from releases.models import Evaluation, EvaluationStatus

CHART_MODELS = 5  # the best few are compared in the charts; the table lists every one


@dataclass
class Row:
    rank: int | None  # within its scope; None while not scored
    evaluation: Evaluation
    figures: dict = field(default_factory=dict)  # name → value in [0, 1] or None
    colour: int | None = None  # its colour in the charts, when charted

    @property
    def message(self) -> str:
        """Why it was not scored, in the words of the page's form (not the command's)."""
        evaluation = self.evaluation
        job = evaluation.job
        text = evaluation.message or (job.message if job and job.status == "failed" else "")
        return coords_in_form_words(text)


@dataclass
class Scope:
    """Evaluations scored on the same splits by the same description rule: only those compare
    (a file answering the test split alone is not ranked against one answering train and test;
    a Grounded F1 by word overlap not against one by slots or BERTScore). ``splits`` and
    ``rule`` are "" for the evaluations not scored (yet)."""

    splits: str
    rows: list[Row]
    rule: str = ""


@dataclass
class Chart:
    title: str
    note: str
    groups: list[dict]  # {"name", "bars": [{"model", "colour", "value", "pct"}]}


@dataclass
class Board:
    scopes: list[Scope]
    count: int
    models: list[dict]  # the charted models with their colour index, best first
    chart_splits: str
    charts: list[Chart]
    text_metrics: list[str]
    circular: bool  # some evaluation has circular accuracy (the release ships rotations)
    swapped: bool = False  # some evaluation has an order-swap score
    mincu_missing: str = ""  # why MinCU's rule could not be computed, when it could not

    @property
    def columns(self) -> int:
        """The table's columns: rank, model, eight figures, and the optional ones."""
        return 9 + self.circular + self.swapped


def leaderboard(evaluations: Iterable[Evaluation], categories: list[Mapping]) -> Board:
    """Scored evaluations ranked within their scope (the splits scored; best Grounded F1 first,
    as ``evaluations_of`` orders them), the scope with most evaluations first, those not scored
    last; charts of the best CHART_MODELS of that first scope."""
    scopes: dict[tuple[str, str], list[Row]] = {}
    waiting = []
    count = 0
    for evaluation in evaluations:
        count += 1
        if evaluation.status == EvaluationStatus.READY and evaluation.result:
            figures = _figures(evaluation.result)
            rows = scopes.setdefault((figures["rule"], figures["splits"]), [])
            rows.append(Row(len(rows) + 1, evaluation, figures))
        else:
            waiting.append(Row(None, evaluation))
    ordered = [
        Scope(splits=k[1], rows=v, rule=k[0])
        for k, v in sorted(scopes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]
    charted = ordered[0].rows[:CHART_MODELS] if ordered else []
    for colour, row in enumerate(charted, start=1):
        row.colour = colour
    models = [{"name": r.evaluation.model_name, "colour": r.colour} for r in charted]
    names = {c["slug"]: c["name"] for c in categories}
    order = [c["slug"] for c in categories]
    charts = [
        _chart(charted, "grounding", "by_category", "grounded_f1", names, order,
               "Grounded F1 per category", "box IoU ≥ 0.5 on every side, labels and "
               "description agree (MinCU)"),
        _chart(charted, "grounding", "by_difficulty", "grounded_f1", {}, list(DIFFICULTIES),
               "Grounded F1 per difficulty", "largest box: easy > 25%, medium 10–25%, "
               "hard ≤ 10% of the image"),
        _chart(charted, "questions", "by_category", "accuracy", names, order,
               "Question accuracy per category", "four options, one true (VDiff-Bench); "
               "chance is 25%"),
        _chart(charted, "questions", "by_difficulty", "accuracy", {}, list(DIFFICULTIES),
               "Question accuracy per difficulty", "the difficulty of the question's pair"),
    ]  # fmt: skip
    scored = [row for scope in ordered for row in scope.rows]
    metrics = sorted({r.figures["rule"] for r in scored})
    missing = [r.figures["mincu_missing"] for r in scored if r.figures["mincu_missing"]]
    return Board(
        scopes=ordered + ([Scope("", waiting)] if waiting else []),
        count=count,
        models=models,
        chart_splits=ordered[0].splits if ordered else "",
        charts=[c for c in charts if c.groups],
        text_metrics=metrics,
        circular=any(r.figures.get("circular_accuracy") is not None for r in scored),
        swapped=any(r.figures.get("swap_drop") is not None for r in scored),
        mincu_missing=missing[0] if missing else "",
    )


def _figures(result: Mapping) -> dict:
    g = result.get("grounding") or {}
    q = result.get("questions") or {}
    mincu = g.get("mincu") or {}
    swap = result.get("order_swap") or {}
    drop = (swap.get("grounding") or {}).get("drop")
    if drop is None:
        drop = (swap.get("questions") or {}).get("drop")
    return {
        "rule": rule_label(result["text_metric"]),
        "mincu_f1": mincu.get("grounded_f1") if mincu.get("computable") else None,
        "mincu_missing": "" if not g or mincu.get("computable") else mincu.get("why", ""),
        "swap_drop": drop,
        "grounded_f1": g.get("grounded_f1"),
        "miou": g.get("miou"),
        "map": (g.get("map") or {}).get("mean"),
        "hallucination_rate": g.get("hallucination_rate") if g else None,
        "accuracy": q.get("accuracy"),
        "circular_accuracy": q.get("circular_accuracy"),
        "unparseable_rate": (result.get("unparseable") or {}).get("rate"),
        "records": g.get("records"),
        "splits": ", ".join(sorted(set(g.get("splits", [])) | set(q.get("splits", [])))),
        "questions": q.get("questions"),
    }


def _chart(rows, part, breakdown, metric, names, order, title, note) -> Chart:
    keys: set[str] = set()
    for row in rows:
        keys |= set((row.evaluation.result.get(part) or {}).get(breakdown) or {})
    ranked = sorted(keys, key=lambda k: (order.index(k) if k in order else len(order), k))
    groups = []
    for key in ranked:
        bars = []
        for row in rows:
            cell = ((row.evaluation.result.get(part) or {}).get(breakdown) or {}).get(key)
            value = (cell or {}).get(metric)
            bars.append(
                {
                    "model": row.evaluation.model_name,
                    "colour": row.colour,
                    "value": value,
                    "pct": None if value is None else round(100 * value, 1),
                }
            )
        groups.append({"name": names.get(key, key), "bars": bars})
    return Chart(title=title, note=note, groups=groups)
