"""The text formats leads type — categories, vocabulary, synonyms, guidelines — read and written.

Each parser reports a bad line by its number, so the message points at what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from django.core.exceptions import ValidationError
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from pairdiff.labels import normalise_label

CATEGORY_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MAX_LABEL_LENGTH = 200


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, stripped line) of the non-blank lines that are not # comments."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            yield number, line


def categories_parse(text: str) -> list[dict[str, str]]:
    """Lines "slug | Name | hint" (name and hint optional) as a project's categories."""
    categories: list[dict[str, str]] = []
    problems: list[str] = []
    for number, line in _lines(text):
        slug, name, hint, *extra = [part.strip() for part in line.split("|")] + ["", ""]
        if any(extra):
            problems.append(f"line {number}: at most three parts, slug | Name | hint")
        elif not CATEGORY_SLUG.fullmatch(slug):
            problems.append(
                f"line {number}: {slug!r} is not a slug (lowercase letters, digits, _ or -, "
                "up to 64, starting with a letter or digit)"
            )
        elif slug in {c["slug"] for c in categories}:
            problems.append(f"line {number}: {slug!r} is listed twice")
        else:
            name = name or slug.replace("_", " ").replace("-", " ").capitalize()
            categories.append({"slug": slug, "name": name[:100], "hint": hint[:300]})
    if problems:
        raise ValidationError(problems)
    if not categories:
        raise ValidationError("a custom taxonomy needs at least one category")
    return categories


def categories_text(categories: list[dict[str, str]]) -> str:
    lines = (f"{c['slug']} | {c['name']} | {c.get('hint', '')}" for c in categories)
    return "\n".join(line.rstrip(" |") for line in lines)


def vocabulary_parse(text: str) -> list[str]:
    """One entity label per line; repeats (by normalised label) are dropped, first one kept."""
    labels: list[str] = []
    seen: set[str] = set()
    for number, line in _lines(text):
        if len(line) > MAX_LABEL_LENGTH:
            raise ValidationError(f"line {number}: at most {MAX_LABEL_LENGTH} characters")
        key = normalise_label(line)
        if key not in seen:
            seen.add(key)
            labels.append(line)
    return labels


def synonyms_parse(text: str) -> dict[str, list[str]]:
    """Lines "canonical: variant, variant" as {canonical: [variants]}.

    Labels compare after normalisation (case, plural, articles), so a variant that normalises
    to its own canonical is dropped; one under two canonicals, or a canonical that is also
    another's variant, is refused: the agreement rules would silently pick one.
    """
    synonyms: dict[str, list[str]] = {}
    owner: dict[str, str] = {}  # normalised label → the canonical it belongs to
    problems: list[str] = []
    for number, line in _lines(text):
        canonical, colon, rest = (part.strip() for part in line.partition(":"))
        variants = [v.strip() for v in rest.split(",") if v.strip()]
        if not colon or not canonical or not variants:
            problems.append(f"line {number}: write it as canonical: variant, variant")
            continue
        problems += _synonym_line_problems(number, canonical, variants, owner)
        key = normalise_label(canonical)
        kept = synonyms.setdefault(canonical, [])
        for variant in variants:
            if normalise_label(variant) != key and variant not in kept:
                kept.append(variant)
    if problems:
        raise ValidationError(problems)
    return {canonical: variants for canonical, variants in synonyms.items() if variants}


def _synonym_line_problems(
    number: int, canonical: str, variants: list[str], owner: dict[str, str]
) -> list[str]:
    """Clashes of one line with the lines before it; records the line's labels in `owner`."""
    problems = []
    key = normalise_label(canonical)
    if owner.get(key, key) != key:
        problems.append(f"line {number}: {canonical!r} is already a variant of {owner[key]!r}")
    owner.setdefault(key, key)
    for variant in variants:
        vkey = normalise_label(variant)
        if vkey != key and owner.get(vkey, key) != key:
            problems.append(
                f"line {number}: {variant!r} already belongs to {owner[vkey]!r}"
                if owner[vkey] != vkey
                else f"line {number}: {variant!r} is a canonical name of its own"
            )
        owner.setdefault(vkey, key)
    return problems


def synonyms_text(synonyms: dict[str, list[str]]) -> str:
    return "\n".join(f"{canonical}: {', '.join(v)}" for canonical, v in synonyms.items())


# --- guidelines: a tiny, safe markdown subset ------------------------------------------------

_LIST_ITEM = re.compile(r"^(?:[-*+]|(\d+)[.)])\s+(.*)$")
_HEADING = re.compile(r"^(#{1,3})\s+(.*)$")
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s()]+)\)")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EM = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_HELD = re.compile(r"\x00(\d+)\x00")


def guidelines_html(text: str) -> SafeString:
    """Markdown guidelines as HTML: paragraphs, # headings, - and 1. lists, **bold**, *em*,
    `code` and [links](https://…). Everything else is escaped text, so a lead's guidelines
    can never inject markup or script into an annotator's page; links go to http(s) only."""
    blocks: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    ordered = False
    for raw in [*text.replace("\x00", "").splitlines(), ""]:
        line = raw.strip()
        item, heading = _LIST_ITEM.match(line), _HEADING.match(line)
        if (not line or item or heading) and paragraph:
            blocks.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph = []
        if (not item or bool(item.group(1)) != ordered) and items:
            tag = "ol" if ordered else "ul"
            blocks.append(f"<{tag}>{''.join(items)}</{tag}>")
            items = []
        if item:
            ordered = bool(item.group(1))
            items.append(f"<li>{_inline(item.group(2))}</li>")
        elif heading:
            level = len(heading.group(1)) + 2  # h3–h5: below the page's own headings
            blocks.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line:
            paragraph.append(line)
    # Safe: every piece of the lead's text went through escape() before tags were added.
    return mark_safe("\n".join(blocks))


def _inline(text: str) -> str:
    """Escaped `text` with code spans, links, bold and emphasis. Code spans and link targets
    are held aside while emphasis is applied, so an underscore in a URL stays an underscore."""
    held: list[str] = []

    def hold(html: str) -> str:
        held.append(html)
        return f"\x00{len(held) - 1}\x00"

    html = _CODE.sub(lambda m: hold(f"<code>{m.group(1)}</code>"), escape(text))
    html = _LINK.sub(
        lambda m: (
            hold(f'<a href="{m.group(2)}" rel="nofollow noopener noreferrer">')
            + m.group(1)
            + hold("</a>")
        ),
        html,
    )
    html = _STRONG.sub(r"<strong>\1</strong>", html)
    html = _EM.sub(r"<em>\2</em>", html)
    return _HELD.sub(lambda m: held[int(m.group(1))], html)


# --- project settings ------------------------------------------------------------------------
