"""What a Label Studio preview found unmapped, as a mapping the lead fills in: each value that
maps to nothing (named in the problems' messages, mapping.UnknownValue) listed
under its section, with the names it may map to."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence

import yaml

SECTIONS = ("category", "tier", "absent_side")
# The three messages of ValueMap.tier / category / absent_side: "<control>: 'value' is no …;
# map it in the mapping's <section> section".
_UNKNOWN = re.compile(
    r"""(?P<value>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*") (?:is no|says no)\b.*?"""
    r"map it in the mapping's (?P<section>category|tier|absent_side) section"
)
# "annotation 1001 by Label Studio user 7: " — differs on every row of the same problem.
_WHO = re.compile(r"^(?:annotation|prediction) \S+(?: by [^:]+)?: ")


def unknown_value(message: str) -> tuple[str, str] | None:
    """(section, Label Studio value) when ``message`` says a value maps to nothing."""
    found = _UNKNOWN.search(message)
    if found is None:
        return None
    try:
        value = ast.literal_eval(found["value"])
    except (ValueError, SyntaxError):
        return None
    return (found["section"], value) if isinstance(value, str) else None


def problem_kind(message: str) -> str:
    """The problem without who had it, so the same problem on many rows reads as one."""
    return _WHO.sub("", message)


def mapping_skeleton(messages: Iterable[str], targets: Mapping[str, Sequence[str]]) -> str:
    """YAML for the mapping box with every unknown value, in order found, to be filled in;
    "" when there is none. ``targets``: the names each section may map to."""
    unknown: dict[str, dict[str, str]] = {}
    for message in messages:
        found = unknown_value(message)
        if found:
            unknown.setdefault(found[0], {}).setdefault(found[1], "")
    if not unknown:
        return ""
    ordered = {section: unknown[section] for section in SECTIONS if section in unknown}
    head = ["# Values found that map to nothing: write ours after each colon."]
    head += [f"# {section}: one of {', '.join(targets.get(section, ()))}" for section in ordered]
    body = yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return "\n".join(head) + "\n" + body
