"""Memory and time of scoring a large predictions file over REST (issue #26).

    DIFFMARK_VAR_DIR=... DEBUG=1 .venv/bin/python bench/evaluate_rest.py --release 2 \\
        --token <API token> [--mb 200] [--port 8111]

Writes a predictions file of ``--mb`` MB for the release (every record answered with its own
answer once, then the same answers again with a long description, each a second line for its id:
read, parsed and counted as unparseable, as a model's repeated outputs would be), starts gunicorn
(one sync worker, no broker: the scoring runs in that worker after the response), POSTs the file
with curl, polls the job until it is done and reports the worker's peak RSS (VmHWM, read from
/proc at the end: the kernel's own high-water mark) with the time of the upload and the scoring.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def predictions(release_dir: Path, target: Path, megabytes: int) -> int:
    from pairdiff.scoring.own_answers import own_answer_lines

    records = json.loads((release_dir / "benchmark.json").read_text())
    lines = own_answer_lines(records, [])
    padding = " It is described at length." * 80
    size = 0
    with target.open("w") as out:
        for line in lines:
            size += out.write(json.dumps(line) + "\n")
        i = 0
        while True:  # up to the size, never past it (the limit is 200 MiB)
            line = json.loads(json.dumps(lines[i % len(lines)]))
            for change in line["changes"]:
                change["description"] += padding
            text = json.dumps(line) + "\n"
            if size + len(text) > megabytes * 2**20:
                return size
            size += out.write(text)
            i += 1
    return size


def peak_kib(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1])
    return 0


def worker_of(master: int) -> int:
    for _ in range(100):
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise SystemExit("gunicorn started no worker")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--port", type=int, default=8111)
    args = parser.parse_args()
    media = Path(os.environ["DIFFMARK_VAR_DIR"]) / "media"
    folder = next((media / "releases").glob(f"*/{args.release}"))
    target = Path(os.environ.get("TMPDIR", "/tmp")) / f"predictions-{args.mb}mb.jsonl"
    size = predictions(folder, target, args.mb)
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "config.wsgi", "-w", "1",
         "-b", f"127.0.0.1:{args.port}", "--timeout", "600"],
        cwd=ROOT,
    )  # fmt: skip
    try:
        worker = worker_of(server.pid)
        time.sleep(2)
        base = f"http://127.0.0.1:{args.port}/api/v1"
        started = time.perf_counter()
        posted = subprocess.run(
            ["curl", "-s", "-H", f"Authorization: Token {args.token}",
             "-F", f"file=@{target}", "-F", "model=bench-200mb", "-F", "coords=1000",
             f"{base}/releases/{args.release}/evaluations/"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        answered = time.perf_counter() - started
        body = json.loads(posted.stdout)
        if "job" not in body:
            raise SystemExit(f"refused: {body}")
        job = body["job"]["id"]
        while True:
            request = urllib.request.Request(
                f"{base}/jobs/{job}/", headers={"Authorization": f"Token {args.token}"}
            )
            state = json.loads(urllib.request.urlopen(request).read())
            if state["status"] in ("succeeded", "failed"):
                break
            time.sleep(0.5)
        finished = time.perf_counter() - started
        print(json.dumps({
            "file_bytes": size, "response_status": body["job"]["status"],
            "response_s": round(answered, 1), "job": state["status"],
            "job_result": state.get("result"), "done_s": round(finished, 1),
            "worker_peak_rss_mib": round(peak_kib(worker) / 1024, 1),
        }, indent=2))  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
        target.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
