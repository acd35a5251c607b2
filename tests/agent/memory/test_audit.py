"""The audit log records every step, cannot be rewritten, and gates execution."""

from __future__ import annotations

import sqlite3

import pytest

from agent.memory.audit import AuditLog, sql_sha256
from agent.nodes.execute import execute
from tests.agent.conftest import MakeAgent, reply

SQL = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region"


@pytest.mark.slow
def test_every_step_is_recorded(make_agent: MakeAgent) -> None:
    agent, _, _ = make_agent([reply("SELECT nope FROM sales"), reply(SQL), reply(SQL)])
    proposal = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert proposal
    agent.decide("t1", proposal.proposal_id, approved=True, user="U2")
    rejected = agent.ask("t1", "again?", user="U1").proposal
    assert rejected
    agent.decide("t1", rejected.proposal_id, approved=False, user="U3")

    events = agent.deps.audit.events("t1")
    assert [e["event"] for e in events] == [
        "gate_rejected",
        "proposed",
        "approved",
        "executed",
        "proposed",
        "rejected",
    ]
    assert events[0]["detail"]["codes"] == ["unknown_column"]
    approved, executed = events[2], events[3]
    assert approved["actor"] == "U2" and approved["sql_sha256"] == sql_sha256(proposal.sql)
    assert executed["sql"] == proposal.sql and executed["detail"]["rows"] == 3
    assert events[5]["actor"] == "U3"


def test_the_log_is_append_only(tmp_path) -> None:
    log = AuditLog(tmp_path / "audit.sqlite")
    log.record("t1", "approved", proposal_id="p1", actor="U1", sql="SELECT 1")
    conn = sqlite3.connect(tmp_path / "audit.sqlite")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit SET sql = 'DROP TABLE x'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit")
    assert log.approved_sha256("p1") == sql_sha256("SELECT 1")
    assert log.approved_sha256("p2") is None


def test_sql_without_a_recorded_approval_never_runs(make_agent: MakeAgent) -> None:
    agent, _, spy = make_agent([])
    proposal = {
        "proposal_id": "p1",
        "question": "q",
        "sql": SQL,
        "explanation": "",
        "tables": [],
        "sql_sha256": sql_sha256(SQL),
        "warnings": [],
    }
    state = {
        "question": "q",
        "turns": [],
        "proposal": proposal,
        "decision": {"proposal_id": "p1", "approved": True, "by": "U1"},
    }
    config = {"configurable": {"thread_id": "t1"}}
    update = execute(state, config, agent.deps)  # a decision in state, but none in the log
    assert update["final"]["kind"] == "failed" and spy.runs == 0

    agent.deps.audit.record("t1", "approved", proposal_id="p1", actor="U1", sql=SQL + " ")
    update = execute(state, config, agent.deps)  # approved, but other text than will run
    assert update["final"]["kind"] == "failed" and spy.runs == 0
