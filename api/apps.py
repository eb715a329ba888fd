from importlib import import_module

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "REST API"

    def ready(self) -> None:
        import_module(f"{self.name}.tasks")  # the webhook delivery task registers in webhooks
