"""The stand-in's methods behind the Home tab and private answers' files: a message to a user id
lands in the app's direct messages with them, `chat.getPermalink` links only messages the app
can see, and `users.conversations` refuses what Slack refuses."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.support.standin import SlackStandin


def error(call: object) -> str:
    assert isinstance(call, SlackApiError)
    return str(call.response["error"])


def test_a_message_to_a_user_goes_to_the_apps_direct_messages_and_gets_a_permalink(
    client: WebClient, standin: SlackStandin
) -> None:
    posted = client.chat_postMessage(channel="U0ANA0001", text="hello")
    assert posted["channel"] == "D0ANA0001"
    reply = client.chat_postMessage(channel="D0ANA0001", text="in thread", thread_ts=posted["ts"])
    root_link = client.chat_getPermalink(channel="D0ANA0001", message_ts=posted["ts"])
    assert root_link["permalink"].endswith(f"/archives/D0ANA0001/p{posted['ts'].replace('.', '')}")
    reply_link = client.chat_getPermalink(channel="D0ANA0001", message_ts=reply["ts"])
    assert reply_link["permalink"].endswith(f"?thread_ts={posted['ts']}&cid=D0ANA0001")
    with pytest.raises(SlackApiError) as refused:
        client.chat_getPermalink(channel="C0NOWHERE", message_ts="1700000000.000100")
    assert error(refused.value) == "message_not_found"


def test_users_conversations_lists_the_persons_channels_within_slacks_rules(
    client: WebClient, standin: SlackStandin
) -> None:
    standin.members = {"C0ONE0001": {"U0ANA0001"}, "C0TWO0001": {"U0BO00001"}}
    found = client.users_conversations(user="U0ANA0001", types="public_channel,private_channel")
    assert [c["id"] for c in found["channels"]] == ["C0ONE0001"]
    for kwargs, expected in [
        ({"limit": 1000}, "invalid_limit"),
        ({"types": "im"}, "missing_scope"),  # the manifest asks for no im:read
        ({"types": "channels"}, "invalid_types"),
    ]:
        with pytest.raises(SlackApiError) as refused:
            client.users_conversations(user="U0ANA0001", **kwargs)  # type: ignore[arg-type]
        assert error(refused.value) == expected
