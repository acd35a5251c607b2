"""The stand-in's message metadata, channel history, thread replies and people's time zones, as
Slack answers them, through slack_sdk's own client: what the exactly-once delivery of scheduled
questions relies on (finding its own message again by its metadata) must be Slack's behaviour,
not the stand-in's invention."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.models.metadata import Metadata

from tests.support.standin import BOT_USER_ID, SlackStandin
from tests.support.standin_directory import time_zone
from tests.support.web_calls import error

RUN = {"event_type": "querybot_scheduled_run", "event_payload": {"run_id": "r-1", "n": 2}}


def test_metadata_is_kept_on_the_message_and_answered(
    client: WebClient, standin: SlackStandin
) -> None:
    sent = Metadata(event_type=RUN["event_type"], event_payload=RUN["event_payload"])
    answer = client.chat_postMessage(channel="C1", text="the answer", metadata=sent)
    assert answer["message"]["metadata"] == RUN
    assert standin.messages[("C1", answer["ts"])].metadata == RUN
    # an update without metadata keeps it; one with metadata replaces it
    client.chat_update(channel="C1", ts=answer["ts"], text="the answer, edited")
    assert standin.messages[("C1", answer["ts"])].metadata == RUN
    later = {"event_type": "querybot_scheduled_run", "event_payload": {"run_id": "r-2"}}
    client.chat_update(channel="C1", ts=answer["ts"], text="again", metadata=later)
    assert standin.messages[("C1", answer["ts"])].metadata == later
    standin.assert_clean()


def test_form_encoded_metadata_arrives_as_a_json_string(
    client: WebClient, standin: SlackStandin
) -> None:
    answer = client.api_call(
        "chat.postMessage", data={"channel": "C1", "text": "t", "metadata": json.dumps(RUN)}
    )
    assert standin.messages[("C1", answer["ts"])].metadata == RUN
    refused = error(
        client.api_call,
        api_method="chat.postMessage",
        data={"channel": "C1", "text": "t", "metadata": "{not json"},
    )
    assert refused == "invalid_metadata_format"


@pytest.mark.parametrize(
    ("metadata", "refused"),
    [
        ({"event_payload": {}}, "invalid_metadata_format"),
        ({"event_type": "", "event_payload": {}}, "invalid_metadata_format"),
        ({"event_type": "run done!", "event_payload": {}}, "invalid_metadata_format"),
        ({"event_type": "run", "event_payload": ["a list"]}, "invalid_metadata_format"),
        ({"event_type": "run", "event_payload": "text"}, "invalid_metadata_format"),
        ({"event_type": "run"}, "invalid_metadata_format"),
        (["event_type", "run"], "invalid_metadata_format"),
        ({"event_type": "run", "event_payload": {"x": "y" * 9000}}, "metadata_too_large"),
    ],
)
def test_metadata_slack_would_refuse_is_refused(
    client: WebClient, standin: SlackStandin, metadata: Any, refused: str
) -> None:
    assert error(client.chat_postMessage, channel="C1", text="t", metadata=metadata) == refused
    root = client.chat_postMessage(channel="C1", text="t")["ts"]
    assert error(client.chat_update, channel="C1", ts=root, text="t", metadata=metadata) == refused
    assert len(standin.refused) == 2


def test_history_is_the_top_level_newest_first_with_metadata_only_when_asked(
    client: WebClient, standin: SlackStandin
) -> None:
    first = client.chat_postMessage(channel="C1", text="first")["ts"]
    run = client.chat_postMessage(channel="C1", text="run", metadata=RUN)["ts"]
    reply = client.chat_postMessage(channel="C1", text="in thread", thread_ts=first)["ts"]
    client.chat_postMessage(channel="C2", text="elsewhere")
    plain = client.conversations_history(channel="C1")
    assert [m["ts"] for m in plain["messages"]] == [run, first]
    assert all("metadata" not in m for m in plain["messages"])
    assert plain["messages"][1]["reply_count"] == 1
    assert plain["messages"][1]["latest_reply"] == reply
    assert plain["messages"][0]["user"] == BOT_USER_ID and not plain["has_more"]
    full = client.conversations_history(channel="C1", include_all_metadata=True)
    assert full["messages"][0]["metadata"] == RUN
    assert "metadata" not in full["messages"][1]


def test_history_bounds_and_pages(client: WebClient) -> None:
    posted = [client.chat_postMessage(channel="C1", text=str(n))["ts"] for n in range(5)]
    newest_first = posted[::-1]
    between = client.conversations_history(channel="C1", oldest=posted[1], latest=posted[3])
    assert [m["ts"] for m in between["messages"]] == [posted[2]]
    both = client.conversations_history(
        channel="C1", oldest=posted[1], latest=posted[3], inclusive=True
    )
    assert [m["ts"] for m in both["messages"]] == [posted[3], posted[2], posted[1]]
    seen, cursor = [], None
    while True:
        page = client.conversations_history(channel="C1", limit=2, cursor=cursor)
        seen += [m["ts"] for m in page["messages"]]
        cursor = page["response_metadata"]["next_cursor"]
        assert page["has_more"] == bool(cursor)
        if not cursor:
            break
    assert seen == newest_first
    # slack_sdk's own pagination follows the cursor too (each page read as it comes: the
    # iterator answers the same response object, holding the page fetched last)
    paged = [
        m["ts"] for p in client.conversations_history(channel="C1", limit=3) for m in p["messages"]
    ]
    assert paged == newest_first


@pytest.mark.parametrize(
    ("kwargs", "refused"),
    [
        ({"limit": 1000}, "invalid_limit"),
        ({"limit": 0}, "invalid_limit"),
        ({"cursor": "not-a-cursor!"}, "invalid_cursor"),
        ({"oldest": "yesterday"}, "invalid_ts_oldest"),
        ({"latest": "now"}, "invalid_ts_latest"),
    ],
)
def test_history_refuses_what_slack_refuses(
    client: WebClient, kwargs: dict[str, Any], refused: str
) -> None:
    client.chat_postMessage(channel="C1", text="t")
    assert error(client.conversations_history, channel="C1", **kwargs) == refused


def test_replies_are_the_root_then_its_replies_oldest_first(
    client: WebClient, standin: SlackStandin
) -> None:
    root = client.chat_postMessage(channel="C1", text="root", metadata=RUN)["ts"]
    replies = [
        client.chat_postMessage(channel="C1", text=str(n), thread_ts=root)["ts"] for n in range(3)
    ]
    thread = client.conversations_replies(channel="C1", ts=root)
    assert [m["ts"] for m in thread["messages"]] == [root, *replies]
    assert thread["messages"][0]["reply_count"] == 3
    assert all(m["thread_ts"] == root for m in thread["messages"])
    assert "metadata" not in thread["messages"][0]
    with_metadata = client.conversations_replies(channel="C1", ts=root, include_all_metadata=True)
    assert with_metadata["messages"][0]["metadata"] == RUN
    first = client.conversations_replies(channel="C1", ts=root, limit=2)
    assert first["has_more"]
    rest = client.conversations_replies(
        channel="C1", ts=root, limit=2, cursor=first["response_metadata"]["next_cursor"]
    )
    assert [m["ts"] for m in first["messages"] + rest["messages"]] == [root, *replies]
    assert not rest["has_more"]


def test_replies_under_a_persons_message_and_to_nothing(
    client: WebClient, standin: SlackStandin
) -> None:
    standin.saw("C1", "1700000000.000100")
    reply = client.chat_postMessage(channel="C1", text="a", thread_ts="1700000000.000100")["ts"]
    thread = client.conversations_replies(channel="C1", ts="1700000000.000100")["messages"]
    assert [m["ts"] for m in thread] == ["1700000000.000100", reply]
    assert "user" not in thread[0]  # the person's message: the stand-in knows its ts only
    assert error(client.conversations_replies, channel="C1", ts="1.5") == "thread_not_found"


@pytest.mark.parametrize(
    ("channel", "info", "scope"),
    [
        ("C1", {}, "channels:history"),
        ("G1", {}, "groups:history"),
        ("C2", {"is_private": True}, "groups:history"),
        ("D1", {}, "im:history"),
        ("G2", {"is_mpim": True}, "mpim:history"),
    ],
)
def test_reading_needs_the_conversation_types_history_scope(
    client: WebClient, standin: SlackStandin, channel: str, info: dict[str, Any], scope: str
) -> None:
    standin.channels[channel] = info
    standin.grant_scope(scope)
    assert client.conversations_history(channel=channel)["ok"]
    standin.revoke_scope(scope)
    assert error(client.conversations_history, channel=channel) == "missing_scope"
    assert error(client.conversations_replies, channel=channel, ts="1.0") == "missing_scope"
    assert not standin.refused  # a scope the test revoked is its own refusal


def test_a_scope_the_manifest_lacks_is_the_bots_refusal(
    client: WebClient, standin: SlackStandin
) -> None:
    # manifest.yaml asks for no mpim:history: reading a group DM is refused as Slack would
    assert "mpim:history" not in standin.scopes
    standin.channels["G9"] = {"is_mpim": True}
    assert error(client.conversations_history, channel="G9") == "missing_scope"
    assert [c.method for c in standin.refused] == ["conversations.history"]


def test_users_info_answers_the_time_zone(client: WebClient, standin: SlackStandin) -> None:
    standin.emails["U1"] = "ada@example.com"
    user = client.users_info(user="U1")["user"]
    assert user["tz"] == "America/Los_Angeles"
    assert user["tz_label"] in {"Pacific Standard Time", "Pacific Daylight Time"}
    assert user["tz_offset"] in {-8 * 3600, -7 * 3600}
    standin.set_time_zone("U2", "America/New_York")
    assert client.users_info(user="U2")["user"]["tz"] == "America/New_York"
    with pytest.raises(KeyError):  # zoneinfo's error for a zone that does not exist
        standin.set_time_zone("U3", "Mars/Olympus_Mons")


def test_time_zone_labels_and_offsets_follow_daylight_saving() -> None:
    winter, summer = datetime(2026, 1, 15, tzinfo=UTC), datetime(2026, 7, 15, tzinfo=UTC)
    assert time_zone("Europe/London", winter) == {
        "tz": "Europe/London",
        "tz_label": "Greenwich Mean Time",
        "tz_offset": 0,
    }
    assert time_zone("Europe/London", summer)["tz_label"] == "British Summer Time"
    assert time_zone("Europe/London", summer)["tz_offset"] == 3600
    assert time_zone("America/New_York", winter)["tz_offset"] == -5 * 3600
    assert time_zone("Asia/Kolkata", summer)["tz_offset"] == 5 * 3600 + 1800
    assert time_zone("Asia/Kathmandu", summer)["tz_label"] == "Asia/Kathmandu"
