"""bot.conversations.status: the thread status follows the steps, stands past Slack's expiry,
ends cleared, and a workspace that refuses it is left alone (logged once, never an error)."""

from __future__ import annotations

import logging

import pytest
from slack_sdk import WebClient

from bot.conversations.status import CHECKING, DRAFTING, RUNNING, Statuses
from tests.support.standin import SlackStandin

ROOT = "1700000001.000100"


@pytest.fixture
def client(slack: SlackStandin) -> WebClient:
    slack.saw("C1", ROOT)
    return WebClient(token="xoxb-test", base_url=slack.url)


def test_steps_show_in_order_and_the_end_clears(client: WebClient, slack: SlackStandin) -> None:
    statuses = Statuses(client)
    with statuses.thread("T1", "C1", ROOT) as status:
        status.step("generate")
        slack.wait_for(lambda: slack.statuses_in("C1", ROOT), what="the first status")
        status.step("approve")  # the card is the status of the wait: nothing changes
        status.step("validate")
        slack.wait_for(lambda: len(slack.statuses_in("C1", ROOT)) == 2, what="the second")
    assert slack.statuses_in("C1", ROOT) == [DRAFTING[0], CHECKING[0], ""]
    assert slack.statuses[0].loading_messages == DRAFTING[1]


def test_a_standing_status_is_sent_again_before_it_lapses(
    client: WebClient, slack: SlackStandin
) -> None:
    statuses = Statuses(client, refresh_s=0.05)
    with statuses.thread("T1", "C1", ROOT) as status:
        status.step("execute")
        slack.wait_for(lambda: len(slack.statuses_in("C1", ROOT)) >= 3, what="two re-sends")
    shown = slack.statuses_in("C1", ROOT)
    assert set(shown[:-1]) == {RUNNING[0]} and shown[-1] == ""


def test_a_job_with_no_step_sends_nothing(client: WebClient, slack: SlackStandin) -> None:
    with Statuses(client).thread("T1", "C1", ROOT) as status:
        status.step("approve")  # a step with no status of its own
    assert slack.calls_to("assistant.threads.setStatus") == []


def test_off_or_without_a_root_nothing_is_sent(client: WebClient, slack: SlackStandin) -> None:
    with Statuses(client, enabled=False).thread("T1", "C1", ROOT) as status:
        status.step("generate")
    with Statuses(client).thread("T1", "D1", "") as status:
        status.step("generate")
    assert slack.calls_to("assistant.threads.setStatus") == []


def test_a_refusing_workspace_is_logged_once_and_left_alone(
    client: WebClient, slack: SlackStandin, caplog: pytest.LogCaptureFixture
) -> None:
    slack.revoke_scope("chat:write")  # the scopes setStatus takes (an older install has
    slack.revoke_scope("assistant:write")  # neither)
    statuses = Statuses(client)
    caplog.set_level(logging.INFO, logger="bot.conversations.status")
    calls = lambda: slack.calls_to("assistant.threads.setStatus")  # noqa: E731
    with statuses.thread("T1", "C1", ROOT) as status:
        status.step("generate")
        slack.wait_for(calls, what="the refused call")
        status.step("validate")
    with statuses.thread("T1", "C1", ROOT) as status:  # the next question there
        status.step("generate")
    assert len(calls()) == 1
    said = [r for r in caplog.records if "refused thread statuses" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO]
    assert "missing_scope" in said[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_rate_limited_status_costs_that_thread_only(
    client: WebClient, slack: SlackStandin
) -> None:
    slack.rate_limit("assistant.threads.setStatus", retry_after=30)
    statuses = Statuses(client)
    calls = lambda: slack.calls_to("assistant.threads.setStatus")  # noqa: E731
    with statuses.thread("T1", "C1", ROOT) as status:
        status.step("generate")
        slack.wait_for(calls, what="the rate-limited call")
    assert [c.status for c in calls()] == [429], "not retried: a status never waits"
    with statuses.thread("T1", "C1", ROOT) as status:  # the next question there
        status.step("validate")
        slack.wait_for(lambda: slack.statuses_in("C1", ROOT), what="the next status")
    assert slack.statuses_in("C1", ROOT) == [CHECKING[0], ""]
