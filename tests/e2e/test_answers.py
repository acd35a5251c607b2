"""End to end (issue 17 item 4): an answer reads like a person wrote it, in the real bot process
(`querybot run --http`) over signed HTTP, against the Slack stand-in and the demo warehouse.

A single value comes as "Count: *20,278*" with its notification saying the same, not as a
one-cell table headed `count_star()`; counts agree in number ("1 row"); the answer does not
repeat the SQL of the card approved just above it, which still shows that very SQL (the one the
audit log says ran). A breakdown stays a table, its `count_star()` column headed "Count".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, expected_rows, sql_reply
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

COUNT = "SELECT COUNT(*) FROM demo.main.orders"
BY_STATUS = "SELECT status, COUNT(*) FROM demo.main.orders GROUP BY status ORDER BY status"
REPLIES = {
    "test_a_single_value_is_a_sentence_under_the_card_it_ran": [
        sql_reply(COUNT, "Counts all orders.")
    ],
    "test_a_breakdown_is_a_table_headed_in_words_with_its_rows_counted": [
        sql_reply(BY_STATUS, "Orders by status.")
    ],
}


def test_a_single_value_is_a_sentence_under_the_card_it_ran(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread, proposal = flow.ask_approved(bot, standin, "how many orders?")
    [(count,)] = expected_rows(demo_file, COUNT)
    card, result = standin.thread(thread.channel, thread.ts)
    assert "Sources:" in result.all_text()

    assert flow.values(result) == {"Count": cell_text(count)}
    assert result.table() is None
    assert result.text == f"Count: {cell_text(count)} — Counts all orders."
    footer = result.blocks[-1]["elements"][0]["text"]
    assert " · 1 row · " in footer and "approved by <@" in footer
    assert "1 rows" not in result.all_text() and "count_star()" not in result.all_text()

    # the SQL is on the card just above, as it ran; the answer refers to it
    [ran] = audit_events(bot, proposal_id=flow.proposal_id(proposal), event="executed")
    assert flow.shown_sql(card) == ran["sql"] and "Approved by <@" in card.all_text()
    assert flow.shown_sql(result) == "" and "COUNT(*)" not in result.all_text()
    assert "The SQL is the query approved above, run exactly as shown there." in result.all_text()


def test_a_breakdown_is_a_table_headed_in_words_with_its_rows_counted(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread, _ = flow.ask_approved(bot, standin, "orders by status?")
    result = flow.result(standin, thread)
    expected = expected_rows(demo_file, BY_STATUS)
    assert result.table() == [["Status", "Count"], *[[s, cell_text(n)] for s, n in expected]]
    assert flow.values(result) == {}
    assert f"*{len(expected)} rows*" in result.all_text()
    assert result.text == f"{len(expected)} rows — Orders by status."
    assert flow.shown_sql(result) == ""
