"""A real webhook receiver for the tests: an HTTP server on 127.0.0.1 that records every POST
and answers as scripted (a status code, or "hang" to answer later than the sender waits)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PORTS = range(8151, 8160)  # this branch's ports
DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    script: deque = field(default_factory=deque)  # answers to give, in order; then 200
    received: list[Received] = field(default_factory=list)
    hang_seconds: float = 3.0
    arrived: threading.Condition = field(default_factory=threading.Condition)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}/hook"

    def wait_for(self, n: int, timeout: float = 20.0) -> list[Received]:
        """Wait until ``n`` requests arrived (AssertionError after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.received) < n:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.received)} of {n} deliveries arrived"
                self.arrived.wait(left)
        return list(self.received)


def receiver_start() -> Receiver:
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            answer = receiver.script.popleft() if receiver.script else 200
            with receiver.arrived:
                receiver.received.append(
                    Received(self.path, dict(self.headers), body, time.monotonic())
                )
                receiver.arrived.notify_all()
            if answer == "hang":
                time.sleep(receiver.hang_seconds)
                answer = 200
            self.send_response(answer)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if answer < 300 else b"receiver says no")

        def log_message(self, *args) -> None:
            pass

    for port in PORTS:
        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
            break
        except OSError:
            continue
    else:
        raise RuntimeError("no free port in 8151-8159")
    server.daemon_threads = True
    receiver = Receiver(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver


def receiver_stop(receiver: Receiver) -> None:
    receiver.server.shutdown()
    receiver.server.server_close()


def documented_check():
    """The receiver-side signature check exactly as docs/webhooks.md prints it."""
    block = re.search(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    assert block, "docs/webhooks.md shows no Python snippet"
    namespace: dict = {}
    exec(block.group(1), namespace)
    return namespace["diffmark_signature_valid"]
