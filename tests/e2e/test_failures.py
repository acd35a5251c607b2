"""End to end, when things go wrong: bad model replies, SQL the gate refuses, a query that fails
when it runs, a question replaced while its proposal waits, and a model outage mid-thread. Every
question still ends with something clear in its thread.

One bot process serves the module (shared_bot.py); each test uses the model replies listed for
it in REPLIES.
"""

from __future__ import annotations

import pytest

from bot.conversations.outcomes import REPAIRED
from tests.e2e.shared_bot import Reply
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, sql_reply
from tests.support.slack_flow import has_text
from tests.support.slack_payloads import BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

COUNT_ORDERS = "SELECT COUNT(*) AS orders FROM demo.main.orders"
TWO_STATEMENTS = (
    "SELECT SUM(net_revenue) AS revenue FROM demo.main.sales; DROP TABLE demo.main.sales"
)
FAILS_AT_RUN_TIME = (
    "SELECT CAST(r.region_name AS INTEGER) AS region_number FROM demo.main.regions AS r"
)
REGION_NAMES = "SELECT r.region_name FROM demo.main.regions AS r ORDER BY r.region_id"

REPLIES: dict[str, list[Reply]] = {
    # a reply that is not JSON, then a good one
    "test_a_reply_that_is_not_json_is_repaired": [
        "Sure! Here is the SQL you wanted: SELECT COUNT(*) FROM orders",
        sql_reply(COUNT_ORDERS, "Counts all orders."),
    ],
    # never JSON
    "test_a_model_that_never_answers_json_gets_a_clear_failure": [
        "no",
        "{not json either",
        '{"kind": "sql"',
    ],
    # SQL the gate refuses three times
    "test_sql_refused_by_the_gate_three_times": [sql_reply(TWO_STATEMENTS)] * 3,
    # a query that fails when it runs, then its repair
    "test_a_query_failing_at_run_time_comes_back_corrected": [
        sql_reply(FAILS_AT_RUN_TIME, "Numbers the regions."),
        sql_reply(REGION_NAMES, "Lists the regions."),
    ],
    # a pending proposal replaced by a new question
    "test_a_new_question_replaces_the_pending_proposal": [
        sql_reply(COUNT_ORDERS, "Counts all orders."),
        sql_reply(REGION_NAMES, "Lists the regions."),
    ],
    # an answered question, a follow-up during a model outage, then one after it
    "test_a_model_outage_mid_thread_then_a_follow_up_works": [
        sql_reply(COUNT_ORDERS, "Counts all orders."),
        {"__error__": "503 Service Unavailable"},
        sql_reply(REGION_NAMES, "Lists the regions."),
    ],
}


def test_a_reply_that_is_not_json_is_repaired(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many orders?")
    proposal = flow.proposal(standin, thread)
    assert "Counts all orders." in proposal.all_text()


def test_a_model_that_never_answers_json_gets_a_clear_failure(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "how many orders?")
    message = flow.wait_message(standin, thread, has_text("cannot read"), "the failure")
    assert message.action_values() == {}
    assert "Working on it" in message.history[0][0]


def test_sql_refused_by_the_gate_three_times(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "what was 2026 revenue?")
    message = flow.wait_message(standin, thread, has_text("after 3 tries"), "the failure")
    assert "exactly one statement" in message.all_text()
    assert message.action_values() == {}
    assert "Try rephrasing" in message.all_text()


def test_a_query_failing_at_run_time_comes_back_corrected(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "number the regions")
    first = flow.proposal(standin, thread)
    first_pid = flow.proposal_id(first)
    flow.click(bot, first, approve=True)
    corrected = flow.proposal(standin, thread, skip=1)
    assert REPAIRED in corrected.all_text()
    assert "Lists the regions." in corrected.all_text()
    events = [e["event"] for e in audit_events(bot, proposal_id=first_pid)]
    assert events == ["proposed", "approved", "execution_failed"]
    flow.click(bot, corrected, approve=True)
    result = flow.result(standin, thread)
    assert (result.table() or [])[1:3] == [["North America"], ["Europe"]]


def test_a_new_question_replaces_the_pending_proposal(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "how many orders?")
    old = flow.proposal(standin, thread)
    old_pid = flow.proposal_id(old)
    flow.reply(bot, thread, "no wait, list the regions")
    new = flow.proposal(standin, thread, skip=1)
    replaced = flow.wait_message(
        standin, thread, lambda m: m.ts == old.ts and not m.action_values(), "the old one redrawn"
    )
    assert "Replaced by a newer question" in replaced.all_text()
    flow.click(bot, old, approve=True)
    note = standin.wait_for(
        lambda: standin.ephemerals_for(thread.channel, BOB), what="the note about the old one"
    )
    assert "replaced by a newer question" in note[0]["text"]
    flow.click(bot, new, approve=True)
    flow.result(standin, thread)
    assert "executed" not in [e["event"] for e in audit_events(bot, proposal_id=old_pid)]


def test_a_model_outage_mid_thread_then_a_follow_up_works(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "how many orders?")
    flow.click(bot, flow.proposal(standin, thread), approve=True)
    flow.result(standin, thread)
    flow.reply(bot, thread, "and the regions?")
    outage = flow.wait_message(standin, thread, has_text("did not answer"), "the outage")
    assert "503 Service Unavailable" in outage.all_text()
    assert "Nothing was run" in outage.all_text() and outage.action_values() == {}
    flow.reply(bot, thread, "the regions, please")
    later = flow.wait_message(
        standin,
        thread,
        lambda m: "Lists the regions." in m.all_text() and m.action_values(),
        "the proposal after the outage",
    )
    flow.click(bot, later, approve=True)
    result = flow.wait_message(
        standin,
        thread,
        lambda m: "Sources:" in m.all_text() and "Region name" in m.all_text(),
        "the regions",
    )
    assert (result.table() or [])[1:3] == [["North America"], ["Europe"]]
