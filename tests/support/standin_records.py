"""What the Slack stand-in keeps and answers: its workspace's ids, the calls it received, the
messages (with their metadata) and files as they stand, and `Refused`, the error a call Slack
would refuse raises."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

TEAM_ID = "T0TEST"
BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"


@dataclass
class Call:
    """One Web API call as the stand-in received and answered it."""

    method: str
    params: dict[str, Any]
    token: str
    #: The JSON answer (`ok`, `error`, ...).
    answer: dict[str, Any]
    status: int = 200
    #: Why a call was refused, in words, for assertion messages.
    detail: str = ""
    #: Refused on a test's request (`rate_limit`, `refuse_block_type`), not for what was sent.
    injected: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.answer.get("ok"))


@dataclass
class Upload:
    """A file shared with `files.completeUploadExternal`."""

    file_id: str
    filename: str
    title: str
    channel: str
    thread_ts: str | None
    content: bytes


@dataclass(frozen=True)
class SharedBody:
    """What a shared file's download URL serves."""

    file_id: str
    content: bytes
    mimetype: str
    send_length: bool


@dataclass
class Posted:
    """A message as it stands now in the stand-in's workspace."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str
    blocks: list[dict[str, Any]]
    #: Every earlier version (text, blocks) before the latest chat.update.
    history: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    #: The message metadata (`event_type`, `event_payload`) it was posted or updated with.
    metadata: dict[str, Any] | None = None

    def all_text(self) -> str:
        """The text and every text inside the blocks, joined (for simple content checks)."""
        return "\n".join([self.text, *_texts(self.blocks)])

    def action_values(self) -> dict[str, str]:
        """action_id -> value of every button in the message."""
        return {
            el["action_id"]: el.get("value", "")
            for block in self.blocks
            if block["type"] == "actions"
            for el in block["elements"]
        }

    def feedback_values(self) -> dict[str, str]:
        """ "positive_button"/"negative_button" -> value of the message's feedback buttons."""
        return {
            side: el[side]["value"]
            for block in self.blocks
            if block["type"] == "context_actions"
            for el in block["elements"]
            if el["type"] == "feedback_buttons"
            for side in ("positive_button", "negative_button")
        }

    def table(self) -> list[list[str]] | None:
        """The table block's cells as text, header row first; None without a table."""
        for block in self.blocks:
            if block["type"] == "table":
                return [[cell.get("text", "") for cell in row] for row in block["rows"]]
        return None


class Refused(Exception):
    """A call Slack would refuse: `error` is Slack's code, the message says why."""

    def __init__(self, error: str, detail: str, *, injected: bool = False) -> None:
        super().__init__(detail)
        self.error = error
        self.injected = injected


def _texts(value: Any) -> Iterator[str]:
    """Every `text` string inside blocks, whatever the object type."""
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            yield value["text"]
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
