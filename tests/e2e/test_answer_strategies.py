"""End to end over signed HTTP with answer-quality strategies on
(`QUERYBOT_STRATEGIES=plan,self_check,candidates:3`): the real bot process, the real agent on the
demo warehouse, a scripted model, the Web API stand-in.

The first question: a plan whose filter value is corrected to a real one ("How I read your
question"), three drafts of which two agree (the note the approver sees), a self-check that
passes, approval, and an answer whose sources line counts the model calls. The second: a
self-check that finds a problem, so the SQL is rewritten before anything is posted.

One bot serves the module (shared_bot.py); each test's model replies are in REPLIES. The three
drafts of a question are asked at once, so which draft gets which of their script lines varies:
the scripts below hold for any order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.blocks import APPROVE_ACTION, EXPLAIN_ACTION, cell_text
from tests.e2e.shared_bot import Reply
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, expected_rows, sql_reply
from tests.support.slack_flow import Thread
from tests.support.slack_payloads import BOB
from tests.support.standin import TEAM_ID, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

BUSINESS_ORDERS = """SELECT COUNT(*) AS orders
FROM demo.main.orders AS o
JOIN demo.main.customers AS c ON c.customer_id = o.customer_id
WHERE c.segment = 'business'"""
CONSUMER_ORDERS = BUSINESS_ORDERS.replace("'business'", "'consumer'")
BUSINESS_CUSTOMERS = (
    "SELECT COUNT(*) AS customers FROM demo.main.customers WHERE segment = 'business'"
)
CONSUMER_CUSTOMERS = BUSINESS_CUSTOMERS.replace("'business'", "'consumer'")
DOUBT = "The question asks about business customers, not consumers."


def plan(value: str, explanation: str) -> dict[str, object]:
    return {
        "kind": "plan",
        "explanation": explanation,
        "fields": ["COUNT(*)"],
        "filters": [{"column": "customers.segment", "operator": "=", "value": value}],
        "grouping": [],
        "ordering": "",
    }


#: The first question: plan (a value that does not occur as written), 3 drafts, self-check.
FIRST: list[Reply] = [
    plan("Business", "The number of orders placed by business customers."),
    sql_reply(BUSINESS_ORDERS, "Orders placed by business customers."),
    sql_reply(BUSINESS_ORDERS, "Orders placed by business customers."),
    sql_reply(CONSUMER_ORDERS, "Orders placed by consumers."),
    {"valid": True, "feedback": ""},
]
REPLIES = {
    "test_the_proposal_shows_the_plan_and_the_drafts_agreement": FIRST,
    "test_approval_runs_it_and_the_sources_line_counts_the_model_calls": FIRST,
    # plan, 3 agreeing drafts the self-check finds wrong, the repair, a pass
    "test_a_self_check_failure_is_repaired_before_the_proposal_is_posted": [
        plan("business", "The number of business customers."),
        *[sql_reply(CONSUMER_CUSTOMERS, "Customers in the consumer segment.")] * 3,
        {"valid": False, "feedback": DOUBT},
        sql_reply(BUSINESS_CUSTOMERS, "Customers in the business segment."),
        {"valid": True, "feedback": ""},
    ],
}
#: Settings of the module's bot, over the demo defaults (conftest's `bots`).
BOT_ENV = {"QUERYBOT_STRATEGIES": "plan,self_check,candidates:3"}


@pytest.fixture
def first(bot: BotProcess, standin: SlackStandin) -> Thread:
    """The first question, asked; its proposal is posted."""
    thread = flow.ask(bot, "how many orders did Business customers place?")
    flow.proposal(standin, thread)
    return thread


def test_the_proposal_shows_the_plan_and_the_drafts_agreement(
    standin: SlackStandin, first: Thread
) -> None:
    proposal = flow.proposal(standin, first)
    text = proposal.all_text()
    assert "How I read your question" in text
    assert (
        "Filter: customers.segment = 'business' (you wrote 'Business', which does not occur)"
        in (text)
    )
    assert "2 of 3 drafts agreed on this query." in text
    assert "c.segment = 'business'" in text and "'consumer'" not in text


def test_approval_runs_it_and_the_sources_line_counts_the_model_calls(
    bot: BotProcess, standin: SlackStandin, demo_file: Path, first: Thread
) -> None:
    proposal = flow.proposal(standin, first)
    flow.click(bot, proposal, approve=True, user=BOB)
    answer = flow.result(standin, first)
    [[orders]] = expected_rows(demo_file, BUSINESS_ORDERS)
    assert flow.values(answer) == {"Orders": cell_text(orders)}
    sources = answer.all_text()
    assert f"approved by <@{BOB}>" in sources
    # plan 1 + drafts 3 + self-check 1
    assert "5 model calls" in sources

    bot.send_click(payloads.click(answer, EXPLAIN_ACTION, user=BOB))
    note = standin.wait_for(
        lambda: standin.ephemerals_for(first.channel, BOB), what="the account for Bob"
    )[0]
    account = json.dumps(note["blocks"], ensure_ascii=False)
    for piece in (
        "it planned the query first, correcting 'Business' to 'business' in customers.segment",
        "2 of 3 drafts agreed on the one kept",
        "a second check passed it",
    ):
        assert piece in account, piece


def test_a_self_check_failure_is_repaired_before_the_proposal_is_posted(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "how many business customers are there?")
    proposal = flow.proposal(standin, thread)
    text = proposal.all_text()
    assert "segment = 'business'" in text and "consumer" not in text
    assert "drafts agreed" not in text, "the repair is a new draft: no note of the first one"
    posted = standin.thread(thread.channel, thread.ts)
    assert sum(APPROVE_ACTION in m.action_values() for m in posted) == 1
    assert not any("consumer" in m.all_text() for m in posted), "the doubted SQL never showed"

    thread_id = f"{TEAM_ID}:{thread.channel}:{thread.ts}"
    events = [e["event"] for e in audit_events(bot, thread_id=thread_id)]
    assert events == ["proposed", "self_check_failed", "proposed"]
    flow.click(bot, proposal, approve=True, user=BOB)
    [[customers]] = expected_rows(demo_file, BUSINESS_CUSTOMERS)
    assert flow.values(flow.result(standin, thread)) == {"Customers": cell_text(customers)}
