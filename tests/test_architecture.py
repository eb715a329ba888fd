"""The import contract of pyproject.toml ([tool.importlinter]) holds: apps import downhill only
(no cycle between them) and pairdiff stays free of Django. `make lint` runs the same check."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: (\d+) kept, 0 broken", done.stdout)


def test_no_function_level_import_of_an_app():
    """No import hidden inside a function to dodge a cycle: imports sit at the top and run
    downhill. apps.py is exempt: AppConfig.ready() is where Django wants load-time imports."""
    hidden = re.compile(
        r"^[ \t]+(from|import) "
        r"(annotator|review|releases|console|api|jobs|webhooks|projects|accounts)\b",
        re.M,
    )
    found = [
        f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
        for app in (
            "annotator",
            "review",
            "releases",
            "console",
            "jobs",
            "webhooks",
            "projects",
            "accounts",
        )
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and path.name != "apps.py"
        for m in hidden.finditer(path.read_text())
    ]
    assert found == []
