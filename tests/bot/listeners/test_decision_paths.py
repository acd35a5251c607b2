"""Every decision path checks who clicked on every click, whatever the proposal's status, and
acts only on the SQL the clicked card (or modal) showed.

Bolt's real dispatch with signed requests and the Slack stand-in, the fake agent, SQLite state.
The policy: only Bob may approve (`QUERYBOT_APPROVERS=U0BOB0001`), nobody their own question
(`QUERYBOT_NO_SELF_APPROVAL=true`); Alice asks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import APPROVE_ACTION, CANCEL_ACTION, EDIT_ACTION, REJECT_ACTION
from bot.blocks.views import EDIT_BLOCK, EDIT_INPUT
from bot.listeners.actions.clicks import OUT_OF_DATE
from bot.listeners.views.edit_submission import NOT_ALLOWED, STALE
from bot.store.base import Status
from tests.bot.listeners.listener_app import Bot, assembled, buttons, pid_of
from tests.support import slack_payloads as payloads
from tests.support.fake_agent import proposal_outcome
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Posted, SlackStandin

CAROL = "U0CAROL01"
SELF = "You asked this question, so someone else must approve it. Nothing was run."
SHA = "0" * 64  # the fake agent's proposals name this hash


@pytest.fixture
def bot(slack: SlackStandin, tmp_path: Path) -> Iterator[Bot]:
    with assembled(slack, tmp_path, approvers=BOB, no_self_approval=True) as built:
        yield built


def notes(bot: Bot, channel: str, user: str) -> list[str]:
    return [n["text"] for n in bot.slack.ephemerals_for(channel, user)]


def card_naming(card: Posted, sha: str) -> Posted:
    """`card` as an older (or forged) card would be: buttons naming SQL hash `sha`."""
    value = json.dumps({"p": pid_of(card), "h": sha})
    blocks = [
        {**b, "elements": [{**e, "value": value} for e in b["elements"]]}
        if b["type"] == "actions"
        else b
        for b in card.blocks
    ]
    return Posted(card.channel, card.ts, card.thread_ts, card.text, blocks)


def test_the_policy_holds_while_an_edit_is_being_checked(bot: Bot) -> None:
    """The issue's race, frozen at its middle: the proposal is claimed by an edit (RUNNING).
    Clicks are refused for who clicked, not told to wait for the edit (after which, put back
    to PENDING, their claim would have gone ahead)."""
    channel, ts = bot.ask()
    [card] = bot.thread(channel, ts)
    pid = pid_of(card)
    assert bot.store.claim_edit(pid, user=ALICE, sql_sha256=SHA).won
    bot.click(card, APPROVE_ACTION, user=ALICE)
    bot.click(card, REJECT_ACTION, user=CAROL)
    bot.click(card, EDIT_ACTION, user=CAROL)
    assert notes(bot, channel, ALICE) == [SELF]
    only = f"Only the person who asked or <@{BOB}> can"
    assert notes(bot, channel, CAROL) == [
        f"{only} reject this query. Nothing changed.",
        f"{only} edit this query. Nothing changed.",
    ]
    # Released (the edit was refused): the asker's approval still cannot win.
    assert bot.store.release(pid, editor=ALICE)
    bot.click(card, APPROVE_ACTION, user=ALICE)
    assert notes(bot, channel, ALICE) == [SELF, SELF]
    assert bot.agent.decisions == [] and bot.slack.opened_views == []
    assert bot.store.proposal(pid).status is Status.PENDING  # type: ignore[union-attr]


def test_a_decided_proposal_still_refuses_by_who_clicked(bot: Bot) -> None:
    channel, ts = bot.ask()
    [card] = bot.thread(channel, ts)
    pid = pid_of(card)
    bot.click(card, EDIT_ACTION, user=ALICE)
    view = bot.slack.opened_views[-1]["view"]
    bot.click(card, APPROVE_ACTION, user=BOB)
    assert [d[2:] for d in bot.agent.decisions] == [(True, BOB)]
    assert bot.agent.hashes == [SHA]  # the decision names the SQL the card showed

    bot.click(card, APPROVE_ACTION, user=ALICE)  # on the decided card
    bot.click(card, APPROVE_ACTION, user=CAROL)
    assert notes(bot, channel, ALICE) == [SELF]
    assert notes(bot, channel, CAROL) == [f"Only <@{BOB}> can approve this query. Nothing was run."]
    # The Edit modal Carol could not have opened, submitted anyway: refused in the modal.
    values = {EDIT_BLOCK: {EDIT_INPUT: "SELECT 2"}}
    response = bot.submit(payloads.view_submission(view, values, user=CAROL))
    assert json.loads(response.body)["errors"] == {EDIT_BLOCK: NOT_ALLOWED}
    # Cancel: who may stop it is checked before whether anything runs.
    button = {"type": "button", "action_id": CANCEL_ACTION, "value": pid}
    running = Posted(channel, card.ts, ts, "x", [{"type": "actions", "elements": [button]}])
    bot.click(running, CANCEL_ACTION, user=CAROL)
    assert notes(bot, channel, CAROL)[-1].startswith("Only the person who asked, the person who")
    assert len(bot.agent.decisions) == 1 and bot.agent.edits == [] and bot.agent.cancels == []


def test_a_card_naming_other_sql_is_out_of_date(bot: Bot) -> None:
    channel, ts = bot.ask()
    [card] = bot.thread(channel, ts)
    pid = pid_of(card)
    stale = card_naming(card, "1" * 64)
    for action in (APPROVE_ACTION, REJECT_ACTION, EDIT_ACTION):
        bot.click(stale, action, user=BOB)
    assert notes(bot, channel, BOB) == [OUT_OF_DATE] * 3
    assert OUT_OF_DATE == "This card is out of date: the SQL changed. Nothing was run."
    # A modal opened for other SQL: its submission claims nothing.
    bot.click(card, EDIT_ACTION, user=BOB)
    view = bot.slack.opened_views[-1]["view"]
    assert json.loads(view["private_metadata"]) == {"proposal_id": pid, "sql_sha256": SHA}
    forged = {**view, "private_metadata": json.dumps({"proposal_id": pid, "sql_sha256": "1"})}
    values = {EDIT_BLOCK: {EDIT_INPUT: "SELECT 2"}}
    response = bot.submit(payloads.view_submission(forged, values, user=BOB))
    assert json.loads(response.body)["errors"] == {EDIT_BLOCK: STALE}
    assert bot.agent.decisions == [] and bot.agent.edits == []
    assert bot.store.proposal(pid).status is Status.PENDING  # type: ignore[union-attr]
    # The real card still works.
    bot.click(card, APPROVE_ACTION, user=BOB)
    assert [d[1:] for d in bot.agent.decisions] == [(pid, True, BOB)]


def test_an_edit_is_not_approved_by_its_editor(bot: Bot) -> None:
    """Bob edits Alice's question: the edit is a new card whose approval neither may click."""
    bot.agent.edit_replies.append(proposal_outcome(sql="SELECT 2 AS two"))
    channel, ts = bot.ask()
    [card] = bot.thread(channel, ts)
    bot.click(card, EDIT_ACTION, user=BOB)
    view = bot.slack.opened_views[-1]["view"]
    bot.submit(payloads.view_submission(view, {EDIT_BLOCK: {EDIT_INPUT: "SELECT 2 AS two"}}))
    edited = next(m for m in bot.thread(channel, ts) if APPROVE_ACTION in buttons(m))
    bot.click(edited, APPROVE_ACTION, user=BOB)
    assert notes(bot, channel, BOB) == [
        "You wrote this edit, so someone else must approve it. Nothing was run."
    ]
    assert bot.agent.decisions == []
