"""mrkdwn as Slack reads it: a `<` or `>` that is not part of a Slack control sequence (`<@U123>`,
`<#C1>`, `<!here>`, `<https://…|…>`), or an `&` that does not start `&amp;`, `&lt;`, `&gt;`, is a
problem (Slack would not refuse it, but it would garble the message)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_CONTROL = re.compile(
    r"<(?:@[UW][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^<>]*)?|![a-z]+(?:\^[^<>]*)?(?:\|[^<>]*)?"
    r"|(?:https?://|mailto:)[^|<>\s]+(?:\|[^<>]*)?)>"
)
_ENTITY = re.compile(r"&(?:amp|lt|gt);")


def mrkdwn_problems(text: str, blocks: list[dict[str, Any]]) -> list[str]:
    """Unescaped `<`, `>`, `&` in the message's text and its blocks' mrkdwn texts."""
    pieces = [("text", text)]
    for i, block in enumerate(blocks):
        pieces += [(f"block {i} {where}", piece) for where, piece in _mrkdwn_texts(block)]
    problems = []
    for where, piece in pieces:
        bare = _ENTITY.sub("", _CONTROL.sub("", piece))
        for ch in "<>&":
            if ch in bare:
                at = bare.index(ch)
                near = bare[max(0, at - 30) : at + 30]
                problems.append(f"{where}: stray {ch!r} near {near!r}")
    return problems


def _mrkdwn_texts(block: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every mrkdwn text object inside a block, with where it sits."""
    if isinstance(block, dict):
        if block.get("type") == "mrkdwn" and isinstance(block.get("text"), str):
            yield where or "text", block["text"]
        for key, value in block.items():
            yield from _mrkdwn_texts(value, f"{where}.{key}" if where else key)
    elif isinstance(block, list):
        for i, value in enumerate(block):
            yield from _mrkdwn_texts(value, f"{where}[{i}]")
