"""Requests as Slack sends them: Events API bodies, block_actions payloads, and their signatures.

Shapes follow Slack's documented payloads (and the samples in slack_sdk's and Bolt's own tests):
an `event_callback` body around the event, and a form-encoded `payload=<json>` for clicks.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any
from urllib.parse import quote

from slack_sdk.signature import SignatureVerifier

from tests.support.standin import BOT_ID, BOT_USER_ID, TEAM_ID, Posted

ALICE = "U0ALICE01"
BOB = "U0BOB0001"
APP_ID = "A0QUERYBOT"

_numbers = itertools.count(1)


def new_channel() -> str:
    """A channel id no other test uses, so each test reads only its own threads."""
    return f"C{next(_numbers):08d}"


def new_ts() -> str:
    return f"{1_700_000_000 + next(_numbers)}.{next(_numbers) % 1_000_000:06d}"


def _event_body(event: dict[str, Any], event_id: str | None) -> dict[str, Any]:
    return {
        "token": "unused-verification-token",
        "team_id": TEAM_ID,
        "api_app_id": APP_ID,
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{next(_numbers):010d}",
        "event_time": int(time.time()),
        "authorizations": [
            {"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True, "enterprise_id": None}
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-{event['type']}-{TEAM_ID}-{event['channel']}",
    }


def mention(
    channel: str,
    text: str,
    *,
    user: str = ALICE,
    thread_ts: str | None = None,
    ts: str | None = None,
    event_id: str | None = None,
) -> dict[str, Any]:
    """An `app_mention` event: `<@bot> text`, top-level or in `thread_ts`."""
    ts = ts or new_ts()
    event: dict[str, Any] = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER_ID}> {text}".rstrip(),
        "ts": ts,
        "team": TEAM_ID,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return _event_body(event, event_id)


def message(
    channel: str,
    text: str,
    *,
    thread_ts: str | None,
    user: str = ALICE,
    subtype: str | None = None,
    bot_id: str | None = None,
    ts: str | None = None,
    channel_type: str = "channel",
) -> dict[str, Any]:
    """A `message` event (`message.channels`; `message.im` with channel_type "im"), a thread
    reply when `thread_ts` is given."""
    ts = ts or new_ts()
    event: dict[str, Any] = {
        "type": "message",
        "user": user,
        "text": text,
        "ts": ts,
        "team": TEAM_ID,
        "channel": channel,
        "event_ts": ts,
        "channel_type": channel_type,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    if subtype:
        event["subtype"] = subtype
    if bot_id:
        event["bot_id"] = bot_id
    return _event_body(event, None)


def home_opened(user: str, *, tab: str = "home") -> dict[str, Any]:
    """An `app_home_opened` event: `user` opened the app's Home (or Messages) tab."""
    event = {
        "type": "app_home_opened",
        "user": user,
        "channel": f"D{user[1:]}",
        "tab": tab,
        "event_ts": new_ts(),
    }
    return _event_body(event, None)


def assistant_thread_started(user: str, *, thread_ts: str) -> dict[str, Any]:
    """An `assistant_thread_started` event: `user` opened a thread of the older assistant view
    in their DM with the app (Slack posts its root, `thread_ts`)."""
    channel = f"D{user[1:]}"
    thread = {"user_id": user, "channel_id": channel, "thread_ts": thread_ts, "context": {}}
    event = {"type": "assistant_thread_started", "assistant_thread": thread, "event_ts": new_ts()}
    return _event_body({**event, "channel": channel}, None) | {"event": event}


def click(posted: Posted, action_id: str, *, user: str = BOB) -> dict[str, Any]:
    """The `block_actions` payload of pressing the button `action_id` in `posted`."""
    value = posted.action_values()[action_id]
    return _block_actions(
        posted,
        user,
        {
            "type": "button",
            "action_id": action_id,
            "block_id": "standin-block",
            "text": {"type": "plain_text", "text": action_id, "emoji": True},
            "value": value,
            "action_ts": f"{time.time():.6f}",
        },
    )


def _block_actions(posted: Posted, user: str, action: dict[str, Any]) -> dict[str, Any]:
    """The `block_actions` payload of `action` (one element's) in `posted`, by `user`."""
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
        "api_app_id": APP_ID,
        "token": "unused-verification-token",
        "container": {
            "type": "message",
            "message_ts": posted.ts,
            "channel_id": posted.channel,
            "is_ephemeral": False,
            "thread_ts": posted.thread_ts,
        },
        "trigger_id": f"{next(_numbers)}.{next(_numbers)}.standin",
        "team": {"id": TEAM_ID, "domain": "standin"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": posted.channel, "name": "data"},
        "message": {
            "type": "message",
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
            "ts": posted.ts,
            "thread_ts": posted.thread_ts,
            "text": posted.text,
            "blocks": posted.blocks,
        },
        "state": {"values": {}},
        "response_url": "https://hooks.slack.invalid/actions/standin",
        "actions": [action],
    }


def feedback_click(posted: Posted, *, positive: bool, user: str = BOB) -> dict[str, Any]:
    """The `block_actions` payload of pressing the thumbs up (`positive`) or down in `posted`."""
    side = "positive_button" if positive else "negative_button"
    element = next(
        el
        for block in posted.blocks
        if block["type"] == "context_actions"
        for el in block["elements"]
        if el["type"] == "feedback_buttons"
    )
    return _block_actions(
        posted,
        user,
        {
            "type": "feedback_buttons",
            "action_id": element["action_id"],
            "block_id": "standin-block",
            "value": element[side]["value"],
            "action_ts": f"{time.time():.6f}",
        },
    )


def view_submission(
    view: dict[str, Any], values: dict[str, dict[str, str]], *, user: str = BOB
) -> dict[str, Any]:
    """The `view_submission` payload of submitting the modal `view` (as opened) with `values`:
    block_id -> {action_id: typed text}."""
    state = {
        block: {
            action: {"type": "plain_text_input", "value": text} for action, text in acts.items()
        }
        for block, acts in values.items()
    }
    return {
        "type": "view_submission",
        "team": {"id": TEAM_ID, "domain": "standin"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
        "api_app_id": APP_ID,
        "token": "unused-verification-token",
        "trigger_id": f"{next(_numbers)}.{next(_numbers)}.standin",
        "view": {
            "id": f"V{next(_numbers):08d}",
            "team_id": TEAM_ID,
            "app_id": APP_ID,
            "bot_id": BOT_ID,
            **view,
            "state": {"values": state},
            "hash": f"{next(_numbers)}.standin",
        },
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }


def event_request(body: dict[str, Any]) -> tuple[str, str]:
    """(body, content type) of an Events API request."""
    return json.dumps(body), "application/json"


def action_request(payload: dict[str, Any]) -> tuple[str, str]:
    """(body, content type) of an interactivity request: form-encoded `payload=<json>`."""
    return "payload=" + quote(json.dumps(payload)), "application/x-www-form-urlencoded"


def signed_headers(secret: str, body: str, *, timestamp: int | None = None) -> dict[str, str]:
    """Slack's signature headers for `body`, as Slack computes them."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}
