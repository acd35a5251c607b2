"""The "Schedule…" button under an answer and its modal: a view Slack accepts, the metadata it
carries, and its values read back as Slack submits them (`filled` builds that state)."""

from __future__ import annotations

from typing import Any

from bot import blocks
from bot.blocks.schedule_modal import (
    ALERT_BLOCK,
    ALERT_INPUT,
    CHANNEL,
    CHANNEL_BLOCK,
    CHANNEL_INPUT,
    SCHEDULE_ACTION,
    SCHEDULE_VIEW,
    THREAD,
    THRESHOLD_BLOCK,
    THRESHOLD_INPUT,
    WHEN_BLOCK,
    WHEN_INPUT,
    WHERE_BLOCK,
    WHERE_INPUT,
    ScheduleForm,
    form_of,
    schedule_metadata,
    schedule_modal,
    scheduled_answer,
)
from bot.schedules.alerts import KINDS
from bot.schedules.when import EXAMPLES
from tests.bot.blocks.test_answer_wording import answer
from tests.support.message_checks import valid
from tests.support.slack_block_rules import check_view


def filled(
    view: dict[str, Any],
    *,
    when: str = "",
    where: str = THREAD,
    channel: str = "",
    alert: str = "",
    threshold: str = "",
) -> dict[str, Any]:
    """`view` with its `state` as Slack submits the schedule modal filled in so (an empty
    field as Slack sends one: null)."""

    def option(value: str) -> dict[str, Any] | None:
        return {"value": value, "text": {"type": "plain_text", "text": value}} if value else None

    values = {
        WHEN_BLOCK: {WHEN_INPUT: {"type": "plain_text_input", "value": when or None}},
        WHERE_BLOCK: {WHERE_INPUT: {"type": "radio_buttons", "selected_option": option(where)}},
        CHANNEL_BLOCK: {
            CHANNEL_INPUT: {
                "type": "conversations_select",
                "selected_conversation": channel or None,
            }
        },
        ALERT_BLOCK: {ALERT_INPUT: {"type": "static_select", "selected_option": option(alert)}},
        THRESHOLD_BLOCK: {THRESHOLD_INPUT: {"type": "number_input", "value": threshold or None}},
    }
    return {**view, "state": {"values": values}}


def modal() -> dict[str, Any]:
    return schedule_modal("p1", "how many <orders>?", channel="C0DATA001", thread_ts="1.000100")


def test_the_modal_is_one_slack_accepts() -> None:
    view = check_view(modal(), "modal")
    assert view["callback_id"] == SCHEDULE_VIEW
    inputs = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert list(inputs) == [WHEN_BLOCK, WHERE_BLOCK, CHANNEL_BLOCK, ALERT_BLOCK, THRESHOLD_BLOCK]
    assert inputs[WHEN_BLOCK]["element"]["placeholder"]["text"] == EXAMPLES
    assert inputs[WHERE_BLOCK]["element"]["initial_option"]["value"] == THREAD
    assert [o["value"] for o in inputs[WHERE_BLOCK]["element"]["options"]] == [
        "thread",
        "channel",
        "direct",
    ]
    assert inputs[CHANNEL_BLOCK]["element"]["type"] == "conversations_select"
    alerts = inputs[ALERT_BLOCK]["element"]["options"]
    assert [o["value"] for o in alerts] == list(KINDS)
    assert all("_" not in o["text"]["text"] for o in alerts)  # labels in words
    assert inputs[THRESHOLD_BLOCK]["element"]["type"] == "number_input"
    assert [inputs[b].get("optional", False) for b in inputs] == [False, False, True, True, True]
    assert "how many &lt;orders&gt;?" in view["blocks"][0]["elements"][0]["text"]


def test_the_metadata_names_the_answer_and_its_thread() -> None:
    assert scheduled_answer(modal()["private_metadata"]) == ("p1", "C0DATA001", "1.000100")
    assert scheduled_answer(schedule_metadata("p2", "D1", "")) == ("p2", "D1", "")
    for other in ("", "not json", "[1]", '{"proposal_id": 5}'):
        assert scheduled_answer(other) == ("", "", "")


def test_the_values_are_read_back_as_typed() -> None:
    view = filled(
        modal(), when=" every Monday at 9 ", where=CHANNEL, channel="C0SALES01", alert="above",
        threshold="100.5",
    )  # fmt: skip
    assert form_of(view) == ScheduleForm(
        "every Monday at 9", CHANNEL, "C0SALES01", "above", "100.5"
    )


def test_empty_fields_read_as_empty_and_the_place_defaults_to_the_thread() -> None:
    assert form_of(filled(modal(), where="")) == ScheduleForm("", THREAD, "", "", "")
    assert form_of({}) == ScheduleForm("", THREAD, "", "", "")


def test_answers_carry_the_schedule_button_only_when_schedules_are_on() -> None:
    shown = answer(["n"], [[5]])
    on = valid(blocks.result(shown, display_rows=10, schedule=True))
    off = valid(blocks.result(shown, display_rows=10))
    private = valid(blocks.result(shown, display_rows=10, schedule=True, private=True))

    def values(message: blocks.Message) -> dict[str, str]:
        return {
            e["action_id"]: e.get("value", "")
            for b in message.blocks
            if b["type"] == "actions"
            for e in b["elements"]
        }

    assert values(on)[SCHEDULE_ACTION] == shown.proposal_id
    assert values(private)[SCHEDULE_ACTION] == shown.proposal_id
    assert SCHEDULE_ACTION not in values(off)
