"""The doctor's Slack section: the tokens set (a placeholder is not), of the right kind, and
accepted by Slack. A Slack that cannot be reached, or cannot answer, leaves them unchecked (`?`):
the doctor cannot call them fine."""

from __future__ import annotations

import logging

from slack_sdk import WebClient

from bot.doctor.report import Section
from bot.pane_setup import pane_missing
from bot.settings import Settings
from bot.slack_check import SlackUnusable, api_url, bot_identity, check_app_token

#: Seconds each Slack request may take.
SLACK_TIMEOUT_S = 10
#: The doctor's client logs nowhere: slack_sdk logs each failed request at ERROR, which the
#: report already says once, in words.
_QUIET = logging.getLogger("querybot.doctor.slack")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


def check_slack(settings: Settings, *, timeout_s: int = SLACK_TIMEOUT_S) -> Section:
    """The form of each token, then Slack's word on them (`auth.test` for the bot token,
    `apps.connections.open` for the app-level one, at `SLACK_API_URL` when set)."""
    section = Section("slack")
    token, app = settings.slack_bot_token, settings.slack_app_token
    if not token:
        unset = settings.unset("SLACK_BOT_TOKEN")
        section.fail(f"{unset}: Slack app > OAuth & Permissions > Bot User OAuth Token (xoxb-...).")
    elif not token.startswith("xoxb-"):
        section.fail("SLACK_BOT_TOKEN does not start with xoxb-: use the Bot User OAuth Token.")
    if app and not app.startswith("xapp-"):
        section.fail("SLACK_APP_TOKEN does not start with xapp-: use an App-Level Token.")
    if settings.slack_signing_secret:
        section.ok("SLACK_SIGNING_SECRET is set: `querybot run --http` can verify requests")
    elif not app:
        placeholder = "SLACK_APP_TOKEN" in settings.placeholders
        section.fail(
            "neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (--http) is set"
            + f" ({settings.unset('SLACK_APP_TOKEN')})" * placeholder
            + ": set the one for how you run the bot."
        )
    if token.startswith("xoxb-"):
        _ask_slack(settings, section, timeout_s)
    if not token:  # unset or a placeholder: perhaps querybot is used from the terminal only
        section.note(
            "for querybot in the terminal only (`querybot ask`, `querybot eval`), which needs no "
            "Slack, check the rest with `querybot doctor --no-slack`"
        )
    return section


def _ask_slack(settings: Settings, section: Section, timeout_s: int) -> None:
    """A refusal fails; an unreachable, rate-limited or failing Slack leaves the tokens
    unchecked."""
    base_url = api_url(settings.slack_api_url)
    client = WebClient(
        token=settings.slack_bot_token,
        base_url=base_url or WebClient.BASE_URL,
        timeout=timeout_s,
        logger=_QUIET,
    )
    app = settings.slack_app_token if settings.slack_app_token.startswith("xapp-") else ""
    try:
        who = bot_identity(client)
        section.ok(
            f"Slack accepts SLACK_BOT_TOKEN: bot @{who.user} in {who.team} {who.url}".strip()
        )
        missing = pane_missing(who.scopes)
        if missing:
            section.fail(missing)
    except SlackUnusable as exc:
        if exc.failure != "refused":
            tokens = "SLACK_BOT_TOKEN" + " and SLACK_APP_TOKEN" * bool(app)
            section.unchecked(f"could not check {tokens} with Slack: {exc}")
            return
        section.fail(str(exc))
    if not app:
        return
    try:
        check_app_token(client, app)
        section.ok("Slack accepts SLACK_APP_TOKEN: `querybot run` can connect in Socket Mode")
    except SlackUnusable as exc:
        if exc.failure == "refused":
            section.fail(str(exc))
        else:
            section.unchecked(f"could not check SLACK_APP_TOKEN with Slack: {exc}")
