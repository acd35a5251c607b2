"""The "How did you get this?" button on an answer and the account it opens (the agent's
`explain` builds the steps from the thread's state; this module only renders them)."""

from __future__ import annotations

from slack_sdk.models.blocks import Block, ButtonElement

from agent.explain import Explanation
from agent.state import Step
from bot.blocks.base import (
    CONTEXT_TEXT,
    MAX_BLOCKS,
    SECTION_TEXT,
    Message,
    context,
    escape,
    escaped,
    finish,
    mention,
    section,
)

EXPLAIN_ACTION = "explain_answer"
#: Steps listed in one account (a question that went round many times shows its last ones).
MAX_STEPS = 40

UNKNOWN = (
    "I have no record of how this answer was made any more (the conversation was reset). "
    "Ask the question again to get a fresh one."
)


def explain_button(proposal_id: str) -> ButtonElement:
    """The button on an answer; it carries only the proposal id the answer ran."""
    return ButtonElement(text="How did you get this?", action_id=EXPLAIN_ACTION, value=proposal_id)


def _line(number: int, step: Step) -> str:
    text = escaped(step["text"], SECTION_TEXT - 20)
    by = step.get("by")
    if by:
        text = text.replace(escape(by), mention(by))
    return f"{number}. {text}"


def explanation(account: Explanation) -> Message:
    """The steps of one question as a numbered list, with a one-line summary first."""
    steps = list(account.steps)
    skipped = max(0, len(steps) - MAX_STEPS)
    lines = [_line(n, s) for n, s in enumerate(steps[skipped:], start=skipped + 1)]
    blocks: list[Block] = [
        section(f"*How I got this* — {escaped(account.summary(), SECTION_TEXT - 30)}")
    ]
    if skipped:
        first = "The first step is" if skipped == 1 else f"The first {skipped:,} steps are"
        blocks.append(context(f"{first} left out."))
    chunk: list[str] = []
    for line in lines:
        if chunk and len("\n".join([*chunk, line])) > SECTION_TEXT:
            blocks.append(section("\n".join(chunk)))
            chunk = []
        chunk.append(line)
    if chunk:
        blocks.append(section("\n".join(chunk)))
    blocks = blocks[: MAX_BLOCKS - 1]
    blocks.append(
        context(escaped("Read from this conversation's record; no model call.", CONTEXT_TEXT))
    )
    return finish(f"How I got this: {account.summary()}", blocks)


def unknown_explanation() -> Message:
    return finish(UNKNOWN, [section(f":grey_question: {escaped(UNKNOWN, SECTION_TEXT - 20)}")])
