"""manifest.yaml asks for exactly what the bot uses, and for what it listens to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MANIFEST = Path(__file__).resolve().parents[1] / "manifest.yaml"


def manifest() -> dict[str, Any]:
    return yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))


def test_scopes_are_the_least_the_bot_needs() -> None:
    scopes = set(manifest()["oauth_config"]["scopes"]["bot"])
    # mentions; posting, updating and ephemeral notes; thread replies in public and private
    # channels (message.channels / message.groups need the matching history scope); approver
    # user groups; people's email addresses for run_as rules (users.info); whether a channel is
    # shared with another organisation; direct messages; CSV and chart uploads; files people
    # share in a thread; the messages tab's suggested prompts
    assert scopes == {
        "app_mentions:read",
        "chat:write",
        "assistant:write",
        "channels:history",
        "groups:history",
        "usergroups:read",
        "users:read",
        "users:read.email",
        "channels:read",
        "groups:read",
        "im:history",
        "files:write",
        "files:read",
    }


def test_events_interactivity_and_socket_mode() -> None:
    settings = manifest()["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
        "app_home_opened",
    }
    assert manifest()["features"]["app_home"]["home_tab_enabled"] is True
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True
    assert manifest()["features"]["bot_user"]["display_name"] == "querybot"


def test_the_agent_view_is_on() -> None:
    # the messages tab is the conversation pane; no assistant_view (the older split pane, whose
    # assistant_thread_started the agent view replaces with app_home_opened)
    features = manifest()["features"]
    assert features["agent_view"]["agent_description"]
    assert "assistant_view" not in features
    assert features["app_home"]["messages_tab_enabled"] is True
    assert features["app_home"]["messages_tab_read_only_enabled"] is False
