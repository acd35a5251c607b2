"""End to end, the graph's steps streamed into the thread as a plan: the real bot process, the
real agent on the demo warehouse, the Web API stand-in (which refuses a stream call Slack would
refuse and keeps each stream's pieces). A channel question streams its steps and ends with the
proposed SQL and its explanation, the card's approval works as ever, and the approved query
streams its run before the answer; a workspace without streams gets today's cards, and no error.

The workspace without streams runs last: the bot then leaves that workspace's streams alone for
an hour, which a later test in the same process would see.
"""

from __future__ import annotations

import pytest

from bot.conversations.stream import ASKING, PROPOSED, RUNNING
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, sql_reply
from tests.support.slack_flow import Thread, has_text
from tests.support.standin import SlackStandin, Stream

pytestmark = pytest.mark.usefixtures("checked")

COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
REPLIES = {
    "test_a_streamed_plan_leads_to_the_card_and_the_answer": [
        sql_reply(COUNT, "Counts the regions.")
    ],
    "test_a_workspace_without_streams_gets_todays_cards": [sql_reply(COUNT, "Counts the regions.")],
}
BOT_ENV = {"QUERYBOT_SLACK_STREAM": "true"}


def stopped(standin: SlackStandin, thread: Thread, count: int) -> list[Stream]:
    """The thread's streams once `count` of them have stopped."""
    return standin.wait_for(
        lambda: (
            (found := standin.streams_in(thread.channel, thread.ts))
            and sum(s.stopped for s in found) == count
            and found
        ),
        what=f"{count} stopped streams",
    )


def test_a_streamed_plan_leads_to_the_card_and_the_answer(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "how many regions?")
    card = flow.proposal(standin, thread)
    [asked] = stopped(standin, thread, 1)
    assert asked.plan_title == ASKING and asked.task_display_mode == "plan"
    assert asked.pieces[0][0] == "chat.startStream" and asked.pieces[-1][0] == "chat.stopStream"
    assert {"question", "draft", "check"} <= set(asked.task_ids())
    assert asked.task_ids()[-1] == PROPOSED[0]
    assert " ".join(asked.tasks[PROPOSED[0]]["output"].split()) == COUNT  # as the card lays it out
    assert {t["status"] for t in asked.tasks.values()} == {"complete"}
    streamed = next(m for m in standin.thread(thread.channel, thread.ts) if standin.is_streamed(m))
    assert streamed.text == "Counts the regions."
    assert asked.tasks[PROPOSED[0]]["output"] in card.all_text(), "the card shows it as ever"

    flow.click(bot, card, approve=True)
    bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
    _, ran = stopped(standin, thread, 2)
    assert ran.plan_title == RUNNING and ran.task_ids()[0] == "run"
    assert ran.statuses("run")[-1] == "complete"
    flow.result(standin, thread)


def test_a_workspace_without_streams_gets_todays_cards(
    bot: BotProcess, standin: SlackStandin
) -> None:
    standin.refuse_streams("unknown_method")
    try:
        thread = flow.ask(bot, "how many regions?")
        card = flow.proposal(standin, thread)
    finally:
        standin.allow_streams()
    placeholder = flow.wait_message(standin, thread, has_text("Counts the regions."), "card")
    assert "Working on it" in placeholder.history[0][0], "today's progress message is kept"
    assert card.ts == placeholder.ts
    assert standin.streams_in(thread.channel, thread.ts) == []
    refused = [c for c in standin.calls_to("chat.startStream") if not c.ok]
    assert [c.answer["error"] for c in refused] == ["unknown_method"], "asked once, then left"
    bot.wait_log(r"INFO .*refused streamed plans \(unknown_method\)")
    assert "ERROR" not in bot.log()
    assert [m.ts for m in standin.thread(thread.channel, thread.ts)] == [card.ts]
