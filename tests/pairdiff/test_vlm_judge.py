"""The VLM judge: MinCU's three screening questions, against a local fake OpenAI server."""

import json

import pytest

from pairdiff.vlm.judge import DEFAULT_QUESTIONS, VlmJudge, judge_text, parse_verdict
from tests.pairdiff.test_vlm import FakeEndpoint, endpoint, images  # noqa: F401 (fixtures)


def _answer(followed=True, correct=True, unrelated=False, **reasons) -> str:
    return json.dumps(
        {
            "instruction_followed": followed,
            "edit_correct": correct,
            "unrelated_changes": unrelated,
            "reasons": reasons,
        }
    )


@pytest.mark.parametrize(
    ("answer", "flags"),
    [
        (_answer(), ()),
        (_answer(followed=False), ("instruction_not_followed",)),
        (_answer(correct=False), ("edit_incorrect",)),
        (_answer(unrelated=True), ("unrelated_changes",)),
        (
            _answer(False, False, True),
            ("instruction_not_followed", "edit_incorrect", "unrelated_changes"),
        ),
        # yes/no words, a fence and prose around the JSON, a reasoning block before it
        (
            '<think>hmm {"x": 1}</think>Sure:\n```json\n{"instruction_followed": "yes", '
            '"edit_correct": "no", "unrelated_changes": "no"}\n```',
            ("edit_incorrect",),
        ),
    ],
)
def test_answers_become_flags(answer: str, flags: tuple[str, ...]) -> None:
    result = parse_verdict(answer)

    assert result.error == ""
    assert result.flags == flags


def test_each_flag_keeps_the_models_reason() -> None:
    result = parse_verdict(_answer(unrelated=True, unrelated_changes="The sky also turned darker."))

    assert result.reasons == {"unrelated_changes": "The sky also turned darker."}


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("I think it is fine.", "not JSON"),
        ('{"instruction_followed": true}', "did not answer edit_correct, unrelated_changes"),
        (
            '{"instruction_followed": "maybe", "edit_correct": true, "unrelated_changes": false}',
            "did not answer instruction_followed",
        ),
    ],
)
def test_unreadable_answers_are_errors_without_flags(answer: str, error: str) -> None:
    result = parse_verdict(answer)

    assert error in result.error
    assert result.flags == ()


def test_a_verdict_nested_too_deep_to_parse_is_unreadable_not_a_crash() -> None:
    result = parse_verdict('{"reasons": ' * 100_000)

    assert result.error == "the judge's answer is JSON nested too deeply to read"
    assert result.flags == ()


def test_the_prompt_holds_the_instruction_and_always_the_answer_format() -> None:
    default = judge_text("", "Make the car blue.")
    custom = judge_text("Is B a faithful edit of A? Check the background too.", "Add a hat.")

    assert "Make the car blue." in default and DEFAULT_QUESTIONS.splitlines()[1] in default
    assert "The requested edit: Add a hat." in custom
    assert "Check the background too." in custom
    for text in (default, custom):
        assert '"instruction_followed": true' in text and '"unrelated_changes"' in text
    assert "no instruction was given" in judge_text("", "")


def test_the_judge_asks_the_server_and_reads_its_verdict(
    endpoint: FakeEndpoint,  # noqa: F811
    images: tuple[bytes, bytes],  # noqa: F811
) -> None:
    endpoint.answer(_answer(correct=False, edit_correct="The hat floats above the head."))
    judge = VlmJudge(
        base_url=endpoint.url, model="qwen", timeout=5, questions="Check {instruction} please."
    )

    result = judge.predict(*images, categories=["attribute"], instruction="Add a hat.")

    assert (result.error, result.flags) == ("", ("edit_incorrect",))
    assert result.reasons == {"edit_incorrect": "The hat floats above the head."}
    sent = endpoint.requests[0].body
    content = sent["messages"][0]["content"]
    assert [c["type"] for c in content] == ["text", "image_url", "text", "image_url", "text"]
    assert content[4]["text"].startswith("Check Add a hat. please.")
    assert judge.name == "vlm-judge" and "judge-1 custom-" in judge.version
    assert VlmJudge(base_url=endpoint.url, model="qwen").version.endswith("default")


def test_a_server_error_is_recorded_never_raised(
    endpoint: FakeEndpoint,  # noqa: F811
    images: tuple[bytes, bytes],  # noqa: F811
) -> None:
    endpoint.reply(500, b'{"error": "boom"}')

    result = VlmJudge(base_url=endpoint.url, model="qwen", timeout=5).predict(
        *images, categories=[]
    )

    assert "HTTP 500" in result.error and result.flags == ()
