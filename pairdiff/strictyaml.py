"""YAML read with the bounds of ``pairdiff.strictjson``: no aliases, a bounded depth.

PyYAML's safe loader still expands aliases: a few hundred bytes of nested ``&a [*b, *b, …]``
become gigabytes once built (and once printed in an error). Its composer also recurses once
per level, so a document nested 10,000 deep ends in RecursionError. Here an alias is refused
where it is met, nesting past ``strictjson.MAX_DEPTH`` is refused before it is built, and the
built value passes ``strictjson.check`` (no NUL, no lone surrogate, no number past 64 bits).
Errors name the line, never echo the document.
"""

from __future__ import annotations

import re

import yaml
from yaml.events import AliasEvent
from yaml.nodes import Node

from pairdiff.strictjson import MAX_DEPTH, JSONRejected, check

# Brackets outside quoted text: PyYAML's scanner reads a flow collection to its end before the
# composer sees its first level (a 10,000-deep one cost 0.14 s of CPU), so depth is counted here
# first, in one pass of the regex engine.
_FLOW = re.compile(r"""[\[\]{}]|"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'""")


class YAMLRejected(ValueError):
    """The text is not YAML, or holds what is refused here (an alias, nesting too deep)."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing aliases and nesting deeper than MAX_DEPTH while composing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            raise YAMLRejected(
                f"line {event.start_mark.line + 1}: aliases (*name) are not taken; "
                "write the value out"
            )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1
                raise YAMLRejected(f"line {line}: nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def loads(text: str) -> object:
    """The one document of ``text``; YAMLRejected saying why it cannot be read."""
    _check_flow_depth(text)
    loader = _BoundedLoader(text)
    try:
        value = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        where = f"line {exc.problem_mark.line + 1}: " if exc.problem_mark else ""
        raise YAMLRejected(f"{where}{exc.problem or exc.context or 'invalid YAML'}") from None
    except yaml.YAMLError as exc:
        raise YAMLRejected(str(exc)[:200]) from None
    except RecursionError:
        raise YAMLRejected(f"nested more than {MAX_DEPTH} levels deep") from None
    finally:
        loader.dispose()
    try:
        check(value)
    except JSONRejected as exc:
        raise YAMLRejected(str(exc)) from None
    return value


def _check_flow_depth(text: str) -> None:
    """YAMLRejected when brackets outside quotes nest deeper than MAX_DEPTH."""
    depth = 0
    for match in _FLOW.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, match.start()) + 1
                raise YAMLRejected(f"line {line}: nested more than {MAX_DEPTH} levels deep")
        elif bracket in "]}":
            depth = max(depth - 1, 0)
