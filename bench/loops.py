"""The loops a speed comparison runs against any annotation server, and what it reads off them.

A server is driven through a `Driver`: `lease(user)` asks for the next item (None when nothing is
left), `submit(user, item)` stores an answer for it. The same two loops run against every server:
one client doing next → submit in a row, then several distinct users released together from a
barrier. Latency is measured by the client (request written → response read, a new loopback
connection per request so no server is favoured by keep-alive).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

MAX_ERRORS = 20  # a server answering this many unexpected statuses is broken, not slow


class Driver(Protocol):
    def lease(self, user: str) -> tuple[int | None, float]: ...

    def submit(self, user: str, item: int) -> float: ...


class ServerError(Exception):
    """The server answered a status the loop did not expect."""


@dataclass
class Samples:
    next: list[float] = field(default_factory=list)
    submit: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    def extend(self, other: Samples) -> None:
        self.next += other.next
        self.submit += other.submit
        self.errors += other.errors

    @property
    def submits_per_second(self) -> float:
        return len(self.submit) / self.elapsed if self.elapsed else 0.0


def http_call(
    host: str, port: int, method: str, path: str, headers: dict, body: object = None
) -> tuple[int, bytes, float]:
    """(status, body, seconds) of one request on a fresh connection."""
    payload = json.dumps(body).encode() if body is not None else None
    conn = http.client.HTTPConnection(host, port, timeout=60)
    try:
        started = time.perf_counter()
        conn.request(method, path, body=payload, headers=headers)
        response = conn.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - started
    finally:
        conn.close()
    return response.status, data, elapsed


def expect(status: int, data: bytes, wanted: tuple[int, ...], what: str) -> None:
    if status not in wanted:
        raise ServerError(f"{what}: HTTP {status} {data[:200]!r}")


def _user_loop(driver: Driver, user: str, rounds: int) -> Samples:
    samples = Samples()
    for _ in range(rounds):
        try:
            item, elapsed = driver.lease(user)
            samples.next.append(elapsed)
            if item is None:
                samples.errors.append(f"{user}: nothing left to lease (seed more pairs)")
                break
            samples.submit.append(driver.submit(user, item))
        except (ServerError, OSError) as exc:
            samples.errors.append(f"{user}: {exc}")
            if len(samples.errors) >= MAX_ERRORS:
                break
    return samples


def one_client(driver: Driver, user: str, rounds: int) -> Samples:
    """next → submit, `rounds` times in a row, by one user."""
    started = time.perf_counter()
    samples = _user_loop(driver, user, rounds)
    samples.elapsed = time.perf_counter() - started
    return samples


def many_users(driver: Driver, users: list[str], rounds: int) -> Samples:
    """Every user loops next → submit `rounds` times; all start together from a barrier."""
    barrier = threading.Barrier(len(users) + 1)
    results: list[Samples] = []
    lock = threading.Lock()

    def run(user: str) -> None:
        barrier.wait()
        samples = _user_loop(driver, user, rounds)
        with lock:
            results.append(samples)

    threads = [threading.Thread(target=run, args=(u,), daemon=True) for u in users]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    total = Samples(elapsed=time.perf_counter() - started)
    for samples in results:
        total.extend(samples)
    return total


def percentile_ms(values: list[float], pct: int) -> float:
    """The pct-th percentile in milliseconds (NaN without samples)."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1] * 1000


# --- processes ---------------------------------------------------------------------------------


def start_group(argv: list[str], *, env: dict, cwd: str, log_path: str) -> subprocess.Popen:
    """A server in its own process group (so it and every child it forks stop together)."""
    log = open(log_path, "ab")  # noqa: SIM115 - closed with the process by stop_group
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    process.log = log  # type: ignore[attr-defined]
    return process


def stop_group(process: subprocess.Popen, timeout: float = 15) -> None:
    """SIGTERM to the whole group, SIGKILL for whatever is left after `timeout`."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout)
    # Children (gunicorn workers, runserver's reloaded child) may outlive the leader briefly.
    deadline = time.monotonic() + timeout
    while group_pids(process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    # SIGKILL is delivered asynchronously: a child may still be running for a moment after it.
    deadline = time.monotonic() + 5
    while group_pids(process.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    log = getattr(process, "log", None)
    if log is not None:
        log.close()


def group_pids(pgid: int) -> list[int]:
    """Live processes of the process group (read from /proc; Linux only)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def rss_mib(pgid: int) -> float:
    """The resident set (VmRSS) of the largest process in the group now, in MiB."""
    largest = 0
    for pid in group_pids(pgid):
        try:
            with open(f"/proc/{pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        largest = max(largest, int(line.split()[1]))
        except OSError:
            continue
    return largest / 1024


class RssSampler:
    """The peak of `rss_mib` while the block runs, sampled every `every` seconds: memory while
    serving, not what start-up work (migrations, imports of tasks) may have touched before."""

    def __init__(self, pgid: int, every: float = 0.25) -> None:
        self.pgid, self.every, self.peak = pgid, every, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, rss_mib(self.pgid))
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mib(self.pgid))


def wait_until_answers(host: str, port: int, path: str, *, seconds: float, process) -> None:
    """Poll until the server answers any HTTP status on `path`; fail if it dies or times out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(
                f"the server on port {port} exited with {process.returncode}{_log_tail(process)}"
            )
        try:
            http_call(host, port, "GET", path, {})
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(
        f"the server on port {port} did not answer within {seconds:.0f} s{_log_tail(process)}"
    )


def _log_tail(process, lines: int = 20) -> str:
    log = getattr(process, "log", None)
    if log is None:
        return ""
    log.flush()
    with open(log.name, errors="replace") as handle:
        return "; its log ends:\n" + "".join(handle.readlines()[-lines:])


def port_is_free(host: str, port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex((host, port)) != 0
