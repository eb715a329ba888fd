from django import template
from django.utils.safestring import SafeString

from annotator.models import PairStatus
from annotator.textformats import guidelines_html
from projects.models import Project

register = template.Library()


@register.simple_tag
def disputed_count(project: Project) -> int:
    """Disputed pairs waiting for a lead: the number on the project's Disputes tab."""
    return project.pairs.filter(status=PairStatus.DISPUTED).count()


@register.filter
def guidelines(text: str) -> SafeString:
    """A project's guidelines, a safe subset of markdown; everything else is escaped."""
    return guidelines_html(text or "")


@register.filter
def fact_key(key: str) -> str:
    """A job result's key as a label: "by_category" → "By category"."""
    return str(key).replace("_", " ").capitalize()


@register.filter
def fact_value(value: object) -> str:
    """A job result's value as words: a mapping becomes "position 2, motion 2"."""
    if isinstance(value, dict):
        return ", ".join(f"{str(k).replace('_', ' ')} {v}" for k, v in value.items()) or "—"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "—"
    return str(value)
