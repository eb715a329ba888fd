from importlib import import_module

from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"

    def ready(self) -> None:
        import_module(f"{self.name}.tasks")  # its tasks register in jobs.registry
