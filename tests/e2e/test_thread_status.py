"""End to end, Slack's status under a thread while the bot works: the real bot process, the real
agent on the demo warehouse, a slow scripted model reply, the Web API stand-in (which refuses a
status Slack would refuse and keeps each one set). A question in a channel thread and in a direct
message shows its steps in the order the graph takes them and ends cleared, as does the approved
query; a workspace that refuses statuses still gets the ordinary answer, and no error.

The workspace that refuses runs last: the bot then leaves that workspace's statuses alone for an
hour, which a later test in the same process would see.
"""

from __future__ import annotations

import pytest

from bot.conversations.status import CHECKING, DRAFTING, FORMATTING, QUESTION, READING, RUNNING
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, sql_reply
from tests.support.slack_flow import has_text
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
#: The model thinks long enough that the drafting status is surely shown.
SLOW = {**sql_reply(COUNT, "Counts the regions."), "__delay__": 2}
REPLIES = {
    "test_a_channel_question_and_its_approval_show_their_steps": [SLOW],
    "test_a_direct_message_shows_its_steps_under_the_question": [SLOW],
    "test_a_workspace_that_refuses_statuses_gets_the_ordinary_answer": [SLOW],
}
#: What a question shows, in the order the graph goes; then an approved query.
ASKING = [QUESTION[0], READING[0], DRAFTING[0], CHECKING[0], ""]
ANSWERING = [RUNNING[0], FORMATTING[0], ""]


def in_order(shown: list[str], order: list[str]) -> bool:
    """Whether `shown` follows `order` (a status sent again counts once; a quick step's status
    may be skipped over, never shown out of turn)."""
    at = 0
    for status in shown:
        if status not in order[at:]:
            return False
        at = order.index(status, at)
    return True


def settled(standin: SlackStandin, channel: str, root: str, what: str) -> list[str]:
    """The thread's statuses once the last one set is the clearing."""
    return standin.wait_for(
        lambda: (shown := standin.statuses_in(channel, root)) and shown[-1] == "" and shown,
        what=what,
    )


def test_a_channel_question_and_its_approval_show_their_steps(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "how many regions?")
    card = flow.proposal(standin, thread)
    asked = settled(standin, thread.channel, thread.ts, "the question's statuses, cleared")
    assert DRAFTING[0] in asked and in_order(asked, ASKING), asked
    assert all(s.loading_messages for s in standin.statuses if s.status)

    flow.click(bot, card, approve=True)
    bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
    answered = settled(standin, thread.channel, thread.ts, "the answer's statuses, cleared")
    assert in_order(answered[len(asked) :], ANSWERING), answered
    assert RUNNING[0] in answered[len(asked) :]
    assert standin.status_now(thread.channel, thread.ts) == ""
    flow.result(standin, thread)


def test_a_direct_message_shows_its_steps_under_the_question(
    bot: BotProcess, standin: SlackStandin
) -> None:
    direct = f"D{payloads.new_channel()[1:]}"
    body = payloads.message(direct, "how many regions?", thread_ts=None, channel_type="im")
    bot.send_event(body)
    # the question opens its own thread: the status sits under it, the proposal in it
    thread = flow.Thread(direct, body["event"]["ts"])
    shown = settled(standin, direct, thread.ts, "the DM's statuses, cleared")
    assert DRAFTING[0] in shown and in_order(shown, ASKING), shown
    flow.proposal(standin, thread)


def test_a_workspace_that_refuses_statuses_gets_the_ordinary_answer(
    bot: BotProcess, standin: SlackStandin
) -> None:
    # an older workspace: setStatus there takes a scope this app was not granted (neither
    # chat:write for it nor assistant:write, which also covers it)
    standin.revoke_scope("chat:write")
    standin.revoke_scope("assistant:write")
    try:
        thread = flow.ask(bot, "how many regions?")
        card = flow.proposal(standin, thread)
    finally:
        standin.grant_scope("chat:write")
        standin.grant_scope("assistant:write")
    assert "Counts the regions." in card.all_text()
    placeholder = flow.wait_message(standin, thread, has_text("Counts the regions."), "card")
    assert "Working on it" in placeholder.history[0][0], "today's progress message is kept"
    assert standin.statuses_in(thread.channel, thread.ts) == []
    refused = [c for c in standin.calls_to("assistant.threads.setStatus") if not c.ok]
    assert [c.answer["error"] for c in refused] == ["missing_scope"], "asked once, then left"
    bot.wait_log(r"INFO .*refused thread statuses \(missing_scope\)")
    assert "ERROR" not in bot.log()
    assert not [m for m in standin.thread(thread.channel, thread.ts) if "wrong" in m.all_text()]
