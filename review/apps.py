from importlib import import_module

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"

    def ready(self) -> None:
        import_module(f"{self.name}.tasks")  # its tasks register in jobs.registry
