import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff import strictjson
from pairdiff.strictjson import JSONRejected


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        ('{"a": [1, 2, 1e309]}', "a.2", "the number 1e309 is too large"),
        ("[NaN]", "0", "NaN is not a JSON number"),
        ('{"x": -Infinity}', "x", "-Infinity is not a JSON number"),
        ('{"x": "\\ud800"}', "x", "lone UTF-16 surrogate"),
        ('{"k": {"\\udc00": 1}}', "k.\\udc00", "the key holds a lone UTF-16 surrogate"),
        ('{"b": [[1, ' + "9" * 4000 + "]]}", "b.0.1", "an integer of 4000 digits"),
        ('{"b": 9223372036854775808}', "b", "an integer past 64 bits"),
        ('{"n": "a\\u0000"}', "n", "may not contain NUL"),
        ('{"\\u0000": 1}', "\\u0000", "the key may not contain NUL"),
        ('{"d": ' + "[" * 70 + "]" * 70 + "}", "d" + ".0" * 63, "nested more than 64"),
        ("[" * 100_000 + "]" * 100_000, "", "nested more than 64"),
        ('{"a": 1', "", "invalid JSON"),
        (b"\xff{}", "", "not UTF-8"),
    ],
)
def test_what_no_database_holds_is_refused_with_its_path(text, path, words):
    with pytest.raises(JSONRejected) as refused:
        strictjson.loads(text)

    assert refused.value.path == path
    assert words in refused.value.message
    json.dumps(str(refused.value)).encode()  # the message itself is always sendable


@pytest.mark.parametrize(
    "text",
    ['{"ok": "\\ud83d\\ude00"}', "9223372036854775807", "-1.5e308", "[" * 64 + "]" * 64, '""'],
)
def test_what_json_allows_and_databases_hold_is_read(text):
    assert strictjson.loads(text) == json.loads(text)


TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"))  # no surrogates


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | TEXT,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4)
        ),
        max_leaves=10,
    )
)
def test_every_storable_value_round_trips(value):
    assert strictjson.loads(json.dumps(value)) == value
