"""A pair's short human name: number and the most telling name of its source."""

import pytest

from pairdiff.naming import SOURCE_NAME_LENGTH, pair_name, source_name


@pytest.mark.parametrize(
    ("external_id", "metadata", "expected"),
    [
        ("kitchen_03", {}, "kitchen_03"),
        # A synthesized pair: the photo, not its 20-character key.
        ("5f1c0e9a7b2d4c6e8f10", {"synthesized": {"photo": "photos/kitchen_03.jpg"}}, "kitchen_03"),
        # A generated key with the files it came from: the file of image A.
        (
            "0123456789abcdef0123",
            {"source_files": ["shots/door_a.png", "shots/door_b.png"]},
            "door_a",
        ),
        ("", {"source_files": ["C:\\shots\\hall.jpg", "x.jpg"]}, "hall"),
        ("0123456789abcdef0123", {}, ""),  # a key alone says nothing
        ("", {}, ""),
        ("  two   words ", {}, "two words"),
        ("", {"synthesized": "not a mapping", "source_files": "nor a list"}, ""),
    ],
)
def test_source_name(external_id, metadata, expected):
    assert source_name(external_id, metadata) == expected


def test_a_long_source_name_is_shortened_with_an_ellipsis():
    name = source_name("x" * 100, {})
    assert len(name) == SOURCE_NAME_LENGTH and name.endswith("…")


@pytest.mark.parametrize(
    ("number", "source", "expected"),
    [(42, "kitchen_03", "#42 · kitchen_03"), (7, "", "#7"), (None, "", "#?")],
)
def test_pair_name(number, source, expected):
    assert pair_name(number, source) == expected
