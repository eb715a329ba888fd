"""Label Studio for the speed comparison: installed in its own virtualenv outside the project,
started with `label-studio start` on loopback against a PostgreSQL database of its own, seeded
with one project of image-pair tasks and annotator accounts, and driven through its REST API.

API used (Label Studio 1.23.2, read from its source): `GET /api/projects/{id}/next/` (the next
task for the caller, locked for them; 404 when none is left) and
`POST /api/tasks/{id}/annotations/` (store an annotation; releases the lock). Accounts
authenticate with the legacy `Authorization: Token <key>` header, enabled for the organization
with `--enable-legacy-api-token` — a database lookup per request, as Diffmark's token is.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from bench.loops import expect, http_call, start_group, stop_group, wait_until_answers

VERSION = "1.23.2"
ADMIN_EMAIL = "admin@bench.local"
ADMIN_PASSWORD = "bench-only-password-1"
ADMIN_TOKEN = "bench0admin0token0" + "0" * 22  # 40 characters, as Label Studio's own keys
CATEGORIES = ("attribute", "object", "position", "count")
TIERS = ("excellent", "good", "fair", "poor")

LABEL_CONFIG = f"""<View>
  <Header value="$instruction"/>
  <Image name="image_a" value="$image_a"/>
  <RectangleLabels name="box_a" toName="image_a">
    {"".join(f'<Label value="{c}"/>' for c in CATEGORIES)}
  </RectangleLabels>
  <Image name="image_b" value="$image_b"/>
  <RectangleLabels name="box_b" toName="image_b">
    {"".join(f'<Label value="{c}"/>' for c in CATEGORIES)}
  </RectangleLabels>
  <TextArea name="description" toName="image_a" maxSubmissions="1"/>
  <Choices name="tier" toName="image_a" choice="single">
    {"".join(f'<Choice value="{t}"/>' for t in TIERS)}
  </Choices>
</View>"""


def ensure_installed(venv: Path) -> Path:
    """The `label-studio` executable of `venv`, installing Label Studio there when missing."""
    executable = venv / "bin/label-studio"
    if executable.exists() and installed_version(venv) == VERSION:
        return executable
    print(f"installing Label Studio {VERSION} into {venv} (a few minutes, once)", flush=True)
    log = venv.parent / f"{venv.name}-install.log"
    if not (venv / "bin/pip").exists():
        # From a virtualenv's interpreter, venv builds on the base interpreter, not on it.
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    with open(log, "wb") as out:
        subprocess.run(
            [str(venv / "bin/pip"), "install", "--quiet", f"label-studio=={VERSION}"],
            check=True,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return executable


_VERSION_SCRIPT = "import importlib.metadata as m; print(m.version('label-studio'))"


def installed_version(venv: Path) -> str:
    """The version of Label Studio installed in `venv`, or "" when there is none."""
    done = subprocess.run(
        [str(venv / "bin/python"), "-c", _VERSION_SCRIPT],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def environment(
    *, base: dict[str, str], data_dir: Path, files_root: Path, database: str
) -> dict[str, str]:
    """Label Studio's settings read these (core/settings/base.py, get_env); `base` is the
    environment the bench started with, before any of Diffmark's settings were added."""
    env = {k: v for k, v in base.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    return env | {
        "DJANGO_DB": "default",  # PostgreSQL, configured by the POSTGRE_* variables
        "POSTGRE_NAME": database,
        "POSTGRE_USER": "postgres",
        "POSTGRE_PASSWORD": "postgres",  # ignored by the local server's trust authentication
        "POSTGRE_HOST": "127.0.0.1",
        "POSTGRE_PORT": "5432",
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
        "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(files_root),
        "LOG_LEVEL": "WARNING",
        "DEBUG": "false",  # Label Studio's own default for `label-studio start`
    }


def _argv(executable: Path, command: str, env: dict) -> list[str]:
    return [
        str(executable),
        command,
        "--data-dir",
        env["LABEL_STUDIO_BASE_DATA_DIR"],
        "--log-level",
        "WARNING",
        "--username",
        ADMIN_EMAIL,
        "--password",
        ADMIN_PASSWORD,
        "--user-token",
        ADMIN_TOKEN,
        "--enable-legacy-api-token",
    ]


def init(executable: Path, env: dict, *, workdir: Path) -> None:
    """`label-studio init`: every migration (a minute or two on PostgreSQL), the organization
    with legacy tokens on, and its admin — apart from the server, so the server's memory is
    what serving takes."""
    with open(workdir / "ls-init.log", "wb") as log:
        done = subprocess.run(
            [*_argv(executable, "init", env), "--quiet"],
            env=env,
            cwd=workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=900,
            start_new_session=True,
        )
    if done.returncode != 0:
        tail = (workdir / "ls-init.log").read_text(errors="replace").splitlines()[-20:]
        raise SystemExit("label-studio init failed:\n" + "\n".join(tail))


def start(executable: Path, env: dict, *, host: str, port: int, workdir: Path):
    """`label-studio start` in its own process group; returns once it answers."""
    argv = _argv(executable, "start", env)
    argv += ["--no-browser", "--internal-host", host, "--port", str(port)]
    server = start_group(argv, env=env, cwd=str(workdir), log_path=str(workdir / "ls.log"))
    try:
        wait_until_answers(host, port, "/health", seconds=300, process=server)
    except BaseException:
        stop_group(server)
        raise
    return server


_USERS_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import label_studio
    sys.path.insert(0, os.path.dirname(label_studio.__file__))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "label_studio.core.settings.label_studio")
    import django
    django.setup()
    from organizations.models import Organization
    from rest_framework.authtoken.models import Token
    from users.models import User

    org = Organization.objects.first()
    tokens = {}
    for email in json.loads(sys.argv[1]):
        user = User.objects.filter(email=email).first()
        if user is None:
            user = User.objects.create_user(email=email, password="bench-only-password-1")
        org.add_user(user)
        user.active_organization = org
        user.save(update_fields=["active_organization"])
        tokens[email] = Token.objects.get_or_create(user=user)[0].key
    print(json.dumps(tokens))
    """
)


def users_create(executable: Path, env: dict, emails: list[str]) -> dict[str, str]:
    """Organization members with legacy API tokens, made with Label Studio's own models (its
    REST API has no way to hand out another user's token)."""
    python = executable.parent / "python"
    done = subprocess.run(
        [str(python), "-c", _USERS_SCRIPT, json.dumps(emails)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def project_seed(host: str, port: int, *, n_tasks: int, size: tuple[int, int]) -> int:
    """One project with overlap 1 and `n_tasks` image-pair tasks; returns its id."""
    headers = {"Authorization": f"Token {ADMIN_TOKEN}", "Content-Type": "application/json"}
    body = {"title": "bench", "label_config": LABEL_CONFIG, "maximum_annotations": 1}
    status, data, _ = http_call(host, port, "POST", "/api/projects/", headers, body)
    expect(status, data, (201,), "create the Label Studio project")
    project = json.loads(data)["id"]
    tasks = [
        {
            "image_a": "/data/local-files/?d=a.png",
            "image_b": "/data/local-files/?d=b.png",
            "instruction": f"pair p{i}: {size[0]}x{size[1]}",
        }
        for i in range(n_tasks)
    ]
    status, data, _ = http_call(
        host, port, "POST", f"/api/projects/{project}/import", headers, tasks
    )
    expect(status, data, (201,), "import the Label Studio tasks")
    status, data, _ = http_call(host, port, "GET", f"/api/projects/{project}/", headers)
    expect(status, data, (200,), "read the Label Studio project")
    held = json.loads(data)["task_number"]
    if held != n_tasks:
        raise SystemExit(f"Label Studio holds {held} tasks, not {n_tasks}")
    return project


def _result(width: int, height: int) -> list[dict]:
    """The same answer Diffmark's loop submits: one box per side, a sentence, a tier."""

    def box(side: str) -> dict:
        return {
            "id": f"box{side}",
            "from_name": f"box_{side}",
            "to_name": f"image_{side}",
            "type": "rectanglelabels",
            "original_width": width,
            "original_height": height,
            "image_rotation": 0,
            "value": {
                # Diffmark's [20, 10, 40, 30] in pixels, as Label Studio's percentages.
                "x": 20 / width * 100,
                "y": 10 / height * 100,
                "width": 20 / width * 100,
                "height": 20 / height * 100,
                "rotation": 0,
                "rectanglelabels": ["attribute"],
            },
        }

    return [
        box("a"),
        box("b"),
        {
            "from_name": "description",
            "to_name": "image_a",
            "type": "textarea",
            "value": {"text": ["The patch changed colour."]},
        },
        {
            "from_name": "tier",
            "to_name": "image_a",
            "type": "choices",
            "value": {"choices": ["excellent"]},
        },
    ]


class LabelStudioDriver:
    """next → submit over Label Studio's REST API, one token per user."""

    def __init__(self, host: str, port: int, project: int, tokens: dict[str, str], size) -> None:
        self.host, self.port, self.project, self.tokens = host, port, project, tokens
        self.answer = {"result": _result(*size), "lead_time": 9.0}

    def _headers(self, user: str) -> dict:
        return {"Authorization": f"Token {self.tokens[user]}", "Content-Type": "application/json"}

    def lease(self, user: str) -> tuple[int | None, float]:
        path = f"/api/projects/{self.project}/next/"
        status, data, elapsed = http_call(self.host, self.port, "GET", path, self._headers(user))
        if status == 404:
            return None, elapsed
        expect(status, data, (200,), "Label Studio next")
        return json.loads(data)["id"], elapsed

    def submit(self, user: str, item: int) -> float:
        path = f"/api/tasks/{item}/annotations/?project={self.project}"
        status, data, elapsed = http_call(
            self.host, self.port, "POST", path, self._headers(user), self.answer
        )
        expect(status, data, (201,), "Label Studio submit")
        return elapsed

    def annotations(self) -> int:
        """Annotations stored in the project, read back once the loops are over."""
        headers = self._headers(next(iter(self.tokens)))
        path = f"/api/projects/{self.project}/"
        status, data, _ = http_call(self.host, self.port, "GET", path, headers)
        expect(status, data, (200,), "read the Label Studio project")
        return json.loads(data)["total_annotations_number"]
