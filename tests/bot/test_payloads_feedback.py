"""The request check takes the feedback buttons' clicks and the "What was wrong?" modal as the
bot wrote them, and refuses them with values it never writes."""

from __future__ import annotations

import pytest

from bot.blocks.feedback import WRONG_BLOCK, WRONG_INPUT, feedback_buttons, wrong_modal
from bot.payloads import Malformed, check
from tests.support import slack_payloads as payloads
from tests.support.standin import Posted

PID = "0123456789abcdef0123456789abcdef"


def answer() -> Posted:
    return Posted("C0DATA001", "1.0", None, "4 rows", [feedback_buttons(PID).to_dict()])


@pytest.mark.parametrize("positive", [True, False])
def test_a_thumbs_up_or_down_passes(positive: bool) -> None:
    check(*payloads.action_request(payloads.feedback_click(answer(), positive=positive)))


@pytest.mark.parametrize("value", ["sideways:" + PID, "up:", "up:../../etc", "up"])
def test_a_value_the_bot_never_writes_is_refused(value: str) -> None:
    payload = payloads.feedback_click(answer(), positive=True)
    payload["actions"][0]["value"] = value
    with pytest.raises(Malformed, match="not a rated answer's"):
        check(*payloads.action_request(payload))


def test_the_wrong_answer_modal_passes_and_foreign_metadata_does_not() -> None:
    view = wrong_modal(PID, "how many orders?")
    values = {WRONG_BLOCK: {WRONG_INPUT: "wrong filter"}}
    check(*payloads.action_request(payloads.view_submission(view, values)))
    with pytest.raises(Malformed, match="feedback modal"):
        forged = {**view, "private_metadata": '{"proposal_id": "x"}'}
        check(*payloads.action_request(payloads.view_submission(forged, values)))
