"""Settings for mypy's Django plugin (pyproject.toml [tool.django-stubs]).

The plugin imports the settings to learn the installed apps and models; config.settings refuses to
load without SECRET_KEY unless DEBUG is on, so this gives it a placeholder. No database is opened.
"""

import os

os.environ.setdefault("SECRET_KEY", "typecheck-only-never-served-0123456789abcdefghijklmnopqrstuvw")

from config.settings import *  # noqa: E402, F403
