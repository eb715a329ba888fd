"""The report of ``vs_labelstudio``: each stack's result, the machine it ran on, and the
comparison table (Markdown) with Diffmark's in-process server-side times."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import LOCAL_POSTGRES
from bench.loops import Samples, percentile_ms


@dataclass
class Result:
    key: str  # labelstudio, runserver, gunicorn
    name: str
    single: Samples
    crowd: Samples
    peak_rss: float
    notes: list[str] = field(default_factory=list)
    # The server's own clock (gunicorn's access log): 1 client's next and submit, in seconds.
    served_next: list[float] = field(default_factory=list)
    served_submit: list[float] = field(default_factory=list)


@dataclass
class InProcess:
    next_ms: list[float]
    submit_ms: list[float]
    wsgi_next_ms: list[float]
    wsgi_submit_ms: list[float]
    service_next_ms: list[float]
    queries_next: int
    queries_submit: int


def samples_line(label: str, s: Samples) -> str:
    return (
        f"  {label}: {len(s.next)} next p50/p95 {percentile_ms(s.next, 50):.1f}/"
        f"{percentile_ms(s.next, 95):.1f} ms; {len(s.submit)} submit p50/p95 "
        f"{percentile_ms(s.submit, 50):.1f}/{percentile_ms(s.submit, 95):.1f} ms; "
        f"{s.submits_per_second:.1f} submits/s; {len(s.errors)} errors"
    )


def machine() -> str:
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((ln.split(":", 1)[1].strip() for ln in cpuinfo if "model name" in ln), "?")
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem = next(int(ln.split()[1]) for ln in meminfo if ln.startswith("MemTotal"))
    return (
        f"{platform.node()}: {cpu}, {os.cpu_count()} cores, {mem / 1024 / 1024:.0f} GiB, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"PostgreSQL {_postgres_version()}, load average {os.getloadavg()[0]:.1f}"
    )


def _postgres_version() -> str:
    import psycopg

    with psycopg.connect(LOCAL_POSTGRES + "postgres") as conn:
        row = conn.execute("SHOW server_version").fetchone()
        assert row is not None
        return row[0].split()[0]


def _cell(values: list[float | None], fmt: str) -> str:
    return " / ".join("–" if v is None or v != v else fmt.format(v) for v in values)


def table(results: list[Result], inproc: InProcess | None, args) -> str:
    by = {r.key: r for r in results}
    ls, rs, gu = by.get("labelstudio"), by.get("runserver"), by.get("gunicorn")
    columns = [ls, rs, gu]
    header = ["figure"] + [r.name if r else "(not run)" for r in columns]
    header += ["goal", "LS ÷ runserver, LS ÷ gunicorn"]

    def ratio(f, higher_is_better=False) -> str:
        if ls is None:
            return "–"
        out = []
        for r in (rs, gu):
            if r is None or not f(r) or not f(ls):
                out.append("–")
            else:
                out.append(f"{(f(r) / f(ls)) if higher_is_better else (f(ls) / f(r)):.1f}×")
        return " / ".join(out)

    def lat(attr: str):
        return lambda r: percentile_ms(getattr(r.single, attr), 50)

    rows = [
        [f"next, 1 client, p50 / p95 (×{args.single})"]
        + [_row2(r.single.next if r else None) for r in columns]
        + ["≤ 5 / 10 ms", ratio(lat("next"))],
        ["submit, 1 client, p50 / p95"]
        + [_row2(r.single.submit if r else None) for r in columns]
        + ["≤ 8 / 15 ms", ratio(lat("submit"))],
        ["next, 1 client, server-side p50 / p95 (gunicorn's own request time)"]
        + [_row2(r.served_next if r else None) for r in columns]
        + ["≤ 5 ms p50", "–"],
        ["submit, 1 client, server-side p50 / p95"]
        + [_row2(r.served_submit if r else None) for r in columns]
        + ["", "–"],
        [f"{args.users} users ×{args.rounds}: submits/s"]
        + [f"{r.crowd.submits_per_second:.1f}" if r else "–" for r in columns]
        + ["≥ 5× Label Studio", ratio(lambda r: r.crowd.submits_per_second, True)],
        [f"{args.users} users: next p95"]
        + [f"{percentile_ms(r.crowd.next, 95):.0f} ms" if r else "–" for r in columns]
        + ["≤ 40 ms", ratio(lambda r: percentile_ms(r.crowd.next, 95))],
        ["peak RSS per serving process"]
        + [f"{r.peak_rss:.0f} MiB" if r else "–" for r in columns]
        + ["≤ 150 MiB", ratio(lambda r: r.peak_rss)],
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    if inproc:
        lines += ["", *_in_process_table(inproc)]
    return "\n".join(lines)


def _in_process_table(inproc: InProcess) -> list[str]:
    """Diffmark's server-side time: the same requests inside one process (DEBUG=0)."""
    rows = [
        (
            "next, WSGI application as a server calls it, p50 / p95",
            _row2(inproc.wsgi_next_ms),
            "≤ 5 ms p50",
        ),
        (
            "submit, WSGI application as a server calls it, p50 / p95",
            _row2(inproc.wsgi_submit_ms),
            "",
        ),
        ("next, Django test client (whole stack), p50 / p95", _row2(inproc.next_ms), ""),
        ("submit, Django test client (whole stack), p50 / p95", _row2(inproc.submit_ms), ""),
        ("next, service call only (no HTTP), p50 / p95", _row2(inproc.service_next_ms), ""),
        ("queries per next / submit", f"{inproc.queries_next} / {inproc.queries_submit}", ""),
    ]
    lines = ["| Diffmark server-side, in-process | measured | goal |", "|---|---|---|"]
    return lines + [f"| {a} | {b} | {c} |" for a, b, c in rows]


def _row2(values: list[float] | None) -> str:
    if not values:
        return "–"
    return f"{percentile_ms(values, 50):.1f} / {percentile_ms(values, 95):.1f} ms"
