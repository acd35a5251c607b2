"""The App Home tab: what the bot does, the person's recent questions, the proposals waiting for
their approval, and the warehouses they may ask with what each holds.

Each section is bounded (a view takes at most 100 blocks, a section 3,000 characters) and says
how many more there are ("…and 3 more") rather than growing without end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import Block, DividerBlock
from slack_sdk.models.views import View

from bot.blocks.base import escaped, mention, section
from bot.blocks.messages import EXAMPLE
from bot.blocks.schedules import NO_SCHEDULES, schedule_blocks
from bot.schedules.records import Schedule

#: Recent questions and waiting proposals shown (each line up to about 450 characters).
HOME_ITEMS = 5
#: Warehouses shown, and tables listed across all of them.
HOME_WAREHOUSES = 10
HOME_TABLES = 40


@dataclass(frozen=True)
class Asked:
    """One of the person's recent questions: what it came to, and its card's link ("" when
    Slack gave none)."""

    question: str
    outcome: str
    link: str = ""


@dataclass(frozen=True)
class Waiting:
    """A proposal the person may approve: its question, who asked, its card's link."""

    question: str
    requested_by: str
    link: str = ""


@dataclass(frozen=True)
class Holding:
    """A warehouse the person may ask: its name, description and tables (name, description)."""

    name: str
    description: str
    tables: tuple[tuple[str, str], ...]


def home(
    *,
    asked: Sequence[Asked],
    asked_total: int,
    waiting: Sequence[Waiting],
    waiting_total: int,
    warehouses: Sequence[Holding],
    approvers: str,
    schedules: Sequence[Schedule] | None = None,
) -> dict[str, Any]:
    """The Home tab's view. `asked` and `waiting` are the newest first, at most `HOME_ITEMS` of
    each; the totals say how many there are in all. `schedules`: the person's, with their
    buttons (None: schedules are off, and the tab says nothing of them)."""
    intro = (
        "*I answer data questions with SQL that a person approves before it runs.*\n"
        f"Mention me in a channel (`@querybot {EXAMPLE}`) or write to me here. I reply with the "
        "SQL I would run; nothing runs until someone presses *Approve*. *Edit SQL* lets you "
        f"correct it first. {approvers}"
    )
    blocks: list[Block] = [section(intro), DividerBlock(), section("*Your recent questions*")]
    lines = [
        f"• {escaped(a.question, 300)} _({escaped(a.outcome, 60)})_{_link(a.link)}"
        for a in asked[:HOME_ITEMS]
    ]
    blocks.append(section(_bounded(lines, asked_total) or "None yet."))
    blocks += [DividerBlock(), section("*Waiting for your approval*")]
    lines = [
        f"• {escaped(w.question, 300)} _(asked by {mention(w.requested_by)})_{_link(w.link)}"
        for w in waiting[:HOME_ITEMS]
    ]
    blocks.append(section(_bounded(lines, waiting_total) or "Nothing waits for you."))
    if schedules is not None:
        blocks += [DividerBlock(), section("*Your schedules*")]
        blocks += schedule_blocks(schedules, HOME_ITEMS) or [section(NO_SCHEDULES)]
    blocks += [DividerBlock(), section("*Warehouses you can ask*")]
    blocks += _warehouses(warehouses)
    return View(type="home", blocks=blocks).to_dict()


def _warehouses(warehouses: Sequence[Holding]) -> list[Block]:
    """A section per warehouse (name, description, how many tables), then its tables, at most
    `HOME_TABLES` across all of them."""
    if not warehouses:
        return [section("No tables are visible to you. Ask whoever runs querybot for access.")]
    blocks: list[Block] = []
    room = HOME_TABLES
    for held in warehouses[:HOME_WAREHOUSES]:
        count = len(held.tables)
        about = f" — {escaped(held.description, 300)}" if held.description else ""
        blocks.append(
            section(f"*{escaped(held.name, 100)}*{about}\n{count} table{'s' * (count != 1)}")
        )
        lines = [
            f"`{escaped(name, 100)}`" + (f" — {escaped(text, 150)}" if text else "")
            for name, text in held.tables[:room]
        ]
        room -= len(lines)
        if count > len(lines):
            lines.append(f"…and {count - len(lines)} more")
        for start in range(0, len(lines), 10):
            blocks.append(section("\n".join(lines[start : start + 10])))
    if len(warehouses) > HOME_WAREHOUSES:
        blocks.append(section(f"…and {len(warehouses) - HOME_WAREHOUSES} more warehouses"))
    return blocks


def _link(url: str) -> str:
    """A link to `url` (a permalink: its `&` escaped, as mrkdwn wants everywhere)."""
    return f" <{url.replace('&', '&amp;')}|open>" if url else ""


def _bounded(lines: list[str], total: int) -> str:
    if total > len(lines):
        lines = [*lines, f"…and {total - len(lines)} more"]
    return "\n".join(lines)
