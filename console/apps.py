from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The leads' project pages (settings, members, uploads, jobs, pairs browser) and the demo."""

    name = "console"
    verbose_name = "Console"
