"""A serving process loads what serving needs: the libraries only workers use (release
Parquet, COCO scoring, image synthesis and pixeldiff, optimal matching by SciPy) stay out of
it until something calls them (issue #17's ≤ 150 MiB per serving process)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import importlib.util, json, sys
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver
get_wsgi_application()
get_resolver().url_patterns
if "--reloader-scan" in sys.argv:
    # What `make run`'s autoreloader does every second: read every loaded module's files.
    from django.utils import autoreload
    list(autoreload.iter_all_python_module_files())
def executed(name):
    module = sys.modules.get(name)
    return module is not None and not isinstance(module, importlib.util._LazyModule)
names = ["pyarrow", "pycocotools", "scipy.optimize", "scipy.ndimage", "scipy.sparse",
         "skimage.filters", "skimage.segmentation", "skimage.transform", "imagecodecs", "numpy",
         "PIL.Image"]
print(json.dumps({name: executed(name) for name in names}))
"""


def _libraries_loaded(*argv: str) -> set[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "0",
        "SECRET_KEY": "web-process-probe-0123456789abcdefghijklmnopqrstuvwxyzABCDEF",
        "ALLOWED_HOSTS": "testserver",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", PROBE, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    return {name for name, yes in loaded.items() if yes}


def test_a_web_process_loads_no_worker_only_library() -> None:
    assert _libraries_loaded() == {"numpy", "PIL.Image"}


def test_the_development_servers_reloader_loads_none_either() -> None:
    assert _libraries_loaded("--reloader-scan") == {"numpy", "PIL.Image"}
