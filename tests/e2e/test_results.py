"""End to end: what comes with a result (more rows than the message shows: the rows the agent
kept, as a CSV file in the thread; a time series or a short breakdown: Slack's native chart, or
a PNG where the data does not fit the chart block or the workspace refuses it), direct messages,
and the App Home tab.

One bot serves the module (shared_bot.py); each test's model replies are in REPLIES.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from bot.blocks import cell_text
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, expected_rows, sql_reply
from tests.support.slack_flow import Thread
from tests.support.slack_payloads import ALICE
from tests.support.standin import SlackStandin, Upload

pytestmark = pytest.mark.usefixtures("checked")

FIRST_200_CUSTOMERS = """SELECT customer_id, customer_name, country
FROM demo.main.customers ORDER BY customer_id LIMIT 200"""
ORDERS_BY_MONTH = """SELECT strftime(order_date, '%Y-%m') AS month, COUNT(*) AS orders
FROM demo.main.orders GROUP BY month ORDER BY month"""
ORDERS_BY_MONTH_2025 = """SELECT strftime(order_date, '%Y-%m') AS month, COUNT(*) AS orders
FROM demo.main.orders WHERE year(order_date) = 2025 GROUP BY month ORDER BY month"""
ORDERS_BY_STATUS = """SELECT status, COUNT(*) AS orders FROM demo.main.orders GROUP BY status
ORDER BY status"""
ORDERS_BY_CHANNEL = """SELECT channel, COUNT(*) AS orders FROM demo.main.orders GROUP BY channel
ORDER BY channel"""
ORDERS_BY_PAYMENT = """SELECT payment_method, COUNT(*) AS orders FROM demo.main.orders
GROUP BY payment_method ORDER BY payment_method"""
ORDER_COUNT = "SELECT COUNT(*) AS orders FROM demo.main.orders"
REGION_COUNT = "SELECT COUNT(*) AS regions FROM demo.main.regions"
DM = "D0CAROL01"

REPLIES = {
    "test_more_rows_than_shown_come_as_a_csv": [
        sql_reply(FIRST_200_CUSTOMERS, "The first 200 customers.")
    ],
    "test_a_time_series_longer_than_the_chart_block_comes_as_a_png": [
        sql_reply(ORDERS_BY_MONTH, "Orders by month.")
    ],
    "test_a_time_series_comes_with_a_native_chart": [
        sql_reply(ORDERS_BY_MONTH_2025, "Orders by month in 2025.")
    ],
    "test_a_breakdown_of_the_whole_comes_as_a_native_pie": [
        sql_reply(ORDERS_BY_STATUS, "Orders by status.")
    ],
    "test_a_workspace_without_the_chart_block_gets_pngs_and_is_asked_once": [
        sql_reply(ORDERS_BY_CHANNEL, "Orders by channel."),  # the workspace refuses native charts
        sql_reply(ORDERS_BY_PAYMENT, "Orders by payment."),  # ... so this one goes to a PNG
    ],
    "test_a_single_number_comes_alone": [sql_reply(ORDER_COUNT, "Counts all orders.")],
    "test_a_direct_message_is_a_conversation_in_its_own_thread": [
        sql_reply(REGION_COUNT, "Counts regions."),
        sql_reply("SELECT COUNT(*) AS customers FROM demo.main.customers", "Counts customers."),
    ],
    "test_app_home_lists_tables_and_the_users_questions": [
        sql_reply(ORDERS_BY_PAYMENT, "Orders by payment."),
        sql_reply(ORDER_COUNT, "Counts all orders."),
    ],
}


def uploads(standin: SlackStandin, thread: Thread) -> list[Upload]:
    return standin.uploads_in(thread.channel, thread.ts)


def test_more_rows_than_shown_come_as_a_csv(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    before = len(standin.calls)
    thread, _ = flow.ask_approved(bot, standin, "list the first 200 customers")
    result = flow.result(standin, thread)
    assert len(result.table() or []) == 21
    assert "*200 rows* (first 20 shown)" in result.all_text()
    [upload] = uploads(standin, thread)
    # the whole capped result, not only the rows shown
    assert (upload.filename, upload.title) == ("result.csv", "All 200 rows (CSV)")
    rows = list(csv.reader(io.StringIO(upload.content.decode("utf-8"))))
    expected = expected_rows(demo_file, FIRST_200_CUSTOMERS)
    assert rows == [["customer_id", "customer_name", "country"]] + [
        [str(v) for v in row] for row in expected
    ]
    calls = [c.method for c in standin.calls[before:] if c.method.startswith("files.")]
    assert calls == ["files.getUploadURLExternal", "files.completeUploadExternal"]


def charts_in(standin: SlackStandin, thread: Thread) -> list[dict[str, Any]]:
    return [
        block
        for message in standin.thread(thread.channel, thread.ts)
        for block in message.blocks
        if block["type"] == "data_visualization"
    ]


def test_a_time_series_longer_than_the_chart_block_comes_as_a_png(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread, _ = flow.ask_approved(bot, standin, "orders by month?")
    assert charts_in(standin, thread) == []  # 24 months: more points than a native series holds
    months = expected_rows(demo_file, ORDERS_BY_MONTH)
    found = {u.filename: u for u in uploads(standin, thread)}
    assert set(found) == {"result.csv", "chart.png"}
    png = found["chart.png"].content
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    lines = found["result.csv"].content.decode().splitlines()
    assert lines[1] == f"{months[0][0]},{months[0][1]}" and len(lines) == 1 + len(months)


def test_a_time_series_comes_with_a_native_chart(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread, _ = flow.ask_approved(bot, standin, "orders by month in 2025?")
    months = expected_rows(demo_file, ORDERS_BY_MONTH_2025)
    [result, chart_message] = standin.thread(thread.channel, thread.ts)[-2:]
    assert "Sources:" in result.all_text()
    [block] = chart_message.blocks
    assert block["type"] == "data_visualization" and block["title"] == "Orders by month in 2025."
    assert chart_message.text == "Chart: Orders by month in 2025."
    line = block["chart"]
    assert line["type"] == "line"
    assert line["axis_config"]["categories"] == [m for m, _ in months]
    assert line["series"] == [
        {"name": "Orders", "data": [{"label": m, "value": n} for m, n in months]}
    ]
    assert uploads(standin, thread) == []  # nothing drawn, nothing uploaded


def test_a_breakdown_of_the_whole_comes_as_a_native_pie(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread, _ = flow.ask_approved(bot, standin, "orders by status?")
    [block] = charts_in(standin, thread)
    # the gate added its row cap to the SQL (on the card); it left no row out: the rows are whole
    assert "LIMIT" in standin.thread(thread.channel, thread.ts)[0].all_text()
    assert block["chart"] == {
        "type": "pie",
        "segments": [
            {"label": status, "value": n}
            for status, n in expected_rows(demo_file, ORDERS_BY_STATUS)
        ],
    }
    assert uploads(standin, thread) == []


def test_a_workspace_without_the_chart_block_gets_pngs_and_is_asked_once(
    bot: BotProcess, standin: SlackStandin
) -> None:
    standin.refuse_block_type("data_visualization")
    try:
        thread, _ = flow.ask_approved(bot, standin, "orders by channel?")
        [png] = uploads(standin, thread)
        assert png.filename == "chart.png" and png.content.startswith(b"\x89PNG")
        assert charts_in(standin, thread) == []
        later, _ = flow.ask_approved(bot, standin, "orders by payment?")
        [png] = uploads(standin, later)
        assert png.filename == "chart.png" and png.content.startswith(b"\x89PNG")
    finally:
        standin.allow_block_type("data_visualization")
    refusals = [
        c
        for c in standin.calls_to("chat.postMessage")
        if not c.ok and any(b.get("type") == "data_visualization" for b in c.params["blocks"])
    ]
    assert len(refusals) == 1  # the second answer did not ask again
    assert bot.log().count("refused the native chart block") == 1


def test_a_single_number_comes_alone(bot: BotProcess, standin: SlackStandin) -> None:
    thread, _ = flow.ask_approved(bot, standin, "how many orders?")
    assert standin.uploads_in(thread.channel, thread.ts) == []


def test_a_direct_message_is_a_conversation_in_its_own_thread(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    """A question at the DM's top level is answered in its thread, as a mention in a channel
    is, and a reply in that thread is a follow-up of the same conversation."""
    asked = payloads.message(DM, "how many regions?", thread_ts=None, channel_type="im")
    bot.send_event(asked)
    thread = Thread(DM, asked["event"]["ts"])
    proposal = flow.proposal(standin, thread)
    flow.click(bot, proposal, approve=True)
    assert flow.values(flow.result(standin, thread)) == {
        "Regions": cell_text(expected_rows(demo_file, REGION_COUNT)[0][0])
    }
    assert standin.thread(DM, None) == [], "nothing at the DM's top level"
    bot.send_event(payloads.message(DM, "and customers?", thread_ts=thread.ts, channel_type="im"))
    follow_up = flow.proposal(standin, thread, skip=len(standin.thread(DM, thread.ts)))
    assert "customers" in follow_up.all_text()


def test_app_home_lists_tables_and_the_users_questions(
    bot: BotProcess, standin: SlackStandin
) -> None:
    for question in ("orders by payment?", "how many orders?"):
        flow.proposal(standin, flow.ask(bot, question, user=ALICE))
    bot.send_event(payloads.home_opened(ALICE))
    bot.send_event(payloads.home_opened(ALICE, tab="messages"))
    [published] = standin.wait_for(lambda: standin.published_views, what="the Home tab")
    assert published["user_id"] == ALICE
    text = "\n".join(b.get("text", {}).get("text", "") for b in published["view"]["blocks"])
    assert "`demo.main.orders`" in text and "`demo.main.regions`" in text
    assert "orders by payment?" in text and "how many orders?" in text
    assert "Who may approve: Anyone." in text
