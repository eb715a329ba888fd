"""A configuration check: DIFFMARK_WEBHOOK_ALLOWED_NETWORKS must be CIDRs."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

from webhooks.addresses import networks_parse


@register()
def allowed_networks_check(app_configs, **kwargs) -> list[Error]:
    try:
        networks_parse(settings.DIFFMARK_WEBHOOK_ALLOWED_NETWORKS or "")
    except ValueError as exc:
        return [
            Error(
                f"DIFFMARK_WEBHOOK_ALLOWED_NETWORKS: {exc}",
                hint="comma-separated networks such as 10.20.0.0/16,192.168.5.7/32",
                id="webhooks.E001",
            )
        ]
    return []
