"""bot/payloads.py in-process: the shapes Slack really sends pass (so the checks in front of
Bolt refuse nothing the bot serves), and a reason quoting the body cannot forge a log line or
carry text UTF-8 cannot encode; and Bolt's error handler (bot/app.py) on a request no listener
takes. The refusals themselves are table-driven through the real bot
process in tests/e2e/test_malformed.py."""

from __future__ import annotations

import json
import logging
from urllib.parse import quote

import pytest
from slack_bolt import App, BoltRequest
from slack_bolt.authorization import AuthorizeResult

from bot import payloads
from bot.app import on_error
from bot.blocks import APPROVE_ACTION
from bot.blocks.views import EDIT_VIEW

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
CARD = json.dumps({"p": "0" * 32, "h": "f" * 64})
METADATA = json.dumps({"proposal_id": "0" * 32, "sql_sha256": "f" * 64})


def callback(event: dict[str, object]) -> str:
    return json.dumps(
        {"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": event}
    )


def form(payload: dict[str, object]) -> str:
    return "payload=" + quote(json.dumps(payload))


SERVED = {
    "mention": (
        callback({"type": "app_mention", "user": "U1", "ts": "1.1", "channel": "C1"}),
        JSON,
    ),
    "edited message": (
        callback(
            {
                "type": "message",
                "subtype": "message_changed",
                "channel": "C1",
                "message": {"user": "U1", "ts": "1.1", "text": "hi"},
            }
        ),
        JSON,
    ),
    "bot message": (
        callback({"type": "message", "subtype": "bot_message", "bot_id": "B1", "channel": "C1"}),
        JSON,
    ),
    "file share": (
        callback(
            {
                "type": "message",
                "subtype": "file_share",
                "user": "U1",
                "ts": "1.2",
                "channel": "C1",
                "files": [{"id": "F1", "name": "sales.csv"}],
            }
        ),
        JSON,
    ),
    "home opened": (callback({"type": "app_home_opened", "user": "U1", "tab": "home"}), JSON),
    "url verification": (json.dumps({"type": "url_verification", "challenge": "c"}), JSON),
    "approve click": (
        form(
            {
                "type": "block_actions",
                "user": {"id": "U1", "team_id": "T1"},
                "team": {"id": "T1"},
                "container": {"type": "message", "message_ts": "1.1"},
                "trigger_id": "1.2.3",
                "actions": [{"action_id": APPROVE_ACTION, "value": CARD, "type": "button"}],
            }
        ),
        FORM,
    ),
    "edit submitted": (
        form(
            {
                "type": "view_submission",
                "user": {"id": "U1"},
                "view": {
                    "callback_id": EDIT_VIEW,
                    "private_metadata": METADATA,
                    "state": {"values": {"b": {"i": {"type": "plain_text_input", "value": "x"}}}},
                },
            }
        ),
        FORM,
    ),
}


@pytest.mark.parametrize("name", list(SERVED))
def test_what_slack_sends_passes(name: str) -> None:
    raw, content_type = SERVED[name]
    assert isinstance(payloads.check(raw, content_type), dict)


def test_a_reason_is_printable_ascii_whatever_the_body_holds() -> None:
    state = {"values": {"a\nINFO forged\u2028": {"i": 5}}}
    view = {"callback_id": EDIT_VIEW, "private_metadata": METADATA, "state": state}
    raw = form({"type": "view_submission", "user": {"id": "U1"}, "view": view})
    with pytest.raises(payloads.Malformed) as caught:
        payloads.check(raw, FORM)
    reason = str(caught.value)
    assert "view.state.values.a\\nINFO forged\\u2028.i" in reason, reason
    assert reason.isascii() and reason.isprintable()


def test_a_lone_surrogate_anywhere_is_refused() -> None:
    raw = callback(
        {"type": "app_mention", "user": "U1", "ts": "1", "channel": "C1", "text": "\ud800"}
    )
    with pytest.raises(payloads.Malformed, match=r"the body holds '\\ud800', not text"):
        payloads.check(raw, JSON)


def test_a_request_no_listener_takes_is_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    """bot/app.py's `on_error` as Bolt calls it: a served type that no listener of this app
    takes keeps Bolt's 404 and logs one line, not Bolt's warning with sample code."""
    app = App(
        authorize=lambda **_: AuthorizeResult(
            enterprise_id=None, team_id="T1", bot_token="xoxb-test", bot_user_id="UBOT"
        ),
        signing_secret="s",
        token_verification_enabled=False,
        request_verification_enabled=False,
        raise_error_for_unhandled_request=True,
    )
    app.error(on_error)
    raw, content_type = SERVED["home opened"]
    with caplog.at_level(logging.INFO):
        response = app.dispatch(BoltRequest(body=raw, headers={"content-type": content_type}))
    assert response.status == 404
    assert "No listener takes this event_callback request (answered 404)" in caplog.text
    assert "Unhandled request" not in caplog.text and "Traceback" not in caplog.text
