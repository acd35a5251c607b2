"""End to end, SQL a person pastes in Slack: refused SQL gets the gate's reasons and what to do
next as the thread's reply, accepted SQL is proposed with the gate's changes named and its
account says it was pasted; the model is never asked in its place. The real bot process, the
real agent on the demo warehouse, the Web API stand-in.

The script holds one reply, which only the question in words at the end may use: had a pasted
statement reached the model, its thread would show that reply (or the script's end) instead of
the refusal.
"""

from __future__ import annotations

import json

import pytest

from bot.blocks import EXPLAIN_ACTION
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, sql_reply
from tests.support.slack_flow import Thread, has_text
from tests.support.slack_payloads import BOB
from tests.support.standin import TEAM_ID, Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

SWAPPED = "Counts every order (the model's query)."
REPLIES = {
    "test_a_question_in_words_after_a_refusal_goes_to_the_model": [
        sql_reply("SELECT COUNT(*) AS orders FROM demo.main.orders", SWAPPED)
    ]
}
REFUSED = "I did not propose the SQL you sent: the checks refused it."
NEXT = "Fix the SQL and send it again, or ask your question in words"


def refusal(standin: SlackStandin, thread: Thread) -> Posted:
    message = flow.wait_message(standin, thread, has_text(REFUSED), "the refusal")
    assert "Working on it" in message.history[0][0], "the placeholder became the refusal"
    assert message.action_values() == {}, "nothing to approve"
    assert NEXT in message.all_text()
    assert SWAPPED not in json.dumps([m.all_text() for m in standin.thread(*thread_key(thread))])
    return message


def thread_key(thread: Thread) -> tuple[str, str]:
    return thread.channel, thread.ts


def events(bot: BotProcess, thread: Thread) -> list[str]:
    thread_id = f"{TEAM_ID}:{thread.channel}:{thread.ts}"
    return [e["event"] for e in audit_events(bot, thread_id=thread_id)]


@pytest.fixture
def misspelt(bot: BotProcess, standin: SlackStandin) -> Thread:
    thread = flow.ask(bot, "SELECT * FROM ordrs")
    refusal(standin, thread)
    return thread


def test_a_misspelt_table_is_refused_with_the_reasons(
    bot: BotProcess, standin: SlackStandin, misspelt: Thread
) -> None:
    text = refusal(standin, misspelt).all_text()
    assert "Unknown table 'ordrs'" in text and "(did you mean orders?)" in text
    assert "This warehouse has these tables: customers, order_items, orders" in text
    assert events(bot, misspelt) == ["gate_rejected"]


def test_a_fenced_drop_table_is_refused(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "```sql\nDROP TABLE demo.main.orders;\n```")
    text = refusal(standin, thread).all_text()
    assert "DROP changes the database; only read-only queries are allowed" in text
    assert events(bot, thread) == ["gate_rejected"]


def test_two_statements_are_refused(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "select 1; select 2")
    assert "Send exactly one statement" in refusal(standin, thread).all_text()


def test_accepted_sql_shows_the_gates_changes_and_its_account_says_pasted(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "select region_name from demo.main.regions order by region_id;")
    card = flow.proposal(standin, thread)
    assert (
        "The SQL you pasted, checked and ready to run. The checks changed it: removed trailing "
        "semicolon; row cap added (LIMIT 1000)."
    ) in card.all_text()
    flow.click(bot, card, approve=True)
    result = flow.result(standin, thread)
    assert (result.table() or [])[1:3] == [["North America"], ["Europe"]]
    bot.send_click(payloads.click(result, EXPLAIN_ACTION, user=BOB))
    note = standin.wait_for(
        lambda: standin.ephemerals_for(thread.channel, BOB), what="the account"
    )[0]
    account = json.dumps(note["blocks"], ensure_ascii=False)
    assert "The SQL was pasted, not written by the model; it was adjusted by the gate." in account
    assert "corrected" not in account
    assert events(bot, thread) == ["proposed", "approved", "executed"]


def test_a_question_in_words_after_a_refusal_goes_to_the_model(
    bot: BotProcess, standin: SlackStandin, misspelt: Thread
) -> None:
    flow.reply(bot, misspelt, "how many orders are there?")
    card = flow.proposal(standin, misspelt)
    assert SWAPPED in card.all_text()
