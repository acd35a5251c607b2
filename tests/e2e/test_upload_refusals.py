"""End to end, the uploads of issue 36 (item 5) through the real `querybot run --http` process:
the ragged CSV with a 300 kB field that once ended in a traceback, and a failing file of every
kind the sandbox takes (tests/connectors/sandbox/test_sandbox_refusals.py: UPLOADS). With one value
held to 200,000 bytes (QUERYBOT_MAX_CELL_BYTES), each refused file gets its reason in the thread (a
field over the bound names that setting), files that can be read load, no traceback reaches the
log, and the same process then answers a question from a normal file.
"""

from __future__ import annotations

from pathlib import Path

from bot.blocks import cell_text
from tests.connectors.sandbox.test_sandbox_refusals import FIELD_BYTES, UPLOADS, write_upload
from tests.e2e.test_files import approve, mention_with_files, share
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.slack_flow import has_text
from tests.support.standin import SlackStandin

SALES = "SELECT COUNT(*) AS orders FROM sales"
SETTING = "(This limit is set by QUERYBOT_MAX_CELL_BYTES; the default is 1,048,576 bytes.)"


def test_every_failing_upload_gets_its_reason_in_the_thread(
    demo_file: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.jsonl", [sql_reply(SALES, "Orders in the file.")])
    env = {"QUERYBOT_MAX_CELL_BYTES": str(FIELD_BYTES)}
    data_dir = data_dir_with(tmp_path / "data", demo_file)
    with (
        SlackStandin() as slack,
        BotProcess(slack=slack, data_dir=data_dir, script=script, env=env) as bot,
    ):
        files = [
            share(slack, name, write_upload(tmp_path / "uploads", name).read_bytes())
            for name in UPLOADS
        ]
        thread = mention_with_files(bot, "", files)
        outcome = flow.wait_message(slack, thread, has_text("Loaded "), "the outcome", timeout=300)
        text = outcome.all_text()
        for name, (_, expected) in UPLOADS.items():
            if expected is None:
                assert f"Loaded {name}" in text, name
            else:
                assert expected[0].upper() + expected[1:] in text or expected in text, name
        assert text.count(SETTING) == 6, "each value over the bound names its setting"
        assert "Something went wrong" not in text

        mention_with_files(bot, "how many orders?", [share(slack, "sales.csv")], thread=thread)
        flow.wait_message(slack, thread, has_text("Loaded sales.csv"), "the load")
        assert flow.values(approve(bot, slack, thread)) == {"Orders": cell_text(8)}
        assert bot.running
        log = bot.log()
        assert "was not loaded" in log
        assert "Traceback" not in log and "LoaderFailed" not in log
