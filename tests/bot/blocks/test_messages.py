"""bot.blocks.messages: Approve and Cancel ask before they act, Reject is not styled as
dangerous (issue 38 item 6). The dialogs are checked as Slack would take them (slack_sdk's
models and the stand-in's validator) and at Slack's limits."""

from __future__ import annotations

from typing import Any

import pytest

from bot import blocks
from bot.blocks import APPROVE_ACTION, CANCEL_ACTION, EDIT_ACTION, REJECT_ACTION, Message
from bot.blocks.messages import CONFIRM_TEXT
from tests.bot.blocks.test_blocks import make_proposal
from tests.support.message_checks import valid


def buttons(message: Message) -> dict[str, dict[str, Any]]:
    [actions] = [b for b in message.blocks if b["type"] == "actions"]
    return {e["action_id"]: e for e in actions["elements"]}


@pytest.mark.parametrize(
    ("audience", "said"),
    [
        (blocks.Audience("C0SALES01"), "Everyone in this channel will see the result."),
        (blocks.Audience("D0ALICE01"), "The result is posted in this conversation."),
        (
            blocks.Audience("C0SALES01", private=True),
            "Only the person who asked and the approver (you)",
        ),
    ],
)
def test_approve_asks_first_naming_what_runs_and_who_sees_it(
    audience: blocks.Audience, said: str
) -> None:
    card = valid(blocks.proposal(make_proposal(), requested_by="U0ALICE01", audience=audience))
    confirm = buttons(card)[APPROVE_ACTION]["confirm"]
    assert confirm["title"]["text"] == "Run this query?"
    text = confirm["text"]["text"]
    assert "runs as shown" in text and "demo.main.regions, demo.main.order_items" in text
    assert said in text
    assert confirm["confirm"]["text"] == "Run query" and confirm["deny"]["text"] == "Not yet"


def test_reject_and_edit_are_neither_dangerous_nor_confirmed() -> None:
    found = buttons(valid(blocks.proposal(make_proposal(), requested_by="U0ALICE01")))
    assert found[APPROVE_ACTION]["style"] == "primary"
    for action in (REJECT_ACTION, EDIT_ACTION):
        assert "style" not in found[action] and "confirm" not in found[action]


def test_the_approve_dialog_fits_slack_with_many_tables_and_an_identity() -> None:
    prop = make_proposal(tables=[f"warehouse.schema.table_{i:03d}" for i in range(200)],
                         run_as="analyst_role_" + "x" * 80)  # fmt: skip
    card = valid(blocks.proposal(prop, requested_by="U0ALICE01"))
    text = buttons(card)[APPROVE_ACTION]["confirm"]["text"]["text"]
    assert len(text) <= CONFIRM_TEXT
    assert text.endswith("The result is posted in this conversation.")  # the who stays whole
    assert "It runs with the asker's access (analyst_role_" in text


def test_a_query_that_reads_no_tables_says_so_in_the_dialog() -> None:
    card = valid(blocks.proposal(make_proposal(tables=[]), requested_by="U0ALICE01"))
    assert "reads no tables." in buttons(card)[APPROVE_ACTION]["confirm"]["text"]["text"]


def test_cancel_asks_before_it_stops_the_running_query() -> None:
    card = valid(
        blocks.running_card(make_proposal(), requested_by="U0ALICE01", verdict="Running… 3 s")
    )
    cancel = buttons(card)[CANCEL_ACTION]
    assert "style" not in cancel
    confirm = cancel["confirm"]
    assert confirm["title"]["text"] == "Stop this query?"
    assert "stops the query now" in confirm["text"]["text"]
    assert confirm["style"] == "danger"
    assert confirm["confirm"]["text"] == "Stop query" and confirm["deny"]["text"] == "Keep running"
