"""What is learnt from a question asked as one warehouse identity is shown to no other: a verified
example only to questions asked as the very same identity (under row-level security its
question and literals may be that identity's rows, which no table check can see), an example
learnt as the bot's own login only where identities read whole tables (querybot's allowlists),
and no mistake is remembered under an identity. Over the real graph and PostgreSQL with
row-level security (tests/support/pg_roles.py: east and west read shop.sales, each only
their region's rows), and DuckDB with table allowlists; the scripted model records what it was
sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps
from agent.conversation import Agent
from agent.memory.audit import AuditLog
from agent.model.providers import ScriptedChatModel
from connectors.allowlist import TableAllowlist
from connectors.base import Connector
from connectors.duckdb.connector import DuckDBConnector
from connectors.sql.connector import SqlConnector
from tests.agent import rls_fixtures
from tests.agent.conftest import reply
from tests.support.pg_roles import RlsWarehouse

#: The shared row-level-security warehouse (tests/agent/rls_fixtures.py).
warehouse = rls_fixtures.warehouse
connector = rls_fixtures.connector

#: Bob's question as west, and the SQL he approves: its literal is a value of west's rows.
WEST_QUESTION = "What were the total sales of the west region?"
WEST_SQL = "SELECT SUM(amount) AS total FROM shop.sales WHERE region = 'west'"
#: Alice's question as east: most of its words are Bob's.
EAST_QUESTION = "What were the total sales of the east region?"
EAST_SQL = "SELECT SUM(amount) AS total FROM shop.sales WHERE region = 'east'"


def agent(connector: Connector, replies: list[str]) -> tuple[Agent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=replies)
    deps = AgentDeps(connector=connector, model=model, audit=AuditLog())
    return Agent(deps, InMemorySaver()), model


def prompt(model: ScriptedChatModel, call: int) -> str:
    return "\n".join(str(m.content) for m in model.seen[call])


def approve(bot: Agent, thread: str, question: str, identity: str) -> None:
    proposal = bot.ask(thread, question, user="UASKER", identity=identity).proposal
    assert proposal is not None
    outcome = bot.decide(thread, proposal.proposal_id, approved=True, user="UBOSS")
    assert outcome.answer is not None and outcome.answer.rows, outcome.message


def test_an_example_learnt_as_one_role_is_shown_to_that_role_only(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    """Both roles may read shop.sales, so a table check would show Bob's example to Alice:
    row-level security gives each only their region, and Bob's question and literal are
    west's."""
    bot, model = agent(connector, [reply(WEST_SQL), reply(EAST_SQL), reply(WEST_SQL)])
    approve(bot, "bob", WEST_QUESTION, warehouse.west)
    [learnt] = bot.deps.examples.active()
    assert (learnt.question, learnt.run_as) == (WEST_QUESTION, warehouse.west)
    bot.ask("alice", EAST_QUESTION, user="UALICE", identity=warehouse.east)
    bot.ask("carol", WEST_QUESTION, user="UCAROL", identity=warehouse.west)
    alice, carol = prompt(model, 1), prompt(model, 2)
    assert WEST_QUESTION not in alice and "west" not in alice.lower()
    # the same identity gets its own example back (so the check above can fail)
    assert f"Q: {WEST_QUESTION}" in carol and "'west'" in carol


def test_an_example_learnt_as_the_login_is_not_shown_to_a_role_under_row_level_security(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    """The login's example reads a table east may read, but PostgreSQL may filter its rows
    per role (and did, here): it is shown to questions with no identity only, and an example
    learnt as a role is not shown to them either."""
    login_question = "What were the total sales of the north region?"
    login_sql = "SELECT SUM(amount) AS total FROM shop.sales WHERE region = 'north'"
    bot, model = agent(connector, [reply(WEST_SQL), reply(EAST_SQL), reply(login_sql)])
    approve(bot, "bob", WEST_QUESTION, warehouse.west)
    bot.deps.examples.add(
        login_question, login_sql, tables=["shop.sales"], columns=[], approved_by="UADMIN"
    )
    bot.ask("alice", EAST_QUESTION, user="UALICE", identity=warehouse.east)
    bot.ask("login", login_question, user="UADMIN")
    alice, login = prompt(model, 1), prompt(model, 2)
    assert "north" not in alice.lower() and "west" not in alice.lower()
    assert f"Q: {login_question}" in login and "west" not in login.lower()


def test_no_mistake_is_remembered_under_a_role(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    """A refused draft's problems quote its SQL and columns: under an identity they are
    neither shown (agent/nodes/generate.py) nor recorded, so no later question, with or
    without an identity, is warned with them."""
    misspelt = "SELECT SUM(amount) FROM shop.sales WHERE regoin = 'west'"
    bot, model = agent(connector, [reply(misspelt), reply(WEST_SQL)] * 2)
    proposal = bot.ask("w1", WEST_QUESTION, user="UBOB", identity=warehouse.west).proposal
    assert proposal is not None and "regoin" in prompt(model, 1)  # repaired in its own thread
    failures = bot.deps.failures
    assert failures.hints(connector.name, "w1", tables={"sales"}) == []
    # the same mistake with no identity is remembered (so the check above can fail)
    assert bot.ask("l1", WEST_QUESTION, user="UADMIN").proposal is not None
    assert any("regoin" in hint for hint in failures.hints(connector.name, "l1"))


@pytest.fixture
def allowlisted(shop_path: Path) -> Iterator[TableAllowlist]:
    """The agent tests' DuckDB shop (`sales`), with two identities listed to read it whole."""
    connector = DuckDBConnector(shop_path)
    yield TableAllowlist(connector, {"seller": ["sales"], "buyer": ["sales"]})
    connector.close()


def test_on_an_allowlist_the_logins_examples_are_shared_and_each_identitys_kept(
    allowlisted: TableAllowlist,
) -> None:
    """querybot's table lists give identities whole tables, the rows the login reads, so an
    example the login learnt over listed tables quotes nothing an identity may not read; one
    learnt as another identity is still that identity's own."""
    bot, model = agent(allowlisted, [reply("SELECT 1 FROM sales")] * 3)
    add = bot.deps.examples.add
    sales = ["shop.main.sales"]
    add("Total sales of the North?", "SELECT 1", tables=sales, columns=[], approved_by="U0")
    add("Total sales of the South?", "SELECT 2", tables=sales, columns=[], approved_by="U1",
        run_as="buyer")  # fmt: skip
    bot.ask("s1", "Total sales of the East?", user="USELLER", identity="seller")
    bot.ask("b1", "Total sales of the East?", user="UBUYER", identity="buyer")
    bot.ask("l1", "Total sales of the East?", user="UADMIN")
    seller, buyer, login = (prompt(model, i) for i in range(3))
    assert "Q: Total sales of the North?" in seller and "South" not in seller
    assert "Q: Total sales of the North?" in buyer and "Q: Total sales of the South?" in buyer
    assert "Q: Total sales of the North?" in login and "South" not in login
