"""The `vlm` pre-annotator: answer parsing (pure) and the client against a local fake server."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pairdiff.geometry import Frame
from pairdiff.predict import NO_VISIBLE_CHANGE, PredictionResult, Predictor
from pairdiff.vlm import (
    FLAG_BOX_ADJUSTED,
    FLAG_BOX_DROPPED,
    FLAG_CHANGE_DROPPED,
    FLAG_UNKNOWN_CATEGORY,
    PROMPT_VERSION,
    VlmPredictor,
    VlmResult,
    anchor_cell_box,
    instruction_text,
    parse_answer,
)
from pairdiff.vlm.result import RAW_LIMIT
from tests.images import encode, photo, photo_bytes

# A and B differ in size on purpose: each side's boxes land in its own frame.
FRAME_A = Frame(1000, 500)
FRAME_B = Frame(200, 100)
MINCU = ["attribute", "object", "counting", "relation"]

CAR = {
    "category": "attribute",
    "description": "The car turned blue.",
    "entity_a": "car",
    "entity_b": "car",
    "boxes_a": [[125, 730, 228, 783]],
    "boxes_b": [[125, 730, 228, 783]],
}
# CAR's [0, 1000] box in pixels of A (1000×500) and of B (200×100).
CAR_A = [125, 365, 228, 391.5]
CAR_B = [25, 73, 45.6, 78.3]
CAR_PIXELS = {**CAR, "boxes_a": [CAR_A], "boxes_b": [CAR_B]}
CAT_GONE = {
    "category": "object",
    "description": "The cat is gone.",
    "entity_a": "cat",
    "entity_b": "",
    "boxes_a": [[0, 0, 500, 1000]],
    "boxes_b": [],
}
CAT_GONE_PIXELS = {**CAT_GONE, "boxes_a": [[0, 0, 500, 500]]}


def changes_of(result: PredictionResult) -> list[dict[str, object]]:
    """The changes as JSON with unrounded pixel boxes (as_json rounds to whole pixels)."""
    return [
        {
            **c.as_json(),
            "boxes_a": [b.as_list() for b in c.boxes_a],
            "boxes_b": [b.as_list() for b in c.boxes_b],
        }
        for c in result.changes
    ]


def parse(text: str, categories: list[str] = MINCU) -> VlmResult:
    return parse_answer(text, FRAME_A, FRAME_B, categories)


# Answers that parse cleanly: (answer, expected changes in pixels).
GOOD_ANSWERS = {
    "json object": (json.dumps({"changes": [CAR]}), [CAR_PIXELS]),
    "fenced json with prose": (
        "Sure! Here is what changed:\n```json\n"
        + json.dumps({"changes": [CAR]})
        + "\n```\nHope it helps.",
        [CAR_PIXELS],
    ),
    "unlabelled fence": (f"```\n{json.dumps([CAR])}\n```", [CAR_PIXELS]),
    "prose around bare json": (
        f"The answer is {json.dumps({'changes': [CAR]})}. Done.",
        [CAR_PIXELS],
    ),
    "list of changes": (json.dumps([CAR, CAT_GONE]), [CAR_PIXELS, CAT_GONE_PIXELS]),
    "single change object": (json.dumps(CAT_GONE), [CAT_GONE_PIXELS]),
    "null side": (json.dumps({**CAT_GONE, "boxes_b": None}), [CAT_GONE_PIXELS]),
    "no entity on an absent side": (json.dumps({**CAT_GONE, "entity_b": "cat"}), [CAT_GONE_PIXELS]),
    "missing side": (
        json.dumps({k: v for k, v in CAT_GONE.items() if k != "boxes_b"}),
        [CAT_GONE_PIXELS],
    ),
    "aliases, one flat box per side, shared entity": (
        json.dumps(
            {
                "Type": "Attribute",
                "desc": "The car turned blue.",
                "entity": "car",
                "bbox_a": [125, 730, 228, 783],
                "bbox_b": [125, 730, 228, 783],
            }
        ),
        [CAR_PIXELS],
    ),
    "qwen grounding objects and entities pair": (
        json.dumps(
            {
                "category": "attribute",
                "description": "The car turned blue.",
                "entities": ["car", "car"],
                "boxes_a": [{"bbox_2d": [125, 730, 228, 783], "label": "car"}],
                "boxes_b": {"x1": 125, "y1": 730, "x2": 228, "y2": 783},
            }
        ),
        [CAR_PIXELS],
    ),
    "boxes as a json string, anchors in json": (
        json.dumps(
            {
                **CAR,
                "boxes_a": "[[125, 730, 228, 783]]",
                "boxes_b": None,
                "anchors_b": "<loc_1><loc_7><loc_2><loc_7>",
            }
        ),
        [{**CAR_PIXELS, "boxes_b": [[20, 70, 60, 80]]}],
    ),
    "float coordinates": (
        json.dumps({**CAR, "boxes_b": [[125.5, 730, 228, 783.25]]}),
        [{**CAR_PIXELS, "boxes_b": [[25.1, 73, 45.6, 78.33]]}],
    ),
    "several boxes on a side": (
        json.dumps({**CAR, "boxes_a": [[0, 0, 100, 100], [900, 900, 1000, 1000]]}),
        [{**CAR_PIXELS, "boxes_a": [[0, 0, 100, 50], [900, 450, 1000, 500]]}],
    ),
    "reasoning block skipped": (
        "<think>Maybe [the car]? {not json}</think>\n" + json.dumps([CAR]),
        [CAR_PIXELS],
    ),
    "reasoning opened by the chat template": (
        "the car looks blue now</think>" + json.dumps([CAR]),
        [CAR_PIXELS],
    ),
    "tokens with fine boxes": (
        "car <loc_1><loc_7><loc_2><loc_7> <loc_null> The car turned blue. [125,730,228,783] []",
        [
            {
                **CAR_PIXELS,
                "category": "",
                "entity_b": "",
                "boxes_b": [],
            }
        ],
    ),
    "tokens with anchors only": (
        "car <loc_1><loc_7><loc_2><loc_7> <loc_1><loc_7><loc_2><loc_7> The car turned blue.",
        [
            {
                **CAR_PIXELS,
                "category": "",
                "boxes_a": [[100, 350, 300, 400]],
                "boxes_b": [[20, 70, 60, 80]],
            }
        ],
    ),
    "tokens, loc_null on A, fine box on B": (
        "dog <loc_null> <loc_3><loc_3><loc_5><loc_6> A dog appeared. [] [300,300,550,650]",
        [
            {
                "category": "",
                "description": "A dog appeared.",
                "entity_a": "",
                "entity_b": "dog",
                "boxes_a": [],
                "boxes_b": [[60, 30, 110, 65]],
            }
        ],
    ),
    "tokens, two regions, replaced entity, several lines and a bullet": (
        "Changes:\n"
        "- cat -> dog <loc_0><loc_0><loc_1><loc_1><loc_8><loc_8><loc_9><loc_9> "
        "<loc_0><loc_0><loc_1><loc_1> The cats became a dog. "
        "[[0,0,150,150],[800,800,1000,1000]] [[0,0,200,200]]\n"
        "2. car <loc_1><loc_7><loc_2><loc_7> <loc_null> The car is gone.",
        [
            {
                "category": "",
                "description": "The cats became a dog.",
                "entity_a": "cat",
                "entity_b": "dog",
                "boxes_a": [[0, 0, 150, 75], [800, 400, 1000, 500]],
                "boxes_b": [[0, 0, 40, 20]],
            },
            {
                "category": "",
                "description": "The car is gone.",
                "entity_a": "car",
                "entity_b": "",
                "boxes_a": [[100, 350, 300, 400]],
                "boxes_b": [],
            },
        ],
    ),
    "tokens written apart are read 4 + 4": (
        "car <loc_1> <loc_7> <loc_2> <loc_7> <loc_1> <loc_7> <loc_2> <loc_7> Blue now.",
        [
            {
                "category": "",
                "description": "Blue now.",
                "entity_a": "car",
                "entity_b": "car",
                "boxes_a": [[100, 350, 300, 400]],
                "boxes_b": [[20, 70, 60, 80]],
            }
        ],
    ),
    "tokens, loc_null glued to the end": (
        "car: <loc_1><loc_7><loc_2><loc_7><loc_null> Gone.",
        [
            {
                "category": "",
                "description": "Gone.",
                "entity_a": "car",
                "entity_b": "",
                "boxes_a": [[100, 350, 300, 400]],
                "boxes_b": [],
            }
        ],
    ),
    "last cell reaches the edge": (
        "sky <loc_0><loc_0><loc_9><loc_9> <loc_0><loc_0><loc_9><loc_9> It got darker.",
        [
            {
                "category": "",
                "description": "It got darker.",
                "entity_a": "sky",
                "entity_b": "sky",
                "boxes_a": [[0, 0, 1000, 500]],
                "boxes_b": [[0, 0, 200, 100]],
            }
        ],
    ),
}


@pytest.mark.parametrize(("answer", "expected"), GOOD_ANSWERS.values(), ids=GOOD_ANSWERS.keys())
def test_good_answers_parse_into_changes_in_each_sides_pixels(
    answer: str, expected: list[dict[str, object]]
) -> None:
    result = parse(answer)

    assert (result.error, result.notes) == ("", ())
    assert NO_VISIBLE_CHANGE not in result.flags
    assert changes_of(result) == expected
    assert result.raw == answer


def test_same_thousand_box_lands_in_each_sides_own_frame() -> None:
    result = parse_answer(
        json.dumps({**CAR, "boxes_a": [[0, 0, 500, 500]], "boxes_b": [[0, 0, 500, 500]]}),
        Frame(4000, 3000),
        Frame(640, 480),
        MINCU,
    )

    change = result.changes[0]
    assert change.boxes_a[0].as_list() == [0, 0, 2000, 1500]
    assert change.boxes_b[0].as_list() == [0, 0, 320, 240]


@pytest.mark.parametrize(
    "answer", ['{"changes": []}', "[]", "```json\n[]\n```", '{"changes": null}']
)
def test_an_explicit_empty_answer_means_no_visible_change(answer: str) -> None:
    result = parse(answer)

    assert result.changes == ()
    assert result.error == ""
    assert result.flags == (NO_VISIBLE_CHANGE,)


# Answers with problems: (answer, kept changes, flags, error fragment, note fragment).
PROBLEMS = {
    "unknown category": (
        json.dumps({**CAR, "category": "colour"}),
        [{**CAR_PIXELS, "category": ""}],
        (FLAG_UNKNOWN_CATEGORY,),
        "",
        "category 'colour' is not one of attribute, object, counting, relation; left empty",
    ),
    "coordinates slightly out of range are clamped": (
        json.dumps({**CAR, "boxes_a": [[-4, 730, 1008, 783]]}),
        [{**CAR_PIXELS, "boxes_a": [[0, 365, 1000, 391.5]]}],
        (FLAG_BOX_ADJUSTED,),
        "",
        "change 1, side A box 1: [-4, 730, 1008, 783] adjusted to [0, 730, 1000, 783]",
    ),
    "corners in the wrong order are swapped": (
        json.dumps({**CAR, "boxes_b": [[228, 783, 125, 730]]}),
        [CAR_PIXELS],
        (FLAG_BOX_ADJUSTED,),
        "",
        "adjusted to [125, 730, 228, 783]",
    ),
    "pixel coordinates are dropped": (
        json.dumps({**CAR, "boxes_a": [[125, 730, 228, 783], [1280, 700, 1900, 1000]]}),
        [CAR_PIXELS],
        (FLAG_BOX_DROPPED,),
        "",
        "change 1, side A box 2: [1280, 700, 1900, 1000] lies outside [0, 1000]; dropped",
    ),
    "a side that loses every box drops the change, not reads as absent": (
        json.dumps(
            [{**CAR, "boxes_a": [[125, 730, 125, 783], ["a", 1, 2, 3], [1, 2, 3]]}, CAT_GONE]
        ),
        [CAT_GONE_PIXELS],
        (FLAG_BOX_DROPPED, FLAG_CHANGE_DROPPED),
        "",
        "change 1: no usable box left on side A, which would read as absent; dropped",
    ),
    "a change without boxes is dropped, the others kept": (
        json.dumps([{**CAR, "boxes_a": [], "boxes_b": []}, CAT_GONE]),
        [CAT_GONE_PIXELS],
        (FLAG_CHANGE_DROPPED,),
        "",
        "change 1 has no box on either side; dropped",
    ),
    "every change unusable": (
        json.dumps([{**CAR, "boxes_a": [[2000, 0, 3000, 10]], "boxes_b": None}, "blue car"]),
        [],
        (FLAG_BOX_DROPPED, FLAG_CHANGE_DROPPED),
        "no usable change in the answer: change 1, side A box 1: [2000, 0, 3000, 10] lies "
        "outside [0, 1000]; dropped; change 1: no usable box left on side A",
        "change 2 is not an object",
    ),
    "cut off mid-JSON: complete changes salvaged": (
        json.dumps({"changes": [CAR, CAT_GONE]})[:-40],
        [CAR_PIXELS],
        (),
        "the answer was cut off mid-JSON in change 2; kept 1 complete change",
        "",
    ),
    "cut off between changes": (
        json.dumps({"changes": [CAR, CAT_GONE]}).rsplit("}", 2)[0] + "}, ",
        [CAR_PIXELS, CAT_GONE_PIXELS],
        (),
        "the answer was cut off after change 2; kept 2 complete changes",
        "",
    ),
    "cut off inside a fence": (
        "```json\n" + json.dumps([CAR, CAT_GONE])[:-3],
        [CAR_PIXELS],
        (),
        "cut off mid-JSON in change 2",
        "",
    ),
    "cut off inside the only change": (
        json.dumps(CAR)[:-12],
        [],
        (),
        "the answer was cut off mid-JSON in change 1; no change could be kept",
        "",
    ),
    "cut off after the list": (
        json.dumps({"changes": [CAR], "confidence": 0.5})[:-3],
        [CAR_PIXELS],
        (),
        "",
        "the JSON after the list of changes is cut off or malformed",
    ),
    "malformed JSON between changes": (
        '{"changes": [' + json.dumps(CAR) + " " + json.dumps(CAT_GONE) + "]}",
        [CAR_PIXELS],
        (),
        "the JSON is malformed at character",
        "",
    ),
    "JSON without the expected keys": (
        '{"answer": "the car is blue"}',
        [],
        (),
        "the JSON has none of the expected keys",
        "",
    ),
    "garbage": (
        "I cannot compare these images.",
        [],
        (),
        "the answer holds neither JSON nor <loc_i> tokens: 'I cannot compare these images.'",
        "",
    ),
    "empty": ("  \n", [], (), "the model's answer is empty", ""),
    "cut off while reasoning": (
        "<think>The car in A is white and in B",
        [],
        (),
        "cut off while the model was still reasoning",
        "",
    ),
    "changes is not a list": (
        '{"changes": "the car"}',
        [],
        (),
        "\"changes\" should be a list of changes, not 'the car'",
        "",
    ),
    "tokens: ambiguous anchors": (
        "car <loc_1> <loc_7> <loc_2> <loc_7> <loc_1> <loc_7> Blue.",
        [],
        (FLAG_CHANGE_DROPPED,),
        "no usable change in the answer: change 1: cannot tell A's anchors from B's",
        "",
    ),
    "tokens: invalid anchor": (
        "car <loc_12><loc_7><loc_2><loc_7> <loc_null> Blue.",
        [],
        (FLAG_CHANGE_DROPPED,),
        "change 1: <loc_12> is not one of <loc_0>..<loc_9> or <loc_null>; dropped",
        "",
    ),
    "tokens: anchors after the description": (
        "car <loc_1><loc_7><loc_2><loc_7> turned blue <loc_null>",
        [],
        (FLAG_CHANGE_DROPPED,),
        "anchors must come together",
        "",
    ),
    "tokens: backwards region": (
        "car <loc_3><loc_7><loc_2><loc_7> <loc_1><loc_7><loc_2><loc_7> Blue.",
        [],
        (FLAG_BOX_DROPPED, FLAG_CHANGE_DROPPED),
        "change 1, side A region 1: anchors [3, 7, 2, 7] run backwards; dropped",
        "no usable box left on side A",
    ),
    "tokens: fine boxes on a loc_null side are ignored": (
        "car <loc_1><loc_7><loc_2><loc_7> <loc_null> Gone. [125,730,228,783] [125,730,228,783]",
        [{**CAR_PIXELS, "category": "", "description": "Gone.", "entity_b": "", "boxes_b": []}],
        (FLAG_BOX_DROPPED,),
        "",
        "change 1, side B: fine boxes on a <loc_null> side; ignored",
    ),
    "tokens: one list of fine boxes falls back to anchors": (
        "car <loc_1><loc_7><loc_2><loc_7> <loc_null> Gone. [125,730,228,783]",
        [
            {
                **CAR_PIXELS,
                "category": "",
                "description": "Gone.",
                "entity_b": "",
                "boxes_a": [[100, 350, 300, 400]],
                "boxes_b": [],
            }
        ],
        (FLAG_BOX_DROPPED,),
        "",
        "one list of fine boxes where A's and B's were expected",
    ),
    "tokens: empty fine list on a side with anchors": (
        "car <loc_1><loc_7><loc_2><loc_7> <loc_null> Gone. [] []",
        [
            {
                **CAR_PIXELS,
                "category": "",
                "description": "Gone.",
                "entity_b": "",
                "boxes_a": [[100, 350, 300, 400]],
                "boxes_b": [],
            }
        ],
        (),
        "",
        "no fine box for the anchors; the anchor cells are used",
    ),
    "confidence out of range is ignored": (
        json.dumps({**CAR, "confidence": 87}),
        [CAR_PIXELS],
        (),
        "",
        "confidence 87 is not in [0, 1]; ignored",
    ),
}


@pytest.mark.parametrize(
    ("answer", "kept", "flags", "error", "note"), PROBLEMS.values(), ids=PROBLEMS.keys()
)
def test_problems_are_recorded_with_a_reason_never_raised(
    answer: str, kept: list[dict[str, object]], flags: tuple[str, ...], error: str, note: str
) -> None:
    result = parse(answer)

    assert changes_of(result) == kept
    assert result.flags == flags
    assert error in result.error
    assert bool(result.error) == bool(error)
    assert any(note in n for n in result.notes) if note else True
    assert result.raw == answer


def test_categories_match_ignoring_case_spacing_and_spelling() -> None:
    vdiff = ["global_colour", "lighting", "ocr_text"]
    names = ["Global Color", "global-colour", "LIGHTING", "OCR text"]
    answer = json.dumps([{**CAR, "category": name} for name in names])

    result = parse(answer, vdiff)

    assert [c.category for c in result.changes] == [
        "global_colour",
        "global_colour",
        "lighting",
        "ocr_text",
    ]
    assert result.flags == ()


def test_confidence_per_change_and_for_the_answer() -> None:
    per_change = parse(json.dumps([{**CAR, "confidence": 0.5}, {**CAT_GONE, "score": 1}]))
    overall = parse(json.dumps({"changes": [CAR], "confidence": 0.25}))

    assert [c.confidence for c in per_change.changes] == [0.5, 1.0]
    assert per_change.confidence == 0.75
    assert overall.confidence == 0.25
    assert parse(json.dumps([CAR])).confidence is None


def test_limits_on_changes_boxes_and_text() -> None:
    many = [{**CAR, "description": "x" * 5000, "boxes_a": [[0, 0, 10, 10]] * 60}] * 25

    result = parse(json.dumps(many))

    assert len(result.changes) == 20
    assert len(result.changes[0].boxes_a) == 50
    assert len(result.changes[0].description) == 1000
    assert "25 changes; kept the first 20" in result.notes


def test_raw_is_cut_to_twenty_kilobytes() -> None:
    answer = json.dumps([CAR]) + " " * 50_000

    result = parse(answer)

    assert len(result.changes) == 1
    assert result.raw.startswith(json.dumps([CAR]))
    assert len(result.raw) < RAW_LIMIT + 50


def test_anchor_cell_boxes() -> None:
    assert anchor_cell_box((1, 7, 2, 7)) == [100, 700, 300, 800]
    assert anchor_cell_box((0, 0, 9, 9)) == [0, 0, 1000, 1000]
    assert anchor_cell_box((2, 7, 1, 7)) is None


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "{",
                "}",
                "[",
                "]",
                ",",
                ":",
                '"changes"',
                '"boxes_a"',
                '"category"',
                "null",
                "1000",
                "-3",
                "<loc_1>",
                "<loc_null>",
                "<loc_x>",
                " ",
                "\n",
                "```json",
                "<think>",
                "</think>",
                "car",
                '"',
                "\\",
            ]
        ),
        max_size=40,
    ).map("".join)
    | st.text(max_size=200)
)
def test_any_text_gives_a_result_never_an_exception(text: str) -> None:
    result = parse(text)

    assert isinstance(result, VlmResult)
    for change in result.changes:
        for box in change.boxes_a:
            assert 0 <= box.x1 < box.x2 <= FRAME_A.width and 0 <= box.y1 < box.y2 <= 500
        for box in change.boxes_b:
            assert 0 <= box.x1 < box.x2 <= FRAME_B.width and 0 <= box.y1 < box.y2 <= 100


def test_the_prompt_gives_the_exact_json_shape_and_the_categories() -> None:
    text = instruction_text(["object", "attribute"], "make the car blue")

    assert '{"changes": [{"entity_a": "car", "entity_b": "car"' in text
    assert '"category": "attribute", "boxes_a": [[125, 730, 228, 783]]' in text
    assert "exactly one of: object, attribute" in text
    assert "make the car blue" in text
    assert '{"changes": []}' in text
    # The example in the prompt is itself an answer the parser reads.
    example = text.split("in exactly this shape:\n", 1)[1].split("\n", 1)[0]
    assert len(parse(example).changes) == 1


# The client against a local OpenAI-compatible endpoint -----------------------------------------


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict


@dataclass
class FakeEndpoint:
    """What the fake server answers; `respond` writes the reply for one request."""

    url: str = ""
    requests: list[Received] = field(default_factory=list)
    respond: Callable[[BaseHTTPRequestHandler], object] | None = None
    release: threading.Event = field(default_factory=threading.Event)

    def answer(self, content: object, *, finish_reason: str = "stop", status: int = 200) -> None:
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "qwen",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
        }
        self.reply(status, json.dumps(body).encode())

    def reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        def respond(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)

        self.respond = respond


class _Handler(BaseHTTPRequestHandler):
    endpoint: FakeEndpoint

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        self.endpoint.requests.append(
            Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        assert self.endpoint.respond is not None
        self.endpoint.respond(self)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output clean


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (timeout tests) leaves a broken pipe behind


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    fake = FakeEndpoint()
    handler = type("Handler", (_Handler,), {"endpoint": fake})
    server = _Server(("127.0.0.1", 0), handler)
    # A short poll keeps shutdown() quick: it waits for the serving loop to notice.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        fake.release.set()  # wake a handler still stalling
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def images() -> tuple[bytes, bytes]:
    """A PNG of 96×64 and a JPEG of 48×32: different sizes and types."""
    return photo_bytes(size=(96, 64)), photo_bytes(size=(48, 32), offset=20, fmt="JPEG")


def predictor(url: str, **options) -> VlmPredictor:
    options = {"model": "Qwen/Qwen3-VL-8B-Instruct", "timeout": 5, **options}
    return VlmPredictor(base_url=url, **options)


def decode_data_url(url: str) -> tuple[str, bytes]:
    header, payload = url.split(",", 1)
    assert header.startswith("data:") and header.endswith(";base64")
    return header[5:-7], base64.b64decode(payload, validate=True)


def test_good_answer_and_the_request_the_server_received(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    endpoint.answer("```json\n" + json.dumps({"changes": [CAR]}) + "\n```")
    vlm = predictor(endpoint.url + "/", api_key="sekrit", max_tokens=512)

    result = vlm.predict(*images, categories=MINCU, instruction="Paint the car blue.")

    assert result.error == ""
    # [0, 1000] → each side's own pixels: A is 96×64, B 48×32.
    assert changes_of(result) == [
        {**CAR, "boxes_a": [[12, 46.72, 21.89, 50.11]], "boxes_b": [[6, 23.36, 10.94, 25.06]]}
    ]
    (request,) = endpoint.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sekrit"
    assert request.headers["content-type"] == "application/json"
    assert request.body["model"] == "Qwen/Qwen3-VL-8B-Instruct"
    assert (request.body["temperature"], request.body["max_tokens"]) == (0, 512)
    (message,) = request.body["messages"]
    assert message["role"] == "user"
    parts = message["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert [decode_data_url(u) for u in urls] == [
        ("image/png", images[0]),
        ("image/jpeg", images[1]),
    ]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts[:2] == ["Image A:", "Image B:"]
    assert "exactly one of: attribute, object, counting, relation" in texts[2]
    assert "Paint the car blue." in texts[2]


def test_predictor_fits_the_protocol_and_names_its_version(endpoint: FakeEndpoint) -> None:
    vlm: Predictor = predictor(endpoint.url, api_key="sekrit")

    assert vlm.name == "vlm"
    assert vlm.version == f"Qwen/Qwen3-VL-8B-Instruct prompt-{PROMPT_VERSION}"
    assert "sekrit" not in repr(vlm)


def test_no_key_no_authorization_header(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    endpoint.answer(json.dumps([CAR]))

    predictor(endpoint.url).predict(*images, categories=MINCU)

    assert "authorization" not in endpoint.requests[0].headers


def test_boxes_use_the_displayed_frame_of_an_exif_rotated_image(endpoint: FakeEndpoint) -> None:
    # Stored 96×64 with orientation 6 (rotate 90°): displayed 64×96.
    exif = Image.Exif()
    exif[0x0112] = 6
    rotated = encode(photo(size=(96, 64)), "JPEG", exif=exif.tobytes())
    endpoint.answer(json.dumps([{**CAR, "boxes_a": [[0, 0, 500, 500]], "boxes_b": []}]))

    result = predictor(endpoint.url).predict(rotated, rotated, categories=MINCU)

    assert result.changes[0].boxes_a[0].as_list() == [0, 0, 32, 48]
    sent = [p for p in endpoint.requests[0].body["messages"][0]["content"] if "image_url" in p]
    assert decode_data_url(sent[0]["image_url"]["url"])[1] == rotated  # never re-encoded


def test_token_answer_through_the_client(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    endpoint.answer(
        "car <loc_1><loc_7><loc_2><loc_7> <loc_null> The car is gone. [125,730,228,783] []"
    )

    result = predictor(endpoint.url).predict(*images, categories=MINCU)

    assert result.error == ""
    assert [(c.entity_a, c.entity_b, len(c.boxes_a), len(c.boxes_b)) for c in result.changes] == [
        ("car", "", 1, 0)
    ]


def test_content_in_parts_is_joined(endpoint: FakeEndpoint, images: tuple[bytes, bytes]) -> None:
    text = json.dumps([CAR])
    endpoint.answer([{"type": "text", "text": text[:20]}, {"type": "text", "text": text[20:]}])

    result = predictor(endpoint.url).predict(*images, categories=MINCU)

    assert len(result.changes) == 1


def test_malformed_answer_is_an_error_with_the_raw_reply(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    endpoint.answer("The car is blue now, I think.")

    result = predictor(endpoint.url).predict(*images, categories=MINCU)

    assert result.changes == ()
    assert "neither JSON nor <loc_i> tokens" in result.error
    assert result.raw == "The car is blue now, I think."


_DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "text",
    [
        _DEEP,
        '{"changes": ' + _DEEP + "}",
        '{"category": "color", "boxes_a": "' + "[" * 5000 + "]" * 5000 + '", "boxes_b": []}',
    ],
    ids=["list", "changes", "box-string"],
)
def test_an_answer_nested_too_deep_to_parse_is_unreadable_not_a_crash(text: str) -> None:
    result = parse(text)

    assert result.changes == ()
    assert result.error == "the answer's JSON is nested too deeply to read"
    assert result.raw.startswith(text[:100])


def test_a_reply_nested_too_deep_is_recorded_never_raised(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    endpoint.answer(_DEEP)

    result = predictor(endpoint.url).predict(*images, categories=MINCU)

    assert result.error == "the answer's JSON is nested too deeply to read"

    endpoint.reply(200, _DEEP.encode())  # the server's envelope itself

    result = predictor(endpoint.url).predict(*images, categories=MINCU)

    assert result.error == "the server's reply is JSON nested too deeply to read"


def test_answer_cut_at_max_tokens_keeps_complete_changes_and_says_why(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    endpoint.answer(json.dumps([CAR, CAT_GONE])[:-30], finish_reason="length")

    result = predictor(endpoint.url, max_tokens=64).predict(*images, categories=MINCU)

    assert len(result.changes) == 1
    assert result.error == (
        "the answer was cut off mid-JSON in change 2; kept 1 complete change "
        "(the model stopped at max_tokens=64; raise it)"
    )


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            500,
            b'{"object": "error", "message": "CUDA out of memory"}',
            'HTTP 500 Internal Server Error: {"object": "error", "message": "CUDA out of memory"}',
        ),
        (401, b'{"error": "invalid key"}', 'HTTP 401 Unauthorized (check the API key): {"error"'),
        (404, b"", "HTTP 404 Not Found (check the base URL and the model name): (empty body)"),
    ],
)
def test_http_errors_are_recorded_with_status_and_body(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes], status: int, body: bytes, expected: str
) -> None:
    endpoint.reply(status, body)

    result = predictor(endpoint.url, api_key="wrong").predict(*images, categories=MINCU)

    assert result.changes == ()
    assert result.error.startswith(expected)
    assert result.raw == body.decode()


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (b"<html>Bad gateway</html>", "text/html", "the server's reply is not JSON: '<html>Bad"),
        (b'{"choices": []}', "application/json", "the server's reply has no choices[0].message"),
        (
            b'{"error": {"message": "model not loaded"}}',
            "application/json",
            "the server reported an error: model not loaded",
        ),
        (
            json.dumps(
                {
                    "choices": [
                        {
                            "message": {"content": None, "reasoning_content": "Hmm, A has"},
                            "finish_reason": "length",
                        }
                    ]
                }
            ).encode(),
            "application/json",
            "the model's answer is empty (the model only reasoned); finish_reason=length",
        ),
    ],
)
def test_unusable_replies_are_recorded(
    endpoint: FakeEndpoint,
    images: tuple[bytes, bytes],
    body: bytes,
    content_type: str,
    expected: str,
) -> None:
    endpoint.reply(200, body, content_type)

    result = predictor(endpoint.url).predict(*images, categories=MINCU)

    assert result.changes == ()
    assert result.error.startswith(expected)


def test_slow_server_times_out(endpoint: FakeEndpoint, images: tuple[bytes, bytes]) -> None:
    endpoint.respond = lambda handler: endpoint.release.wait(5)

    started = time.monotonic()
    result = predictor(endpoint.url, timeout=0.5).predict(*images, categories=MINCU)
    elapsed = time.monotonic() - started

    assert result.error == "no complete answer from 127.0.0.1:{} within 0.5 s".format(
        endpoint.url.split(":")[2].split("/")[0]
    )
    assert 0.4 < elapsed < 2


def test_a_trickling_reply_is_held_to_the_whole_deadline(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        # Each byte well within the timeout; the whole reply far beyond it.
        for byte in b'{"choices": [' * 4:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            if endpoint.release.wait(0.1):
                return

    endpoint.respond = trickle

    started = time.monotonic()
    result = predictor(endpoint.url, timeout=0.5).predict(*images, categories=MINCU)

    assert "within 0.5 s" in result.error
    assert time.monotonic() - started < 1.5


def test_connection_refused_is_recorded(images: tuple[bytes, bytes]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The port is closed now: nothing listens.

    result = predictor(f"http://127.0.0.1:{port}/v1").predict(*images, categories=MINCU)

    assert result.error == (
        f"connection refused by 127.0.0.1:{port} (is the model server running?)"
    )
    assert result.changes == ()


def test_an_unreadable_image_is_recorded_without_asking_the_model(
    endpoint: FakeEndpoint, images: tuple[bytes, bytes]
) -> None:
    endpoint.answer(json.dumps([CAR]))

    result = predictor(endpoint.url).predict(images[0], b"not an image", categories=MINCU)

    assert result.error == "image B cannot be sent: not an image (could not be decoded)"
    assert endpoint.requests == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "ftp://127.0.0.1/v1"}, "must be an http:// or https:// URL"),
        ({"base_url": "127.0.0.1:8000/v1"}, "must be an http:// or https:// URL"),
        ({"model": " "}, "model must name the served model"),
        ({"timeout": 0}, "timeout 0 must be a positive number of seconds"),
        ({"max_tokens": 0}, "max_tokens 0 must be at least 1"),
    ],
)
def test_configuration_that_can_never_work_is_refused_up_front(
    options: dict[str, object], message: str
) -> None:
    config = {"base_url": "http://127.0.0.1:8000/v1", "model": "qwen", **options}

    with pytest.raises(ValueError, match=message):
        VlmPredictor(**config)  # type: ignore[arg-type]
