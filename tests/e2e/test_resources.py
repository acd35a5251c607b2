"""End to end, issue 15 items 4-5: approved queries that would take the bot's memory (a huge value
built by DuckDB, a result of many long rows) end in a clear message in their thread naming the
bound and its setting, and the bot answers the next question.

The bot runs with the default value bound and QUERYBOT_MAX_RESULT_MB=1, so the long rows reach
the result bound in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from tests.support.slack_flow import has_text
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

#: The issue's attack: ten million characters a row, a thousand rows (10 GB unbounded), over a
#: warehouse table (a model's query that reads no table is never proposed).
HUGE_VALUES = "SELECT repeat('x', 10000000) AS filler FROM demo.main.orders LIMIT 1000"
#: 5,000 rows of 400 characters each: 2 MB, twice QUERYBOT_MAX_RESULT_MB (and each value under
#: the 512 bytes DuckDB may build from literals with that setting).
LONG_ROWS = "SELECT repeat('y', 400) AS filler FROM demo.main.order_items AS i LIMIT 5000"
COUNT_ORDERS = "SELECT COUNT(*) AS orders FROM demo.main.orders"

SCRIPT = [
    sql_reply(HUGE_VALUES, "Pads every row."),
    sql_reply(LONG_ROWS, "Pads the orders."),
    sql_reply(COUNT_ORDERS, "Counts all orders."),
]


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin, demo_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-resources")
    script = write_script(tmp / "script.jsonl", SCRIPT)
    data_dir = data_dir_with(tmp / "data", demo_file)
    env = {"QUERYBOT_MAX_RESULT_MB": "1", "QUERYBOT_ROW_LIMIT": "5000"}
    with BotProcess(slack=standin, data_dir=data_dir, script=script, env=env) as process:
        yield process


def test_resource_attacks_end_in_a_clear_message_and_the_bot_answers_the_next_question(
    bot: BotProcess, standin: SlackStandin
) -> None:
    for question, setting in [
        ("pad every row", "QUERYBOT_MAX_CELL_BYTES"),
        ("pad the orders", "QUERYBOT_MAX_RESULT_MB"),
    ]:
        thread = flow.ask(bot, question)
        flow.click(bot, flow.proposal(standin, thread), approve=True)
        message = flow.wait_message(standin, thread, has_text("The query was stopped"), setting)
        text = message.all_text()
        assert setting in text and "aggregate" in text
        assert "Traceback" not in text

    thread = flow.ask(bot, "how many orders?")
    flow.click(bot, flow.proposal(standin, thread), approve=True)
    assert "orders" in flow.result(standin, thread).all_text()

    failed = audit_events(bot, event="execution_failed")
    assert len(failed) == 2
