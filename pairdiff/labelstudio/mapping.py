"""The lead's mapping file for a Label Studio import (JSON or YAML): which Label Studio values
mean which Diffmark category, tier and absent side, who the Label Studio users are, and roles
for controls whose names say nothing. A value that neither the file nor Diffmark's own names
cover is reported, never guessed.

    fields: {desc: description, ents: entities}   # control name → role (optional)
    category: {"Colour / attribute": attribute}
    tier: {"4 excellent": excellent, "3 good": good, "2 fair": fair, "1 poor": poor}
    absent_side: {"A empty (added)": a, "B empty (removed)": b, "both present": none}
    entities_separator: "|"
    authors: {"7": alice, "ann@example.com": bob}   # Label Studio user → project member
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pairdiff import strictjson, strictyaml
from pairdiff.labelstudio.config import DEFAULT_SEPARATORS, ConfigUnusable, check_roles

TIERS = ("excellent", "good", "fair", "poor")
SIDES = ("a", "b", "none")
MAX_MAPPING_BYTES = 256 * 1024
_KEYS = ("fields", "category", "tier", "absent_side", "entities_separator", "authors")
# Diffmark's own words for the absent side, so a config using them needs no mapping.
_OWN_SIDES = {"a": "a", "b": "b", "none": "none", "neither": "none", "a empty": "a"}
_OWN_SIDES |= {"b empty": "b", "absent on a": "a", "absent on b": "b"}


class UnknownValue(ValueError):
    """A Label Studio value that maps to nothing; the message names it and where to map it."""


def norm(value: str) -> str:
    return " ".join(value.split()).casefold()


@dataclass(frozen=True)
class ValueMap:
    categories: Mapping[str, str] = field(default_factory=dict)  # normalised LS value → slug
    tiers: Mapping[str, str] = field(default_factory=dict)
    absent: Mapping[str, str] = field(default_factory=dict)
    authors: Mapping[str, str] = field(default_factory=dict)  # LS user key → username
    roles: Mapping[str, str] = field(default_factory=dict)
    separators: tuple[str, ...] = DEFAULT_SEPARATORS
    raw: Mapping = field(default_factory=dict, compare=False)  # as given, to keep on the project

    def tier(self, value: str, control: str) -> str:
        found = self.tiers.get(norm(value)) or (norm(value) if norm(value) in TIERS else "")
        if not found:
            raise UnknownValue(
                f"{control}: {value!r} is no tier; map it in the mapping's tier section "
                f"(to one of {', '.join(TIERS)})"
            )
        return found

    def category(self, value: str, control: str, known: Mapping[str, str] | None) -> str:
        """``known``: the project's category slugs and names, normalised → slug (None: any
        value that the mapping does not name stands for itself)."""
        if known is None:
            return self.categories.get(norm(value)) or value.strip()
        found = self.categories.get(norm(value)) or known.get(norm(value), "")
        if not found:
            raise UnknownValue(
                f"{control}: {value!r} is no category of the project; map it in the mapping's "
                f"category section (to one of {', '.join(sorted(set(known.values())))})"
            )
        return found

    def absent_side(self, value: str, control: str) -> str:
        found = self.absent.get(norm(value)) or _OWN_SIDES.get(norm(value), "")
        if not found:
            raise UnknownValue(
                f"{control}: {value!r} says no side; map it in the mapping's absent_side "
                "section (to a, b or none)"
            )
        return found

    def back(self, section: str, ours: str, offered: tuple[str, ...]) -> str:
        """The Label Studio value for one of ours (for the export): the first of the config's
        values that reads back as it, else the first value the mapping file maps to it, else
        our own name."""
        read = {
            "category": lambda v: self.category(v, section, None),
            "tier": lambda v: self.tier(v, section),
            "absent_side": lambda v: self.absent_side(v, section),
        }[section]
        for value in offered:
            try:
                if read(value) == ours:
                    return value
            except UnknownValue:
                continue
        for value, mapped in (self.raw.get(section) or {}).items():
            if str(mapped).strip().lower() == ours.lower():
                return str(value)
        return ours


def parse_value_map(data: bytes | str, *, categories: Mapping[str, str] | None = None) -> ValueMap:
    """A mapping file as JSON or YAML (YAML is a superset, so one reader does both).
    ``categories``: the project's slugs (normalised slug or name → slug), to check targets.
    ConfigUnusable names the first problem."""
    if isinstance(data, bytes):
        if len(data) > MAX_MAPPING_BYTES:
            raise ConfigUnusable(f"the mapping is over {MAX_MAPPING_BYTES // 1024} KB")
        data = data.decode("utf-8-sig", errors="replace")
    if not data.strip():
        return ValueMap()
    # The bounded readers: no alias, no nesting past strictjson.MAX_DEPTH, never the text echoed.
    try:
        value = strictyaml.loads(data)
    except strictyaml.YAMLRejected as exc:
        try:
            value = strictjson.loads(data)
        except strictjson.JSONRejected:
            raise ConfigUnusable(f"the mapping is neither JSON nor YAML ({exc})") from None
    if value is None:
        return ValueMap()
    if not isinstance(value, dict):
        raise ConfigUnusable("the mapping is an object with sections: " + ", ".join(_KEYS))
    unknown = sorted(str(k) for k in value if k not in _KEYS)
    if unknown:
        raise ConfigUnusable(
            f"unknown mapping section {_shown(unknown[0])} (use {', '.join(_KEYS)})"
        )
    return ValueMap(
        categories=_table(value, "category", categories or None),
        tiers=_table(value, "tier", {t: t for t in TIERS}),
        absent=_table(value, "absent_side", {s: s for s in SIDES}),
        authors={str(k): str(v) for k, v in _section(value, "authors").items()},
        roles=check_roles(_section(value, "fields")),
        separators=_separators(value.get("entities_separator")),
        raw={k: v for k, v in value.items() if k in _KEYS},
    )


def _section(value: Mapping, key: str) -> dict:
    section = value.get(key) or {}
    if not isinstance(section, dict):
        raise ConfigUnusable(f"{key}: an object of Label Studio value → ours")
    for k, v in section.items():
        if not isinstance(v, str | int) or isinstance(v, bool) or not isinstance(k, str | int):
            raise ConfigUnusable(f"{key}: {_shown(k)} must map to a name, not {_kind(v)}")
    return section


def _table(value: Mapping, key: str, allowed: Mapping[str, str] | None) -> dict[str, str]:
    """LS value → ours; ``allowed``: our accepted names, normalised → canonical."""
    table = {}
    for ls_value, ours in _section(value, key).items():
        ours = str(ours).strip()
        if allowed is not None:
            if norm(ours) not in allowed:
                names = ", ".join(sorted(set(allowed.values())))
                raise ConfigUnusable(
                    f"{key}: {_shown(ls_value)} → {_shown(ours)}, which is none of {names}"
                )
            ours = allowed[norm(ours)]
        table[norm(str(ls_value))] = ours
    return table


def _separators(value: object) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_SEPARATORS
    if not isinstance(value, str) or not value.strip():
        raise ConfigUnusable('entities_separator: a non-empty text, e.g. "|"')
    return (value.strip(),)


def _shown(value: object) -> str:
    """A name from the mapping as an error shows it: quoted, at most 60 characters."""
    text = str(value)
    return repr(text if len(text) <= 60 else text[:59] + "…")


def _kind(value: object) -> str:
    """What a value is, in words, never the value itself (it may hold a million items)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None or isinstance(value, bool):
        return repr(value)
    return f"{type(value).__name__} {_shown(value)}"
