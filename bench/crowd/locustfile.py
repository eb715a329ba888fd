"""The day-long crowd (Locust): annotators at human pace, leads adjudicating, a researcher
polling releases. Run by bench/crowd/run.py, which seeds the project, starts the servers and
checks the invariants; it passes, in the environment:

    CROWD_SLUG        the project
    CROWD_TOKENS      a JSON file: {"annotators": [...], "leads": [...], "researchers": [...]}
    CROWD_LOG_DIR     where each Locust process appends its submit log (JSON lines)
    CROWD_THINK       seconds an annotator looks at a pair before submitting (default 25)

Every submit carries an Idempotency-Key; a submit whose answer never arrived (connection
dropped, timeout) is sent again with the same key, as a careful client does, and every
acknowledged submit is logged (assignment id, key, status) for the runner to compare with the
database.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import sys
import threading
import time
import uuid
from pathlib import Path

from locust import HttpUser, between, events, task

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.day_load import _answer  # noqa: E402  (the same answers as the day's bench)

SLUG = os.environ.get("CROWD_SLUG", "crowd")
THINK = float(os.environ.get("CROWD_THINK", "25"))
_TOKENS = json.loads(Path(os.environ.get("CROWD_TOKENS", "tokens.json")).read_text())
_LOG_DIR = Path(os.environ.get("CROWD_LOG_DIR", "."))
_lock = threading.Lock()
_counters = {kind: itertools.count() for kind in _TOKENS}
_log = None


def _write(entry: dict) -> None:
    global _log
    with _lock:
        if _log is None:
            _LOG_DIR.mkdir(parents=True, exist_ok=True)
            _log = (_LOG_DIR / f"submits-{os.getpid()}.jsonl").open("a", buffering=1)
        _log.write(json.dumps(entry) + "\n")


@events.request.add_listener
def _note_server_errors(request_type, name, response, exception, **kwargs) -> None:
    """Every 5xx and every request without an answer, for the runner's count; the time of
    every next, for its percentiles with and without the first minute (cold workers)."""
    status = getattr(response, "status_code", 0) if response is not None else 0
    if name == "next" and exception is None:
        _write({"kind": "next", "at": time.time(), "ms": kwargs.get("response_time", 0)})
    if status >= 500 or exception is not None and not status:
        _write({"kind": "error", "name": name, "status": status, "error": str(exception)[:200]})


def _token(kind: str) -> str:
    tokens = _TOKENS[kind]
    return tokens[next(_counters[kind]) % len(tokens)]


class Annotator(HttpUser):
    """Leases a pair, looks at it, saves a draft, submits; one in five boxes elsewhere (so
    disputes arise for the leads)."""

    wait_time = between(2, 8)  # between pairs; the pair itself takes CROWD_THINK ± 40 %
    weight = 100

    def on_start(self) -> None:
        self.client.headers["Authorization"] = f"Token {_token('annotators')}"
        self.done = False

    @task
    def annotate(self) -> None:
        if self.done:
            time.sleep(5)
            return
        with self.client.post(
            f"/api/v1/projects/{SLUG}/next/", name="next", catch_response=True
        ) as response:
            if response.status_code == 204:
                self.done = True
                response.success()
                return
            if response.status_code != 200:
                response.failure(f"next: {response.status_code}")
                return
            assignment = response.json()["assignment"]["id"]
        time.sleep(THINK * random.uniform(0.3, 0.7))
        body = _answer(random.random() < 0.2)
        self.client.put(f"/api/v1/assignments/{assignment}/draft/", json=body, name="draft")
        time.sleep(THINK * random.uniform(0.3, 0.7))
        self._submit(assignment, body)

    def _submit(self, assignment: int, body: dict) -> None:
        key = f"crowd-{uuid.uuid4()}"
        for attempt in range(6):
            try:
                response = self.client.post(
                    f"/api/v1/assignments/{assignment}/submit/",
                    json=body,
                    headers={"Idempotency-Key": key},
                    name="submit" if attempt == 0 else "submit (same key again)",
                    timeout=30,
                )
            except Exception:  # noqa: BLE001 - the answer is lost; send it again
                response = None
            status = response.status_code if response is not None else 0
            if status in (200, 201):
                _write({"kind": "submit", "assignment": assignment, "key": key, "status": status})
                return
            if status and status < 500:
                _write({"kind": "refused", "assignment": assignment, "status": status})
                return
            time.sleep(2**attempt)  # no answer or a 5xx: the same key again, later
        _write({"kind": "gave_up", "assignment": assignment, "key": key})


class Lead(HttpUser):
    """Reads the disputes queue and the agreement figures, and decides the oldest dispute."""

    wait_time = between(10, 30)
    fixed_count = 2

    def on_start(self) -> None:
        self.client.headers["Authorization"] = f"Token {_token('leads')}"

    @task(3)
    def adjudicate(self) -> None:
        disputes = self.client.get(f"/api/v1/projects/{SLUG}/disputes/", name="disputes")
        if disputes.status_code != 200 or not disputes.json()["results"]:
            return
        pair = random.choice(disputes.json()["results"][:5])["id"]
        self.client.get(f"/api/v1/pairs/{pair}/", name="pair")
        with self.client.post(
            f"/api/v1/pairs/{pair}/resolution/",
            json={"decision": random.choice(["accept_1", "accept_2"])},
            name="resolution",
            catch_response=True,
        ) as response:
            if response.status_code == 409:  # the other lead decided it first
                response.success()

    @task(1)
    def figures(self) -> None:
        self.client.get(f"/api/v1/projects/{SLUG}/agreement/", name="agreement")
        self.client.get(f"/api/v1/projects/{SLUG}/pairs/?status=accepted", name="pairs")


class Researcher(HttpUser):
    """Polls the releases and reads a page of the newest one's records."""

    wait_time = between(20, 40)
    fixed_count = 1

    def on_start(self) -> None:
        self.client.headers["Authorization"] = f"Token {_token('researchers')}"

    @task
    def poll(self) -> None:
        releases = self.client.get(f"/api/v1/projects/{SLUG}/releases/", name="releases")
        if releases.status_code == 200 and releases.json()["results"]:
            newest = releases.json()["results"][0]["id"]
            self.client.get(f"/api/v1/releases/{newest}/records/?split=test", name="records")
