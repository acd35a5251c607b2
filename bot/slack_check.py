"""Slack's answer to querybot's tokens, turned into one line a person can act on.

`querybot run` and `querybot doctor` ask Slack about the tokens before relying on them:
`auth.test` for the bot token, `apps.connections.open` for the app-level token (Socket Mode).
Whatever goes wrong (Slack unreachable, a token refused, rate limited, Slack failing) becomes a
`SlackUnusable` whose message says what happened and what to do: slack_sdk's exceptions, and
Bolt's traceback when it checks the token itself, never reach the person.
"""

from __future__ import annotations

import re
import urllib.error
from dataclasses import dataclass
from typing import Any, Literal

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

#: How a Slack check failed: Slack said no to the token ("refused"), or it could not say
#: ("unreachable", "busy": rate limited or failing), so the token is neither good nor bad.
Failure = Literal["refused", "unreachable", "busy"]

#: What to do when Slack refuses each token.
_FIX = {
    "SLACK_BOT_TOKEN": (
        "copy the Bot User OAuth Token (xoxb-...) from your Slack app > OAuth & Permissions "
        "into SLACK_BOT_TOKEN (reinstall the app to the workspace if it was removed)"
    ),
    "SLACK_APP_TOKEN": (
        "create an App-Level Token with the connections:write scope (Slack app > Basic "
        "Information > App-Level Tokens), put it (xapp-...) in SLACK_APP_TOKEN, and check that "
        "Socket Mode is on in the app's settings"
    ),
}
#: Error codes Slack answers when it is failing, not when the request is wrong.
_SLACK_TROUBLE = {"fatal_error", "internal_error", "service_unavailable", "request_timeout"}
#: What Slack's error codes look like (`invalid_auth`, `token_revoked`).
_ERROR_CODE = re.compile(r"[a-z][a-z0-9_]*")


class SlackUnusable(Exception):
    """Slack cannot be used as configured; the message is one line: what happened, what to do."""

    def __init__(self, message: str, failure: Failure) -> None:
        super().__init__(message)
        self.failure = failure


@dataclass(frozen=True)
class BotIdentity:
    """Who the bot token belongs to, as `auth.test` says."""

    user: str
    team: str
    url: str
    #: The token's scopes (Slack's `x-oauth-scopes` header); None when Slack did not say.
    scopes: frozenset[str] | None = None


def api_url(slack_api_url: str | None) -> str | None:
    """`SLACK_API_URL` as WebClient's `base_url` (which must end with a slash), or None."""
    return slack_api_url.rstrip("/") + "/" if slack_api_url else None


def bot_identity(client: WebClient) -> BotIdentity:
    """Ask Slack whose the client's bot token is (`auth.test`); SlackUnusable if it cannot say
    or refuses the token."""
    try:
        answer = client.auth_test()
    except Exception as exc:
        raise unusable(exc, "SLACK_BOT_TOKEN", "auth.test", client.base_url) from None
    return BotIdentity(
        user=str(answer.get("user") or answer.get("user_id") or "?"),
        team=str(answer.get("team") or answer.get("team_id") or "?"),
        url=str(answer.get("url") or ""),
        scopes=_scopes(answer.headers or {}),
    )


def _scopes(headers: dict[str, Any]) -> frozenset[str] | None:
    said = next((str(v) for k, v in headers.items() if k.lower() == "x-oauth-scopes"), None)
    return None if said is None else frozenset(s.strip() for s in said.split(",") if s.strip())


def check_app_token(client: WebClient, app_token: str) -> None:
    """Ask Slack for a Socket Mode URL with the app-level token, as `querybot run` does when it
    connects; the URL is left unused (Slack lets it expire). SlackUnusable if Slack refuses."""
    try:
        client.apps_connections_open(app_token=app_token)
    except Exception as exc:
        raise unusable(exc, "SLACK_APP_TOKEN", "apps.connections.open", client.base_url) from None


def unusable(exc: Exception, variable: str, method: str, where: str) -> SlackUnusable:
    """`exc`, raised by a Slack call with `variable`'s token, as one line. An exception other
    than SlackApiError means no answer came (connection refused, DNS, timeout, TLS): Slack is
    unreachable at `where`, and the reason is named so nothing is hidden."""
    if not isinstance(exc, SlackApiError):
        return SlackUnusable(
            f"Slack cannot be reached at {where} ({_reason(exc)}): check this machine's network "
            "connection, proxy and firewall (and SLACK_API_URL if you set it), then try again.",
            "unreachable",
        )
    status = exc.response.status_code
    error = str(exc.response.get("error") or "")
    if status == 429 or error == "ratelimited":
        wait = _header(exc, "Retry-After") or "60"
        return SlackUnusable(
            f"Slack is rate-limiting {method} (it asks to wait {wait} s before trying again): "
            "wait that long, then try again.",
            "busy",
        )
    if status < 500 and not _ERROR_CODE.fullmatch(error):
        # slack_sdk's words for an answer that is not Slack's JSON (a proxy's sign-in page)
        what = " ".join(error.split())[:100] or f"HTTP {status}"
        return SlackUnusable(
            f"what answered {method} at {where} is not Slack ({what}): check SLACK_API_URL "
            "and any proxy between this machine and Slack, then try again.",
            "unreachable",
        )
    if status >= 500 or error in _SLACK_TROUBLE:
        said = f"{error} (HTTP {status})" if _ERROR_CODE.fullmatch(error) else f"HTTP {status}"
        return SlackUnusable(
            f"Slack answered {method} with {said}: Slack is having trouble; "
            "see https://slack-status.com and try again in a few minutes.",
            "busy",
        )
    return SlackUnusable(f"Slack refused {variable} ({error}): {_FIX[variable]}.", "refused")


def _reason(exc: BaseException) -> str:
    """What went wrong, e.g. `gaierror: [Errno -2] Name or service not known`."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, str):
        return reason
    text = str(reason).strip()
    return f"{type(reason).__name__}: {text}" if text else type(reason).__name__


def _header(exc: SlackApiError, name: str) -> str | None:
    headers = exc.response.headers or {}
    return next((str(v) for k, v in headers.items() if k.lower() == name.lower()), None)
