"""Approval policy and channel rules against the Web API stand-in (no bot process)."""

from __future__ import annotations

import dataclasses

import pytest
from slack_sdk import WebClient

from bot.access.approvals import Approvers
from bot.access.approver_rule import ApproverRule
from bot.access.channels import SHARED, ChannelRules
from bot.settings import Settings, SettingsError
from bot.store.base import ProposalRecord, Status
from tests.support.fake_agent import proposal_outcome
from tests.support.standin import SlackStandin

ALICE, BOB, CAROL = "U0ALICE01", "U0BOB0001", "U0CAROL01"


def record(requested_by: str = ALICE, edited_by: str | None = None) -> ProposalRecord:
    prop = proposal_outcome().proposal
    assert prop is not None
    return ProposalRecord(
        "T:C1:1.0", "C1", "2.0", requested_by, Status.PENDING, None, None, edited_by, prop
    )


def client(slack: SlackStandin) -> WebClient:
    return WebClient(token="xoxb-test", base_url=slack.url)


@pytest.mark.parametrize("text", ["everyone", "U0BOB0001,bob", "#data"])
def test_unknown_approver_entries_are_a_settings_error(text: str) -> None:
    with pytest.raises(SettingsError, match="QUERYBOT_APPROVERS"):
        Settings.from_env({"QUERYBOT_APPROVERS": text})


def test_no_self_approval_must_be_a_boolean() -> None:
    with pytest.raises(SettingsError, match="QUERYBOT_NO_SELF_APPROVAL"):
        Settings.from_env({"QUERYBOT_NO_SELF_APPROVAL": "sometimes"})


def test_default_lets_anyone_approve(slack: SlackStandin) -> None:
    approvers = Approvers(Settings.from_env({}).approver_rule(), client(slack))
    assert approvers.why_not_approve(CAROL, record()) is None


def test_requester_only(slack: SlackStandin) -> None:
    approvers = Approvers(ApproverRule.parse("requester"), client(slack))
    assert approvers.why_not_approve(ALICE, record()) is None
    refusal = approvers.why_not_approve(BOB, record())
    assert (
        refusal
        == f"Only the person who asked (<@{ALICE}>) can approve this query. Nothing was run."
    )


def test_the_editor_may_not_approve_their_edit(slack: SlackStandin) -> None:
    rule = ApproverRule.parse("anyone", no_self_approval=True)
    approvers = Approvers(rule, client(slack))
    assert "You wrote this edit" in (approvers.why_not_approve(BOB, record(edited_by=BOB)) or "")
    assert approvers.why_not_approve(CAROL, record(edited_by=BOB)) is None
    assert approvers.why_not_reject_or_edit(ALICE, record(), "reject") is None


def test_the_asker_the_approver_and_listed_people_may_cancel(slack: SlackStandin) -> None:
    approvers = Approvers(ApproverRule.parse("U0DAVE001"), client(slack))
    running = dataclasses.replace(record(), status=Status.RUNNING, approved=True, decided_by=BOB)
    assert approvers.why_not_cancel(ALICE, running) is None
    assert approvers.why_not_cancel(BOB, running) is None
    assert approvers.why_not_cancel("U0DAVE001", running) is None
    refusal = approvers.why_not_cancel(CAROL, running) or ""
    assert "can cancel this query. It keeps running." in refusal


def test_group_members_are_cached_and_a_failure_fails_closed() -> None:
    with SlackStandin() as slack:  # not the fixture: the unknown group's error is expected
        slack.usergroups["S0DATA"] = [BOB]
        approvers = Approvers(ApproverRule.parse("S0DATA,S0GONE"), client(slack))
        assert approvers.why_not_approve(BOB, record()) is None
        assert approvers.why_not_approve(BOB, record()) is None
        assert approvers.why_not_approve(CAROL, record()) is not None
        groups = [c.params["usergroup"] for c in slack.calls_to("usergroups.users.list")]
        assert groups == ["S0DATA", "S0GONE"]
        assert [c.answer.get("error") for c in slack.refused] == ["no_such_subteam"]


def test_channel_rules(slack: SlackStandin) -> None:
    slack.channels["C0SHARED1"] = {"is_shared": True, "is_ext_shared": True}
    rules = ChannelRules(client(slack), frozenset({"C0DATA001", "C0SHARED1"}))
    assert rules.refusal("C0DATA001", False) is None
    assert "<#C0DATA001>" in (rules.refusal("C0OTHER01", False) or "")
    assert rules.refusal("D0DIRECT1", False) is None
    assert rules.refusal("C0DATA001", True) == SHARED
    assert rules.refusal("C0SHARED1") == SHARED
    assert rules.refusal("C0SHARED1") == SHARED
    assert rules.refusal("C0DATA001") is None
    looked_up = [c.params["channel"] for c in slack.calls_to("conversations.info")]
    assert looked_up == ["C0SHARED1", "C0DATA001"]
