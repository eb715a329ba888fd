"""The projects' text formats (annotator/textformats.py): categories, synonyms, vocabulary and
the guidelines' markdown subset."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotator.textformats import (
    categories_parse,
    guidelines_html,
    synonyms_parse,
    vocabulary_parse,
)

# --- the text formats ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("attribute", [{"slug": "attribute", "name": "Attribute", "hint": ""}]),
        (
            "noise_level | Noise | grain added\n\n# a comment\nlight | Lighting",
            [
                {"slug": "noise_level", "name": "Noise", "hint": "grain added"},
                {"slug": "light", "name": "Lighting", "hint": ""},
            ],
        ),
        (
            "  ocr-text |  | text changed ",
            [{"slug": "ocr-text", "name": "Ocr text", "hint": "text changed"}],
        ),
    ],
)
def test_custom_categories_are_read_from_lines(text, expected):
    assert categories_parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one category"),
        ("# only a comment", "at least one category"),
        ("Colour | Colour", "line 1: 'Colour' is not a slug"),
        ("colour\nshape\ncolour | Again", "line 3: 'colour' is listed twice"),
        ("a | b | c | d", "line 1: at most three parts"),
        ("-dash", "line 1: '-dash' is not a slug"),
        ("x" * 65, "is not a slug"),
    ],
)
def test_custom_categories_report_the_bad_line(text, message):
    with pytest.raises(ValidationError) as raised:
        categories_parse(text)
    assert message in " ".join(raised.value.messages)


def test_synonyms_are_read_and_variants_equal_to_their_canonical_dropped():
    text = "car: automobile, Cars, sedan\ntruck: lorry\ncar: auto, sedan"
    assert synonyms_parse(text) == {"car": ["automobile", "sedan", "auto"], "truck": ["lorry"]}
    assert synonyms_parse("") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("car automobile", "line 1: write it as canonical: variant, variant"),
        ("car:", "line 1: write it as canonical"),
        (": automobile", "line 1: write it as canonical"),
        ("car: auto\nbus: auto", "line 2: 'auto' already belongs to 'car'"),
        ("car: auto\nauto: vehicle", "line 2: 'auto' is already a variant of 'car'"),
        ("car: van\nvan: lorry", "line 2: 'van' is already a variant of 'car'"),
        ("van: lorry\ncar: van", "line 2: 'van' is a canonical name of its own"),
    ],
)
def test_synonyms_refuse_malformed_and_ambiguous_lines(text, message):
    with pytest.raises(ValidationError) as raised:
        synonyms_parse(text)
    assert message in " ".join(raised.value.messages)


def test_vocabulary_keeps_one_label_per_normalised_name():
    assert vocabulary_parse("car\nCars\n\nthe car\ntraffic light\n") == ["car", "traffic light"]
    with pytest.raises(ValidationError, match="line 2"):
        vocabulary_parse("car\n" + "x" * 201)


def test_guidelines_render_a_safe_markdown_subset():
    text = (
        "# Rules\nCompare **A** and *B*, see `<b>` and [docs](https://x.org/a_b?q=1&r=2).\n\n"
        "- one\n- two\n\n1. first\n2. second\n\n"
        '<script>alert(1)</script> [bad](javascript:alert(1)) <img src=x onerror="y">'
    )
    assert str(guidelines_html(text)) == (
        "<h3>Rules</h3>\n"
        "<p>Compare <strong>A</strong> and <em>B</em>, see <code>&lt;b&gt;</code> and "
        '<a href="https://x.org/a_b?q=1&amp;r=2" rel="nofollow noopener noreferrer">docs</a>.</p>\n'
        "<ul><li>one</li><li>two</li></ul>\n"
        "<ol><li>first</li><li>second</li></ol>\n"
        "<p>&lt;script&gt;alert(1)&lt;/script&gt; [bad](javascript:alert(1)) "
        "&lt;img src=x onerror=&quot;y&quot;&gt;</p>"
    )
