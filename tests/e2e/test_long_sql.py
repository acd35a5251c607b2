"""End to end (issue 17 item 3): SQL too long for a Slack message. The gate writes it pretty (one
clause a line, here one list item a line); the card shows the start, cut at a line end, says so,
and the whole statement follows in the thread as `proposed.sql`, the very text the buttons' hash
covers. The answer refers to the card rather than repeating the start, and has the whole
statement that ran as `query.sql`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory.audit import sql_sha256
from bot.blocks import APPROVE_ACTION, PROPOSED_SQL_FILE, RAN_SQL_FILE, cell_text
from bot.blocks.messages import card_of
from tests.support import slack_flow as flow
from tests.support.botproc import (
    BotProcess,
    audit_events,
    data_dir_with,
    expected_rows,
    sql_reply,
    write_script,
)
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

#: 23,000 characters on one line (it would fit a message as it is); about 39,000 pretty.
IN_LIST = ", ".join(str(i) for i in range(1, 4001))
LONG = f"SELECT COUNT(*) AS orders FROM demo.main.orders WHERE order_id IN ({IN_LIST})"


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin, demo_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-long-sql")
    script = write_script(tmp / "script.jsonl", [sql_reply(LONG, "Counts some orders.")])
    with BotProcess(
        slack=standin, data_dir=data_dir_with(tmp / "data", demo_file), script=script
    ) as b:
        yield b


def test_long_sql_is_cut_on_the_card_and_whole_in_a_file(
    bot: BotProcess, standin: SlackStandin, demo_file: Path
) -> None:
    thread = flow.ask(bot, "how many of these orders?")
    card = flow.proposal(standin, thread)
    pid, card_sha = card_of(card.action_values()[APPROVE_ACTION])
    files = standin.wait_for(
        lambda: standin.uploads_in(thread.channel, thread.ts), what="the proposed SQL file"
    )
    [proposed] = files
    assert proposed.filename == PROPOSED_SQL_FILE
    sql = proposed.content.decode("utf-8")
    assert sql_sha256(sql) == card_sha  # the file is the text the approval names
    assert sql.startswith("SELECT\n  COUNT(*) AS orders\nFROM demo.main.orders\nWHERE\n")
    assert sql.endswith("\n    3999,\n    4000\n  )") and len(sql) > 35_000

    shown = flow.shown_sql(card)
    assert 25_000 < len(shown) < len(sql) and sql.startswith(shown + "\n")
    text = card.all_text()
    assert f"{len(sql):,} characters long; only the start is shown here" in text
    assert f"`{PROPOSED_SQL_FILE}`" in text
    assert all(len(b["text"]["text"]) <= 3000 for b in card.blocks if b["type"] == "section")

    flow.click(bot, card, approve=True)
    result = flow.result(standin, thread)
    bot.wait_log(f"Decision on proposal {pid} done: answer")
    (count,) = expected_rows(demo_file, LONG)[0]
    assert flow.values(result) == {"Orders": cell_text(count)}
    # the card above shows the start; the answer refers to it and to the file, repeating neither
    assert flow.shown_sql(result) == ""
    text = result.all_text()
    assert "The SQL is the query approved above, run exactly as shown there" in text
    assert f"the whole statement is in the file `{RAN_SQL_FILE}`" in text
    uploads = standin.uploads_in(thread.channel, thread.ts)
    assert {u.filename: u.content.decode("utf-8") for u in uploads} == {
        PROPOSED_SQL_FILE: sql,
        RAN_SQL_FILE: sql,
    }
    [executed] = audit_events(bot, proposal_id=pid, event="executed")
    assert executed["sql"] == sql and executed["sql_sha256"] == card_sha
