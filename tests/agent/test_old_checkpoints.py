"""Checkpoints written by an older querybot still load, decide and edit: threads survive an
upgrade.

The checkpoints (tests/fixtures/checkpoints/a0e2854.json, written by write_old.py there with the
version at a0e2854, before the proposal, answer and resumes were typed) are put back in a SQLite
checkpointer as they were stored; the real graph, gate and DuckDB warehouse read them.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from agent.conversation import sqlite_checkpointer
from agent.outcome import Proposal
from tests.agent.conftest import MakeAgent, reply

FIXTURE = Path(__file__).parents[1] / "fixtures" / "checkpoints" / "a0e2854.json"
DATA = json.loads(FIXTURE.read_text(encoding="utf-8"))
EXPECTED: dict[str, Any] = DATA["expected"]
COUNT = "SELECT COUNT(*) AS n FROM sales"


def _value(stored: Any) -> Any:
    return base64.b64decode(stored["base64"]) if isinstance(stored, dict) else stored


@pytest.fixture
def old_state(tmp_path: Path) -> SqliteSaver:
    """A checkpointer holding the old version's checkpoints, row for row."""
    saver = sqlite_checkpointer(tmp_path / "state.sqlite")
    saver.conn.executemany(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,"
        " type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [[_value(v) for v in row] for row in DATA["checkpoints"]],
    )
    saver.conn.executemany(
        "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,"
        " channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [[_value(v) for v in row] for row in DATA["writes"]],
    )
    saver.conn.commit()
    return saver


@pytest.mark.slow
def test_a_waiting_proposal_is_approved_after_the_upgrade(
    make_agent: MakeAgent, old_state: SqliteSaver
) -> None:
    agent, _, spy = make_agent([], checkpointer=old_state)
    waiting = EXPECTED["waiting"]
    proposal = agent.pending_proposal("waiting")
    assert proposal is not None
    assert (proposal.proposal_id, proposal.sql) == (waiting["proposal_id"], waiting["sql"])
    assert proposal.usage and proposal.usage["calls"] == 1, "the question's usage is attached"
    outcome = agent.decide("waiting", proposal.proposal_id, approved=True, user="U2")
    assert outcome.answer and outcome.answer.rows == [[4]] and spy.runs == 1
    assert (
        outcome.answer.approved_by == "U2" and outcome.answer.proposal_id == waiting["proposal_id"]
    )


@pytest.mark.slow
def test_a_waiting_proposal_is_edited_after_the_upgrade(
    make_agent: MakeAgent, old_state: SqliteSaver
) -> None:
    agent, model, spy = make_agent([], checkpointer=old_state)
    pid = EXPECTED["waiting"]["proposal_id"]
    original = agent.pending_proposal("waiting")
    refused = agent.edit("waiting", pid, "SELECT nope FROM sales", user="U3")
    assert refused.kind == "failed" and "not accepted" in refused.message
    assert refused.proposal == original == agent.pending_proposal("waiting")
    edited = agent.edit("waiting", pid, COUNT + " WHERE amount > 5", user="U3")
    assert edited.kind == "proposal" and edited.proposal and edited.proposal.proposal_id != pid
    answer = agent.decide("waiting", edited.proposal.proposal_id, approved=True, user="U2")
    assert answer.answer and answer.answer.rows == [[2]]
    assert model.calls == 0 and spy.runs == 1


def test_a_finished_question_is_explained_and_followed_up(
    make_agent: MakeAgent, old_state: SqliteSaver
) -> None:
    agent, model, _ = make_agent([reply(COUNT)], checkpointer=old_state)
    answered = EXPECTED["answered"]
    account = agent.explain("answered", answered["proposal_id"])
    assert account is not None
    assert [s["kind"] for s in account.steps][-2:] == ["approved", "executed"]
    follow_up = agent.ask("answered", "and how many sales?", user="U1")
    assert follow_up.kind == "proposal"
    history = "\n".join(str(m.content) for m in model.seen[0])
    assert "revenue by region?" in history and "Result columns: region, total (3 rows)" in history


@pytest.mark.slow
def test_an_approval_cut_short_by_a_restart_is_reported_and_its_decision_still_reads(
    make_agent: MakeAgent, old_state: SqliteSaver
) -> None:
    """The old process died while the approved query ran: the thread says it stopped part-way
    (the query may have run), and its decision, in the old shape, is what execute reads."""
    agent, _, spy = make_agent([], checkpointer=old_state)
    running = EXPECTED["running"]
    assert agent.pending_proposal("running") is None
    assert agent.interrupted_decision("running", running["proposal_id"]) is None
    account = agent.explain("running", running["proposal_id"])
    assert account is not None and account.steps[-1]["kind"] == "approved"
    sql, pid = running["sql"], running["proposal_id"]
    agent.deps.audit.record("running", "approved", proposal_id=pid, actor="U2", sql=sql)
    agent.graph.invoke(None, {"configurable": {"thread_id": "running"}})  # execute, as it was
    answer = agent.interrupted_decision("running", pid)
    assert answer and answer.answer and answer.answer.approved_by == "U2" and spy.runs == 1


def test_a_proposal_stored_by_another_version_still_reads() -> None:
    """Fields an older version did not write take their defaults; fields a newer one wrote and
    this one does not know are dropped (a rollback)."""
    proposal = Proposal("p1", "q?", "SELECT 1", "One.", [], "ab" * 32, columns=["t.a"])
    stored = proposal.to_state()
    assert "usage" not in stored and "plan" not in stored, "the state keeps those once"
    older = {k: v for k, v in stored.items() if k != "columns"}
    assert Proposal.from_dict(older) == replace(proposal, columns=[])
    assert Proposal.from_dict({**stored, "reviewed_by": "U9"}) == proposal
