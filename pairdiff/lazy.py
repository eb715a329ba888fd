"""Heavy libraries loaded on first use instead of on import.

A web process imports every app's modules (their tasks register at start-up), but only workers
synthesize pairs, run pixeldiff or build releases. Importing SciPy and scikit-image's filters at
module level cost each serving process about 50 MiB it never used (issue #17's memory goal), so
the modules that need them bind them through ``lazy_module``: the name is a real module object
whose code runs the first time one of its attributes is read.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module that executes when first used (at once if already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
