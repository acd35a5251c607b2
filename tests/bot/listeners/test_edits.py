"""Edit SQL: the modal, its submission as a new proposal, and edits that cannot go ahead."""

from __future__ import annotations

from bot.blocks import APPROVE_ACTION, EDIT_ACTION
from bot.blocks.views import EDIT_BLOCK, EDIT_INPUT
from bot.conversations.conversations import EDIT_FAILED
from bot.store.base import Status
from tests.bot.listeners.listener_app import (
    Bot,
    buttons,
    edit,
    pid_of,
)
from tests.support import slack_payloads as payloads
from tests.support.fake_agent import proposal_outcome
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import TEAM_ID


def test_an_edit_comes_back_as_a_new_proposal_recording_its_editor(bot: Bot) -> None:
    channel, ts = bot.ask()
    [old] = bot.thread(channel, ts)
    assert edit(bot, old, "SELECT 2 AS two").status == 200
    thread_id, pid, sql, user = bot.agent.edits[0]
    assert (thread_id, pid, sql, user) == (
        f"{TEAM_ID}:{channel}:{ts}",
        pid_of(old),
        "SELECT 2 AS two",
        BOB,
    )
    redrawn, new = bot.thread(channel, ts)
    assert buttons(redrawn) == {} and "Edited by" in redrawn.all_text()
    record = bot.store.proposal(pid_of(new))
    assert record and (record.requested_by, record.edited_by) == (ALICE, BOB)
    assert bot.store.proposal(pid).status is Status.SUPERSEDED  # type: ignore[union-attr]


def test_a_click_while_an_edit_is_checked_does_nothing(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    assert bot.store.claim_edit(pid_of(proposal), user=BOB, sql_sha256="0" * 64).won
    bot.click(proposal, APPROVE_ACTION, user=ALICE)
    assert bot.agent.decisions == []
    [note] = bot.slack.ephemerals_for(channel, ALICE)
    assert note["text"] == f"<@{BOB}> is editing this proposal; wait for the edited version."


def test_submitting_an_edit_of_a_decided_proposal_shows_an_error_in_the_modal(bot: Bot) -> None:
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, EDIT_ACTION)
    view = bot.slack.opened_views[-1]["view"]
    bot.click(proposal, APPROVE_ACTION)
    values = {EDIT_BLOCK: {EDIT_INPUT: "SELECT 2"}}
    response = bot.submit(payloads.view_submission(view, values))
    assert response.status == 200
    assert '"response_action": "errors"' in response.body and "no longer waiting" in response.body
    assert bot.agent.edits == []


def test_sql_too_long_for_the_modal_gets_a_note_instead(bot: Bot) -> None:
    bot.agent.ask_replies.append(proposal_outcome(sql="SELECT " + "1 + " * 1000 + "1"))
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    bot.click(proposal, EDIT_ACTION)
    assert bot.slack.opened_views == []
    [note] = bot.slack.ephemerals_for(channel, BOB)
    assert "at most 3,000" in note["text"]


def test_an_edit_that_fails_releases_the_proposal(bot: Bot) -> None:
    bot.agent.edit_replies.append(RuntimeError("gate exploded"))
    channel, ts = bot.ask()
    [proposal] = bot.thread(channel, ts)
    edit(bot, proposal, "SELECT 2 AS two")
    assert EDIT_FAILED in bot.thread(channel, ts)[-1].all_text().replace("\n", " ")
    assert bot.store.proposal(pid_of(proposal)).status is Status.PENDING  # type: ignore[union-attr]
    bot.click(proposal, APPROVE_ACTION)
    assert len(bot.agent.decisions) == 1
