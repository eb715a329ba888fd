import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairdiff.manifest import (
    ManifestRow,
    ManifestUnusable,
    RowError,
    parse_manifest,
    safe_relative_path,
)


def _jsonl(*records: object) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def _row(line: int, image_a: str, image_b: str, **extra: object) -> ManifestRow:
    return ManifestRow(
        line=line,
        image_a=image_a,
        image_b=image_b,
        external_id=str(extra.pop("external_id", "")),
        instruction=str(extra.pop("instruction", "")),
        category=str(extra.pop("category", "")),
        metadata=dict(extra),
    )


def _errors(data: bytes, **options: Any) -> list[tuple[int, str, str]]:
    rows, errors = parse_manifest(data, **options)
    return [(error.line, error.external_id, error.message) for error in errors]


def test_jsonl_happy_path_keeps_json_metadata_and_line_numbers():
    data = (
        b'{"id": "p1", "image_a": "a/1.png", "image_b": "b/1.png", "instruction": "Make it blue",'
        b' "category": "attribute", "source": "coco", "scores": [0.5, 1], "seen": true}\n'
        b"\n"
        b'{"id": 17, "image_a": "a\\\\2.png", "image_b": "./b/2.png", "metadata": {"seed": 3}}\n'
    )

    assert parse_manifest(data, filename="pairs.jsonl") == (
        [
            _row(
                1,
                "a/1.png",
                "b/1.png",
                external_id="p1",
                instruction="Make it blue",
                category="attribute",
                source="coco",
                scores=[0.5, 1],
                seen=True,
            ),
            _row(3, "a/2.png", "b/2.png", external_id="17", seed=3),
        ],
        [],
    )


def test_jsonl_top_level_keys_win_over_the_nested_metadata_object():
    rows, _ = parse_manifest(
        _jsonl({"image_a": "a", "image_b": "b", "source": "top", "metadata": {"source": "in"}})
    )

    assert rows[0].metadata == {"source": "top"}


def test_metadata_past_16_kb_refuses_its_row_and_keeps_the_others():
    big = {"image_a": "a", "image_b": "b", "id": "big", "notes": "x" * 17_000}
    rows, errors = parse_manifest(_jsonl(big, {"image_a": "c", "image_b": "d"}))

    assert [row.image_a for row in rows] == ["c"]
    assert [(e.line, e.external_id) for e in errors] == [(1, "big")]
    assert "metadata is larger than 16 KB (17,013 bytes)" in errors[0].message


def test_csv_happy_path_with_bom_quoted_newline_and_extra_columns():
    data = (
        "\ufeffid,image_a,image_b,instruction,category,source\r\n"
        "p1,a/1.png,b/1.png,Make it blue,attribute,coco\r\n"
        'p2,a/2.png,b/2.png,"Two\nlines",,\r\n'
        "p3,a/3.png,b/3.png,,,web\r\n"
    ).encode()

    assert parse_manifest(data, filename="pairs.csv") == (
        [
            _row(
                2,
                "a/1.png",
                "b/1.png",
                external_id="p1",
                instruction="Make it blue",
                category="attribute",
                source="coco",
            ),
            _row(3, "a/2.png", "b/2.png", external_id="p2", instruction="Two\nlines", source=""),
            _row(5, "a/3.png", "b/3.png", external_id="p3", source="web"),
        ],
        [],
    )


def test_csv_without_optional_columns_and_with_blank_lines():
    data = b"image_b,image_a\n\nb.png,a.png\n,,\nd.png,c.png\n"

    assert parse_manifest(data, fmt="csv") == (
        [_row(3, "a.png", "b.png"), _row(5, "c.png", "d.png")],
        [],
    )


def test_csv_with_semicolons_as_spreadsheets_write_them():
    rows, errors = parse_manifest(b"id;image_a;image_b;note\n1;a.png;b.png;x, y\n")

    assert (rows, errors) == ([_row(2, "a.png", "b.png", external_id="1", note="x, y")], [])


@pytest.mark.parametrize(
    ("data", "options", "first_path"),
    [
        (_jsonl({"image_a": "j.png", "image_b": "k.png"}), {"filename": "m.ndjson"}, "j.png"),
        (_jsonl({"image_a": "j.png", "image_b": "k.png"}), {"filename": "M.JSON"}, "j.png"),
        (_jsonl({"image_a": "j.png", "image_b": "k.png"}), {"filename": "upload"}, "j.png"),
        (b"  \n" + _jsonl({"image_a": "j.png", "image_b": "k.png"}), {}, "j.png"),
        (b"image_a,image_b\nc.png,d.png\n", {"filename": "m.txt"}, "c.png"),
        (b"image_a,image_b\nc.png,d.png\n", {"fmt": "CSV", "filename": "m.jsonl"}, "c.png"),
    ],
    ids=["ndjson", "json-upper", "sniff-jsonl", "sniff-after-blank", "sniff-csv", "fmt-wins"],
)
def test_format_comes_from_fmt_then_suffix_then_content(data, options, first_path):
    rows, _ = parse_manifest(data, **options)

    assert rows[0].image_a == first_path


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"image_b": "b.png"}, "missing image_a"),
        ({"image_a": "a.png", "image_b": None}, "missing image_b"),
        ({"image_a": " ", "image_b": "b.png"}, "image_a is empty"),
        ({"image_a": 3, "image_b": "b.png"}, "image_a must be a string, not a number"),
        ({"image_a": "a.png", "image_b": ["b.png"]}, "image_b must be a string, not a list"),
        (
            {"image_a": "../../etc/passwd", "image_b": "b.png"},
            "image_a: path '../../etc/passwd' leads outside the images folder",
        ),
        (
            {"image_a": "/etc/passwd", "image_b": "b.png"},
            "image_a: path '/etc/passwd' is absolute or names a drive",
        ),
        (
            {"id": True, "image_a": "a", "image_b": "b"},
            "id must be a string or an integer, not true/false",
        ),
        (
            {"id": 1.5, "image_a": "a", "image_b": "b"},
            "id must be a string or an integer, not a number",
        ),
        (
            {"image_a": "a", "image_b": "b", "category": 4},
            "category must be a string, not a number",
        ),
        (
            {"image_a": "a", "image_b": "b", "instruction": {}},
            "instruction must be a string, not an object",
        ),
        (
            {"image_a": "a", "image_b": "b", "metadata": "x"},
            "metadata must be a JSON object, not a string",
        ),
        (
            {"image_a": "a", "image_b": "b", "instruction": "x" * 2001},
            "instruction is longer than 2000 characters (2001)",
        ),
    ],
)
def test_jsonl_row_problems_become_row_errors(record, message):
    good = {"id": "ok", "image_a": "a.png", "image_b": "b.png"}

    rows, errors = parse_manifest(_jsonl(good, record))

    assert rows == [_row(1, "a.png", "b.png", external_id="ok")]
    assert errors == [RowError(2, "", message)]


def test_jsonl_lines_that_are_not_rows():
    data = b'{"image_a": "a", "image_b": "b"}\nnot json\n[1, 2]\n"text"\n{"v": NaN}\n{"v": 1\n'

    assert _errors(data, fmt="jsonl") == [
        (2, "", "invalid JSON: Expecting value (column 1)"),
        (3, "", "line is a list, not a JSON object"),
        (4, "", "line is a string, not a JSON object"),
        (5, "", "v: NaN is not a JSON number"),
        (6, "", "invalid JSON: Expecting ',' delimiter (column 8)"),
    ]


def test_jsonl_deeply_nested_line_is_a_row_error():
    data = _jsonl({"image_a": "a", "image_b": "b"}) + b"[" * 100_000 + b"\n"

    assert _errors(data) == [(2, "", "JSON nested more than 64 levels deep")]


def test_row_error_lists_every_problem_of_the_row_with_its_id():
    data = _jsonl({"image_a": "a", "image_b": "b"}, {"id": " x9 ", "image_a": "..", "image_b": ""})

    assert _errors(data) == [
        (2, "x9", "image_a: path '..' leads outside the images folder; image_b is empty")
    ]


def test_repeated_id_is_an_error_on_the_second_row_only():
    data = _jsonl(
        {"id": "p1", "image_a": "a1", "image_b": "b1"},
        {"id": "p2", "image_a": "a2", "image_b": "b2"},
        {"id": "p1", "image_a": "a3", "image_b": "b3"},
        {"id": 7, "image_a": "a4", "image_b": "b4"},
        {"id": "7", "image_a": "a5", "image_b": "b5"},
    )

    rows, errors = parse_manifest(data)

    assert [row.external_id for row in rows] == ["p1", "p2", "7"]
    assert errors == [
        RowError(3, "p1", "id 'p1' repeats line 1"),
        RowError(5, "7", "id '7' repeats line 4"),
    ]


def test_overlong_id_is_an_error_reported_with_a_shortened_id():
    long_id = "x" * 250

    errors = _errors(_jsonl({"id": long_id, "image_a": "a", "image_b": "b"}))

    assert errors == [(1, "x" * 200, "id is longer than 200 characters (250)")]


def test_csv_row_errors_use_the_file_line_numbers():
    data = b"id,image_a,image_b\np1,a.png,b.png\np2,../a.png,b.png\n\np1,c.png,\np4,a,b,extra\n"

    assert _errors(data) == [
        (3, "p2", "image_a: path '../a.png' leads outside the images folder"),
        (5, "p1", "id 'p1' repeats line 2; image_b is empty"),
        (6, "p4", "row has 4 cells, the header 3"),
    ]


def test_csv_short_row_fills_missing_cells_with_empty_strings():
    rows, errors = parse_manifest(b"image_a,image_b,note\na.png,b.png\n")

    assert (rows, errors) == ([_row(2, "a.png", "b.png", note="")], [])


@pytest.mark.parametrize(
    ("data", "options", "message"),
    [
        (b"", {}, "manifest is empty"),
        (b" \n\r\n\t", {"filename": "m.csv"}, "manifest is empty"),
        (b"\xef\xbb\xbf", {}, "manifest is empty"),
        (b"image_a,image_b\n", {}, "manifest has no rows"),
        (b"\n\n", {"fmt": "jsonl"}, "manifest is empty"),
        (
            b"id,image_a,image_b\n\xff\xfe,a,b\n",
            {},
            "manifest is not UTF-8 text (invalid byte at position 19)",
        ),
        ("image_a,image_b\n".encode("utf-16"), {}, "manifest is UTF-16 text; save it as UTF-8"),
        (
            b"PK\x03\x04\x00\x00\x00image_a",
            {},
            "manifest contains NUL bytes; it is binary, not JSONL or CSV",
        ),
        (
            b"id,path_a,path_b\n1,a,b\n",
            {},
            "CSV header needs image_a and image_b columns (found: id, path_a, path_b)",
        ),
        (b"image_a,image_b,,x\n", {}, "CSV header has an empty name in column 3"),
        (b"image_a,image_b,x,x\n", {}, "CSV header repeats the column 'x'"),
        (
            b'[{"image_a": "a", "image_b": "b"}]',
            {},
            "manifest is a JSON array; expected JSON Lines (one object a line)",
        ),
        (
            b"image_a,image_b\na,b\n",
            {"fmt": "xml"},
            "unknown manifest format 'xml' (expected jsonl or csv)",
        ),
        (
            b"image_a,image_b\na,b\n",
            {"fmt": "jsonl"},
            "no line is valid JSON; is this JSON Lines? "
            "(line 1: invalid JSON: Expecting value (column 1))",
        ),
    ],
)
def test_unusable_manifests(data, options, message):
    with pytest.raises(ManifestUnusable) as info:
        parse_manifest(data, **options)

    assert str(info.value) == message


@pytest.mark.parametrize(
    "data",
    [
        _jsonl(*({"image_a": f"a{i}", "image_b": f"b{i}"} for i in range(4))),
        b"image_a,image_b\n" + b"".join(b"a%d,b%d\n" % (i, i) for i in range(4)),
    ],
    ids=["jsonl", "csv"],
)
def test_more_rows_than_the_cap_is_unusable(data):
    assert len(parse_manifest(data, max_rows=4)[0]) == 4
    with pytest.raises(ManifestUnusable, match="more than 3 rows"):
        parse_manifest(data, max_rows=3)


def test_csv_field_beyond_the_csv_module_limit_is_unusable():
    data = b"image_a,image_b\na," + b"b" * 200_000 + b"\n"

    with pytest.raises(ManifestUnusable, match="CSV cannot be read at line 2"):
        parse_manifest(data)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.png", "a.png"),
        ("dir/sub/a.png", "dir/sub/a.png"),
        ("dir\\sub\\a.png", "dir/sub/a.png"),
        ("./dir//a.png", "dir/a.png"),
        ("dir/../a.png", "a.png"),
        ("dir/./sub/../a.png", "dir/a.png"),
        ("dir/", "dir"),
        (" spaced name.png", " spaced name.png"),
        ("ünïcode/图像.png", "ünïcode/图像.png"),
    ],
)
def test_safe_relative_path_normalises(name, expected):
    assert safe_relative_path(name) == expected


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "path is empty"),
        ("  ", "path is empty"),
        ("/etc/passwd", "is absolute"),
        ("C:\\x", "is absolute"),
        ("c:/x", "is absolute"),
        ("C:x", "is absolute"),
        ("\\\\server\\share\\x", "is absolute"),
        ("\\x", "is absolute"),
        ("../a.png", "leads outside"),
        ("a/../../b.png", "leads outside"),
        ("..\\..\\b.png", "leads outside"),
        ("a\x00.png", "NUL byte"),
        ("a\n.png", "control character"),
        ("\x85/a.png", "control character"),  # C1: next line
        (" /a.png", "blank part"),
        ("a/\u2028/b.png", "blank part"),
        (".", "names no file"),
        ("a/..", "names no file"),
    ],
)
def test_safe_relative_path_refuses(name, reason):
    with pytest.raises(ValueError, match=reason):
        safe_relative_path(name)


@given(st.text(alphabet=st.sampled_from("ab./\\:C\x00 ..") | st.characters(), max_size=40))
def test_safe_relative_path_returns_a_normal_relative_path_or_refuses(name):
    try:
        path = safe_relative_path(name)
    except ValueError:
        return

    parts = path.split("/")
    assert not path.startswith("/") and "\\" not in path and "\x00" not in path
    assert all(part not in ("", ".", "..") for part in parts)
    assert safe_relative_path(path) == path


@pytest.mark.parametrize(
    ("row", "path"),
    [
        ({"id": "a\u0000b", "image_a": "a.png", "image_b": "b.png"}, "id"),
        ({"image_a": "a.png", "image_b": "b.png", "instruction": "x\u0000"}, "instruction"),
        ({"image_a": "a.png", "image_b": "b.png", "camera": {"lens": ["\u0000"]}}, "camera.lens.0"),
    ],
    ids=["id", "instruction", "nested-metadata"],
)
def test_a_row_with_a_nul_character_is_refused_with_a_reason(row, path):
    rows, errors = parse_manifest(json.dumps(row).encode(), filename="m.jsonl")
    assert rows == []
    assert [e.message for e in errors] == [f"{path}: may not contain NUL (\\u0000) characters"]


def test_an_oversized_image_path_is_one_bad_row_with_a_short_reason():
    """Issue 24 item 8: references are bounded in length and parts on every manifest."""
    rows = [
        {"id": "long", "image_a": "a/" * 50_000 + "x.png", "image_b": "b.png"},
        {"id": "deep", "image_a": "/".join(["d"] * 200) + "/x.png", "image_b": "b.png"},
        {"id": "fine", "image_a": "a.png", "image_b": "b.png"},
    ]
    data = "\n".join(json.dumps(r) for r in rows).encode()

    good, errors = parse_manifest(data, filename="m.jsonl")

    assert [r.external_id for r in good] == ["fine"]
    assert [e.external_id for e in errors] == ["long", "deep"]
    assert "over 2048 characters" in errors[0].message
    assert "folders deep" in errors[1].message
    assert all(len(e.message) < 300 for e in errors)
