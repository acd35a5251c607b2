"""The real `querybot run --http` process under requests Slack never sends (issue 15): bodies
far over the bound, streamed for real; requests without a length, to other paths, with other
methods; and more idle connections than it serves at once. None may cost the bot memory or keep
a signed request from being answered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.botproc import SECRET, BotProcess, data_dir_with, write_script
from tests.support.http_attacks import (
    MIB,
    closed_by_server,
    idle_connections,
    memory_kib,
    raw_request,
    stream_unsigned,
)
from tests.support.slack_payloads import signed_headers
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

MAX_CONNECTIONS = 8


@pytest.fixture(scope="module")
def bot(
    standin: SlackStandin, demo_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BotProcess]:
    tmp = tmp_path_factory.mktemp("e2e-http-bounds")
    script = write_script(tmp / "script.jsonl", [])  # no test here reaches the model
    data_dir = data_dir_with(tmp / "data", demo_file)
    env = {"QUERYBOT_HTTP_MAX_CONNECTIONS": str(MAX_CONNECTIONS)}
    with BotProcess(slack=standin, data_dir=data_dir, script=script, env=env) as process:
        yield process


def pid(bot: BotProcess) -> int:
    assert bot._proc is not None
    return bot._proc.pid


def challenge(bot: BotProcess, token: str) -> tuple[int, str]:
    """A signed `url_verification` request (Bolt answers it only past the signature check):
    the status, and the challenge answered."""
    text = json.dumps({"type": "url_verification", "challenge": token, "token": "x"})
    status, answer = bot.post(text, "application/json", signed_headers(SECRET, text))
    return status, json.loads(answer).get("challenge", "") if status == 200 else answer


def test_oversized_unsigned_bodies_are_refused_unread_and_cost_no_memory(bot: BotProcess) -> None:
    assert raw_request(bot.port, b"GET /slack/events HTTP/1.1\r\nHost: x\r\n\r\n") == 405
    before_rss, before_peak = memory_kib(pid(bot)), memory_kib(pid(bot), "VmHWM")
    for _ in range(3):
        streamed = stream_unsigned(bot.port, 300 * MIB)
        assert streamed.status == 413
        # answered while most of the body was still unsent: the server did not wait to read it
        assert streamed.sent < streamed.claimed // 10, streamed
    grown_rss = memory_kib(pid(bot)) - before_rss
    grown_peak = memory_kib(pid(bot), "VmHWM") - before_peak
    # reading the bodies took the bot from 161 to 1,227 MB (issue 15); a bound is generous here
    assert grown_rss < 64 * 1024 and grown_peak < 64 * 1024, (grown_rss, grown_peak)
    assert challenge(bot, "still-here") == (200, "still-here")


def test_requests_slack_never_sends_are_refused_before_the_body(bot: BotProcess) -> None:
    post = "POST {path} HTTP/1.1\r\nHost: x\r\n{headers}\r\n"
    cases = {
        post.format(path="/other", headers="Content-Length: 0\r\n"): 404,
        "PUT /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n": 405,
        post.format(path="/slack/events", headers="Transfer-Encoding: chunked\r\n"): 411,
        post.format(path="/slack/events", headers=""): 411,
        post.format(path="/slack/events", headers="Content-Length: -5\r\n"): 400,
        post.format(path="/slack/events", headers=f"Content-Length: {2 * MIB}\r\n"): 413,
        # `Expect: 100-continue` is refused outright: the client never sends the body
        post.format(
            path="/slack/events", headers=f"Content-Length: {2 * MIB}\r\nExpect: 100-continue\r\n"
        ): 413,
        post.format(path="/slack/events", headers="Content-Length: 2\r\n") + "{}": 401,
        post.format(
            path="/slack/events",
            headers="Content-Length: 2\r\nX-Slack-Signature: v0=00\r\n"
            "X-Slack-Request-Timestamp: 1600000000\r\n",
        )
        + "{}": 401,
    }
    answers = {request: raw_request(bot.port, request.encode()) for request in cases}
    assert answers == cases


def test_idle_connections_over_the_bound_do_not_stop_a_signed_request(bot: BotProcess) -> None:
    silent = idle_connections(bot.port, MAX_CONNECTIONS + 6)
    slow = idle_connections(bot.port, 6, partial=True)
    try:
        assert challenge(bot, "through") == (200, "through")
        # the oldest connections still reading were let go to admit the newer ones
        opened = len(silent) + len(slow) + 1
        evicted = closed_by_server(silent + slow, at_least=opened - MAX_CONNECTIONS)
        assert evicted >= opened - MAX_CONNECTIONS
    finally:
        for sock in silent + slow:
            sock.close()
