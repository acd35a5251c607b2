"""The stand-in's rules for Slack's feedback buttons (a `context_actions` block): the answer's
own block passes; slack_sdk's limits (75-character labels, 2,000-character values, 255-character
action ids, 5 elements) and what slack_sdk lets through but Slack refuses (other elements, a
missing action id or button, a label not in plain text, the block in a view) are refused."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from bot.blocks.feedback import feedback_buttons
from tests.support.slack_block_rules import check_blocks, check_view
from tests.support.standin_records import Refused

Change = Callable[[dict[str, Any]], None]


def ours() -> dict[str, Any]:
    return feedback_buttons("p1").to_dict()


def changed(change: Change) -> dict[str, Any]:
    block = copy.deepcopy(ours())
    change(block)
    return block


def test_the_answers_feedback_block_passes() -> None:
    check_blocks([ours()])


def element(block: dict[str, Any]) -> dict[str, Any]:
    return block["elements"][0]


@pytest.mark.parametrize(
    "change",
    [
        lambda b: element(b)["positive_button"]["text"].update(text="x" * 76),
        lambda b: element(b)["negative_button"].update(value="v" * 2001),
        lambda b: element(b).update(action_id="a" * 256),
        lambda b: b.update(elements=[element(b)] * 6),
        lambda b: element(b).pop("action_id"),
        lambda b: element(b).pop("negative_button"),
        lambda b: element(b)["positive_button"].update(text={"type": "mrkdwn", "text": "*Good*"}),
        lambda b: b.update(
            elements=[
                {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "Go"}}
            ]
        ),
        lambda b: b.update(elements=[]),
    ],
    ids=[
        "long label",
        "long value",
        "long action id",
        "six elements",
        "no action id",
        "one button",
        "mrkdwn label",
        "a plain button",
        "no elements",
    ],
)
def test_refuses_what_slack_refuses(change: Change) -> None:
    with pytest.raises(Refused) as refused:
        check_blocks([changed(change)])
    assert refused.value.error == "invalid_blocks"


def test_feedback_buttons_are_for_messages_only() -> None:
    view = {"type": "modal", "title": {"type": "plain_text", "text": "T"}, "blocks": [ours()]}
    with pytest.raises(Refused, match="messages only"):
        check_view(view, "modal")
