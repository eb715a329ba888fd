from django import template
from django.utils.safestring import SafeString

from annotator.textformats import guidelines_html

register = template.Library()


@register.filter
def guidelines(text: str) -> SafeString:
    """A project's guidelines, a safe subset of markdown; everything else is escaped."""
    return guidelines_html(text or "")
