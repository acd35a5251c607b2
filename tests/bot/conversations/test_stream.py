"""bot.conversations.stream: the graph's steps stream into the thread as a plan's tasks, a
proposal ends it with its SQL and explanation, a broken-off job marks its step failed, and a
workspace that refuses streams is left alone (logged once, never an error)."""

from __future__ import annotations

import logging

import pytest
from slack_sdk import WebClient

from agent.outcome import Outcome, Proposal
from bot.conversations.stream import ASKING, PROPOSED, Streams
from tests.support.standin import SlackStandin

ROOT = "1700000001.000100"
SQL = "SELECT COUNT(*) AS regions FROM demo.main.regions"
PROPOSAL = Proposal(
    proposal_id="p1",
    question="how many regions?",
    sql=SQL,
    explanation="Counts the regions <!channel>.",
    tables=["demo.main.regions"],
    sql_sha256="0" * 64,
)


@pytest.fixture
def client(slack: SlackStandin) -> WebClient:
    slack.saw("C1", ROOT)
    return WebClient(token="xoxb-test", base_url=slack.url)


def test_steps_become_tasks_and_a_proposal_ends_with_its_sql(
    client: WebClient, slack: SlackStandin
) -> None:
    with Streams(client).thread("T1", "C1", ROOT, "U1") as stream:
        stream.step("start")
        slack.wait_for(lambda: slack.streams_in("C1", ROOT), what="the stream's start")
        stream.step("approve")  # no task of its own: nothing changes
        stream.step("generate")
        stream.step("candidates")  # the same task as generate
        stream.step("validate")
        stream.end(Outcome(kind="proposal", proposal=PROPOSAL))
    [shown] = slack.streams_in("C1", ROOT)
    assert shown.stopped and shown.plan_title == ASKING
    assert shown.task_display_mode == "plan" and shown.recipient_user_id == "U1"
    assert shown.task_ids() == ["question", "draft", "check", PROPOSED[0]]
    assert shown.statuses("draft") == ["in_progress", "complete"]
    assert {t["status"] for t in shown.tasks.values()} == {"complete"}
    assert shown.tasks[PROPOSED[0]]["output"] == SQL
    assert slack.thread("C1", ROOT)[0].text == "Counts the regions &lt;!channel&gt;."


def test_a_job_that_broke_off_marks_its_step_failed(client: WebClient, slack: SlackStandin) -> None:
    with pytest.raises(RuntimeError), Streams(client).thread("T1", "C1", ROOT, "U1") as stream:
        stream.step("execute")
        raise RuntimeError("the warehouse went away")
    [shown] = slack.streams_in("C1", ROOT)
    assert shown.stopped and shown.statuses("run") == ["in_progress", "error"]


def test_a_failure_marks_its_step_failed_with_no_text(
    client: WebClient, slack: SlackStandin
) -> None:
    with Streams(client).thread("T1", "C1", ROOT, "U1") as stream:
        stream.step("generate")
        stream.end(Outcome(kind="failed", message="No table holds that."))
    [shown] = slack.streams_in("C1", ROOT)
    assert shown.tasks == {"draft": {"title": "Draft the SQL", "status": "error"}}
    assert slack.thread("C1", ROOT)[0].text == ""


def test_no_step_off_or_outside_a_thread_nothing_is_sent(
    client: WebClient, slack: SlackStandin
) -> None:
    with Streams(client).thread("T1", "C1", ROOT, "U1") as stream:
        stream.step("approve")
        stream.end(Outcome(kind="rejected"))
    with Streams(client, enabled=False).thread("T1", "C1", ROOT, "U1") as stream:
        stream.step("generate")
    with Streams(client).thread("T1", "D1", "", "U1") as stream:
        stream.step("generate")
    assert [c for c in slack.calls if c.method.endswith("Stream")] == []


def test_a_workspace_without_streams_is_logged_once_and_left_alone(
    client: WebClient, slack: SlackStandin, caplog: pytest.LogCaptureFixture
) -> None:
    slack.refuse_streams("unknown_method")
    streams = Streams(client)
    caplog.set_level(logging.INFO, logger="bot.conversations.stream")
    calls = lambda: [c for c in slack.calls if c.method.endswith("Stream")]  # noqa: E731
    with streams.thread("T1", "C1", ROOT, "U1") as stream:
        stream.step("generate")
        slack.wait_for(calls, what="the refused start")
        stream.step("validate")
    with streams.thread("T1", "C1", ROOT, "U1") as stream:  # the next question there
        stream.step("generate")
    assert [c.method for c in calls()] == ["chat.startStream"]
    said = [r for r in caplog.records if "refused streamed plans" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_stream_slack_ended_costs_the_rest_of_the_plan_only(
    client: WebClient, slack: SlackStandin, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.conversations.stream")
    streams = Streams(client)
    with streams.thread("T1", "C1", ROOT, "U1") as stream:
        stream.step("generate")
        slack.wait_for(lambda: slack.streams_in("C1", ROOT), what="the stream's start")
        slack.expire_streams()  # a slow model: Slack ended the stream after five minutes
        stream.step("validate")
        stream.end(Outcome(kind="proposal", proposal=PROPOSAL))
    [shown] = slack.streams_in("C1", ROOT)
    assert shown.task_ids() == ["draft"], "nothing more was taken"
    assert "message_not_in_streaming_state" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    with streams.thread("T1", "C1", ROOT, "U1") as stream:  # the next question streams again
        stream.step("generate")
    assert len(slack.streams_in("C1", ROOT)) == 2


def test_open_starts_the_plan_at_once_and_close_ends_it_before_returning(
    client: WebClient, slack: SlackStandin
) -> None:
    stream = Streams(client).thread("T1", "C1", ROOT, "U1")
    stream.open()  # on this thread: the plan exists before anything else is posted
    [started] = slack.streams_in("C1", ROOT)
    assert started.tasks == {"question": {"title": "Read the question", "status": "in_progress"}}
    with stream:
        stream.step("start")  # the task it opened with: nothing new
        stream.step("generate")
        stream.end(Outcome(kind="proposal", proposal=PROPOSAL))
        stream.close()
        [shown] = slack.streams_in("C1", ROOT)  # stopped already, inside the block
        assert shown.stopped and shown.task_ids() == ["question", "draft", PROPOSED[0]]
    methods = [c.method for c in slack.calls if c.method.endswith("Stream")]
    assert methods.count("chat.startStream") == 1 and methods[-1] == "chat.stopStream"
    assert methods.count("chat.stopStream") == 1, "leaving the block closed nothing again"


def test_a_refused_open_sends_nothing_more(client: WebClient, slack: SlackStandin) -> None:
    slack.refuse_streams("feature_not_enabled")
    with Streams(client).thread("T1", "C1", ROOT, "U1") as stream:
        stream.open()
        stream.step("generate")
        stream.end(Outcome(kind="failed", message="No table holds that."))
    assert [c.method for c in slack.calls if c.method.endswith("Stream")] == ["chat.startStream"]
