"""Checks and views of a message the bot builds (bot.blocks), shared by the block tests."""

from __future__ import annotations

import json

from bot import blocks
from bot.blocks import Message
from tests.support.standin import check_blocks, mrkdwn_problems


def valid(message: Message) -> Message:
    """`message`, once its blocks are ones Slack accepts, its mrkdwn is sound and its fallback
    text (the notification) fits."""
    check_blocks(message.blocks)
    assert not mrkdwn_problems(message.text, message.blocks)
    assert len(message.text) <= blocks.FALLBACK_TEXT
    return message


def texts(message: Message) -> str:
    """Every block of `message` as one JSON text, to search."""
    return json.dumps(message.blocks, ensure_ascii=False)


def sections(message: Message) -> list[str]:
    """The text of each section block, in order."""
    return [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
