"""A person's side of a conversation with the bot: ask, follow up, click, and read the thread."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.blocks import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION
from bot.blocks.messages import card_of
from bot.blocks.views import EDIT_BLOCK, EDIT_INPUT
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess
from tests.support.standin import Posted, SlackStandin


@dataclass(frozen=True)
class Thread:
    channel: str
    ts: str


def ask(
    bot: BotProcess,
    text: str,
    *,
    thread: Thread | None = None,
    user: str = payloads.ALICE,
    channel: str = "",
) -> Thread:
    """Mention the bot with `text`: top-level in `channel` (default: a new one), or inside
    `thread`."""
    channel = thread.channel if thread else channel or payloads.new_channel()
    body = payloads.mention(channel, text, user=user, thread_ts=thread.ts if thread else None)
    bot.send_event(body)
    return thread or Thread(channel, body["event"]["ts"])


def reply(bot: BotProcess, thread: Thread, text: str, *, user: str = payloads.ALICE) -> None:
    """A reply in the thread without a mention."""
    bot.send_event(payloads.message(thread.channel, text, thread_ts=thread.ts, user=user))


def click(bot: BotProcess, posted: Posted, *, approve: bool, user: str = payloads.BOB) -> None:
    action = APPROVE_ACTION if approve else REJECT_ACTION
    bot.send_click(payloads.click(posted, action, user=user))


def open_edit(bot: BotProcess, slack: SlackStandin, posted: Posted, *, user: str) -> dict:
    """Press Edit SQL on `posted`; return the modal the bot opened for that click."""
    payload = payloads.click(posted, EDIT_ACTION, user=user)
    bot.send_click(payload)
    opened = slack.wait_for(
        lambda: [v for v in slack.opened_views if v["trigger_id"] == payload["trigger_id"]],
        what="the Edit SQL modal",
    )
    return opened[0]["view"]


def submit_edit(bot: BotProcess, view: dict, sql: str, *, user: str) -> dict:
    """Submit the Edit SQL modal `view` with `sql` typed in; returns the ack's answer."""
    values = {EDIT_BLOCK: {EDIT_INPUT: sql}}
    return bot.send_click(payloads.view_submission(view, values, user=user))


def wait_message(
    slack: SlackStandin,
    thread: Thread,
    check: Callable[[Posted], bool],
    what: str,
    *,
    timeout: float = 30,
) -> Posted:
    """The first message of the thread for which `check` holds, once there is one."""

    def found(messages: list[Posted]) -> Posted | None:
        return next((m for m in messages if check(m)), None)

    return slack.wait_thread(thread.channel, thread.ts, found, timeout=timeout, what=what)


def proposal(slack: SlackStandin, thread: Thread, *, skip: int = 0) -> Posted:
    """The thread's proposal with buttons (skipping the first `skip` messages of the thread)."""

    def found(messages: list[Posted]) -> Posted | None:
        return next((m for m in messages[skip:] if APPROVE_ACTION in m.action_values()), None)

    return slack.wait_thread(thread.channel, thread.ts, found, what="a proposal with buttons")


def proposal_id(posted: Posted) -> str:
    """The proposal `posted`'s decision buttons name (their value also names the SQL's hash)."""
    return card_of(posted.action_values()[APPROVE_ACTION])[0]


def result(slack: SlackStandin, thread: Thread) -> Posted:
    """The thread's result message (the one naming its sources)."""
    return wait_message(slack, thread, lambda m: "Sources:" in m.all_text(), "a result")


def values(posted: Posted) -> dict[str, str]:
    """A one-row answer as a person reads it, label -> value, from the "Label: *value*" lines
    of its first section; {} when the answer has none (its rows are a table)."""
    first = next(b for b in posted.blocks if b["type"] == "section")["text"]["text"]
    found = (re.fullmatch(r"(.+?): \*(.*)\*", line) for line in first.splitlines())
    return {m[1]: m[2] for m in found if m}


def has_text(needle: str) -> Callable[[Posted], bool]:
    return lambda m: needle in m.all_text()


def approved(bot: BotProcess, slack: SlackStandin, thread: Thread) -> Posted:
    """Approve the thread's proposal waiting for a click, and wait until the decision's job is
    done (result and files posted); the proposal as it was before the click."""
    card = proposal(slack, thread)
    click(bot, card, approve=True)
    bot.wait_log(f"Decision on proposal {proposal_id(card)} done: answer")
    return card


def ask_approved(bot: BotProcess, slack: SlackStandin, question: str) -> tuple[Thread, Posted]:
    """Ask `question` in a new thread and approve its proposal (`approved`); the thread and the
    proposal."""
    thread = ask(bot, question)
    return thread, approved(bot, slack, thread)


def shown_sql(message: Any) -> str:
    """The SQL as a person reads it in `message` (posted, or built by bot.blocks): its code
    blocks' text, joined and unescaped."""
    code = [
        b["text"]["text"].removeprefix("```\n").removesuffix("\n```")
        for b in message.blocks
        if b["type"] == "section" and b["text"]["text"].startswith("```")
    ]
    text = "\n".join(code)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
