"""The stand-ins themselves: they must refuse what Slack refuses, or other tests prove little."""

from __future__ import annotations

import json
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from websockets.sync.client import connect

from tests.support.socket_standin import SocketModeStandin
from tests.support.standin import BOT_USER_ID, SlackStandin


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def table(rows: int, cells: int) -> dict[str, Any]:
    row = [{"type": "raw_text", "text": "x"}] * cells
    return {"type": "table", "rows": [row] * rows}


def button(value: str = "v", action_id: str = "a") -> dict[str, Any]:
    return {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "text": {"type": "plain_text", "text": "Go", "emoji": True},
                "action_id": action_id,
                "value": value,
            }
        ],
    }


def refusal(client: WebClient, **kwargs: Any) -> str:
    with pytest.raises(SlackApiError) as info:
        client.chat_postMessage(channel="C1", text="t", **kwargs)
    return str(info.value.response["error"])


def test_auth_test_answers_as_the_bot(client: WebClient) -> None:
    answer = client.auth_test()
    assert answer["user_id"] == BOT_USER_ID and answer["ok"]


def test_post_and_update_keep_the_thread(client: WebClient, standin: SlackStandin) -> None:
    root = client.chat_postMessage(
        channel="C1", text="hi", blocks=[section("one")], thread_ts="1.0"
    )
    client.chat_update(channel="C1", ts=root["ts"], text="hi", blocks=[section("two")])
    [posted] = standin.thread("C1", "1.0")
    assert posted.blocks == [section("two")]
    assert posted.history == [("hi", [section("one")])]
    assert root["channel"] == "C1"


@pytest.mark.parametrize(
    ("blocks", "error"),
    [
        ([section("x")] * 51, "invalid_blocks"),
        ([section("x" * 3001)], "invalid_blocks"),
        ([button(value="v" * 2001)], "invalid_blocks"),
        ([button(action_id="a" * 256)], "invalid_blocks"),
        ([{**section("x"), "block_id": "b" * 256}], "invalid_blocks"),
        ([table(101, 2)], "invalid_blocks"),
        ([table(2, 21)], "invalid_blocks"),
        ([table(2, 2), table(2, 2)], "invalid_blocks"),
        ([{"type": "no_such_block"}], "invalid_blocks"),
        ([{**section("x"), "colour": "red"}], "invalid_blocks"),
    ],
)
def test_refuses_what_slack_refuses(
    client: WebClient, standin: SlackStandin, blocks: list[dict[str, Any]], error: str
) -> None:
    assert refusal(client, blocks=blocks) == error
    assert len(standin.refused) == 1


def test_accepts_limits_exactly(client: WebClient, standin: SlackStandin) -> None:
    client.chat_postMessage(
        channel="C1", text="t", blocks=[section("x" * 3000)] * 49 + [table(100, 20)]
    )
    assert not standin.refused


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
def test_refuses_overlong_text_and_empty_messages(client: WebClient) -> None:
    with pytest.raises(SlackApiError) as long_text:
        client.chat_postMessage(channel="C1", text="x" * 40_001)
    assert long_text.value.response["error"] == "msg_too_long"
    with pytest.raises(SlackApiError) as empty:
        client.chat_postMessage(channel="C1", text="")
    assert empty.value.response["error"] == "no_text"


def test_update_of_unknown_message(client: WebClient) -> None:
    with pytest.raises(SlackApiError) as info:
        client.chat_update(channel="C1", ts="9.9", text="x")
    assert info.value.response["error"] == "message_not_found"


def test_tokens_are_checked(standin: SlackStandin) -> None:
    with pytest.raises(SlackApiError) as info:
        WebClient(token="xapp-wrong", base_url=standin.url).chat_postMessage(channel="C", text="x")
    assert info.value.response["error"] == "invalid_auth"
    with pytest.raises(SlackApiError) as info:
        WebClient(token="xoxb-x", base_url=standin.url).apps_connections_open(app_token="xoxb-x")
    assert info.value.response["error"] == "not_allowed_token_type"


def test_refused_block_types_are_injected_refusals(
    client: WebClient, standin: SlackStandin
) -> None:
    standin.refuse_block_type("table")
    assert refusal(client, blocks=[table(2, 2)]) == "invalid_blocks"
    assert standin.refused == []  # the test asked for it; not the sender's fault
    standin.allow_block_type("table")
    client.chat_postMessage(channel="C1", text="t", blocks=[table(2, 2)])


def test_rate_limit_answers_429_and_the_retry_handler_gets_through(standin: SlackStandin) -> None:
    standin.rate_limit("chat.postMessage", retry_after=0)
    bare = WebClient(token="xoxb-test", base_url=standin.url)
    with pytest.raises(SlackApiError) as info:
        bare.chat_postMessage(channel="C1", text="x")
    assert info.value.response.status_code == 429
    assert info.value.response.headers["Retry-After"] in ("0", ["0"])

    standin.rate_limit("chat.postMessage", retry_after=0)
    retrying = WebClient(token="xoxb-test", base_url=standin.url)
    retrying.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=1))
    assert retrying.chat_postMessage(channel="C1", text="x")["ok"]
    assert [c.status for c in standin.calls_to("chat.postMessage")] == [429, 429, 200]


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("a &lt; b &amp; c &gt; d", 0),
        ("<@U123> <#C123|general> <!here> <https://example.com|link> <mailto:a@b.c>", 0),
        ("a < b", 1),
        ("a > b", 1),
        ("fish & chips", 1),
        ("<script>", 2),
    ],
)
def test_mrkdwn_checker(client: WebClient, standin: SlackStandin, text: str, problems: int) -> None:
    client.chat_postMessage(channel="C1", text="t", blocks=[section(text)])
    assert len(standin.mrkdwn_problems) == problems


def test_form_encoded_calls_are_read_like_json(standin: SlackStandin) -> None:
    import urllib.parse
    import urllib.request

    body = urllib.parse.urlencode(
        {"token": "xoxb-x", "channel": "C1", "text": "t", "blocks": json.dumps([section("x")])}
    ).encode()
    with urllib.request.urlopen(standin.url + "chat.postMessage", body) as response:
        assert json.load(response)["ok"]
    assert standin.calls_to("chat.postMessage")[0].params["blocks"] == [section("x")]


def test_wait_for_times_out_with_the_recent_calls(standin: SlackStandin) -> None:
    with pytest.raises(AssertionError, match="waiting for nothing"):
        standin.wait_for(lambda: None, timeout=0.2, what="nothing")


def test_socket_mode_standin_sends_hello_and_records_acks(standin: SlackStandin) -> None:
    with SocketModeStandin() as socket_mode:
        standin.socket_mode_url = socket_mode.url
        client = WebClient(token="xoxb-test", base_url=standin.url)
        url = client.apps_connections_open(app_token="xapp-test")["url"]
        with connect(url) as ws:
            assert json.loads(ws.recv())["type"] == "hello"
            socket_mode.wait_connected()
            envelope_id = socket_mode.send("events_api", {"event": {"type": "app_mention"}})
            received = json.loads(ws.recv())
            assert received["envelope_id"] == envelope_id
            assert received["type"] == "events_api"
            ws.send(json.dumps({"envelope_id": envelope_id}))
            assert socket_mode.wait_ack(envelope_id) == {"envelope_id": envelope_id}
