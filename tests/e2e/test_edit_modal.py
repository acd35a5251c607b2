"""End to end: Edit SQL. The button opens a modal holding the SQL; the submission is checked by
the gate and comes back as a new proposal, and only an approval runs it. A refused edit changes
nothing: the reasons go in the thread and the original proposal can still be approved.

One bot serves the module (shared_bot.py); each test's model replies are in REPLIES.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.memory.audit import sql_sha256
from bot.blocks import cell_text
from bot.blocks.views import EDIT_BLOCK
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, expected_rows, sql_reply
from tests.support.slack_flow import has_text
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

ORDER_COUNT = "SELECT COUNT(*) AS orders FROM demo.main.orders"
#: ORDER_COUNT as the gate writes it, one clause a line: the text shown, hashed and edited.
ORDER_COUNT_SHOWN = "SELECT\n  COUNT(*) AS orders\nFROM demo.main.orders"
CANCELLED = "SELECT COUNT(*) AS orders FROM demo.main.orders WHERE status = 'cancelled'"
CUSTOMER_COUNT = "SELECT COUNT(*) AS customers FROM demo.main.customers"

REPLIES = {
    "test_edit_is_checked_proposed_again_and_runs_when_approved": [
        sql_reply(ORDER_COUNT, "Counts all orders.")
    ],
    "test_a_refused_edit_leaves_the_original_approvable": [
        sql_reply(CUSTOMER_COUNT, "Counts customers.")
    ],
}


def test_edit_is_checked_proposed_again_and_runs_when_approved(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "how many orders are there?")
    original = flow.proposal(standin, thread)
    old_id = flow.proposal_id(original)
    view = flow.open_edit(bot, standin, original, user=BOB)
    metadata = json.loads(view["private_metadata"])
    assert metadata == {"proposal_id": old_id, "sql_sha256": sql_sha256(ORDER_COUNT_SHOWN)}
    field = next(b for b in view["blocks"] if b["type"] == "input")["element"]
    assert field["initial_value"] == ORDER_COUNT_SHOWN and field["multiline"] is True

    unchanged = flow.submit_edit(bot, view, ORDER_COUNT_SHOWN + "\n", user=BOB)
    assert unchanged["response_action"] == "errors" and EDIT_BLOCK in unchanged["errors"]

    assert flow.submit_edit(bot, view, CANCELLED, user=BOB) == {}
    edited = flow.proposal(standin, thread, skip=1)
    assert flow.proposal_id(edited) != old_id
    text = edited.all_text()
    assert f"Edited by <@{BOB}>" in text and "status = 'cancelled'" in text
    old = flow.wait_message(standin, thread, lambda m: m.ts == original.ts, "the old proposal")
    assert old.action_values() == {} and f"Edited by <@{BOB}>" in old.all_text()

    # The old proposal's buttons are gone; a stale click on them does nothing.
    flow.click(bot, original, approve=True, user=ALICE)
    note = standin.wait_for(lambda: standin.ephemerals_for(thread.channel, ALICE), what="a note")
    assert "replaced by an edit" in note[-1]["text"]

    flow.click(bot, edited, approve=True, user=ALICE)
    result = flow.result(standin, thread)
    (count,) = expected_rows(demo_file, CANCELLED)[0]
    assert flow.values(result) == {"Orders": cell_text(count)}
    # the edited card above shows the SQL that ran; the answer refers to it
    assert "approved above" in result.all_text() and "status = 'cancelled'" in edited.all_text()
    new_id = flow.proposal_id(edited)
    bot.wait_log(f"Decision on proposal {new_id} done: answer")
    assert [e["event"] for e in audit_events(bot, proposal_id=old_id)] == ["proposed"]
    ran = audit_events(bot, proposal_id=new_id, event="executed")
    assert len(ran) == 1 and "cancelled" in ran[0]["sql"]


def test_a_refused_edit_leaves_the_original_approvable(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "how many customers?")
    original = flow.proposal(standin, thread)
    pid = flow.proposal_id(original)
    view = flow.open_edit(bot, standin, original, user=BOB)
    assert (
        flow.submit_edit(bot, view, "SELECT no_such_column FROM demo.main.customers", user=BOB)
        == {}
    )
    refusal = flow.wait_message(standin, thread, has_text("was not accepted"), "the refusal")
    assert "no_such_column" in refusal.all_text()
    bot.wait_log(f"Edit of proposal {pid} done: failed")
    assert flow.proposal_id(flow.proposal(standin, thread)) == pid

    flow.click(bot, original, approve=True, user=BOB)
    result = flow.result(standin, thread)
    customers = expected_rows(demo_file, CUSTOMER_COUNT)[0][0]
    assert flow.values(result) == {"Customers": cell_text(customers)}
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == [
        "proposed",
        "approved",
        "executed",
    ]
