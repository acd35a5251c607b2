"""End to end, the graph's steps streamed into the thread as a plan: the real bot process, the
real agent on the demo warehouse, the Web API stand-in (which refuses a stream call Slack would
refuse and keeps each stream's pieces). A channel question streams its steps and ends with the
proposed SQL and its explanation, and the card comes below the plan, drawn once the plan
stopped; the card's approval works as ever, and the approved query streams its run above the
answer; a clarifying reply comes below its plan too; a direct message streams its plan in the
thread its question opens; a workspace without streams gets today's cards, and no error.

The workspace without streams runs last: the bot then leaves that workspace's streams alone for
an hour, which a later test in the same process would see.
"""

from __future__ import annotations

import pytest

from bot.conversations.stream import ASKING, PROPOSED, RUNNING
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, sql_reply
from tests.support.slack_flow import Thread, has_text
from tests.support.standin import Posted, SlackStandin, Stream

pytestmark = pytest.mark.usefixtures("checked")

COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
REPLIES = {
    "test_a_streamed_plan_leads_to_the_card_and_the_answer": [
        sql_reply(COUNT, "Counts the regions.")
    ],
    "test_a_clarifying_reply_comes_below_its_plan": [
        {"kind": "clarify", "explanation": "Which regions: with orders, or all?", "sql": ""}
    ],
    "test_a_direct_message_streams_its_plan_in_its_own_thread": [
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


def last_drawn_after_stop(standin: SlackStandin, message: Posted) -> bool:
    """Whether `message` took its last form (posted, or the placeholder's last update) after
    the thread's last `chat.stopStream`: the person saw the plan end, then what it led to."""
    calls = [c for c in standin.calls if c.ok]
    stopped = max(i for i, c in enumerate(calls) if c.method == "chat.stopStream")
    drawn = max(
        i
        for i, c in enumerate(calls)
        if (c.method == "chat.update" and c.params.get("ts") == message.ts)
        or (c.method == "chat.postMessage" and c.answer.get("ts") == message.ts)
    )
    return stopped < drawn


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
    plan, below = standin.thread(thread.channel, thread.ts)
    assert (plan.ts, below.ts) == (asked.ts, card.ts), "the plan first, its card below it"
    assert "Working on it" in below.history[0][0], "today's progress message became the card"
    assert last_drawn_after_stop(standin, card), "the card was drawn once the plan had ended"

    flow.click(bot, card, approve=True)
    bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
    _, ran = stopped(standin, thread, 2)
    assert ran.plan_title == RUNNING and ran.task_ids()[0] == "run"
    assert ran.statuses("run")[-1] == "complete"
    result = flow.result(standin, thread)
    order = [m.ts for m in standin.thread(thread.channel, thread.ts)]
    assert order[:4] == [asked.ts, card.ts, ran.ts, result.ts], "each plan above what it led to"
    assert last_drawn_after_stop(standin, result)


def test_a_clarifying_reply_comes_below_its_plan(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many regions?")
    reply = flow.wait_message(standin, thread, has_text("with orders, or all?"), "the reply")
    [asked] = stopped(standin, thread, 1)
    assert asked.plan_title == ASKING and "question" in asked.task_ids()
    assert [m.ts for m in standin.thread(thread.channel, thread.ts)] == [asked.ts, reply.ts]
    assert last_drawn_after_stop(standin, reply)


def test_a_direct_message_streams_its_plan_in_its_own_thread(
    bot: BotProcess, standin: SlackStandin
) -> None:
    direct = f"D{payloads.new_channel()[1:]}"
    body = payloads.message(direct, "how many regions?", thread_ts=None, channel_type="im")
    bot.send_event(body)
    thread = Thread(direct, body["event"]["ts"])
    card = flow.proposal(standin, thread)
    [asked] = stopped(standin, thread, 1)
    assert asked.plan_title == ASKING and asked.task_ids()[-1] == PROPOSED[0]
    assert [m.ts for m in standin.thread(direct, thread.ts)] == [asked.ts, card.ts]


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
