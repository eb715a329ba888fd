"""The comparison bench's own machinery: the loops, the process groups, the table's ratios."""

from __future__ import annotations

import sys
import threading
import time
from types import SimpleNamespace

import pytest

from bench.loops import (
    Samples,
    ServerError,
    group_pids,
    many_users,
    one_client,
    percentile_ms,
    rss_mib,
    start_group,
    stop_group,
)
from bench.vs_labelstudio import Result, served_times, table


class FakeDriver:
    """Hands out `stock` items; fails the submits of the items listed in `broken`."""

    def __init__(self, stock: int, broken: frozenset[int] = frozenset()) -> None:
        self.stock, self.broken, self.lock = stock, broken, threading.Lock()
        self.leased: list[tuple[str, int]] = []
        self.submitted: list[int] = []
        self.started: list[float] = []

    def lease(self, user: str) -> tuple[int | None, float]:
        with self.lock:
            self.started.append(time.monotonic())
            if self.stock == 0:
                return None, 0.001
            self.stock -= 1
            self.leased.append((user, self.stock))
            return self.stock, 0.002

    def submit(self, user: str, item: int) -> float:
        if item in self.broken:
            raise ServerError(f"submit {item}: HTTP 500")
        with self.lock:
            self.submitted.append(item)
        return 0.003


def test_one_client_runs_its_rounds_and_stops_when_nothing_is_left():
    driver = FakeDriver(stock=3)

    samples = one_client(driver, "solo", rounds=5)

    assert len(samples.submit) == 3 and len(samples.next) == 4
    assert samples.errors == ["solo: nothing left to lease (seed more pairs)"]
    assert sorted(driver.submitted) == [0, 1, 2]


def test_many_users_each_do_their_rounds_and_failures_are_counted_not_fatal():
    driver = FakeDriver(stock=100, broken=frozenset({99}))

    samples = many_users(driver, [f"user{i}" for i in range(8)], rounds=4)

    assert len(samples.next) == 32 and len(samples.submit) == 31
    assert len(samples.errors) == 1 and "HTTP 500" in samples.errors[0]
    assert {user for user, _ in driver.leased} == {f"user{i}" for i in range(8)}
    assert samples.elapsed > 0 and samples.submits_per_second == 31 / samples.elapsed


def test_percentiles_in_milliseconds():
    values = [i / 1000 for i in range(1, 101)]  # 1 … 100 ms
    assert percentile_ms(values, 50) == pytest.approx(50.5)
    assert percentile_ms(values, 95) == pytest.approx(95.05)
    assert percentile_ms([0.004], 95) == 4.0
    assert percentile_ms([], 50) != percentile_ms([], 50)  # NaN: no samples, no figure


def test_stop_group_ends_the_server_and_the_children_it_forked(tmp_path):
    # A leader that forks a child and ignores SIGTERM, as a stuck server might.
    script = "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    script += "subprocess.Popen(['sleep', '60']); time.sleep(60)"
    server = start_group(
        [sys.executable, "-c", script], env={}, cwd=str(tmp_path), log_path=str(tmp_path / "log")
    )
    deadline = time.monotonic() + 10
    while len(group_pids(server.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(group_pids(server.pid)) == 2
    assert rss_mib(server.pid) > 1

    stop_group(server, timeout=1)

    assert group_pids(server.pid) == []
    assert server.returncode is not None


def _result(key: str, *, next_s: float, submit_s: float, per_second: float, rss: float) -> Result:
    single = Samples(next=[next_s] * 10, submit=[submit_s] * 10, elapsed=1.0)
    crowd = Samples(next=[next_s] * 10, submit=[submit_s] * int(per_second), elapsed=1.0)
    return Result(key, key, single, crowd, rss)


def test_table_puts_each_server_in_its_column_and_the_ratios_against_label_studio():
    results = [
        _result("labelstudio", next_s=0.080, submit_s=0.100, per_second=10, rss=500),
        _result("runserver", next_s=0.040, submit_s=0.050, per_second=20, rss=150),
        _result("gunicorn", next_s=0.010, submit_s=0.020, per_second=50, rss=125),
    ]
    results[2].served_next, results[2].served_submit = [0.004] * 10, [0.006] * 10
    args = SimpleNamespace(single=10, users=8, rounds=40)

    lines = table(results, None, args).splitlines()

    assert lines[0].startswith("| figure | labelstudio | runserver | gunicorn | goal |")
    assert lines[2] == (
        "| next, 1 client, p50 / p95 (×10) | 80.0 / 80.0 ms | 40.0 / 40.0 ms | 10.0 / 10.0 ms "
        "| ≤ 5 / 10 ms | 2.0× / 8.0× |"
    )
    assert lines[4] == (
        "| next, 1 client, server-side p50 / p95 (gunicorn's own request time) | – | – "
        "| 4.0 / 4.0 ms | ≤ 5 ms p50 | – |"
    )
    assert lines[6] == (
        "| 8 users ×40: submits/s | 10.0 | 20.0 | 50.0 | ≥ 5× Label Studio | 2.0× / 5.0× |"
    )
    assert lines[8] == (
        "| peak RSS per serving process | 500 MiB | 150 MiB | 125 MiB | ≤ 150 MiB | 3.3× / 4.0× |"
    )


def test_served_times_read_the_one_clients_rounds_from_gunicorns_access_log(tmp_path):
    log = tmp_path / "access.log"
    lines = [
        "POST /api/v1/projects/vs/next/ 200 9000",
        "POST /api/v1/assignments/1/submit/ 201 9000",
    ]
    for i in range(2, 5):  # the warm-up above, then 3 rounds, then the crowd's requests
        lines += [f"POST /api/v1/projects/vs/next/ 200 {i}000"]
        lines += [f"POST /api/v1/assignments/{i}/submit/ 201 {i}500"]
    lines += ["POST /api/v1/projects/vs/next/ 200 99000"]
    log.write_text("\n".join(lines) + "\n")

    served_next, served_submit = served_times(log, rounds=3)

    assert served_next == [0.002, 0.003, 0.004]
    assert served_submit == [0.0025, 0.0035, 0.0045]
