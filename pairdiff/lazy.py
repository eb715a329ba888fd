"""Heavy libraries loaded on first use instead of on import.

A web process imports every app's modules (their tasks register at start-up), but only workers
synthesize pairs, run pixeldiff or build releases. Importing SciPy and scikit-image's filters at
module level cost each serving process about 50 MiB it never used (issue #17's memory goal), so
the modules that need them bind them through ``lazy_module``: a stand-in module that imports the
real one the first time one of its attributes is read.

The stand-in is deliberately not put in ``sys.modules`` (as ``importlib.util.LazyLoader`` would
put it): whatever walks ``sys.modules`` and reads each module's attributes would import them all.
Django's autoreloader does exactly that once a second, which cost ``make run`` 31 MiB.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any


class _Deferred(ModuleType):
    def __getattr__(self, attribute: str) -> Any:
        # Only reached for names the stand-in does not hold yet, i.e. before the first import.
        module = importlib.import_module(self.__name__)
        self.__dict__.update(vars(module))
        return getattr(module, attribute)


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module that is imported when first used (at once if already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return _Deferred(name)
