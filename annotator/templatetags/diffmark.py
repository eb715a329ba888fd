from django import template
from django.utils.safestring import SafeString

from annotator.models import PairStatus, Project
from annotator.textformats import guidelines_html

register = template.Library()


@register.simple_tag
def disputed_count(project: Project) -> int:
    """Disputed pairs waiting for a lead: the number on the project's Disputes tab."""
    return project.pairs.filter(status=PairStatus.DISPUTED).count()


@register.filter
def guidelines(text: str) -> SafeString:
    """A project's guidelines, a safe subset of markdown; everything else is escaped."""
    return guidelines_html(text or "")
