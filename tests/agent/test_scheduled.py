"""agent.scheduled: a schedule's approved SQL runs again only as approved: through the gate
over today's catalog, under the identity it ran as, under the cost cap; SQL the gate refuses or
would rewrite stops the schedule, and every run is in the audit log. Over the real graph and
gate, on DuckDB (the shop) and PostgreSQL with row-level security."""

from __future__ import annotations

from agent.conversation import Agent
from agent.memory.audit import sql_sha256
from agent.outcome import Answer
from agent.scheduled import GATE_REFUSED, HASH_MISMATCH, SQL_CHANGED, ScheduledSql
from connectors.sql.connector import SqlConnector
from tests.agent import rls_fixtures
from tests.agent.conftest import MakeAgent, reply
from tests.agent.test_run_as import agent
from tests.support.pg_roles import RlsWarehouse

warehouse = rls_fixtures.warehouse
connector = rls_fixtures.connector

BY_REGION = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC"


def approved(bot: Agent, thread: str) -> tuple[ScheduledSql, Answer]:
    """Ask, approve and run once; the schedule made of that answer."""
    proposal = bot.ask(thread, "sales by region?", user="U1").proposal
    assert proposal is not None
    outcome = bot.decide(thread, proposal.proposal_id, approved=True, user="U2")
    assert outcome.answer is not None
    job = ScheduledSql(
        question=proposal.question,
        sql=proposal.sql,
        sql_sha256=proposal.sql_sha256,
        proposal_id=proposal.proposal_id,
        approved_by="U2",
        owner="U1",
    )
    return job, outcome.answer


def test_a_scheduled_run_gives_the_answer_again_and_is_audited(make_agent: MakeAgent) -> None:
    bot, _, spy = make_agent([reply(BY_REGION)])
    job, answered = approved(bot, "t1")
    first = answered.rows
    ran = bot.run_scheduled("t1", job, job_key="s1-2027-01-04")
    assert ran.answer is not None and not ran.stop
    assert [tuple(r) for r in ran.answer.rows] == [tuple(r) for r in first]
    assert ran.answer.approved_by == "U2" and ran.answer.tables == ["shop.main.sales"]
    [event] = [e for e in bot.deps.audit.events("t1") if e["event"] == "scheduled_run"]
    assert event["actor"] == "U2" and event["sql_sha256"] == job.sql_sha256
    assert event["detail"]["rows"] == len(first)
    context = spy.contexts[-1]
    assert spy.runs == 2 and context is not None and context.job_key == "s1-2027-01-04"
    assert context.labels == {"requester": "U1", "approver": "U2", "scheduled": "true"}


def test_sql_the_gate_would_change_or_refuse_does_not_run(make_agent: MakeAgent) -> None:
    bot, _, spy = make_agent([reply(BY_REGION)])
    job, _ = approved(bot, "t2")
    executed = spy.runs
    raw = BY_REGION  # not what was approved: the gate adds its row cap to it
    changed = bot.run_scheduled(
        "t2", ScheduledSql(**{**vars(job), "sql": raw, "sql_sha256": sql_sha256(raw)}), job_key="k"
    )
    assert changed.stop == SQL_CHANGED and changed.answer is None
    gone = "SELECT visitors FROM sales LIMIT 10"  # a column the catalog does not have
    refused = bot.run_scheduled(
        "t2",
        ScheduledSql(**{**vars(job), "sql": gone, "sql_sha256": sql_sha256(gone)}),
        job_key="k",
    )
    assert refused.stop == GATE_REFUSED and "visitors" in refused.error
    tampered = bot.run_scheduled(
        "t2", ScheduledSql(**{**vars(job), "sql_sha256": "0" * 64}), job_key="k"
    )
    assert tampered.stop == HASH_MISMATCH
    assert spy.runs == executed, "none of them reached the warehouse"


def test_a_scheduled_run_acts_as_its_identity(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot = agent(connector, 1, required=True)
    proposal = bot.ask("t4", "sales?", user="Ueast", identity=warehouse.east).proposal
    assert proposal is not None
    bot.decide("t4", proposal.proposal_id, approved=True, user="UBOSS")
    job = ScheduledSql(
        question="sales?",
        sql=proposal.sql,
        sql_sha256=proposal.sql_sha256,
        proposal_id=proposal.proposal_id,
        approved_by="UBOSS",
        owner="Ueast",
        identity=warehouse.east,
    )
    ran = bot.run_scheduled("t4", job, job_key="k")
    assert ran.answer is not None
    assert [tuple(r) for r in ran.answer.rows] == warehouse.rows_of("east")
    [event] = [e for e in bot.deps.audit.events("t4") if e["event"] == "scheduled_run"]
    assert event["detail"]["ran_as"] == warehouse.east
