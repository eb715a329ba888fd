"""The request type of views that read ``request.htmx`` (set by django_htmx's middleware)."""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
