"""End to end (issue 38, items 5 and 6): through the real bot process, over signed HTTP, against
the Slack stand-in. The proposal card's Approve asks before it runs (a Block Kit confirm naming
what runs and who sees it), Reject is not styled as dangerous, and the result reads plainly: an
id column without thousands separators, a date_trunc('month') column as its month, never
`T00:00:00`, headers in words; pasted SQL that reads no tables says so.

One bot serves the module (shared_bot.py); each test's model replies are in REPLIES.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.blocks import APPROVE_ACTION, REJECT_ACTION
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, expected_rows, sql_reply
from tests.support.standin import Posted, SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

FIRST_ORDER_BY_MONTH = """SELECT date_trunc('month', CAST(order_date AS TIMESTAMP)) AS month,
       MIN(order_id) AS first_order_id, COUNT(*) AS orders
FROM demo.main.orders GROUP BY month ORDER BY month LIMIT 6"""
SELECT_ONE = "SELECT 1 AS one, 2 AS two"

REPLIES = {
    "test_approve_asks_first_and_the_result_reads_plainly": [
        sql_reply(FIRST_ORDER_BY_MONTH, "The first order of each month.")
    ],
    "test_pasted_sql_that_reads_no_tables_says_so": [],  # pasted: the model is not asked
}


def buttons(posted: Posted) -> dict[str, dict[str, Any]]:
    return {
        e["action_id"]: e
        for block in posted.blocks
        if block["type"] == "actions"
        for e in block["elements"]
    }


def test_approve_asks_first_and_the_result_reads_plainly(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "which order came first each month?")
    card = flow.proposal(standin, thread)
    found = buttons(card)
    confirm = found[APPROVE_ACTION]["confirm"]
    assert confirm["title"]["text"] == "Run this query?"
    assert "runs as shown and reads demo.main.orders." in confirm["text"]["text"]
    assert "Everyone in this channel will see the result." in confirm["text"]["text"]
    assert "style" not in found[REJECT_ACTION] and "confirm" not in found[REJECT_ACTION]

    flow.click(bot, card, approve=True)
    bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
    expected = expected_rows(demo_file, FIRST_ORDER_BY_MONTH)
    assert expected[0][1] >= 100_000  # large enough that a separator would show
    assert flow.result(standin, thread).table() == [
        ["Month", "First order id", "Orders"],
        *[[m.strftime("%Y-%m"), str(first), f"{n:,}"] for m, first, n in expected],
    ]
    assert "T00:00:00" not in json.dumps([m.blocks for m in standin.thread(*thread_key(thread))])


def test_pasted_sql_that_reads_no_tables_says_so(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, SELECT_ONE)
    card = flow.proposal(standin, thread)
    assert "Reads no tables" in card.all_text()
    assert "reads no tables." in buttons(card)[APPROVE_ACTION]["confirm"]["text"]["text"]
    flow.click(bot, card, approve=True)
    bot.wait_log(f"Decision on proposal {flow.proposal_id(card)} done: answer")
    footer = flow.result(standin, thread).blocks[-1]["elements"][0]["text"]
    assert footer.startswith("Sources: no tables · 1 row")


def thread_key(thread: flow.Thread) -> tuple[str, str]:
    return thread.channel, thread.ts
