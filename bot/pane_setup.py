"""What a Slack app created from an older manifest lacks for the conversation pane, said once
in words: the scope, the event and the feature manifest.yaml now asks for."""

from __future__ import annotations

from collections.abc import Collection

#: The scope suggested prompts need (assistant.threads.setSuggestedPrompts).
PANE_SCOPE = "assistant:write"

#: What to add, as a person does it in the app's settings (or by pasting manifest.yaml again).
ADD = (
    "add the assistant:write bot scope (OAuth & Permissions), turn on the agent view (Agents & AI "
    "Apps, or features.agent_view in the manifest) with the app_home_opened event, then reinstall "
    "the app; pasting manifest.yaml again does all three"
)


def pane_missing(scopes: Collection[str] | None) -> str | None:
    """What the app lacks for the conversation pane, given the bot token's `scopes` (None: Slack
    did not say, so nothing is claimed); None when it lacks nothing that can be seen."""
    if scopes is None or PANE_SCOPE in scopes:
        return None
    return (
        "The Slack app was created from an older manifest: direct messages are answered, but "
        f"the messages tab shows no suggested prompts. To get them, {ADD}."
    )
