"""End to end over HTTP: the real `querybot run --http` process, the real agent on the demo
warehouse, a scripted model, and the Web API stand-in in place of Slack.

One bot process serves the module (shared_bot.py); each test's model replies are listed for it
in REPLIES, so any test passes alone or in any order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import (
    SECRET,
    BotProcess,
    audit_events,
    expected_rows,
    sql_reply,
)
from tests.support.slack_flow import Thread, has_text
from tests.support.slack_payloads import ALICE, BOB, event_request, signed_headers
from tests.support.standin import TEAM_ID, Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

REVENUE_OCTOBER = """SELECT r.region_name AS region,
       ROUND(SUM(i.quantity * i.unit_price * (1 - i.discount)), 2) AS revenue
FROM demo.main.orders AS o
JOIN demo.main.order_items AS i ON i.order_id = o.order_id
JOIN demo.main.customers AS c ON c.customer_id = o.customer_id
JOIN demo.main.regions AS r ON r.region_id = c.region_id
WHERE o.status <> 'cancelled'
  AND o.order_date >= DATE '2026-10-01' AND o.order_date < DATE '2026-11-01'
GROUP BY r.region_name
ORDER BY revenue DESC"""

REVENUE_BY_MONTH = """SELECT strftime(o.order_date, '%Y-%m') AS month,
       ROUND(SUM(i.quantity * i.unit_price * (1 - i.discount)), 2) AS revenue
FROM demo.main.orders AS o
JOIN demo.main.order_items AS i ON i.order_id = o.order_id
WHERE o.status <> 'cancelled'
GROUP BY month
ORDER BY month"""

ORDER_COUNT = "SELECT COUNT(*) AS orders FROM demo.main.orders"
CUSTOMER_COUNT = "SELECT COUNT(*) AS customers FROM demo.main.customers"
REGION_COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
PRODUCT_COUNT = "SELECT COUNT(*) AS products FROM demo.main.products"
FIRST_200_CUSTOMERS = """SELECT customer_id, customer_name, country
FROM demo.main.customers ORDER BY customer_id LIMIT 200"""

REPLIES = {
    "test_question_proposal_approval_and_result": [
        sql_reply(REVENUE_OCTOBER, "Revenue by region for October 2026, largest first.")
    ],
    "test_reject_runs_nothing": [sql_reply(ORDER_COUNT, "Counts all orders.")],
    "test_follow_up_in_the_thread_without_a_mention": [
        sql_reply(REVENUE_OCTOBER, "Revenue by region for October 2026."),
        sql_reply(REVENUE_BY_MONTH, "Revenue by month."),
    ],
    "test_the_same_event_delivered_twice_is_answered_once": [
        sql_reply(CUSTOMER_COUNT, "Counts customers.")
    ],
    "test_approve_clicked_twice_runs_once": [sql_reply(REGION_COUNT, "Counts regions.")],
    "test_rate_limited_slack_is_retried": [sql_reply(PRODUCT_COUNT, "Counts products.")],
    "test_workspace_without_table_blocks_gets_monospaced_rows": [
        sql_reply(REVENUE_OCTOBER, "Revenue by region for October 2026.")
    ],
    "test_many_rows_show_display_rows_and_the_total": [
        sql_reply(FIRST_200_CUSTOMERS, "The first 200 customers.")
    ],
}


def approve(bot: BotProcess, standin: SlackStandin, thread: Thread) -> tuple[Posted, Posted]:
    """Approve the thread's pending proposal; return it as decided, and the result."""
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True)
    decided = flow.wait_message(
        standin, thread, lambda m: m.ts == proposal.ts and "Approved by" in m.all_text(), "approval"
    )
    return decided, flow.result(standin, thread)


def test_question_proposal_approval_and_result(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "which region had the most revenue last month?")
    proposal = flow.proposal(standin, thread)
    assert proposal.history, "the proposal replaced the 'Working on it…' message"
    assert "Working on it" in proposal.history[0][0]
    text = proposal.all_text()
    assert "Revenue by region for October 2026, largest first." in text
    assert "```" in text and "demo.main.order_items" in text
    for table in ("orders", "order_items", "customers", "regions"):
        assert f"`demo.main.{table}`" in text
    values = proposal.action_values()
    assert len(set(values.values())) == 1 and "SELECT" not in next(iter(values.values()))

    decided, result = approve(bot, standin, thread)
    assert f"Approved by <@{BOB}>" in decided.all_text()
    assert decided.action_values() == {}
    expected = expected_rows(demo_file, REVENUE_OCTOBER)
    assert result.table() == [
        ["Region", "Revenue"],
        *[[region, cell_text(float(revenue))] for region, revenue in expected],
    ]
    text = result.all_text()
    assert f"*{len(expected)} rows*" in text
    assert expected[0][0] == "North America"
    assert "Sources: `demo.main.orders`" in text and "duckdb" in text
    assert f"approved by <@{BOB}>" in text
    # the SQL is on the card above, one clause a line as the gate wrote it, and not repeated
    assert "SELECT\n  r.region_name AS region," in decided.all_text()
    assert "SELECT" not in text and "The SQL is the query approved above" in text


def test_reject_runs_nothing(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many orders are there?")
    proposal = flow.proposal(standin, thread)
    pid = flow.proposal_id(proposal)
    flow.click(bot, proposal, approve=False)
    decided = flow.wait_message(standin, thread, has_text("Rejected by"), "the rejection")
    assert f"Rejected by <@{BOB}>; nothing was run." in decided.all_text()
    assert decided.action_values() == {}
    bot.wait_log(f"Decision on proposal {pid} done: rejected")
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed", "rejected"]
    assert len(standin.thread(thread.channel, thread.ts)) == 1


def test_follow_up_in_the_thread_without_a_mention(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "revenue by region last month?")
    approve(bot, standin, thread)
    flow.reply(bot, thread, "and by month?")
    second = flow.proposal(standin, thread, skip=2)
    assert "Revenue by month." in second.all_text()
    flow.click(bot, second, approve=True)
    results = standin.wait_thread(
        thread.channel,
        thread.ts,
        lambda ms: len(r := [m for m in ms if "Sources:" in m.all_text()]) == 2 and r,
        what="the follow-up's result",
    )
    months = expected_rows(demo_file, REVENUE_BY_MONTH)
    table = results[1].table()
    assert table is not None
    assert table[0] == ["Month", "Revenue"]
    assert table[1] == [months[0][0], cell_text(float(months[0][1]))]
    assert len(table) == 1 + min(20, len(months))
    assert f"*{len(months)} rows* (first 20 shown)" in results[1].all_text()


def test_the_same_event_delivered_twice_is_answered_once(
    bot: BotProcess, standin: SlackStandin
) -> None:
    channel = payloads.new_channel()
    body = payloads.mention(channel, "how many customers?")
    bot.send_event(body)
    bot.send_event(body, retry=1)
    bot.wait_log(f"Ignoring a repeated delivery of event {body['event_id']}")
    thread = Thread(channel, body["event"]["ts"])
    approve(bot, standin, thread)
    messages = standin.thread(thread.channel, thread.ts)
    assert len(messages) == 2, [m.all_text()[:80] for m in messages]
    proposed = audit_events(bot, thread_id=f"{TEAM_ID}:{thread.channel}:{thread.ts}")
    assert [e["event"] for e in proposed] == ["proposed", "approved", "executed"]


def test_approve_clicked_twice_runs_once(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "how many regions?")
    proposal = flow.proposal(standin, thread)
    pid = flow.proposal_id(proposal)
    flow.click(bot, proposal, approve=True, user=BOB)
    flow.click(bot, proposal, approve=True, user=ALICE)
    # Bolt acknowledges each click and handles it on its own worker thread, so either click
    # may be handled first; the other one is told who approved.
    notes = standin.wait_for(
        lambda: [
            (user, note)
            for user in (BOB, ALICE)
            for note in standin.ephemerals_for(thread.channel, user)
        ],
        what="the note to the second click",
    )
    assert len(notes) == 1
    second, note = notes[0]
    first = ALICE if second == BOB else BOB
    assert note["text"] == f"This proposal was already approved by <@{first}>."
    result = flow.result(standin, thread)
    assert flow.values(result) == {
        "Regions": cell_text(expected_rows(demo_file, REGION_COUNT)[0][0])
    }
    bot.wait_log(f"Decision on proposal {pid} done: answer")
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == [
        "proposed",
        "approved",
        "executed",
    ]
    assert len(standin.thread(thread.channel, thread.ts)) == 2


def test_forged_or_stale_signatures_are_refused(bot: BotProcess, standin: SlackStandin) -> None:
    channel = payloads.new_channel()
    text, content_type = event_request(payloads.mention(channel, "drop it all"))
    forged = signed_headers("not-the-secret", text)
    assert bot.post(text, content_type, forged)[0] == 401
    stale = signed_headers(SECRET, text, timestamp=1_600_000_000)
    assert bot.post(text, content_type, stale)[0] == 401
    assert bot.post(text, content_type, {})[0] == 401
    # nothing reached that channel (earlier tests' threads may still be posting in theirs)
    assert not [c for c in standin.calls if c.params.get("channel") == channel]
    assert f":{channel}:" not in bot.log()  # no question there (thread ids name it)


def test_request_url_verification(bot: BotProcess) -> None:
    text = json.dumps({"token": "x", "challenge": "c-123", "type": "url_verification"})
    status, body = bot.post(text, "application/json", signed_headers(SECRET, text))
    assert (status, json.loads(body)) == (200, {"challenge": "c-123"})


def test_empty_mention_gets_help(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "")
    help_message = flow.wait_message(standin, thread, has_text("Ask me a question"), "help")
    assert "Approve" in help_message.all_text()


def test_a_20000_character_question_gets_a_clear_answer(
    bot: BotProcess, standin: SlackStandin
) -> None:
    question = ("how much? " * 2000).strip() + "!"
    assert len(question) == 20_000
    thread = flow.ask(bot, question)
    message = flow.wait_message(standin, thread, has_text("characters long"), "the refusal")
    assert "20,000 characters long" in message.all_text()
    assert message.action_values() == {}


def test_rate_limited_slack_is_retried(bot: BotProcess, standin: SlackStandin) -> None:
    standin.rate_limit("chat.postMessage", retry_after=0)
    thread = flow.ask(bot, "how many products?")
    flow.proposal(standin, thread)
    statuses = [c.status for c in standin.calls_to("chat.postMessage")[-2:]]
    assert statuses == [429, 200]
    # Leave the thread's proposal decided so it does not linger.
    approve(bot, standin, thread)


def test_workspace_without_table_blocks_gets_monospaced_rows(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    standin.refuse_block_type("table")
    try:
        thread = flow.ask(bot, "revenue by region last month?")
        _, result = approve(bot, standin, thread)
    finally:
        standin.allow_block_type("table")
    assert result.table() is None
    region, revenue = expected_rows(demo_file, REVENUE_OCTOBER)[-1]
    line = next(line for line in result.all_text().splitlines() if line.startswith("Middle East"))
    assert line.split() == [*region.replace("&", "&amp;").split(), cell_text(float(revenue))]


def test_many_rows_show_display_rows_and_the_total(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "list the first 200 customers")
    _, result = approve(bot, standin, thread)
    table = result.table()
    assert table is not None and len(table) == 21
    assert table[1][0] == "1"
    assert "*200 rows* (first 20 shown)" in result.all_text()
