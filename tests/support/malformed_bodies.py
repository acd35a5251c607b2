"""Signed request bodies Slack never sends, by name (issue 36, item 5): bodies that are not
form-encoded, payloads that are not JSON objects, interactive payloads missing what the bot reads
or holding the wrong types, values the bot never wrote, unknown types, events without their event.
Used by the end-to-end test of malformed requests and by the HTTP resource benchmark."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from bot.blocks import APPROVE_ACTION, CANCEL_ACTION, EDIT_ACTION, EXPLAIN_ACTION
from tests.support.slack_payloads import BOB
from tests.support.standin import TEAM_ID

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
USER = {"id": BOB, "team_id": TEAM_ID}
CARD = json.dumps({"p": "0" * 32, "h": "f" * 64})
METADATA = json.dumps({"proposal_id": "0" * 32, "sql_sha256": "f" * 64})
ORDERS = "SELECT COUNT(*) AS orders FROM demo.main.orders"


def form(payload: Any) -> tuple[str, str]:
    return "payload=" + quote(json.dumps(payload)), FORM


def click(action: Any = None, **fields: Any) -> tuple[str, str]:
    """A block_actions payload with its usual fields (any of them replaced or removed by
    `fields`: None removes), and `action` as its one action."""
    body: dict[str, Any] = {
        "type": "block_actions",
        "user": USER,
        "team": {"id": TEAM_ID},
        "channel": {"id": "C0MALFORM"},
        "container": {"type": "message", "message_ts": "1.1", "channel_id": "C0MALFORM"},
        "trigger_id": "1.2.standin",
        "actions": [action or {"action_id": APPROVE_ACTION, "value": CARD}],
    }
    body |= fields
    return form({k: v for k, v in body.items() if v is not None})


def submission(view: Any = "default", **fields: Any) -> tuple[str, str]:
    """A view_submission of the Edit SQL modal, `view` or its fields replaced."""
    state = {"values": {"edit_sql_block": {"edit_sql_input": {"value": "SELECT 1"}}}}
    given = {"callback_id": "edit_sql", "private_metadata": METADATA, "state": state}
    body: dict[str, Any] = {
        "type": "view_submission",
        "user": USER,
        "team": {"id": TEAM_ID},
        "view": given if view == "default" else view,
    }
    body |= fields
    return form({k: v for k, v in body.items() if v is not None})


def event(event: Any, **fields: Any) -> tuple[str, str]:
    body = {"type": "event_callback", "team_id": TEAM_ID, "event_id": "Ev0MALFORM", "event": event}
    body |= fields
    return json.dumps({k: v for k, v in body.items() if v is not None}), JSON


MENTION = {"type": "app_mention", "user": BOB, "text": "hi", "ts": "1.1", "channel": "C0MALFORM"}

#: name -> (body, content type): every one signed with the bot's secret.
MALFORMED: dict[str, tuple[str, str]] = {
    "not form-encoded": ("hello world", FORM),
    "payload= not JSON": ("payload=%7Bnot-json", FORM),
    "payload= not UTF-8 JSON": ("payload=%FF%FE", FORM),
    "payload a JSON array": form([1, 2]),
    "payload a JSON string": form("block_actions"),
    "payload null": form(None),
    "JSON body not an object": ("[1]", JSON),
    "JSON body broken": ("{not json", JSON),
    "JSON nested past the parser's depth": ("[" * 100_000 + "]" * 100_000, JSON),
    "no type": form({"user": USER}),
    "unknown type": form({"type": "nope", "user": USER}),
    "type a number": form({"type": 5, "user": USER}),
    "shortcut (not served)": form({"type": "shortcut", "callback_id": "x", "user": USER}),
    "message_action (not served)": form({"type": "message_action", "user": USER}),
    "view_closed (not served)": form({"type": "view_closed", "user": USER, "view": {}}),
    "block_actions without actions": click(actions=None),
    "block_actions actions a string": click(actions="approve"),
    "block_actions actions empty": click(actions=[]),
    "block_actions two actions": click(actions=[{"action_id": APPROVE_ACTION, "value": CARD}] * 2),
    "action not an object": click(actions=[5]),
    "action without action_id": click({"value": CARD}),
    "action without value": click({"action_id": APPROVE_ACTION}),
    "action value a number": click({"action_id": APPROVE_ACTION, "value": 5}),
    "approve value not a card": click({"action_id": APPROVE_ACTION, "value": "zzz"}),
    "approve card without hash": click({"action_id": APPROVE_ACTION, "value": '{"p": "x"}'}),
    "edit card value a list": click({"action_id": EDIT_ACTION, "value": "[1, 2]"}),
    "cancel value not a proposal id": click({"action_id": CANCEL_ACTION, "value": "a b;c"}),
    "explain value huge": click({"action_id": EXPLAIN_ACTION, "value": "f" * 200_000}),
    "follow-up value not a question": click({"action_id": "follow_up:1", "value": "garbage"}),
    "unknown action_id": click({"action_id": "drop_tables", "value": CARD}),
    "block_actions without user": click(user=None),
    "user a string": click(user=BOB),
    "user id a number": click(user={"id": 5}),
    "team a number": click(team=5),
    "channel a string list": click(channel=["C1"]),
    "block_actions without container": click(container=None),
    "block_actions without trigger_id": click(trigger_id=None),
    "enterprise a number": click(enterprise=7),
    "authorizations not a list": click(authorizations="x"),
    "view_submission without view": submission(view=None),
    "view a string": submission(view="x"),
    "view without state": submission(view={"callback_id": "edit_sql", "private_metadata": "x"}),
    "view state garbage": submission(
        view={"callback_id": "edit_sql", "private_metadata": METADATA, "state": "x"}
    ),
    "view state values a list": submission(
        view={"callback_id": "edit_sql", "private_metadata": METADATA, "state": {"values": [1]}}
    ),
    "view private_metadata not the bot's": submission(
        view={"callback_id": "edit_sql", "private_metadata": "\x00" * 100, "state": {"values": {}}}
    ),
    "view private_metadata a number": submission(
        view={"callback_id": "edit_sql", "private_metadata": 5, "state": {"values": {}}}
    ),
    "view of another modal": submission(
        view={"callback_id": "other", "private_metadata": METADATA, "state": {"values": {}}}
    ),
    "view_submission without user": submission(user=None),
    "view input named with a line break": submission(
        view={
            "callback_id": "edit_sql",
            "private_metadata": METADATA,
            "state": {"values": {"x\nINFO forged log line": {"edit_sql_input": 5}}},
        }
    ),
    "type a lone surrogate": (json.dumps({"type": "\ud800"}), JSON),
    "modal input named with a lone surrogate": submission(
        view={
            "callback_id": "edit_sql",
            "private_metadata": METADATA,
            "state": {"values": {"\udfff": {}}},
        }
    ),
    "mention text with a lone surrogate": event(MENTION | {"text": "\ud800"}),
    "slash command (not served)": ("command=%2Fquerybot&text=hi&user_id=U1&team_id=T1", FORM),
    "url_verification without challenge": (json.dumps({"type": "url_verification"}), JSON),
    "url_verification challenge a number": (
        json.dumps({"type": "url_verification", "challenge": 5}),
        JSON,
    ),
    "event_callback without event": event(None),
    "event a string": event("app_mention"),
    "event_callback without event_id": event(MENTION, event_id=None),
    "event of a type not subscribed": event({"type": "reaction_added", "user": BOB}),
    "mention without channel": event({k: v for k, v in MENTION.items() if k != "channel"}),
    "mention without ts": event({k: v for k, v in MENTION.items() if k != "ts"}),
    "mention text a number": event(MENTION | {"text": 5}),
    "mention user a number": event(MENTION | {"user": 5}),
    "message from a person without user": event({"type": "message", "channel": "C1", "ts": "1.1"}),
    "message files a string": event(
        {"type": "message", "user": BOB, "channel": "C1", "ts": "1.2", "files": "x"}
    ),
    "home opened without user": event({"type": "app_home_opened", "tab": "home"}),
}
