"""The bounded YAML reader: no aliases, no depth past strictjson's, never the document echoed."""

import time

import pytest

from pairdiff import strictyaml
from pairdiff.strictjson import MAX_DEPTH
from pairdiff.strictyaml import YAMLRejected


def alias_bomb(levels: int) -> str:
    """A few hundred bytes that PyYAML's safe loader expands to 9**levels items, all in the
    value of one tier (9 levels: the issue's 312 bytes and 78 MB error)."""
    anchors = ["&l0 [x, x, x, x, x, x, x, x, x]"] + [
        f"&l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)
    ]
    return "tier:\n  good: [" + ", ".join(anchors) + "]\n"


ALIAS_BOMB = alias_bomb(9)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (ALIAS_BOMB, "aliases (*name) are not taken"),
        ("base: &b {x: 1}\nother:\n  <<: *b\n", "aliases (*name) are not taken"),
        ("[" * 10_000 + "]" * 10_000, f"nested more than {MAX_DEPTH} levels deep"),
        ("[" * 100_000 + "]" * 100_000, f"nested more than {MAX_DEPTH} levels deep"),
        ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 200)), "nested more than"),
        ('{"a": ' * 50_000 + "1" + "}" * 50_000, f"nested more than {MAX_DEPTH} levels deep"),
        ("a: .nan", "numbers must be finite"),
        ("a: " + "9" * 40, "past 64 bits"),
        ("a: !!python/object:os.system x", "could not determine a constructor"),
        ("a: [1, 2", "line"),
    ],
)
def test_what_costs_more_than_it_should_is_refused_briefly(text, words):
    started = time.process_time()
    with pytest.raises(YAMLRejected) as refused:
        strictyaml.loads(text)

    assert words in str(refused.value)
    assert len(str(refused.value)) < 300
    assert time.process_time() - started < 5


def test_plain_yaml_and_json_are_read():
    assert strictyaml.loads("tier: {'4 excellent': excellent}\nanchor: &x 1\n") == {
        "tier": {"4 excellent": "excellent"},
        "anchor": 1,
    }
    assert strictyaml.loads('{"category": {"Colour": "attribute"}}') == {
        "category": {"Colour": "attribute"}
    }
    assert strictyaml.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


def test_deep_flow_nesting_is_refused_before_the_scanner_reads_it():
    """PyYAML's scanner reads a whole flow collection before the composer's first level:
    10,000 levels cost 0.14 s of CPU there; counted first, a few microseconds per kilobyte."""
    started = time.process_time()
    for _ in range(10):
        with pytest.raises(YAMLRejected):
            strictyaml.loads("tier: " + "[" * 100_000 + "]" * 100_000)
    assert time.process_time() - started < 0.5
    # Brackets inside quotes are text, not nesting.
    assert strictyaml.loads("a: '" + "[" * 100 + "'") == {"a": "[" * 100}
    assert strictyaml.loads('a: "' + "{" * 100 + '"') == {"a": "{" * 100}
