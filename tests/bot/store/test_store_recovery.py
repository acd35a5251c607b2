"""bot.store.base after a crash: the work of a process that was killed (SIGKILL, in a real child
process) is handed over once, and never while that process lives; a living replica's watch
reports it in the threads (through the Slack stand-in) without a restart. Both back ends: SQLite
(`flock` liveness) and PostgreSQL (advisory-lock liveness, a scratch database)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store.base import Status, Store
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SqliteStore
from tests.support.pgdb import rows, scratch_database

CHILD = """
import sys, time
from agent.outcome import Proposal
from bot.store.sqlite import SqliteStore
from bot.store.postgres import PostgresStore

kind, where = sys.argv[1], sys.argv[2]
store = SqliteStore(__import__("pathlib").Path(where)) if kind == "sqlite" else PostgresStore(where)
for pid in ("p-run", "p-edit", "p-wait"):
    proposal = Proposal(pid, "q", "SELECT 1", "x", [], "ab" * 32)
    store.add_proposal(proposal, thread_id="T:C:1", channel="C", message_ts=pid, requested_by="U1")
store.claim("p-run", approved=True, user="U2", sql_sha256="ab" * 32)
store.claim_edit("p-edit", user="U3", sql_sha256="ab" * 32)
store.start_question("T:C:2", "C", "200.1", "U1")
print("ready", flush=True)
time.sleep(600)
"""


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with scratch_database("recovery") as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    if request.param == "sqlite":
        yield "sqlite", str(tmp_path / "state.sqlite")
    else:
        url = request.getfixturevalue("postgres_url")
        yield "postgres", url
        rows(url, "TRUNCATE bot_events, bot_proposals, bot_questions")


def open_store(kind: str, where: str) -> Store:
    return SqliteStore(Path(where)) if kind == "sqlite" else PostgresStore(where)


def advisory_locks(url: str) -> int:
    """Advisory locks held in `url`'s database (each living PostgresStore holds one)."""
    found = rows(
        url,
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    return int(found[0]["n"])  # type: ignore[call-overload]


def wait_for_server_to_see_death(backend: tuple[str, str], held_before: int) -> None:
    """PostgreSQL frees a killed client's locks only once its backend notices the closed
    socket, which a loaded machine may take a moment to do; SQLite's flock goes at once."""
    kind, where = backend
    deadline = time.monotonic() + 30
    while kind == "postgres" and advisory_locks(where) >= held_before:
        assert time.monotonic() < deadline, "the killed process's lock was never released"
        time.sleep(0.05)


def look(store: Store) -> tuple[list, list]:
    """What `store` takes over in two looks: PostgreSQL needs a process found dead twice."""
    first = store.abandoned()
    return first if first != ([], []) else store.abandoned()


@pytest.fixture
def child(backend: tuple[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A process that claims two proposals, starts a question, and then waits to be killed."""
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), *backend],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    yield process
    process.kill()
    process.wait()


def test_the_work_of_a_killed_process_is_handed_over_once(
    backend: tuple[str, str], child: subprocess.Popen[str]
) -> None:
    stores: list[Store] = []

    def opened() -> Store:
        stores.append(open_store(*backend))
        return stores[-1]

    try:
        first = opened()
        assert look(first) == ([], [])  # its owner still lives: nothing to take over

        held = advisory_locks(backend[1]) if backend[0] == "postgres" else 0
        child.kill()
        child.wait()
        wait_for_server_to_see_death(backend, held)
        if not first.free_lock_is_death:  # one look is not enough on PostgreSQL
            assert first.abandoned() == ([], [])
        questions, proposals = first.abandoned()
        assert [(q.thread_id, q.message_ts, q.user) for q in questions] == [
            ("T:C:2", "200.1", "U1")
        ]
        assert sorted((p.proposal_id, p.approved) for p in proposals) == [
            ("p-edit", None),
            ("p-run", True),
        ]
        assert {p.proposal_id: p.status for p in proposals} == {
            "p-edit": Status.DONE,
            "p-run": Status.DONE,
        }
        assert look(opened()) == ([], [])  # taken over once only
        waiting = first.proposal("p-wait")
        assert waiting is not None and waiting.status is Status.PENDING  # a click still works
    finally:
        for store in stores:
            store.close()


def test_a_living_process_keeps_its_work(backend: tuple[str, str]) -> None:
    store = open_store(*backend)
    other = open_store(*backend)
    try:
        store.start_question("T:C:9", "C9", "9.9", "U1")
        assert look(other) == ([], []) and look(store) == ([], [])
        store.end_question("C9", "9.9")
        store.close()  # a clean exit
        assert look(other) == ([], [])
    finally:
        other.close()


def test_a_lost_liveness_connection_is_not_death(postgres_url: str) -> None:
    """PostgreSQL restarted (here: this process's liveness session terminated): the process
    takes its lock again before anyone, looking twice, takes its work over."""
    store, other = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        store.start_question("T:C:7", "C7", "7.7", "U1")
        pid = store._liveness.info.backend_pid
        rows(postgres_url, "SELECT pg_terminate_backend(%s)", pid)
        assert other.abandoned() == ([], [])  # found free once: only a suspect
        store.keep_alive()
        assert other.abandoned() == ([], [])  # alive again: never taken over
        assert store._liveness.info.backend_pid != pid
    finally:
        store.end_question("C7", "7.7")
        store.close()
        other.close()


WATCH_CHILD = """
import sys, time
from agent.outcome import Proposal
from bot.store.sqlite import SqliteStore
from bot.store.postgres import PostgresStore

kind, where, channel, question_ts, card_ts = sys.argv[1:]
store = SqliteStore(__import__("pathlib").Path(where)) if kind == "sqlite" else PostgresStore(where)
proposal = Proposal("p-run", "how many?", "SELECT 1", "Counts.", [], "ab" * 32)
thread = f"T0TEST:{channel}:1.000001"
store.add_proposal(
    proposal, thread_id=thread, channel=channel, message_ts=card_ts, requested_by="U1"
)
store.claim("p-run", approved=True, user="U2", sql_sha256="ab" * 32)
store.start_question(thread, channel, question_ts, "U1")
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_living_replica_reports_the_work_of_one_that_died(
    backend: tuple[str, str], tmp_path: Path
) -> None:
    import duckdb
    from langgraph.checkpoint.memory import InMemorySaver
    from slack_sdk import WebClient

    from agent.context import AgentDeps
    from agent.conversation import Agent
    from agent.model.providers import ScriptedChatModel
    from agent.outcome import Proposal
    from bot import blocks
    from bot.conversations.recovery import INTERRUPTED, RESTARTED_ASKING, RESTARTED_RUNNING
    from bot.settings import Settings
    from bot.wiring import wire
    from connectors.duckdb.connector import DuckDBConnector
    from tests.support.fake_agent import routed
    from tests.support.standin import SlackStandin

    # The real agent (over a one-table DuckDB file, a scripted model with no reply: the watch
    # asks it only what became of a decision, from its checkpoints).
    with duckdb.connect(str(tmp_path / "shop.duckdb")) as con:
        con.execute("CREATE TABLE sales AS SELECT 'North' AS region, 1.5 AS amount")
    connector = DuckDBConnector(tmp_path / "shop.duckdb")
    agent = Agent(
        AgentDeps(connector=connector, model=ScriptedChatModel(replies=[])), InMemorySaver()
    )
    with SlackStandin() as slack:
        client = WebClient(token="xoxb-test", base_url=slack.url)
        channel, root = "C0WATCH01", "1.000001"
        working = blocks.working()
        question_ts = client.chat_postMessage(
            channel=channel, thread_ts=root, text=working.text, blocks=working.blocks
        )["ts"]
        card = blocks.proposal(
            Proposal("p-run", "how many?", "SELECT 1", "Counts.", [], "ab" * 32), requested_by="U1"
        )
        card_ts = client.chat_postMessage(
            channel=channel, thread_ts=root, text=card.text, blocks=card.blocks
        )["ts"]
        replica = subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(WATCH_CHILD),
                *backend,
                channel,
                question_ts,
                card_ts,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        store = open_store(*backend)
        settings = Settings.from_env({"QUERYBOT_WORKERS": "2"}, dotenv=False)
        conversations = wire(settings, client, routed(agent), store).conversations
        work = conversations.work
        try:
            assert replica.stdout is not None and replica.stdout.readline().strip() == "ready"
            stop = conversations.recovery.watch(0.2)
            time.sleep(1)
            assert work.wait_idle(5) and not slack.calls_to("chat.update")  # it still lives

            replica.kill()
            replica.wait()
            slack.wait_thread(
                channel, root, lambda ms: any(RESTARTED_RUNNING in m.all_text() for m in ms)
            )
            stop.set()
            assert work.wait_idle(5)
            by_ts = {m.ts: m for m in slack.thread(channel, root)}
            assert RESTARTED_ASKING in by_ts[question_ts].all_text()
            assert INTERRUPTED in by_ts[card_ts].all_text()
            assert len(by_ts) == 3  # told once, though the watch ran many times
            slack.assert_clean()
        finally:
            replica.kill()
            replica.wait()
            work.shutdown()
            store.close()
            connector.close()
