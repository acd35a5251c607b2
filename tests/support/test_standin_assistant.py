"""The stand-in's AI app methods refuse what Slack refuses, through slack_sdk's own client."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk import WebClient

from tests.support.standin import SlackStandin
from tests.support.web_calls import error


def test_statuses_are_kept_in_order_and_a_post_clears_the_shown_one(
    client: WebClient, standin: SlackStandin
) -> None:
    standin.saw("C1", "1.0001")
    client.assistant_threads_setStatus(
        channel_id="C1", thread_ts="1.0001", status="is drafting SQL…", loading_messages=["a"]
    )
    assert standin.status_now("C1", "1.0001") == "is drafting SQL…"
    client.chat_postMessage(channel="C1", thread_ts="1.0001", text="the card")
    assert standin.status_now("C1", "1.0001") == ""
    client.assistant_threads_setStatus(channel_id="C1", thread_ts="1.0001", status="")
    assert standin.statuses_in("C1", "1.0001") == ["is drafting SQL…", ""]
    assert standin.statuses[0].loading_messages == ("a",)
    assert not standin.refused


def test_a_thread_the_bot_replied_in_or_posted_is_known(
    client: WebClient, standin: SlackStandin
) -> None:
    client.chat_postMessage(channel="C1", thread_ts="5.0005", text="placeholder")
    root = client.chat_postMessage(channel="D1", text="a top-level DM answer")["ts"]
    client.assistant_threads_setStatus(channel_id="C1", thread_ts="5.0005", status="is busy")
    client.assistant_threads_setStatus(channel_id="D1", thread_ts=root, status="is busy")
    assert not standin.refused


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"status": "x" * 51}, "invalid_arguments"),
        ({"status": "s", "loading_messages": ["m"] * 11}, "invalid_arguments"),
        ({"status": "s", "loading_messages": ["m" * 51]}, "invalid_arguments"),
        ({"status": "s", "thread_ts": "9.0009"}, "invalid_thread_ts"),  # never reached the app
        ({"status": "s", "thread_ts": "2.0002"}, "invalid_thread_ts"),  # a reply, not the root
        ({"status": "s", "thread_ts": "nope"}, "invalid_thread_ts"),
        ({"status": "s", "channel_id": ""}, "channel_not_found"),
    ],
)
def test_set_status_refuses_what_slack_refuses(
    client: WebClient, standin: SlackStandin, kwargs: dict[str, Any], code: str
) -> None:
    standin.saw("C1", "1.0001")
    standin.saw("C1", "2.0002", thread_ts="1.0001")
    arguments = {"channel_id": "C1", "thread_ts": "1.0001", **kwargs}
    assert error(client.assistant_threads_setStatus, **arguments) == code
    assert len(standin.refused) == 1 and standin.statuses == []


def test_limits_exactly_are_accepted(client: WebClient, standin: SlackStandin) -> None:
    standin.saw("C1", "1.0001")
    client.assistant_threads_setStatus(
        channel_id="C1", thread_ts="1.0001", status="x" * 50, loading_messages=["m" * 50] * 10
    )
    assert not standin.refused


def test_a_revoked_scope_is_the_tests_refusal_a_missing_one_the_bots(
    client: WebClient, standin: SlackStandin
) -> None:
    standin.saw("C1", "1.0001")
    standin.revoke_scope("chat:write")
    standin.revoke_scope("assistant:write")
    set_status = client.assistant_threads_setStatus
    assert error(set_status, channel_id="C1", thread_ts="1.0001", status="s") == "missing_scope"
    assert standin.refused == []  # asked for by the test
    standin.grant_scope("assistant:write")  # the older scope still does
    set_status(channel_id="C1", thread_ts="1.0001", status="s")
    # a scope the manifest does not ask for (as if it left assistant:write out): the bot's
    standin.grant_scope("chat:write")
    standin.scopes.discard("assistant:write")
    standin._revoked.discard("assistant:write")
    set_title = client.assistant_threads_setTitle
    assert error(set_title, channel_id="C1", thread_ts="1.0001", title="t") == "missing_scope"
    assert [c.answer["error"] for c in standin.refused] == ["missing_scope"]


def test_titles_and_suggested_prompts(client: WebClient, standin: SlackStandin) -> None:
    standin.saw("D1", "1.0001")
    standin.grant_scope("assistant:write")
    client.assistant_threads_setTitle(channel_id="D1", thread_ts="1.0001", title="Revenue")
    prompt = {"title": "Revenue", "message": "What was revenue last month?"}
    client.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=[prompt])
    assert standin.suggested_prompts[0]["prompts"] == [prompt]
    prompts = client.assistant_threads_setSuggestedPrompts
    assert error(prompts, channel_id="D1", prompts=[prompt] * 5) == "invalid_arguments"
    assert error(prompts, channel_id="D1", prompts=[{"title": "t"}]) == "invalid_arguments"
    set_title = client.assistant_threads_setTitle
    assert error(set_title, channel_id="D1", thread_ts="1.0001", title="") == "invalid_arguments"
