from importlib import import_module

from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Releases"

    def ready(self) -> None:
        import_module(f"{self.name}.tasks")  # its tasks register in jobs.registry
