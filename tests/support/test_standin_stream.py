"""The stand-in's chat streaming refuses what Slack refuses, through slack_sdk's own client and
its `chat_stream()` helper, and keeps a stream's pieces in order and its message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.models.blocks import PlanBlock, SectionBlock, TaskCardBlock
from slack_sdk.models.messages.chunk import PlanUpdateChunk, TaskUpdateChunk

from tests.support.standin import SlackStandin
from tests.support.web_calls import error

ROOT = "1700000001.000100"
WHO = {"recipient_team_id": "T1", "recipient_user_id": "U1"}


@pytest.fixture
def standin() -> Iterator[SlackStandin]:
    with SlackStandin() as s:
        s.saw("C1", ROOT)
        yield s


def test_a_stream_keeps_its_pieces_in_order_and_its_message(
    client: WebClient, standin: SlackStandin
) -> None:
    streamer = client.chat_stream(channel="C1", thread_ts=ROOT, buffer_size=1, **WHO)
    streamer.append(
        markdown_text="Reading ",
        chunks=[
            PlanUpdateChunk(title="Plan"),
            TaskUpdateChunk(id="a", title="A", status="in_progress"),
        ],
    )
    streamer.append(markdown_text="the catalog.")
    streamer.stop(
        chunks=[TaskUpdateChunk(id="a", title="A", status="complete", output="SELECT 1")],
        blocks=[SectionBlock(text="done")],
    )
    [stream] = standin.streams_in("C1", ROOT)
    methods = [method for method, _ in stream.pieces]
    assert methods == ["chat.startStream", "chat.appendStream", "chat.stopStream"]
    assert stream.stopped and stream.plan_title == "Plan"
    assert stream.statuses("a") == ["in_progress", "complete"]
    assert stream.tasks["a"]["output"] == "SELECT 1"
    [message] = standin.thread("C1", ROOT)
    assert message.text == "Reading the catalog."
    assert message.blocks[0]["type"] == "section"
    assert not standin.refused


def test_plan_and_task_card_blocks_pass_the_block_rules(
    client: WebClient, standin: SlackStandin
) -> None:
    ts = client.chat_startStream(channel="C1", thread_ts=ROOT, markdown_text="x", **WHO)["ts"]
    card = TaskCardBlock(task_id="a", title="Draft the SQL", status="complete")
    client.chat_stopStream(channel="C1", ts=ts, blocks=[PlanBlock(title="Plan", tasks=[card])])
    assert not standin.refused
    ts = client.chat_startStream(channel="C1", thread_ts=ROOT, markdown_text="x", **WHO)["ts"]
    bad = [{"type": "task_card", "task_id": "a", "title": "t", "status": "done"}]
    assert error(client.chat_stopStream, channel="C1", ts=ts, blocks=bad) == "invalid_blocks"


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"recipient_team_id": "T1"}, "missing_recipient_user_id"),
        ({"recipient_user_id": "U1"}, "missing_recipient_team_id"),
        ({**WHO, "thread_ts": "9.0009"}, "invalid_thread_ts"),
        ({**WHO, "task_display_mode": "grid"}, "invalid_arguments"),
        ({**WHO, "markdown_text": "x" * 12_001}, "msg_too_long"),
        (
            {**WHO, "chunks": [{"type": "task_update", "id": "a", "title": "t", "status": "ok"}]},
            "invalid_chunks",
        ),
        ({**WHO, "chunks": [{"type": "markdown", "text": "t"}]}, "invalid_chunks"),
        ({**WHO, "chunks": [{"type": "plan_update", "title": "t", "extra": 1}]}, "invalid_chunks"),
    ],
)
def test_a_start_slack_would_refuse_is_refused(
    client: WebClient, standin: SlackStandin, kwargs: dict[str, Any], code: str
) -> None:
    args = {"channel": "C1", "thread_ts": ROOT, **kwargs}
    assert error(client.chat_startStream, **args) == code
    assert standin.streams == []


def test_an_unknown_or_stopped_stream_takes_nothing_more(
    client: WebClient, standin: SlackStandin
) -> None:
    assert error(client.chat_appendStream, channel="C1", ts="5.0005", markdown_text="x") == (
        "message_not_found"
    )
    ts = client.chat_startStream(channel="C1", thread_ts=ROOT, markdown_text="x", **WHO)["ts"]
    client.chat_stopStream(channel="C1", ts=ts)
    assert error(client.chat_appendStream, channel="C1", ts=ts, markdown_text="y") == (
        "message_not_in_streaming_state"
    )
    assert error(client.chat_stopStream, channel="C1", ts=ts) == "message_not_in_streaming_state"
    assert standin.thread("C1", ROOT)[0].text == "x"


def test_a_workspace_without_streams_or_the_scope_refuses_them(
    client: WebClient, standin: SlackStandin
) -> None:
    standin.refuse_streams("unknown_method")
    args = {"channel": "C1", "thread_ts": ROOT, "markdown_text": "x", **WHO}
    assert error(client.chat_startStream, **args) == "unknown_method"
    standin.allow_streams()
    standin.revoke_scope("chat:write")
    assert error(client.chat_startStream, **args) == "missing_scope"
    assert not standin.refused, "both refusals were the test's own doing"
    assert standin.streams == []
