"""A question runs as the asker's warehouse identity: the proposal names it, the approved query
runs as it (PostgreSQL `SET LOCAL ROLE`, so row-level security applies) and the audit log
records it. Over the real graph, gate and PostgreSQL (tests/support/pg_roles.py); the
scripted model proposes."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps
from agent.conversation import Agent
from agent.memory.audit import AuditLog
from agent.model.providers import ScriptedChatModel
from agent.nodes.execute import NO_IDENTITY
from connectors.sql.connector import SqlConnector
from tests.agent import rls_fixtures
from tests.agent.access_words import needs
from tests.agent.conftest import reply
from tests.support.pg_roles import RlsWarehouse

#: The shared row-level-security warehouse (tests/agent/rls_fixtures.py).
warehouse = rls_fixtures.warehouse
connector = rls_fixtures.connector

SALES = "SELECT region, amount FROM shop.sales ORDER BY amount"


def agent(connector: SqlConnector, replies: int, *, required: bool) -> Agent:
    model = ScriptedChatModel(replies=[reply(SALES)] * replies)
    deps = AgentDeps(connector=connector, model=model, audit=AuditLog(), run_as_required=required)
    return Agent(deps, InMemorySaver())


def test_each_asker_gets_their_rows_and_the_audit_names_the_identity(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot = agent(connector, 2, required=True)
    for thread, identity, region in [
        ("t1", warehouse.east, "east"),
        ("t2", warehouse.west, "west"),
    ]:
        proposal = bot.ask(thread, "sales?", user=f"U{region}", identity=identity).proposal
        assert proposal is not None and proposal.run_as == identity
        outcome = bot.decide(thread, proposal.proposal_id, approved=True, user="UBOSS")
        assert outcome.answer is not None
        assert [tuple(r) for r in outcome.answer.rows] == warehouse.rows_of(region)
        events = {e["event"]: e for e in bot.deps.audit.events(thread)}
        assert events["proposed"]["detail"]["run_as"] == identity
        assert events["executed"]["detail"]["ran_as"] == identity
    # learnt as an example naming the identity it was first asked as (the same question and
    # SQL are kept once; who is shown it: tests/agent/test_run_as_visible.py)
    assert [e.run_as for e in bot.deps.examples.active()] == [warehouse.east]


def test_a_proposal_without_an_identity_never_runs_where_one_is_required(
    connector: SqlConnector,
) -> None:
    bot = agent(connector, 1, required=True)
    proposal = bot.ask("t3", "sales?", user="U1").proposal
    assert proposal is not None and proposal.run_as == ""
    outcome = bot.decide("t3", proposal.proposal_id, approved=True, user="U2")
    assert (outcome.kind, outcome.message) == ("failed", NO_IDENTITY)
    assert "executed" not in [e["event"] for e in bot.deps.audit.events("t3")]


def test_a_role_the_login_may_not_assume_ends_the_question_clearly(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot = agent(connector, 1, required=True)
    outcome = bot.ask("t4", "sales?", user="U1", identity=warehouse.stranger)
    assert outcome.kind == "failed" and outcome.proposal is None
    assert outcome.message.startswith("I could not check what your access may read")
    assert f"may not run queries as the PostgreSQL role {warehouse.stranger!r}" in outcome.message
    assert "proposed" not in [e["event"] for e in bot.deps.audit.events("t4")]


def test_a_query_over_a_table_the_asker_may_not_read_is_not_proposed(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    model = ScriptedChatModel(replies=[reply("SELECT name, salary FROM shop.salaries")])
    deps = AgentDeps(connector=connector, model=model, audit=AuditLog(), run_as_required=True)
    bot = Agent(deps, InMemorySaver())
    outcome = bot.ask("t5", "salaries per sale?", user="U1", identity=warehouse.east)
    assert outcome.kind == "failed" and outcome.proposal is None
    assert outcome.message.startswith(needs("shop.salaries"))
    assert "nothing ran" in outcome.message
    assert "proposed" not in [e["event"] for e in bot.deps.audit.events("t5")]
    assert model._next == 1  # no repair was asked of the model


def test_an_edit_over_a_table_the_asker_may_not_read_changes_nothing(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot = agent(connector, 1, required=True)
    proposal = bot.ask("t6", "sales?", user="U1", identity=warehouse.east).proposal
    assert proposal is not None
    edited = "SELECT name, salary FROM shop.salaries"
    outcome = bot.edit("t6", proposal.proposal_id, edited, user="U2")
    assert outcome.kind == "failed" and outcome.proposal == proposal
    assert outcome.message.startswith("The edit was not accepted, so nothing changed")
    assert "shop.salaries" in outcome.message
    assert bot.pending_proposal("t6") == proposal


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT pg_catalog.set_config('role', 'querybot', true)",
        "SELECT set_config('role', 'none', false) FROM shop.sales",
        "RESET ROLE",
        "SET ROLE NONE",
    ],
)
def test_a_statement_cannot_switch_back_to_the_login(connector: SqlConnector, sql: str) -> None:
    """What querybot enforces: SET LOCAL ROLE holds because the gate lets no statement change
    the session's role (the login could SET ROLE back, or to another granted role)."""
    from agent.gate.check import check_sql
    from agent.gate.schema import GateSchema

    schema = GateSchema.from_tables(connector.list_tables(), "postgres")
    assert check_sql(SALES, schema).ok
    assert not check_sql(sql, schema).ok
