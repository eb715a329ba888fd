"""Every relative link in the README, docs/ and bench/RESULTS.md points at a file that exists,
and a link to a heading (`page.md#heading`, `#heading`) at a heading that page has, by
GitHub's rule for heading anchors. Links to the web are not followed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", ROOT / "bench" / "RESULTS.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")


def _prose(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, inline code blanked out, with their numbers."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, INLINE_CODE.sub("``", line)))
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: links reduced to their text, lower case, everything but
    letters, digits, spaces, hyphens and underscores dropped, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a page; a repeated heading gets -1, -2, … as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose(path.read_text()):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = anchor(match.group(1).replace("``", ""))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """``(line number, target)`` of every link and image outside code."""
    return [
        (number, match.group(1))
        for number, line in _prose(path.read_text())
        for match in LINK.finditer(line)
    ]


def broken(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for number, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not linked.exists():
            problems.append(f"{where} — no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            problems.append(f"{where} — no such heading in {linked.relative_to(root)}")
    return problems


def test_anchor_follows_githubs_rule():
    assert anchor("Releases and the researchers' API") == "releases-and-the-researchers-api"
    assert anchor("`bench/import_pairs.py`") == "benchimport_pairspy"
    assert anchor("README.md, the dataset card") == "readmemd-the-dataset-card"
    assert anchor("Speed: next ≤ 5 ms") == "speed-next--5-ms"
    assert anchor("See [design](docs/design.md)") == "see-design"


def test_broken_links_are_found(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n")
    page.write_text(
        "# Top\n[ok](there.md) [ok](there.md#a-heading) [ok](#top) [web](https://example.org)\n"
        "[gone](missing.md) [bad](there.md#nothing) `[code](ignored.md)`\n"
        "```\n[fenced](ignored-too.md)\n```\n"
    )
    assert broken(page, root=tmp_path) == [
        "page.md:3: missing.md — no such file",
        "page.md:3: there.md#nothing — no such heading in there.md",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    assert broken(page) == []
