"""What the model is shown for a question asked as a warehouse identity is that identity's: only
the tables it may read, no value or row count the bot's login profiled, only examples over tables
it may read, and no gate suggestion naming a table it may not (agent/catalog/access.py); a table it
may not read is refused in the words a table the warehouse lacks is. Over the real graph, catalog,
profiler and PostgreSQL with row-level security (tests/support/pg_roles.py: east may not read
shop.salaries, west may; the login profiles `ann` in shop.salaries)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.checkpoint.memory import InMemorySaver

from agent.catalog.access import Access
from agent.catalog.glossary import Glossary, Term
from agent.catalog.snapshot import Catalog
from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent
from agent.memory.audit import AuditLog
from agent.model.providers import ScriptedChatModel
from connectors.sql.connector import SqlConnector
from tests.agent import rls_fixtures
from tests.agent.access_words import needs
from tests.agent.conftest import reply
from tests.support.pg_roles import RlsWarehouse

#: The shared row-level-security warehouse (tests/agent/rls_fixtures.py).
warehouse = rls_fixtures.warehouse
connector = rls_fixtures.connector

SALES = "SELECT region, amount FROM shop.sales ORDER BY amount"
SALARIES = "SELECT name, salary FROM shop.salaries"
#: The same over a table the warehouse does not have.
WAGES = "SELECT name, salary FROM shop.wages"


#: Glossary terms, one over a table east may not read.
GLOSSARY = Glossary(
    [
        Term("payroll", "What people are paid.", tables=("salaries",)),
        Term("turnover", "The sum of sale amounts.", tables=("shop.sales",)),
    ]
)


def agent(connector: SqlConnector, replies: list[str]) -> tuple[Agent, ScriptedChatModel]:
    """An agent whose catalog profiles values (statistics, then scans as the login)."""
    model = ScriptedChatModel(replies=replies)
    deps = AgentDeps(
        connector=connector,
        model=model,
        audit=AuditLog(),
        limits=AgentLimits(profile_values=True),
        glossary=GLOSSARY,
    )
    deps.catalog.refresh()  # the profiles, scans included, before the first question
    return Agent(deps, InMemorySaver()), model


def prompt(model: ScriptedChatModel, call: int) -> str:
    return "\n".join(str(m.content) for m in model.seen[call])


def test_the_model_is_shown_only_what_the_askers_identity_may_read_and_no_profiled_value(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot, model = agent(connector, [reply(SALES)] * 3)
    bot.ask("login", "sales?", user="U0")  # no identity: the login's catalog, as before
    bot.ask("east", "sales?", user="U1", identity=warehouse.east)
    bot.ask("west", "sales?", user="U2", identity=warehouse.west)
    login, east, west = (prompt(model, i) for i in range(3))
    # the login's own prompt has the value and row count it profiled (so the checks below can
    # fail)
    assert "CREATE TABLE shop.salaries" in login and "'ann'" in login and "(1 rows)" in login
    assert "CREATE TABLE shop.sales" in east and "salaries" not in east
    assert "CREATE TABLE shop.salaries" in west
    for shown in (east, west):
        assert "'ann'" not in shown and "rows)" not in shown


def test_an_example_is_shown_only_to_identities_that_may_read_all_its_tables(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot, model = agent(connector, [reply(SALARIES), reply(SALES), reply(SALARIES)])
    proposal = bot.ask(
        "w1", "salaries by name per sale?", user="U2", identity=warehouse.west
    ).proposal
    assert proposal is not None
    bot.decide("w1", proposal.proposal_id, approved=True, user="U2")
    [learnt] = bot.deps.examples.active()
    assert learnt.run_as == warehouse.west and learnt.tables == ("shop.salaries",)
    bot.ask("e1", "salaries by name per sale?", user="U1", identity=warehouse.east)
    bot.ask("w2", "salaries by name per sale?", user="U3", identity=warehouse.west)
    east, west = prompt(model, 1), prompt(model, 2)
    assert "Q: salaries by name per sale?" in west and "shop.salaries" in west
    assert "Q: salaries by name per sale?" not in east and "shop.salaries" not in east


def test_a_misspelt_table_is_never_corrected_to_one_the_asker_may_not_read(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    """Under an identity a table outside its view ends the question, misspelt or not (no "did
    you mean", no repair): the gate knows only the view. Each is told the tables it may read."""
    misspelt = reply("SELECT name FROM shop.salarie")
    bot, model = agent(connector, [misspelt, misspelt])
    east = bot.ask("e1", "pay per sale?", user="U1", identity=warehouse.east)
    west = bot.ask("w1", "pay per sale?", user="U2", identity=warehouse.west)
    assert model.calls == 2
    for outcome in (east, west):
        assert outcome.kind == "failed" and outcome.message.startswith(needs("shop.salarie"))
    assert "salaries" not in east.message and "region_access, sales." in east.message
    assert "salaries" in west.message


def test_a_query_over_a_table_the_asker_may_not_read_is_refused_as_one_that_does_not_exist(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    """The gate knows only east's tables: a draft naming shop.salaries ends the question in
    the very words a draft naming a table the warehouse lacks does (no repair: the model never
    saw either), so guessing a name does not tell whether it exists."""
    bot, model = agent(connector, [reply(SALARIES), reply(WAGES)])
    hidden = bot.ask("e2", "salaries per sale?", user="U1", identity=warehouse.east)
    missing = bot.ask("e3", "salaries per sale?", user="U1", identity=warehouse.east)
    for outcome in (hidden, missing):
        assert outcome.kind == "failed" and outcome.proposal is None
    assert hidden.message.startswith(needs("shop.salaries"))
    assert hidden.message == missing.message.replace("shop.wages", "shop.salaries")
    assert model.calls == 2


def test_a_glossary_term_over_a_table_the_asker_may_not_read_is_left_out(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot, model = agent(connector, [reply(SALES)] * 2)
    bot.ask("e3", "payroll and turnover?", user="U1", identity=warehouse.east)
    bot.ask("w3", "payroll and turnover?", user="U2", identity=warehouse.west)
    east, west = prompt(model, 0), prompt(model, 1)
    assert "- turnover: The sum of sale amounts." in east and "What people are paid" not in east
    assert "- payroll: What people are paid. (tables: salaries)" in west


class Counting(SqlConnector):
    """The real connector, recording what it is asked about identities."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.asked: list[tuple[str, int]] = []

    def unreadable(self, identity: str, tables: Sequence[str]) -> list[str]:
        self.asked.append((identity, len(tables)))
        return super().unreadable(identity, tables)


def test_what_an_identity_may_read_is_asked_once_for_every_table_and_kept_a_while(
    warehouse: RlsWarehouse,
) -> None:
    connector = Counting(warehouse.url)
    try:
        catalog = Catalog(connector, profile=False)
        snapshot = catalog.snapshot()
        kept = Access(connector)
        first = kept.view(snapshot, warehouse.east)
        assert kept.view(snapshot, warehouse.east) is first
        assert connector.asked == [(warehouse.east, len(snapshot.tables))]
        assert [t.name for t in first.tables] == ["shop.region_access", "shop.sales"]
        assert kept.view(snapshot, "") is snapshot  # no identity: the catalog itself
        # once the time is up the warehouse is asked again; the same answer keeps the view
        again = Access(connector, ttl_s=0)
        view = again.view(snapshot, warehouse.west)
        assert again.view(snapshot, warehouse.west) is view
        assert connector.asked[1:] == [(warehouse.west, len(snapshot.tables))] * 2
        assert "shop.salaries" in [t.name for t in view.tables]
    finally:
        connector.close()


def test_pasted_sql_over_a_table_the_asker_may_not_read_is_refused_as_one_that_does_not_exist(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    bot, model = agent(connector, [])
    hidden = bot.ask("e4", SALARIES, user="U1", identity=warehouse.east)
    missing = bot.ask("e5", WAGES, user="U1", identity=warehouse.east)
    for outcome in (hidden, missing):
        assert outcome.kind == "failed" and outcome.proposal is None
    assert hidden.message.startswith(needs("shop.salaries"))
    assert hidden.message == missing.message.replace("shop.wages", "shop.salaries")
    # a misspelt table is answered from east's tables only
    outcome = bot.ask("e6", "SELECT name FROM shop.salarie", user="U1", identity=warehouse.east)
    assert outcome.kind == "failed" and "shop.salaries" not in outcome.message
    assert "sales" in outcome.message and model.calls == 0
