"""A table a question's identity may not read is, to that question, a table the warehouse does
not have: an edit naming it, or a draft naming one the identity lost access to within the
minute its view is kept, is refused in the words a made-up name is (only the name as written),
and every list or count of tables it is told of (the clarify messages, the prompt's "this
warehouse (N tables)") has only the tables it may read. Over the real graph and PostgreSQL with
row-level security (tests/support/pg_roles.py: east may not read shop.salaries, west may)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.memory.audit import AuditLog
from agent.model.providers import ScriptedChatModel
from agent.model.question_context import ContextLimits
from connectors.sql.connector import SqlConnector
from tests.agent import rls_fixtures
from tests.agent.access_words import needs
from tests.agent.conftest import reply
from tests.support.pg_roles import RlsWarehouse

#: The shared row-level-security warehouse (tests/agent/rls_fixtures.py).
warehouse = rls_fixtures.warehouse

SALES = "SELECT region, amount FROM shop.sales ORDER BY amount"
SALARIES = "SELECT name, salary FROM shop.salaries"
WAGES = "SELECT name, salary FROM shop.wages"


class Revoking(SqlConnector):
    """The real connector, where the tables in `revoked` are taken from every identity (as a
    REVOKE would) the moment it is asked."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.revoked: set[str] = set()

    def unreadable(self, identity: str, tables: Sequence[str]) -> list[str]:
        hidden = super().unreadable(identity, tables)
        return [*hidden, *(t for t in tables if t in self.revoked and t not in hidden)]


@pytest.fixture
def connector(warehouse: RlsWarehouse) -> Iterator[Revoking]:
    connector = Revoking(warehouse.url)
    yield connector
    connector.close()


def agent(
    connector: SqlConnector, replies: list[str], **deps: object
) -> tuple[Agent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=replies)
    built = AgentDeps(connector=connector, model=model, audit=AuditLog(), **deps)  # type: ignore[arg-type]
    return Agent(built, InMemorySaver()), model


def test_an_edit_over_a_table_the_asker_may_not_read_reads_as_one_that_does_not_exist(
    connector: Revoking, warehouse: RlsWarehouse
) -> None:
    bot, _ = agent(connector, [reply(SALES)])
    proposal = bot.ask("t1", "sales?", user="U1", identity=warehouse.east).proposal
    assert proposal is not None
    hidden = bot.edit("t1", proposal.proposal_id, SALARIES, user="U2")
    missing = bot.edit("t1", proposal.proposal_id, WAGES, user="U2")
    for outcome in (hidden, missing):
        assert outcome.kind == "failed" and outcome.proposal == proposal
    assert hidden.message.startswith("The edit was not accepted, so nothing changed: ")
    assert needs("shop.salaries") in hidden.message
    assert hidden.message == missing.message.replace("shop.wages", "shop.salaries")
    assert bot.pending_proposal("t1") == proposal


def test_a_table_taken_away_within_the_views_minute_reads_as_one_that_does_not_exist(
    connector: Revoking, warehouse: RlsWarehouse
) -> None:
    """west's view (kept a minute) still has shop.salaries when it is revoked: the gate passes
    the draft, the warehouse is asked again before it is proposed, and the refusal is the one a
    made-up table gets."""
    bot, model = agent(connector, [reply(SALARIES), reply(SALARIES), reply(WAGES)])
    first = bot.ask("w1", "salaries?", user="U2", identity=warehouse.west)
    assert first.proposal is not None  # west may read it: the view now holds it
    connector.revoked.add("shop.salaries")
    hidden = bot.ask("w2", "salaries?", user="U2", identity=warehouse.west)
    missing = bot.ask("w3", "salaries?", user="U2", identity=warehouse.west)
    for outcome in (hidden, missing):
        assert outcome.kind == "failed" and outcome.proposal is None
    assert hidden.message.startswith(needs("shop.salaries"))
    assert hidden.message == missing.message.replace("shop.wages", "shop.salaries")
    assert model.calls == 3  # no repair
    assert "proposed" not in [e["event"] for e in bot.deps.audit.events("w2")]


def test_a_query_reading_no_table_is_answered_with_the_askers_tables_only(
    connector: Revoking, warehouse: RlsWarehouse
) -> None:
    bot, _ = agent(connector, [reply("SELECT 'pay' AS answer")] * 2)
    east = bot.ask("e1", "pay per sale?", user="U1", identity=warehouse.east)
    login = bot.ask("l1", "pay per sale?", user="U0")
    for outcome in (east, login):
        assert outcome.kind == "clarify"
    assert "It has these tables: region_access, sales." in east.message
    assert "salaries" not in east.message and "salaries" in login.message


def test_a_question_matching_no_word_lists_the_askers_tables_only(
    connector: Revoking, warehouse: RlsWarehouse
) -> None:
    """Asked back by code (agent/nodes/match.py), with no model call: east's reply names east's
    tables, and a word of a table east may not read is no match (as for a made-up one)."""
    bot, model = agent(connector, [])
    east = bot.ask("e1", "salaries?", user="U1", identity=warehouse.east)
    made_up = bot.ask("e2", "wages?", user="U1", identity=warehouse.east)
    login = bot.ask("l1", "zebras?", user="U0")
    for outcome in (east, made_up, login):
        assert outcome.kind == "clarify"
    assert model.calls == 0 and east.message == made_up.message
    assert "This warehouse holds: region_access, sales." in east.message
    assert "salaries" in login.message


def test_spent_tries_are_answered_with_the_askers_tables_only(
    connector: Revoking, warehouse: RlsWarehouse
) -> None:
    """A column east's tables lack, tries spent: the question asks which data east meant,
    naming only east's tables."""
    bot, _ = agent(
        connector, [reply("SELECT salary FROM shop.sales")], limits=AgentLimits(max_attempts=1)
    )
    outcome = bot.ask("e1", "pay per sale?", user="U1", identity=warehouse.east)
    assert outcome.kind == "clarify"
    assert "not among those your access may read" in outcome.message
    assert "It has these tables: region_access, sales." in outcome.message
    assert "salaries" not in outcome.message


def test_the_prompt_counts_only_the_tables_the_asker_may_read(
    connector: Revoking, warehouse: RlsWarehouse
) -> None:
    """Searched rather than shown whole, a question whose words match no table is told how
    many tables there are: east's view has two, the login's catalog three."""
    searched = ContextLimits(full_schema_tokens=0)
    bot, model = agent(connector, [reply(SALES)] * 2, context_limits=searched)
    bot.ask("e1", "zebra giraffe?", user="U1", identity=warehouse.east)
    bot.ask("l1", "zebra giraffe?", user="U0")
    east, login = ("\n".join(str(m.content) for m in model.seen[i]) for i in range(2))
    assert "No table of this warehouse (2 tables)" in east and "salaries" not in east
    assert "No table of this warehouse (3 tables)" in login
