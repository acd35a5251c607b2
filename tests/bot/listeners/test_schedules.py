"""Scheduled questions through the listeners, against the Slack stand-in, with the real
`Schedules` and its engine (DBOS on a SQLite file in the test's directory, started and stopped
around each test): the Schedule… button and its modal, schedules asked in words, and a person's
list with its buttons; the time modal of "Edit time": test_schedule_times.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.access.channels import SHARED
from bot.blocks import APPROVE_ACTION
from bot.blocks.schedule_modal import (
    CHANNEL,
    DIRECT,
    SCHEDULE_ACTION,
    SCHEDULE_VIEW,
    WHEN_BLOCK,
)
from bot.blocks.schedules import DELETE, PAUSE, RESUME
from bot.listeners.actions.schedules import UNKNOWN_ANSWER
from bot.listeners.events.schedule_words import NO_ANSWER
from bot.listeners.scheduling import PRIVATE_ONLY_DM
from bot.schedules.records import ACTIVE, PAUSED, Alert, Schedule
from bot.schedules.service import NOT_YOURS
from tests.bot.blocks.test_schedule_modal import filled
from tests.bot.listeners.listener_app import Bot, assembled, pid_of
from tests.bot.listeners.test_feedback import as_posted
from tests.bot.store.test_store import make_proposal
from tests.support import slack_payloads as payloads
from tests.support.fake_agent import answer_outcome, proposal_outcome
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import TEAM_ID, Posted, SlackStandin

CARA = "U0CARA001"
SALES = "C0SALES01"

#: DBOS's start and stop take over a second a test (the fast loop has the modal's and the
#: words' own tests: tests/bot/blocks/test_schedule_modal.py, tests/bot/schedules).
pytestmark = pytest.mark.slow


@pytest.fixture
def bot(slack: SlackStandin, tmp_path: Path) -> Iterator[Bot]:
    """The app with its schedules' engine running (DBOS is one per process: stopped after)."""
    with assembled(slack, tmp_path, data_dir=tmp_path) as built:
        schedules = built.querybot.schedules
        assert schedules is not None
        schedules.start()
        try:
            yield built
        finally:
            schedules.stop()


def answered(bot: Bot, channel: str | None = None) -> tuple[str, str, Posted]:
    """ALICE asks, BOB approves: the channel, the thread and the answer message."""
    bot.slack.set_time_zone(ALICE, "Europe/London")
    bot.slack.emails.setdefault(BOB, "")  # known to users.info: still in the workspace
    bot.agent.ask_replies.append(proposal_outcome(question="how many orders?"))
    channel, ts = bot.ask("how many orders?", channel=channel)
    [card] = bot.thread(channel, ts)
    outcome = answer_outcome(BOB)
    assert outcome.answer is not None
    answer = replace(outcome.answer, proposal_id=pid_of(card))
    bot.agent.decide_replies.append(replace(outcome, answer=answer))
    bot.click(card, APPROVE_ACTION)
    result = next(m for m in bot.thread(channel, ts) if "Sources:" in m.all_text())
    return channel, ts, result


def open_modal(bot: Bot, result: Posted, user: str = ALICE) -> dict[str, Any]:
    bot.click(result, SCHEDULE_ACTION, user=user)
    return bot.slack.opened_views[-1]["view"]


def submit(bot: Bot, view: dict[str, Any], user: str = ALICE, **values: str) -> dict[str, Any]:
    """Submit the schedule modal filled in with `values`; Slack's answer to the submission
    (empty when the modal closed)."""
    payload = payloads.view_submission(view, {}, user=user)
    payload["view"] = {**payload["view"], "state": filled(view, **values)["state"]}
    response = bot.submit(payload)
    assert response.status == 200
    return json.loads(response.body) if response.body else {}


def only_schedule(bot: Bot) -> Schedule:
    [schedule] = bot.store.schedules.all()
    return schedule


def test_the_button_opens_the_modal_and_its_submission_schedules_in_the_thread(bot: Bot) -> None:
    channel, ts, result = answered(bot)
    pid = result.action_values()[SCHEDULE_ACTION]
    view = open_modal(bot, result)
    assert view["callback_id"] == SCHEDULE_VIEW
    assert json.loads(view["private_metadata"]) == {
        "proposal_id": pid,
        "channel": channel,
        "thread_ts": ts,
    }
    assert submit(bot, view, when="every Monday at 9") == {}
    schedule = only_schedule(bot)
    assert (schedule.owner, schedule.approved_by, schedule.proposal_id) == (ALICE, BOB, pid)
    assert (schedule.cron, schedule.time_zone) == ("0 9 * * 1", "Europe/London")
    assert (schedule.post_channel, schedule.post_thread_ts, schedule.alert) == (channel, ts, None)
    assert schedule.status == ACTIVE
    said = bot.thread(channel, ts)[-1].all_text()
    assert f"<@{ALICE}> scheduled" in said and "every Monday at 09:00 (Europe/London)" in said
    assert "in this thread" in said and "@querybot schedules" in said


def test_a_time_it_cannot_read_keeps_the_modal_open_with_the_reason(bot: Bot) -> None:
    _, _, result = answered(bot)
    answer = submit(bot, open_modal(bot, result), when="every blue moon")
    assert answer["response_action"] == "errors"
    assert "every blue moon" in answer["errors"][WHEN_BLOCK]
    assert bot.store.schedules.all() == []


def test_a_channel_with_an_alert(bot: Bot) -> None:
    _, _, result = answered(bot)
    view = open_modal(bot, result)
    submit(bot, view, when="every weekday at 8", where=CHANNEL, channel=SALES, alert="above",
           threshold="100")  # fmt: skip
    schedule = only_schedule(bot)
    assert (schedule.post_channel, schedule.post_thread_ts) == (SALES, "")
    assert schedule.alert == Alert("above", 100.0)
    [note] = [m for m in bot.slack.messages.values() if m.channel == SALES]
    assert f"scheduled by <@{ALICE}> to post here" in note.text


def test_direct_messages_post_in_the_dm_slack_names(bot: Bot) -> None:
    channel, ts, result = answered(bot)
    submit(bot, open_modal(bot, result), when="daily at 17:00", where=DIRECT)
    schedule = only_schedule(bot)
    assert schedule.post_channel == "D" + ALICE[1:] and schedule.post_thread_ts == ""
    [note] = [m for m in bot.slack.messages.values() if m.channel == schedule.post_channel]
    assert "its runs post here" in note.text  # the note, updated once it was made
    assert "in the owner's direct messages" in bot.thread(channel, ts)[-1].all_text()


def test_without_a_time_zone_in_slack_it_is_utc(bot: Bot) -> None:
    _, _, result = answered(bot)
    bot.slack.emails.pop(CARA, None)  # a person users.info does not know
    submit(bot, open_modal(bot, result, user=CARA), user=CARA, when="every hour")
    assert (only_schedule(bot).owner, only_schedule(bot).time_zone) == (CARA, "UTC")
    [asked] = bot.slack.calls_to("users.info")
    assert asked.answer["error"] == "user_not_found"
    asked.injected = True  # the refusal this test is about


def test_an_answer_the_store_does_not_know_gets_a_note(bot: Bot) -> None:
    channel, _, result = answered(bot)
    payload = payloads.click(result, SCHEDULE_ACTION, user=ALICE)
    payload["actions"][0]["value"] = "no-such-proposal"
    bot.submit(payload)
    assert [e["text"] for e in bot.slack.ephemerals_for(channel, ALICE)] == [UNKNOWN_ANSWER]
    assert bot.slack.opened_views == []


def test_in_words_in_the_thread(bot: Bot) -> None:
    channel, ts, _ = answered(bot)
    asked = list(bot.agent.asks)
    bot.ask(f"every Monday at 9 post this in <#{SALES}|sales>", channel=channel, thread_ts=ts)
    schedule = only_schedule(bot)
    assert (schedule.cron, schedule.post_channel, schedule.owner) == ("0 9 * * 1", SALES, ALICE)
    bot.ask("schedule this every weekday at 8 to me", channel=channel, thread_ts=ts)
    assert {s.post_channel for s in bot.store.schedules.all()} == {SALES, "D" + ALICE[1:]}
    assert bot.agent.asks == asked  # none went to the agent


def test_a_question_with_every_in_it_still_goes_to_the_agent(bot: Bot) -> None:
    channel, ts, _ = answered(bot)
    bot.ask("what did every customer buy?", channel=channel, thread_ts=ts)
    assert bot.agent.asks[-1][1] == "what did every customer buy?"
    assert bot.store.schedules.all() == []


def test_in_words_without_an_answer_says_so(bot: Bot) -> None:
    channel, ts = bot.ask("schedule this every Monday at 9")
    assert NO_ANSWER.split(".")[0] in bot.thread(channel, ts)[-1].all_text()
    assert bot.agent.asks == [] and bot.store.schedules.all() == []


def test_schedule_this_without_a_time_says_what_to_say(bot: Bot) -> None:
    channel, ts, _ = answered(bot)
    bot.ask("schedule this", channel=channel, thread_ts=ts)
    assert "Say when" in bot.slack.ephemerals_for(channel, ALICE)[-1]["text"]
    assert bot.store.schedules.all() == []


def test_a_private_answer_is_scheduled_to_direct_messages_only(bot: Bot) -> None:
    channel = payloads.new_channel()
    config = bot.querybot.conversations.router.config
    object.__setattr__(config, "private", frozenset({channel}))  # answers = "private"
    bot.slack.set_time_zone(ALICE, "Europe/London")
    bot.slack.emails.setdefault(BOB, "")
    bot.agent.ask_replies.append(proposal_outcome(question="how many orders?"))
    channel, ts = bot.ask("how many orders?", channel=channel)
    [card] = bot.thread(channel, ts)
    outcome = answer_outcome(BOB)
    assert outcome.answer is not None
    bot.agent.decide_replies.append(
        replace(outcome, answer=replace(outcome.answer, proposal_id=pid_of(card)))
    )
    bot.click(card, APPROVE_ACTION)
    [mine] = [e for e in bot.slack.ephemerals_for(channel, ALICE) if "Sources:" in str(e)]
    view = open_modal(bot, as_posted(mine))
    submit(bot, view, when="every Monday at 9")  # this thread: everyone would see it
    assert bot.slack.ephemerals_for(channel, ALICE)[-1]["text"].endswith(PRIVATE_ONLY_DM)
    assert bot.store.schedules.all() == []
    submit(bot, view, when="every Monday at 9", where=DIRECT)
    assert only_schedule(bot).post_channel == "D" + ALICE[1:]


def test_the_list_and_its_buttons(bot: Bot) -> None:
    channel, ts, _ = answered(bot)
    bot.ask("schedule this every Monday at 9", channel=channel, thread_ts=ts)
    schedule = only_schedule(bot)
    bot.ask("schedules", channel=channel, thread_ts=ts)
    shown = as_posted(bot.slack.ephemerals_for(channel, ALICE)[-1])
    assert "every Monday at 09:00" in shown.all_text()
    bot.click(shown, PAUSE, user=CARA)  # not hers
    assert bot.slack.ephemerals_for(channel, CARA)[-1]["text"] == NOT_YOURS.format(
        owner=f"<@{ALICE}>"
    )
    bot.click(shown, PAUSE, user=ALICE)
    assert bot.slack.ephemerals_for(channel, ALICE)[-1]["text"].startswith("Paused.")
    assert only_schedule(bot).status == PAUSED
    bot.ask("schedules", channel=channel, thread_ts=ts)
    shown = as_posted(bot.slack.ephemerals_for(channel, ALICE)[-1])
    assert "paused: paused by" in shown.all_text()
    bot.click(shown, RESUME, user=ALICE)
    assert only_schedule(bot).status == ACTIVE
    bot.click(shown, DELETE, user=ALICE)
    assert bot.slack.ephemerals_for(channel, ALICE)[-1]["text"].startswith("Deleted")
    assert bot.store.schedules.get(schedule.schedule_id) is None
    bot.ask("schedules", channel=channel, thread_ts=ts)
    assert (
        "You have no schedules"
        in as_posted(bot.slack.ephemerals_for(channel, ALICE)[-1]).all_text()
    )


def test_a_channel_shared_with_another_organisation_is_refused(bot: Bot) -> None:
    channel, _, result = answered(bot)
    bot.slack.channels[SALES] = {"is_ext_shared": True}  # Slack Connect
    submit(bot, open_modal(bot, result), when="every Monday at 9", where=CHANNEL, channel=SALES)
    said = bot.slack.ephemerals_for(channel, ALICE)[-1]["text"]
    assert said.startswith(f"Not scheduled: I do not post in <#{SALES}>") and SHARED in said
    assert bot.store.schedules.all() == []
    assert [m for m in bot.slack.messages.values() if m.channel == SALES] == []


def test_what_the_schedules_refuse_is_told_to_the_person(bot: Bot) -> None:
    channel, ts, result = answered(bot)
    waiting = replace(make_proposal("waiting"), question="how many refunds?")
    thread_id = f"{TEAM_ID}:{channel}:{ts}"
    bot.store.add_proposal(
        waiting, thread_id=thread_id, channel=channel, message_ts=ts, requested_by=ALICE
    )
    payload = payloads.click(result, SCHEDULE_ACTION, user=ALICE)
    payload["actions"][0]["value"] = "waiting"  # an answer not approved: a forged click
    bot.submit(payload)
    submit(bot, bot.slack.opened_views[-1]["view"], when="every Monday at 9")
    said = bot.slack.ephemerals_for(channel, ALICE)[-1]
    assert said["text"].startswith("Not scheduled: Only an answer whose SQL was approved")
    assert said["thread_ts"] == ts and bot.store.schedules.all() == []


def test_with_schedules_off_there_is_no_button_and_words_are_questions(
    slack: SlackStandin, tmp_path: Path
) -> None:
    with assembled(slack, tmp_path, schedules=False) as off:
        assert off.querybot.schedules is None
        channel, ts, result = answered(off)
        assert SCHEDULE_ACTION not in result.action_values()
        off.ask("schedules", channel=channel, thread_ts=ts)
        off.ask("every Monday at 9", channel=channel, thread_ts=ts)
        assert [a[1] for a in off.agent.asks][-2:] == ["schedules", "every Monday at 9"]


def test_a_schedule_that_breaks_is_told_to_the_person(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    channel, _, result = answered(bot)

    def broken(*args: object, **kwargs: object) -> Schedule:
        raise RuntimeError("the database went away")

    assert bot.querybot.schedules is not None
    monkeypatch.setattr(bot.querybot.schedules, "create", broken)
    submit(bot, open_modal(bot, result), when="every Monday at 9", where=DIRECT)
    said = bot.slack.ephemerals_for(channel, ALICE)[-1]["text"]
    assert said.startswith("Not scheduled: something went wrong") and "Try again" in said
    [note] = [m for m in bot.slack.messages.values() if m.channel == "D" + ALICE[1:]]
    assert note.text.startswith(":x: Not scheduled")  # the direct message says so too


def home_click(view: dict[str, Any], action_id: str, user: str) -> dict[str, Any]:
    """The `block_actions` payload of a button on the Home tab `view`, as Slack sends it (a view
    container, no channel, no message)."""
    button = next(
        e
        for b in view["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == action_id
    )
    posted = Posted("D0HOME001", "1.0", None, "", view["blocks"])
    payload = payloads.click(posted, action_id, user=user)
    payload["actions"][0]["value"] = button["value"]
    for key in ("channel", "message"):
        del payload[key]
    payload["container"] = {"type": "view", "view_id": "V0HOME001"}
    payload["view"] = {"id": "V0HOME001", "type": "home", **view}
    return payload


def test_the_home_tab_lists_the_schedules_and_its_buttons_work(bot: Bot) -> None:
    channel, ts, _ = answered(bot)
    bot.ask("schedule this every Monday at 9", channel=channel, thread_ts=ts)
    schedule = only_schedule(bot)
    bot.event(payloads.home_opened(ALICE))
    home = bot.slack.published_views[-1]["view"]
    text = json.dumps(home)
    assert "Your schedules" in text and "every Monday at 09:00" in text
    bot.submit(home_click(home, PAUSE, ALICE))
    assert only_schedule(bot).status == PAUSED
    told = [m for m in bot.slack.messages.values() if m.text.startswith("Paused.")]
    assert told and told[0].channel.startswith("D"), "said in the person's direct messages"
    redrawn = json.dumps(bot.slack.published_views[-1]["view"])
    assert "paused: paused by" in redrawn and schedule.schedule_id in redrawn
