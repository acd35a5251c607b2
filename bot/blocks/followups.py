"""Suggested follow-up questions as buttons under an answer (the follow-ups strategy makes them).

Each button carries the answer's proposal id and the question (Slack allows 2,000 characters in
a value), so a click needs no lookup to know what to ask and where: the bot finds the thread from
the proposal. Action ids are numbered, unique within the block.
"""

from __future__ import annotations

import json

from slack_sdk.models.blocks import ButtonElement

from bot.blocks.base import Message, context, cut, escaped, finish, mention

FOLLOW_UP_PREFIX = "follow_up:"
#: Button labels: Slack shows at most 75 characters.
LABEL = 75
VALUE = 2000


def follow_up_buttons(proposal_id: str, questions: list[str]) -> list[ButtonElement]:
    buttons = []
    # JSON escaping at most doubles a character (a quote, a backslash)
    budget = (VALUE - len(json.dumps({"p": proposal_id, "q": ""}))) // 2
    for number, question in enumerate(questions[:3]):
        value = json.dumps({"p": proposal_id, "q": cut(question, budget)}, ensure_ascii=False)
        buttons.append(
            ButtonElement(
                text=cut(question, LABEL), action_id=f"{FOLLOW_UP_PREFIX}{number}", value=value
            )
        )
    return buttons


def follow_up_of(value: str) -> tuple[str, str] | None:
    """(proposal id, question) from a follow-up button's value; None when it is not one."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return None
    if not isinstance(parsed, dict):
        return None
    pid, question = parsed.get("p"), parsed.get("q")
    if not isinstance(pid, str) or not isinstance(question, str) or not question.strip():
        return None
    return pid, question.strip()


def asked(user: str, question: str) -> Message:
    """The thread's note when someone clicks a follow-up: who asked what."""
    text = f"{mention(user)} asked: {escaped(question, 1000)}"
    return finish(text, [context(f":speech_balloon: {text}")], mrkdwn=True)
