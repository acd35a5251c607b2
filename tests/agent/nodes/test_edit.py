"""A person's edit is a typed resume that the graph checks (agent/nodes/edit.py): refused, it
changes nothing, not even the account; accepted, it is a new proposal needing its own approval.

Over the real graph, gate and DuckDB warehouse; the scripted model proposes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from agent.context import AgentDeps
from agent.conversation import Agent, sqlite_checkpointer
from agent.memory.audit import sql_sha256
from agent.model.providers import ScriptedChatModel
from agent.state import Edit
from connectors.base import ConnectorError, TableInfo
from tests.agent.conftest import MakeAgent, Spy, reply

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"
CONFIG: Any = {"configurable": {"thread_id": "t1"}}


def events(agent: Any) -> list[str]:
    return [e["event"] for e in agent.deps.audit.events("t1")]


@pytest.mark.slow
def test_a_refused_edit_leaves_no_trace(make_agent: MakeAgent) -> None:
    agent, model, spy = make_agent([reply(BY_REGION)])
    original = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert original
    before = (agent.explain("t1"), events(agent))
    outcome = agent.edit("t1", original.proposal_id, "SELECT nope FROM sales", user="U2")
    assert outcome.kind == "failed" and outcome.proposal == original
    assert outcome.message.startswith("The edited SQL was not accepted, so nothing changed:")
    assert "nope" in outcome.message and outcome.message.endswith("approve the original proposal.")
    assert (agent.explain("t1"), events(agent)) == before
    assert model.calls == 1 and spy.runs == 0
    # the refusal is the edit's alone: a decision on the proposal afterwards is just that
    answer = agent.decide("t1", original.proposal_id, approved=True, user="U2")
    assert answer.kind == "answer" and spy.runs == 1


def test_the_graph_checks_an_edit_however_it_is_resumed(make_agent: MakeAgent) -> None:
    """Past `Agent.edit` (another driver of the graph): the graph itself checks the edit."""
    agent, model, _ = make_agent([reply(BY_REGION)])
    original = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert original
    edit: Edit = {"kind": "edit", "proposal_id": original.proposal_id, "sql": "", "by": "U2"}
    for refused in ("DROP TABLE sales", "SELEC region FROM", ""):
        agent.graph.invoke(Command(resume={**edit, "sql": refused}), CONFIG)
        assert agent.pending_proposal("t1") == original
    agent.graph.invoke(Command(resume={**edit, "sql": "SELECT region FROM sales"}), CONFIG)
    edited = agent.pending_proposal("t1")
    assert edited and edited.proposal_id != original.proposal_id
    assert edited.explanation == "SQL edited by U2." and "LIMIT 1000" in edited.sql
    assert model.calls == 1 and events(agent) == ["proposed", "proposed"]


def test_a_resume_of_no_known_kind_is_no_decision(make_agent: MakeAgent) -> None:
    """Fail closed: a resume that is neither a decision nor an edit runs nothing, even when it
    names the proposal and the hash of its SQL."""
    agent, _, spy = make_agent([reply(BY_REGION)])
    original = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert original
    named = {"proposal_id": original.proposal_id, "sql_sha256": sql_sha256(original.sql)}
    resume = {**named, "kind": "approve", "approved": True, "by": "U2"}
    agent.graph.invoke(Command(resume=resume), CONFIG)
    assert agent.pending_proposal("t1") == original and spy.runs == 0
    assert "approved" not in events(agent)


class Unlisted(Spy):
    """The real warehouse, except that its tables cannot be listed."""

    def list_tables(self) -> list[TableInfo]:
        raise ConnectorError("The warehouse did not answer.", hint="Try later.")


def test_an_edit_that_cannot_be_checked_changes_nothing(
    make_agent: MakeAgent, shop_path: Path, tmp_path: Path
) -> None:
    """After a restart, the warehouse's tables cannot be read to check the edit: the proposal
    waits on, and the person is told what happened and what to do."""
    state = tmp_path / "state.sqlite"
    agent, _, _ = make_agent([reply(BY_REGION)], checkpointer=sqlite_checkpointer(state))
    original = agent.ask("t1", "revenue by region?", user="U1").proposal
    assert original
    unlisted = Unlisted(shop_path)
    deps = AgentDeps(connector=unlisted, model=ScriptedChatModel(replies=[]))
    restarted = Agent(deps, sqlite_checkpointer(state))
    try:
        outcome = restarted.edit("t1", original.proposal_id, "SELECT region FROM sales", user="U2")
    finally:
        unlisted.close()
    assert outcome.kind == "failed" and outcome.proposal == original
    assert outcome.message.startswith("The edit could not be checked, so nothing changed.")
    assert "The warehouse did not answer. Try later." in outcome.message
    assert restarted.pending_proposal("t1") == original
