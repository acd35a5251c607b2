"""End to end: an approved slow query is cancelled from its running card.

The bot runs with `QUERYBOT_APPROVERS=U0BOB0001` and a generous timeout, so only the Cancel
button can stop the demo warehouse's three-way cross join: Bob approves Alice's question, a
stranger's Cancel is refused, Alice's stops the query (the thread's note, notification text
included, names her with a mention), and a Cancel after the end is told so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import CANCEL_ACTION
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from tests.support.slack_flow import has_text
from tests.support.standin import Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

#: 50,000 order lines cubed: runs far longer than the test.
SLOW = """SELECT COUNT(*) AS n
FROM demo.main.order_items AS a
CROSS JOIN demo.main.order_items AS b
CROSS JOIN demo.main.order_items AS c"""
STRANGER = "U0STRANGE1"


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin, demo_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-cancel")
    script = write_script(tmp / "script.jsonl", [sql_reply(SLOW, "Counts.")])
    env = {"QUERYBOT_QUERY_TIMEOUT_S": "600", "QUERYBOT_APPROVERS": payloads.BOB}
    data_dir = data_dir_with(tmp / "data", demo_file)
    with BotProcess(slack=standin, data_dir=data_dir, script=script, env=env) as process:
        yield process


def test_the_requester_cancels_a_running_query(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "count everything", user=payloads.ALICE)
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True, user=payloads.BOB)
    card = flow.wait_message(
        standin,
        thread,
        lambda m: m.ts == proposal.ts and CANCEL_ACTION in m.action_values(),
        "the running card with its Cancel button",
    )
    assert "Running…" in card.all_text() and "Approved by" in card.all_text()
    [cancel] = [e for b in card.blocks if b["type"] == "actions" for e in b["elements"]]
    assert cancel["confirm"]["title"]["text"] == "Stop this query?"  # Slack asks before it stops

    refusal = cancel_for_a_note(bot, standin, card, STRANGER)
    assert "can cancel this query" in refusal["text"]
    assert audit_events(bot, event="cancel_requested") == []

    bot.send_click(payloads.click(card, CANCEL_ACTION, user=payloads.ALICE))
    note = flow.wait_message(
        standin,
        thread,
        lambda m: m.ts != proposal.ts and has_text("Cancelled by")(m),
        "the cancellation note",
    )
    # its notification names Alice with a mention, not as escaped text (&lt;@U…&gt;)
    said = f"Cancelled by <@{payloads.ALICE}>: the query was stopped and returned nothing."
    assert note.text == said
    settled = next(m for m in standin.thread(thread.channel, thread.ts) if m.ts == proposal.ts)
    text = settled.all_text()
    assert f"Cancelled by <@{payloads.ALICE}>" in text and "Approved by" in text
    assert "Running…" not in text and CANCEL_ACTION not in settled.action_values()

    (requested,) = audit_events(bot, event="cancel_requested")
    assert requested["actor"] == payloads.ALICE
    (cancelled,) = audit_events(bot, event="execution_cancelled")
    assert cancelled["proposal_id"] == requested["proposal_id"] == flow.proposal_id(proposal)
    assert audit_events(bot, event="executed") == []
    assert audit_events(bot, event="execution_failed") == []

    # A click on the stale card after the end is told there is nothing to cancel.
    late = cancel_for_a_note(bot, standin, card, payloads.ALICE)
    assert "already finished" in late["text"]
    assert len(audit_events(bot, event="cancel_requested")) == 1


def cancel_for_a_note(bot: BotProcess, standin: SlackStandin, card: Posted, user: str) -> dict:
    """Press Cancel on `card` as `user`; the ephemeral note that click got."""
    before = len(standin.ephemerals_for(card.channel, user))
    bot.send_click(payloads.click(card, CANCEL_ACTION, user=user))
    found = standin.wait_for(
        lambda: standin.ephemerals_for(card.channel, user)[before:] or None,
        what=f"an ephemeral note to {user}",
    )
    return found[-1]
