"""End to end, Slack misbehaving: HTTP 429 on posting (retried after Retry-After), a 500 on
chat.update (retried), and the Socket Mode WebSocket dropped mid-session (the bot reconnects
through `apps.connections.open` and answers the next event), also right after an event was sent
and before its ack (Slack sends it again as a retry; it is answered once). The real bot process
throughout."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, data_dir_with, sql_reply, write_script
from tests.support.socket_standin import SocketModeStandin
from tests.support.standin import SlackStandin

COUNT_CUSTOMERS = "SELECT COUNT(*) AS customers FROM demo.main.customers"
REGIONS = "SELECT r.region_name AS region FROM demo.main.regions AS r ORDER BY r.region_id"


def statuses(slack: SlackStandin, method: str) -> list[int]:
    return [call.status for call in slack.calls_to(method)]


def test_rate_limited_posts_are_retried_after_retry_after(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.jsonl", [sql_reply(COUNT_CUSTOMERS, "Counts.")])
    bot = BotProcess(
        slack=slack, data_dir=data_dir_with(tmp_path / "data", demo_file), script=script
    )
    with bot:
        slack.rate_limit("chat.postMessage", retry_after=1, times=2)
        thread = flow.ask(bot, "how many customers?")
        proposal = flow.proposal(slack, thread)
        assert statuses(slack, "chat.postMessage")[:3] == [429, 429, 200]
        slack.rate_limit("chat.postMessage", retry_after=1, times=1)  # the result's post
        flow.click(bot, proposal, approve=True)
        flow.result(slack, thread)
        assert statuses(slack, "chat.postMessage")[-2:] == [429, 200]
        assert len(slack.thread(thread.channel, thread.ts)) == 2  # nothing posted twice
    print(bot.log()[-5000:])  # shown when the test failed


def test_a_server_error_on_chat_update_is_retried(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.jsonl", [sql_reply(COUNT_CUSTOMERS, "Counts.")])
    bot = BotProcess(
        slack=slack, data_dir=data_dir_with(tmp_path / "data", demo_file), script=script
    )
    with bot:
        slack.server_error("chat.update", status=500, times=1)
        thread = flow.ask(bot, "how many customers?")
        proposal = flow.proposal(slack, thread)  # drawn by the chat.update that was retried
        assert statuses(slack, "chat.update")[:2] == [500, 200]
        slack.server_error("chat.update", status=503, times=2)  # the "Approved by" edit
        flow.click(bot, proposal, approve=True)
        flow.wait_message(slack, thread, flow.has_text("Approved by"), "the approved card")
        flow.result(slack, thread)
        assert statuses(slack, "chat.update")[2:5] == [503, 503, 200]
    print(bot.log()[-5000:])


#: The Socket Mode bots check their connection every 2 s (default 10 s): a drop is noticed sooner.
SOCKET_ENV = {"QUERYBOT_SOCKET_PING_S": "2"}


@pytest.fixture
def socket_mode(slack: SlackStandin) -> Iterator[SocketModeStandin]:
    with SocketModeStandin() as standin:
        slack.socket_mode_url = standin.url
        yield standin


def test_socket_mode_reconnects_after_a_drop(
    slack: SlackStandin, socket_mode: SocketModeStandin, demo_file: Path, tmp_path: Path
) -> None:
    replies = [sql_reply(COUNT_CUSTOMERS, "Counts."), sql_reply(REGIONS, "Lists the regions.")]
    script = write_script(tmp_path / "script.jsonl", replies)
    data_dir = data_dir_with(tmp_path / "data", demo_file)
    with BotProcess(
        slack=slack, data_dir=data_dir, script=script, socket_mode=socket_mode, env=SOCKET_ENV
    ) as bot:
        thread = flow.ask(bot, "how many customers?")
        proposal = flow.proposal(slack, thread)

        socket_mode.drop()
        socket_mode.wait_connections(2)  # slack_sdk's client reconnects by itself
        assert len(slack.calls_to("apps.connections.open")) == 2

        flow.click(bot, proposal, approve=True)  # an interactive envelope on the new socket
        flow.result(slack, thread)
        flow.ask(bot, "list the regions", thread=thread)  # and the next event
        flow.wait_message(slack, thread, flow.has_text("Lists the regions."), "the proposal")
        print(bot.log()[-5000:])  # shown when the test failed
        assert bot.stop() == 0


def test_socket_mode_drop_with_an_envelope_in_flight_answers_it_once(
    slack: SlackStandin, socket_mode: SocketModeStandin, demo_file: Path, tmp_path: Path
) -> None:
    # a second reply, so a question asked twice would be proposed twice
    replies = [sql_reply(COUNT_CUSTOMERS, "Counts."), sql_reply(REGIONS, "Lists the regions.")]
    script = write_script(tmp_path / "script.jsonl", replies)
    data_dir = data_dir_with(tmp_path / "data", demo_file)
    with BotProcess(
        slack=slack, data_dir=data_dir, script=script, socket_mode=socket_mode, env=SOCKET_ENV
    ) as bot:
        body = payloads.mention(payloads.new_channel(), "how many customers?")
        thread = flow.Thread(body["event"]["channel"], body["event"]["ts"])
        lost = socket_mode.send("events_api", body, drop=True)  # the ack cannot come back
        socket_mode.wait_connections(2)
        # Slack delivers what was not acked again, on the new connection, marked as a retry
        again = socket_mode.send("events_api", body, retry_attempt=1)
        socket_mode.wait_ack(again)
        assert lost not in socket_mode.acks
        bot.wait_log(f"Ignoring a repeated delivery of event {body['event_id']}")

        proposal = flow.proposal(slack, thread)
        assert "Counts." in proposal.all_text()
        asked = re.findall(rf"Question in \S+:{re.escape(thread.ts)} from", bot.log())
        assert len(asked) == 1
        flow.ask(bot, "list the regions", thread=thread)  # the next reply is still unused
        flow.wait_message(slack, thread, flow.has_text("Lists the regions."), "the proposal")
        assert len(slack.thread(thread.channel, thread.ts)) == 2
        print(bot.log()[-5000:])  # shown when the test failed
        assert bot.stop() == 0
