"""Where the bot answers: `QUERYBOT_CHANNELS` (an allow-list; empty means every channel it is in),
never in channels shared with another organisation (Slack Connect), where results would leave
the workspace.

Events say whether their channel is externally shared (`is_ext_shared_channel` on the envelope);
clicks do not, so then `conversations.info` is asked (needs `channels:read` / `groups:read`) and
its answer cached. Direct messages are not channels: the allow-list does not apply to them, the
sharing rule does.
"""

from __future__ import annotations

import logging
import threading
import time

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)

#: How long a channel's sharing state is trusted before asking Slack again.
SHARED_TTL_S = 600.0

SHARED = (
    "I do not answer in channels shared with other organisations: query results would leave "
    "this workspace. Ask me in an internal channel or a direct message."
)


def not_listed(allowed: frozenset[str]) -> str:
    listed = ", ".join(f"<#{c}>" for c in sorted(allowed)[:10])
    more = " and others" if len(allowed) > 10 else ""
    return f"I only answer data questions in {listed}{more}. Ask me there, or in a direct message."


def is_direct(channel: str) -> bool:
    return channel.startswith("D")


class ChannelRules:
    """Decides whether the bot may answer in a channel."""

    def __init__(self, client: WebClient, allowed: frozenset[str] = frozenset()) -> None:
        self.client = client
        self.allowed = allowed
        self._lock = threading.Lock()
        self._shared: dict[str, tuple[float, bool]] = {}

    def refusal(self, channel: str, ext_shared: bool | None = None) -> str | None:
        """None when the bot may answer in `channel`, else a polite refusal (mrkdwn).

        `ext_shared` is the event envelope's `is_ext_shared_channel`; None when unknown.
        """
        if self.allowed and not is_direct(channel) and channel not in self.allowed:
            return not_listed(self.allowed)
        shared = ext_shared if ext_shared is not None else self._is_shared(channel)
        return SHARED if shared else None

    def _is_shared(self, channel: str) -> bool:
        now = time.monotonic()
        with self._lock:
            cached = self._shared.get(channel)
        if cached and now - cached[0] < SHARED_TTL_S:
            return cached[1]
        try:
            info = self.client.conversations_info(channel=channel).get("channel") or {}
        except SlackApiError:
            log.exception("Could not read channel %s; treating it as shared", channel)
            return True  # fail closed
        shared = bool(info.get("is_ext_shared")) or (
            bool(info.get("is_shared")) and not info.get("is_org_shared")
        )
        with self._lock:
            self._shared[channel] = (now, shared)
        return shared
