"""End to end across a restart: the bot stops (SIGTERM) between proposal and click, starts again
on the same data directory, and the click still works, once."""

from __future__ import annotations

from pathlib import Path

from bot.blocks import cell_text
from tests.support import slack_flow as flow
from tests.support.botproc import (
    BotProcess,
    audit_events,
    data_dir_with,
    expected_rows,
    sql_reply,
    write_script,
)
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin

COUNT_CUSTOMERS = "SELECT COUNT(*) AS customers FROM demo.main.customers"


def test_click_after_a_restart_still_runs_the_proposal_once(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.jsonl", [sql_reply(COUNT_CUSTOMERS, "Counts.")])
    bot = BotProcess(
        slack=slack, data_dir=data_dir_with(tmp_path / "data", demo_file), script=script
    )
    with bot:
        thread = flow.ask(bot, "how many customers?")
        proposal = flow.proposal(slack, thread)
        assert bot.stop() == 0, bot.log()
        bot.start()
        flow.click(bot, proposal, approve=True)
        flow.wait_message(slack, thread, flow.has_text(f"Approved by <@{BOB}>"), "the approval")
        result = flow.result(slack, thread)
        [(customers,)] = expected_rows(demo_file, COUNT_CUSTOMERS)
        assert flow.values(result) == {"Customers": cell_text(customers)}

        flow.click(bot, proposal, approve=True, user=ALICE)
        note = slack.wait_for(lambda: slack.ephemerals_for(thread.channel, ALICE), what="note")
        assert note[0]["text"] == f"This proposal was already approved by <@{BOB}>."
        pid = flow.proposal_id(proposal)
        events = [e["event"] for e in audit_events(bot, proposal_id=pid)]
        assert events == ["proposed", "approved", "executed"]
    print(bot.log()[-5000:])  # shown when the test failed
