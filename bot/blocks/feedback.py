"""Feedback on an answer: Slack's thumbs up/down under it, the offer to keep a liked answer as a
verified example, and the modal asking what was wrong with a disliked one.

Each button's value names the rating and the answer's proposal id, so a click needs no lookup to
know what was rated; the modal carries only the proposal id (its `private_metadata`).
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextActionsBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    InputBlock,
    PlainTextInputElement,
)
from slack_sdk.models.views import View

from bot.blocks.base import Message, context, escaped, finish, section
from bot.store.feedback import DOWN, UP

FEEDBACK_ACTION = "answer_feedback"
VERIFY_ACTION = "verify_example"
WRONG_VIEW = "answer_wrong"
WRONG_BLOCK = "answer_wrong_block"
WRONG_INPUT = "answer_wrong_input"
#: Characters a person may write about what was wrong.
REASON_TEXT = 1000


def feedback_buttons(proposal_id: str) -> ContextActionsBlock:
    """Thumbs up and down for the answer to `proposal_id`."""
    return ContextActionsBlock(
        elements=[
            FeedbackButtonsElement(
                action_id=FEEDBACK_ACTION,
                positive_button=FeedbackButtonObject(
                    text="Good answer",
                    accessibility_label="This answer is right",
                    value=f"{UP}:{proposal_id}",
                ),
                negative_button=FeedbackButtonObject(
                    text="Wrong answer",
                    accessibility_label="Something is wrong with this answer",
                    value=f"{DOWN}:{proposal_id}",
                ),
            )
        ]
    )


def feedback_of(value: str) -> tuple[str, str] | None:
    """(rating, proposal id) from a feedback button's value; None when it is not one."""
    rating, _, pid = value.partition(":")
    return (rating, pid) if rating in (UP, DOWN) and pid else None


def verify_offer(proposal_id: str, question: str) -> Message:
    """To the person who liked an answer: keep it as a verified example?"""
    text = (
        f"Thanks. Keep _{escaped(question, 500)}_ and its SQL as a verified example? Later "
        "questions like it are shown it, and `querybot eval --from-feedback` turns verified "
        "examples into a golden set."
    )
    button = ButtonElement(
        text="Save as verified example", action_id=VERIFY_ACTION, value=proposal_id, style="primary"
    )
    return finish(
        "Keep this answer as a verified example?", [section(text), ActionsBlock(elements=[button])]
    )


#: Said to the person who saved a verified example.
VERIFIED = (
    "Saved as a verified example, verified by you: later questions like it are shown it, and "
    "`querybot eval --from-feedback` puts it in a golden set."
)
#: Said to the person who liked an answer that cannot become an example.
COUNTED = "Thanks: your thumbs up is counted."


def wrong_modal(proposal_id: str, question: str) -> dict[str, Any]:
    """The modal asking what was wrong with the answer to `proposal_id`."""
    view = View(
        type="modal",
        callback_id=WRONG_VIEW,
        title="What was wrong?",
        submit="Send",
        close="Cancel",
        private_metadata=proposal_id,
        blocks=[
            context(f"The question: {escaped(question, 500)}"),
            InputBlock(
                block_id=WRONG_BLOCK,
                label="What was wrong with the answer?",
                hint="Wrong table, wrong filter, wrong numbers... The team reviews it.",
                element=PlainTextInputElement(
                    action_id=WRONG_INPUT, multiline=True, max_length=REASON_TEXT
                ),
            ),
        ],
    )
    return view.to_dict()


def noted(remembered: bool) -> Message:
    """Thanks for saying what was wrong; `remembered`: the thread's failure memory has it."""
    text = ":memo: Thanks: noted for review."
    if remembered:
        text += " I will avoid this SQL for the rest of the thread; ask again here for another try."
    return finish("Thanks: noted for review", [context(text)])
