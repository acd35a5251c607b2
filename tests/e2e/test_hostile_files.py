"""End to end with hostile files (issue 15, item 6): the real `querybot run --http` process, signed
requests, and the Web API stand-in serving the files.

A conversation shares the issue's files, written small (a CSV of 2,000 columns, a SQLite file
whose default expands to 2 GB): each gets a message in its thread naming the bound it hit, its
setting and default; the same bot process then loads a normal file in that thread and answers a
question from it through the usual proposal and approval.
"""

from __future__ import annotations

from pathlib import Path

from bot.blocks import APPROVE_ACTION, cell_text
from tests.e2e.test_files import approve, mention_with_files, share
from tests.support import hostile_files
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.slack_flow import has_text
from tests.support.standin import SlackStandin

MIB = 1024 * 1024
SALES = "SELECT COUNT(*) AS orders FROM sales"


def test_hostile_files_get_a_clear_message_and_the_bot_answers_after(
    demo_file: Path, tmp_path: Path
) -> None:
    wide = hostile_files.wide_csv(tmp_path / "wide.csv", columns=2000).read_bytes()
    bomb = hostile_files.sqlite_default(tmp_path / "b.sqlite", rows=2000, value_bytes=MIB)
    script = write_script(tmp_path / "script.jsonl", [sql_reply(SALES, "Orders in the file.")])
    env = {
        "QUERYBOT_FILE_MAX_COLUMNS": "100",
        "QUERYBOT_FILE_MAX_EXPANDED_MB": "50",
        "QUERYBOT_FILE_MEMORY_MB": "200",
    }
    with (
        SlackStandin() as slack,
        BotProcess(
            slack=slack,
            data_dir=data_dir_with(tmp_path / "data", demo_file),
            script=script,
            env=env,
        ) as bot,
    ):
        thread = mention_with_files(bot, "how many orders?", [share(slack, "wide.csv", wide)])
        refusal = flow.wait_message(slack, thread, has_text("columns"), "the column refusal")
        text = refusal.all_text()
        assert "wide.csv has 2,000 columns; the limit is 100." in text
        assert "Export only the columns you need" in text
        assert "set by QUERYBOT_FILE_MAX_COLUMNS; the default is 500." in text
        assert "I did not look at your question" in text

        bomb_file = share(slack, "orders.sqlite", bomb.read_bytes())
        mention_with_files(bot, "", [bomb_file], thread=thread)
        refusal = flow.wait_message(slack, thread, has_text("expands to"), "the expanded refusal")
        text = refusal.all_text()
        assert "orders.sqlite expands to 2 GiB once read" in text
        assert "set by QUERYBOT_FILE_MAX_EXPANDED_MB; the default is 1024 MB." in text
        assert not any(
            APPROVE_ACTION in m.action_values() for m in slack.thread(thread.channel, thread.ts)
        )

        # the bot is up: a normal file in the same thread loads and is answered
        mention_with_files(bot, "how many orders?", [share(slack, "sales.csv")], thread=thread)
        flow.wait_message(slack, thread, has_text("Loaded sales.csv"), "the load")
        result = approve(bot, slack, thread)
        assert flow.values(result) == {"Orders": cell_text(8)}
        assert bot._proc.poll() is None, "the bot process is still up"
        log = bot.log()
        assert "was not loaded" in log and "Traceback" not in log
