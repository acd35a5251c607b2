"""End to end over Socket Mode: `querybot run` (the default mode) connects through
`apps.connections.open` to the WebSocket stand-in, acks each envelope, and answers in the thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, data_dir_with, expected_rows, sql_reply, write_script
from tests.support.slack_payloads import BOB
from tests.support.socket_standin import SocketModeStandin
from tests.support.standin import SlackStandin

REGIONS = "SELECT r.region_name AS region FROM demo.main.regions AS r ORDER BY r.region_id"


@pytest.fixture
def socket_mode(slack: SlackStandin) -> Iterator[SocketModeStandin]:
    with SocketModeStandin() as standin:
        slack.socket_mode_url = standin.url
        yield standin


def test_mention_and_approval_over_socket_mode(
    slack: SlackStandin,
    socket_mode: SocketModeStandin,
    demo_file: Path,
    tmp_path: Path,
) -> None:
    script = write_script(tmp_path / "script.jsonl", [sql_reply(REGIONS, "Lists the regions.")])
    data_dir = data_dir_with(tmp_path / "data", demo_file)
    with BotProcess(slack=slack, data_dir=data_dir, script=script, socket_mode=socket_mode) as bot:
        opened = slack.calls_to("apps.connections.open")
        assert opened and opened[0].token == "xapp-standin"

        body = payloads.mention(payloads.new_channel(), "list the regions")
        bot.send_event(body)  # sent as an events_api envelope; waits for its ack
        thread = flow.Thread(body["event"]["channel"], body["event"]["ts"])
        proposal = flow.proposal(slack, thread)
        assert "Lists the regions." in proposal.all_text()

        bot.send_event(body, retry=1)
        bot.wait_log(f"Ignoring a repeated delivery of event {body['event_id']}")

        flow.click(bot, proposal, approve=True)  # an interactive envelope
        assert len(socket_mode.acks) == 3
        assert all(set(ack) == {"envelope_id"} for ack in socket_mode.acks.values())
        flow.wait_message(slack, thread, flow.has_text(f"Approved by <@{BOB}>"), "approval")
        result = flow.result(slack, thread)
        regions = [[cell_text(name)] for (name,) in expected_rows(demo_file, REGIONS)]
        assert result.table() == [["Region"], *regions]
        assert len(slack.thread(thread.channel, thread.ts)) == 2
        print(bot.log()[-5000:])  # shown when the test failed
        assert bot.stop() == 0
