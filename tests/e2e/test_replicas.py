"""End to end with two replicas: two real `querybot run --http` processes sharing one PostgreSQL
database (QUERYBOT_STATE_URL), each with its own data directory, as two machines behind a load
balancer would run. Slack may deliver any request to either: a click on a proposal the other
replica made must work, and a request delivered to both must be carried out once.

Each replica reads its own copy of the model script, whose replies are all the same, so any test
passes alone or in any order whichever replica makes its model call.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.blocks import APPROVE_ACTION, cell_text
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, data_dir_with, expected_rows, sql_reply, write_script
from tests.support.pgdb import rows, scratch_database
from tests.support.slack_flow import has_text
from tests.support.slack_payloads import BOB
from tests.support.standin import TEAM_ID, SlackStandin

COUNT_REGIONS = "SELECT COUNT(*) AS regions FROM demo.main.regions"
#: Each replica's script: a replica makes at most one model call in each test.
SCRIPT = [sql_reply(COUNT_REGIONS, "Counts regions.")] * 3


@pytest.fixture(scope="module")
def state_url() -> Iterator[str]:
    with scratch_database("replicas") as url:
        yield url


@pytest.fixture(scope="module")
def replicas(
    standin: SlackStandin,
    demo_file: Path,
    state_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[BotProcess, BotProcess]]:
    tmp = tmp_path_factory.mktemp("e2e-replicas")
    bots = [
        BotProcess(
            slack=standin,
            data_dir=data_dir_with(tmp / f"data-{name}", demo_file),
            script=write_script(tmp / f"script-{name}.jsonl", SCRIPT),
            env={"QUERYBOT_STATE_URL": state_url},
        )
        for name in ("a", "b")
    ]
    with bots[0], bots[1]:
        yield bots[0], bots[1]


@pytest.fixture(autouse=True)
def clean(standin: SlackStandin, replicas: tuple[BotProcess, BotProcess]) -> Iterator[None]:
    yield
    for bot in replicas:
        print(bot.log()[-4000:])  # shown when the test failed
    standin.assert_clean()


def audit(state_url: str, proposal_id: str) -> list[str]:
    """The shared audit log's events for one proposal, oldest first."""
    query = "SELECT event FROM audit WHERE proposal_id = %s ORDER BY id"
    found = rows(state_url, query, proposal_id)
    return [str(row["event"]) for row in found]


def logged(bots: tuple[BotProcess, ...], pattern: str) -> list[BotProcess]:
    """The replicas whose log matches `pattern`."""
    return [bot for bot in bots if re.search(pattern, bot.log())]


def at_once(*calls: Callable[[], object]) -> None:
    """Run `calls` in threads released together; re-raise the first failure."""
    barrier = threading.Barrier(len(calls))
    errors: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        barrier.wait()
        try:
            call()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def test_a_click_delivered_to_the_other_replica_runs_the_proposal(
    replicas: tuple[BotProcess, BotProcess], standin: SlackStandin, demo_file: Path, state_url: str
) -> None:
    a, b = replicas
    thread = flow.ask(a, "how many regions?")
    proposal = flow.proposal(standin, thread)
    a.wait_log("Question in .* answered: proposal")
    flow.click(b, proposal, approve=True)
    flow.wait_message(standin, thread, has_text(f"Approved by <@{BOB}>"), "the approval")
    result = flow.result(standin, thread)
    [(regions,)] = expected_rows(demo_file, COUNT_REGIONS)
    assert flow.values(result) == {"Regions": cell_text(regions)}
    pid = flow.proposal_id(proposal)
    b.wait_log(f"Decision on proposal {pid} done: answer")
    assert audit(state_url, pid) == ["proposed", "approved", "executed"]


def test_one_click_delivered_to_both_replicas_runs_once(
    replicas: tuple[BotProcess, BotProcess], standin: SlackStandin, state_url: str
) -> None:
    a, b = replicas
    thread = flow.ask(b, "how many regions now?")
    proposal = flow.proposal(standin, thread)
    payload = payloads.click(proposal, APPROVE_ACTION, user=BOB)
    at_once(lambda: a.send_click(payload), lambda: b.send_click(payload))
    flow.result(standin, thread)
    note = standin.wait_for(lambda: standin.ephemerals_for(thread.channel, BOB), what="the note")
    assert note[0]["text"] == f"This proposal was already approved by <@{BOB}>."
    pid = flow.proposal_id(proposal)
    done = standin.wait_for(
        lambda: logged(replicas, f"Decision on proposal {pid} done"), what="the decision"
    )
    assert len(done) == 1
    assert audit(state_url, pid) == ["proposed", "approved", "executed"]
    results = [m for m in standin.thread(thread.channel, thread.ts) if "Sources:" in m.all_text()]
    assert len(results) == 1


def test_one_event_delivered_to_both_replicas_is_answered_once(
    replicas: tuple[BotProcess, BotProcess], standin: SlackStandin
) -> None:
    body = payloads.mention(payloads.new_channel(), "how many regions, asked once?")
    thread = flow.Thread(body["event"]["channel"], body["event"]["ts"])
    at_once(*(lambda bot=bot: bot.send_event(body) for bot in replicas))
    proposal = flow.proposal(standin, thread)
    assert "Counts regions." in proposal.all_text()
    event_id = body["event_id"]
    dropped = standin.wait_for(
        lambda: logged(replicas, f"Ignoring a repeated delivery of event {event_id}"),
        what="the duplicate dropped",
    )
    assert len(dropped) == 1
    thread_id = re.escape(f"{TEAM_ID}:{thread.channel}:{thread.ts}")
    answered = f"Question in {thread_id} answered: proposal"
    assert len(standin.wait_for(lambda: logged(replicas, answered), what="the answer")) == 1
    assert len(standin.thread(thread.channel, thread.ts)) == 1
