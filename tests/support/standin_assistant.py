"""The stand-in's AI app methods: `assistant.threads.setStatus`, `.setTitle` and
`.setSuggestedPrompts`, with the scopes they need and the threads they may name.

Slack refuses a status over 50 characters, more than 10 loading messages or one over 50
characters (`invalid_arguments`), a `thread_ts` that is no thread root the app can see
(`invalid_thread_ts`: a reply's ts, a message that never reached the app), and a token without
the method's scope (`missing_scope`; setStatus takes `chat:write` or the older
`assistant:write`). The app sees the messages it posted and the people's messages delivered to
it (`saw`). Every status set is kept in `statuses`, so a test can read the sequence a thread
showed, its clearing (`""`) included; posting in a thread clears its status, as in Slack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.standin_records import Refused

MAX_STATUS = 50
MAX_LOADING_MESSAGES = 10
MAX_PROMPTS = 4
MANIFEST = Path(__file__).resolve().parents[2] / "manifest.yaml"
#: The scopes each method modelled here accepts (any one of them).
METHOD_SCOPES = {
    "assistant.threads.setStatus": {"chat:write", "assistant:write"},
    "assistant.threads.setTitle": {"assistant:write"},
    "assistant.threads.setSuggestedPrompts": {"assistant:write"},
}
_TS = re.compile(r"^\d+\.\d+$")


def manifest_scopes() -> set[str]:
    """The bot scopes manifest.yaml asks for: what an app installed from it is granted."""
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return set(manifest["oauth_config"]["scopes"]["bot"])


@dataclass(frozen=True)
class StatusSet:
    """One accepted `assistant.threads.setStatus` call."""

    channel: str
    thread_ts: str
    status: str
    loading_messages: tuple[str, ...]


class AssistantMethods:
    """Mixed into `SlackStandin`, whose `__init__` sets up the state these methods use; each runs
    under the stand-in's lock."""

    def saw(self, channel: str, ts: str, thread_ts: str | None = None) -> None:
        """A person's message that reached the app (an event delivered to it)."""
        with self._lock:
            self._seen[(channel, ts)] = thread_ts or None

    def saw_event(self, event: dict[str, Any]) -> None:
        """The message of an Events API event, if it carries one; the root of an assistant
        thread a person started (Slack posts it as theirs)."""
        if event.get("channel") and event.get("ts"):
            self.saw(str(event["channel"]), str(event["ts"]), event.get("thread_ts"))
        started = event.get("assistant_thread") or {}
        if started.get("channel_id") and started.get("thread_ts"):
            self.saw(str(started["channel_id"]), str(started["thread_ts"]))

    def revoke_scope(self, scope: str) -> None:
        """Act like an app installed without `scope` (an older manifest, an older workspace)."""
        with self._lock:
            self.scopes.discard(scope)
            self._revoked.add(scope)

    def grant_scope(self, scope: str) -> None:
        with self._lock:
            self.scopes.add(scope)
            self._revoked.discard(scope)

    def statuses_in(self, channel: str, thread_ts: str) -> list[str]:
        """Every status set in the thread, oldest first ("" is a clearing)."""
        with self._lock:
            return [
                s.status for s in self.statuses if (s.channel, s.thread_ts) == (channel, thread_ts)
            ]

    def status_now(self, channel: str, thread_ts: str) -> str:
        """What the thread shows now ("" for nothing): the last status, unless cleared by a
        message posted in the thread since."""
        with self._lock:
            return self._shown.get((channel, thread_ts), "")

    def _check_scope(self, method: str) -> None:
        accepted = METHOD_SCOPES.get(method)
        if accepted is not None and not accepted & self.scopes:
            # a scope a test revoked is its own doing; one the manifest lacks is the bot's
            injected = bool(accepted & self._revoked)
            needs = f"{method} needs one of {sorted(accepted)}"
            raise Refused("missing_scope", needs, injected=injected)

    def _posted_in(self, channel: str, thread_ts: str | None) -> None:
        """A message posted in a thread clears the status it showed."""
        if thread_ts:
            self._shown.pop((channel, thread_ts), None)

    def _thread_root(self, params: dict[str, Any], *, required: bool = True) -> tuple[str, str]:
        channel = str(params.get("channel_id") or "")
        thread_ts = str(params.get("thread_ts") or "")
        if not channel:
            raise Refused("channel_not_found", "no channel_id")
        if not thread_ts and not required:
            return channel, ""
        if not _TS.match(thread_ts):
            raise Refused("invalid_thread_ts", f"thread_ts {thread_ts!r} is not a message ts")
        posted = self.messages.get((channel, thread_ts))
        if posted is not None:
            parent = posted.thread_ts
        elif (channel, thread_ts) in self._seen:
            parent = self._seen[(channel, thread_ts)]
        elif any(m.channel == channel and m.thread_ts == thread_ts for m in self.messages.values()):
            parent = None  # a root the app replied under
        else:
            raise Refused("invalid_thread_ts", f"no message {channel}/{thread_ts} the app saw")
        if parent and parent != thread_ts:
            raise Refused("invalid_thread_ts", f"{thread_ts} is a reply in {parent}, not a root")
        return channel, thread_ts

    def _set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        status = params.get("status")
        if not isinstance(status, str):
            raise Refused("invalid_arguments", 'status is required ("" clears it)')
        if len(status) > MAX_STATUS:
            raise Refused("invalid_arguments", f"status of {len(status)} characters")
        loading = params.get("loading_messages") or []
        if not isinstance(loading, list) or not all(isinstance(m, str) for m in loading):
            raise Refused("invalid_arguments", "loading_messages is not a list of strings")
        if len(loading) > MAX_LOADING_MESSAGES:
            raise Refused("invalid_arguments", f"{len(loading)} loading messages")
        if any(len(m) > MAX_STATUS or not m for m in loading):
            raise Refused("invalid_arguments", "a loading message empty or over 50 characters")
        channel, thread_ts = self._thread_root(params)
        self.statuses.append(StatusSet(channel, thread_ts, status, tuple(loading)))
        self._shown[(channel, thread_ts)] = status
        return {"ok": True}

    def _set_title(self, params: dict[str, Any]) -> dict[str, Any]:
        if not str(params.get("title") or ""):
            raise Refused("invalid_arguments", "no title")
        self._thread_root(params)
        return {"ok": True}

    def _set_suggested_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        self._thread_root(params, required=False)  # the agent view needs no thread
        prompts = params.get("prompts")
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
            raise Refused("invalid_arguments", f"prompts must be 1 to {MAX_PROMPTS} objects")
        for prompt in prompts:
            if not isinstance(prompt, dict) or set(prompt) != {"title", "message"}:
                raise Refused("invalid_arguments", "a prompt is {title, message}")
            if not all(isinstance(v, str) and v for v in prompt.values()):
                raise Refused("invalid_arguments", "a prompt's title and message are text")
        self.suggested_prompts.append(dict(params))
        return {"ok": True}
