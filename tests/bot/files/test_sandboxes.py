"""Sandbox agents (bot/files/sandboxes.py): the real Deployment and Router over the demo warehouse
as the bot opens them, real DuckDB sandboxes, a scripted model. A thread with files is answered
from its sandbox, also by a new process; loading closes the thread's agent; the idle sweep goes
through the thread's queue and leaves a route without an agent that tells the thread to upload
again."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from bot.files.sandboxes import SandboxAgents, duration
from bot.routing import Router
from bot.settings import Settings
from bot.wiring import serving
from connectors.demo.build import marker_path
from tests.support.demo_day import TODAY

FILES = Path(__file__).resolve().parents[2] / "fixtures" / "files"
THREAD = "T1:C0FILES01:1.0"
OTHER = "T1:C0FILES01:2.0"
SALES_SQL = "SELECT region, SUM(quantity) AS units FROM sales GROUP BY region ORDER BY region"


def settings_for(tmp_path: Path, demo_file: Path, replies: list[str], **env: str) -> Settings:
    """The bot's settings on a copy of the demo warehouse built once for the run (`demo_file`)
    and a model scripted with `replies`."""
    script = tmp_path / "script.jsonl"
    lines = [json.dumps({"kind": "sql", "explanation": "Units.", "sql": s}) for s in replies]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    demo = data / "demo.duckdb"
    if not demo.exists():
        demo.write_bytes(demo_file.read_bytes())
        marker_path(demo).write_bytes(marker_path(demo_file).read_bytes())
    base = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_DATA_DIR": str(data),
        "QUERYBOT_TODAY": TODAY.isoformat(),
    }
    return Settings.from_env(base | env, dotenv=False)


@pytest.fixture
def opened(
    tmp_path: Path, demo_file: Path
) -> Iterator[Callable[..., tuple[Router, SandboxAgents]]]:
    """Opens what a process serves from as the bot does (bot/wiring.py's `serving`): its
    Deployment, sandbox agents, Router and store; closes them at the end."""
    with ExitStack() as stack:

        def build(replies: list[str], **env: str) -> tuple[Router, SandboxAgents]:
            settings = settings_for(tmp_path, demo_file, replies, **env)
            served = stack.enter_context(serving(settings))
            stack.callback(served.store.close)
            return served.router, served.sandboxes

        yield build


def load_sales(agents: SandboxAgents, tmp_path: Path, thread: str = THREAD) -> None:
    copy = tmp_path / "incoming.csv"
    copy.write_bytes((FILES / "sales.csv").read_bytes())
    [table] = agents.load(thread, copy, "sales.csv")
    assert table.name == "sales"


@pytest.mark.slow
def test_a_thread_with_files_is_answered_from_its_sandbox(opened, tmp_path: Path) -> None:
    router, agents = opened([SALES_SQL])
    assert agents.lookup(THREAD) is None
    assert router.route(THREAD).is_conversation() is False
    load_sales(agents, tmp_path)
    found = agents.lookup(THREAD)
    assert found is not None and found.agent is not None and found.files
    assert router.route(THREAD) == found
    assert found.is_conversation() is True, "a thread with files is a conversation at once"
    assert agents.lookup(OTHER) is None and router.route(OTHER).is_conversation() is False

    outcome = found.agent.ask(THREAD, "units by region?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert outcome.proposal.tables == ["files.main.sales"]
    answer = found.agent.decide(THREAD, outcome.proposal.proposal_id, approved=True, user="U2")
    assert answer.kind == "answer" and answer.answer
    assert answer.answer.rows == [["East", 8], ["North", 6], ["South", 2], ["West", 4]]
    assert answer.answer.connector == "duckdb"


@pytest.mark.slow
def test_loading_closes_the_threads_agent_and_the_next_lookup_sees_every_table(
    opened, tmp_path: Path
) -> None:
    _, agents = opened([])
    load_sales(agents, tmp_path)
    first = agents.lookup(THREAD)
    assert first is not None and first.agent is not None
    budget = tmp_path / "budget.json"
    budget.write_bytes((FILES / "budget.json").read_bytes())
    agents.load(THREAD, budget, "budget.json")
    second = agents.lookup(THREAD)
    assert second is not None and second.agent is not None
    assert second.agent is not first.agent
    names = {t.short_name for t in second.agent.tables()}
    assert names == {"sales", "budget"}


@pytest.mark.slow
def test_a_new_process_finds_the_sandbox_on_disk(opened, tmp_path: Path) -> None:
    _, first = opened([])
    load_sales(first, tmp_path)
    first.close()  # the process ends; its files stay
    router, _ = opened([SALES_SQL])
    found = router.route(THREAD).agent
    assert found is not None
    outcome = found.ask(THREAD, "units by region?", user="U1")
    assert outcome.kind == "proposal" and outcome.proposal
    assert outcome.proposal.tables == ["files.main.sales"]


@pytest.mark.slow
def test_the_sweep_goes_through_the_threads_queue(opened, tmp_path: Path) -> None:
    router, agents = opened([], QUERYBOT_FILE_IDLE_S="60")
    load_sales(agents, tmp_path)
    load_sales(agents, tmp_path, thread=OTHER)
    agents.lookup(THREAD)
    record = agents.sandboxes.directory(THREAD) / "thread.json"
    old = time.time() - 120
    os.utime(record, (old, old))

    queued: list[tuple[str, Callable[[], None]]] = []
    assert agents.sweep(lambda key, job: queued.append((key, job))) == [THREAD]
    assert [key for key, _ in queued] == [THREAD]
    assert agents.sweep(lambda key, job: queued.append((key, job))) == [], "queued once"
    assert agents.sandboxes.exists(THREAD), "nothing is removed until the job runs"
    queued[0][1]()
    assert not agents.sandboxes.exists(THREAD)
    assert agents.sandboxes.exists(OTHER)

    gone = router.route(THREAD)
    assert gone == agents.lookup(THREAD)
    assert gone.agent is None and gone.is_conversation() is True
    assert gone.refusal.startswith(
        "The file sales.csv shared in this conversation was deleted after 1 minute without use"
    )

    load_sales(agents, tmp_path)  # uploaded again: the thread has its sandbox back
    back = agents.lookup(THREAD)
    assert back is not None and back.agent is not None


@pytest.mark.slow
def test_a_sweep_job_leaves_a_sandbox_used_since_it_was_queued(opened, tmp_path: Path) -> None:
    _, agents = opened([], QUERYBOT_FILE_IDLE_S="60")
    load_sales(agents, tmp_path)
    old = time.time() - 120
    os.utime(agents.sandboxes.directory(THREAD) / "thread.json", (old, old))
    queued: list[Callable[[], None]] = []
    agents.sweep(lambda key, job: queued.append(job))
    agents.lookup(THREAD)  # a question came in before the removal ran
    queued[0]()
    assert agents.sandboxes.exists(THREAD)


def test_duration() -> None:
    assert duration(86400) == "1 day"
    assert duration(3 * 3600) == "3 hours"
    assert duration(90) == "2 minutes"
    assert duration(1) == "1 second"
    assert duration(0.2) == "1 second"
