"""Join conditions held to the warehouse's keys after the gate (agent/screen/joins.py): a
column compared with itself re-pointed to the one key relating the tables (or refused), a join
on a key of neither table refused naming the keys, or flagged where none is known. Over the
DuckDB demo warehouse and PostgreSQL, through the checks alone and the agent with the scripted
model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.catalog.snapshot import Catalog, CatalogSnapshot
from agent.context import AgentDeps
from agent.conversation import Agent
from agent.evaluation.golden import GoldenSet
from agent.gate import Verdict, check_sql
from agent.memory.audit import sql_sha256
from agent.model.providers import ScriptedChatModel
from agent.scheduled import SQL_CHANGED, ScheduledSql
from agent.screen.joins import FAN_OUT, SELF_JOIN, held_to_keys
from connectors.base import Connector
from connectors.duckdb.connector import DuckDBConnector
from connectors.sql.connector import SqlConnector
from tests.agent.conftest import prompt_of, reply
from tests.support import corpora
from tests.support.needs import unavailable
from tests.support.pgdb import postgres_reader

SELF_JOINED = (
    "SELECT p.product_name, SUM(oi.quantity) AS units FROM order_items AS oi "
    "JOIN products AS p ON p.product_id = p.product_id GROUP BY p.product_name"
)
RIGHT = (
    "SELECT p.product_name, SUM(oi.quantity) AS units FROM order_items AS oi "
    "JOIN products AS p ON oi.product_id = p.product_id GROUP BY p.product_name"
)
FANNED = (
    "SELECT SUM(s.net_revenue) AS revenue FROM sales AS s JOIN orders AS o "
    "ON s.customer_id = o.customer_id WHERE o.channel = 'web'"
)
KEYED = (
    "SELECT SUM(s.net_revenue) AS revenue FROM sales AS s JOIN orders AS o "
    "ON s.order_id = o.order_id WHERE o.channel = 'web'"
)


@pytest.fixture(scope="module")
def demo_connector(demo_file: Path) -> Iterator[DuckDBConnector]:
    connector = DuckDBConnector(demo_file)
    yield connector
    connector.close()


@pytest.fixture(scope="module")
def demo_tables(demo_connector: DuckDBConnector) -> CatalogSnapshot:
    return Catalog(demo_connector, profile=False).refresh()


def screened(sql: str, snapshot: CatalogSnapshot) -> Verdict:
    return held_to_keys(check_sql(sql, snapshot.gate_schema), snapshot, row_limit=1000)


def test_a_column_compared_with_itself_is_re_pointed_to_the_one_key(
    demo_tables: CatalogSnapshot,
) -> None:
    verdict = screened(SELF_JOINED, demo_tables)
    assert verdict.ok and verdict.row_cap_applied
    assert "ON oi.product_id = p.product_id" in verdict.sql
    assert verdict.sql == screened(RIGHT, demo_tables).sql
    assert verdict.fixes == (
        "join condition p.product_id = p.product_id compared a column with itself; joined on "
        "order_items.product_id = products.product_id",
    )
    # screened again (a scheduled run), it is left as it is
    again = screened(verdict.sql, demo_tables)
    assert (again.sql, again.fixes, again.warnings) == (verdict.sql, (), ())
    # the earlier table's column compared with itself, unaliased tables too
    earlier = screened(
        "SELECT COUNT(*) FROM customers AS T1 JOIN orders AS T2 ON T1.customer_id = T1.customer_id",
        demo_tables,
    )
    assert "ON T1.customer_id = T2.customer_id" in earlier.sql
    bare = screened(
        "SELECT COUNT(*) FROM orders JOIN customers "
        "ON customers.customer_id = customers.customer_id AND customers.segment = 'business'",
        demo_tables,
    )
    assert "ON orders.customer_id = customers.customer_id AND customers.segment" in bare.sql


def test_among_several_keys_the_one_through_the_column_written(
    demo_tables: CatalogSnapshot,
) -> None:
    three = (
        "SELECT COUNT(*) FROM orders AS o JOIN order_items AS i ON i.order_id = o.order_id "
        "JOIN sales AS s ON {}"
    )
    verdict = screened(three.format("s.order_id = s.order_id"), demo_tables)
    assert "ON o.order_id = s.order_id" in verdict.sql
    refused = screened(three.format("s.channel = s.channel"), demo_tables)
    assert not refused.ok and [r.code for r in refused.reasons] == [SELF_JOIN]
    assert str(refused.reasons[0]) == (
        "The join condition s.channel = s.channel compares a column with itself, so it joins "
        "every row of sales to every row before it. Several keys relate sales to the tables "
        "before it (sales.order_id = orders.order_id; sales.order_item_id = "
        "order_items.order_item_id): join on the one you mean."
    )


def test_with_no_key_between_them_it_is_refused_naming_the_keys(
    demo_tables: CatalogSnapshot,
) -> None:
    verdict = screened(
        "SELECT COUNT(*) FROM customers AS T1 JOIN order_items AS T2 "
        "ON T1.customer_id = T1.customer_id",
        demo_tables,
    )
    assert not verdict.ok and [r.code for r in verdict.reasons] == [SELF_JOIN]
    message = verdict.reasons[0].message
    assert "No key known relates order_items to customers" in message
    assert "order_items.order_item_id, customers.customer_id" in message
    assert "order_items.order_id = orders.order_id" in message  # the table that would link them
    # a derived table's column compared with itself: refused, with no key to name
    derived = screened(
        "SELECT COUNT(*) FROM customers AS c JOIN (SELECT customer_id FROM orders) AS d "
        "ON d.customer_id = d.customer_id",
        demo_tables,
    )
    assert [r.code for r in derived.reasons] == [SELF_JOIN]
    assert "relates it to the tables before it" in derived.reasons[0].message


def test_a_fan_out_is_refused_with_the_key_that_relates_the_tables(
    demo_tables: CatalogSnapshot,
) -> None:
    verdict = screened(FANNED, demo_tables)
    assert not verdict.ok and [r.code for r in verdict.reasons] == [FAN_OUT]
    assert str(verdict.reasons[0]) == (
        "orders is joined to sales on sales.customer_id = orders.customer_id, a key of neither "
        "table, so each row of one is repeated once for every matching row of the other (a "
        "fan-out). Join them on sales.order_id = orders.order_id instead."
    )
    using = screened(
        "SELECT COUNT(*) FROM sales AS s JOIN orders AS o USING (customer_id)", demo_tables
    )
    assert [r.code for r in using.reasons] == [FAN_OUT]
    # two tables of one customer's region: both hold the key of regions
    region = screened(
        "SELECT COUNT(*) FROM customers AS c JOIN sales AS s ON c.region_id = s.region_id",
        demo_tables,
    )
    assert "Join them on sales.customer_id = customers.customer_id" in str(region.reasons[0])


def test_a_fan_out_between_tables_no_key_relates_is_flagged(
    demo_tables: CatalogSnapshot,
) -> None:
    verdict = screened(
        "SELECT c.city, COUNT(*) AS n FROM customers AS c JOIN products AS p "
        "ON c.city = p.category GROUP BY c.city",
        demo_tables,
    )
    assert verdict.ok and verdict.fixes == ()
    assert verdict.warnings == (
        "products is joined to customers on customers.city = products.category, a key of "
        "neither table, so each row of one is repeated once for every matching row of the "
        "other (a fan-out); no key relating them is known, so check that sums and counts are "
        "not multiplied by it.",
    )


@pytest.mark.parametrize(
    "sql",
    [
        KEYED,
        RIGHT,
        # an OR, a non-equality, a semi join, a CTE or a derived table: not judged
        "SELECT COUNT(*) FROM sales AS s JOIN orders AS o ON s.customer_id = o.customer_id "
        "OR s.order_id = o.order_id",
        "SELECT COUNT(*) FROM sales AS s JOIN orders AS o ON s.customer_id < o.customer_id",
        "SELECT COUNT(*) FROM sales AS s SEMI JOIN orders AS o ON s.customer_id = o.customer_id",
        "WITH o AS (SELECT * FROM orders) SELECT COUNT(*) FROM sales AS s JOIN o "
        "ON s.customer_id = o.customer_id",
        "SELECT COUNT(*) FROM sales AS s JOIN (SELECT customer_id FROM orders) AS o "
        "ON s.customer_id = o.customer_id",
        # a key on one side, with a condition of neither beside it
        "SELECT COUNT(*) FROM sales AS s JOIN orders AS o ON s.order_id = o.order_id "
        "AND s.customer_id = o.customer_id",
        "SELECT COUNT(*) FROM orders AS o JOIN customers AS c USING (customer_id)",
    ],
)
def test_correct_or_unread_joins_are_left_as_they_are(
    sql: str, demo_tables: CatalogSnapshot
) -> None:
    gated = check_sql(sql, demo_tables.gate_schema)
    assert gated.ok
    assert held_to_keys(gated, demo_tables, row_limit=1000) == gated


def test_every_gold_query_of_the_demo_screens_unchanged(
    demo_tables: CatalogSnapshot, demo_golden: GoldenSet
) -> None:
    checked = 0
    for question in demo_golden.questions:
        for sql in question.gold:
            gated = check_sql(sql, demo_tables.gate_schema)
            if gated.ok:
                checked += 1
                assert held_to_keys(gated, demo_tables, row_limit=1000) == gated, question.id
    assert checked >= 80


def test_no_gold_query_of_sql_eval_is_refused() -> None:
    """sql-eval's PostgreSQL gold over the defog schemas (names only, no profiles): none is
    refused or re-pointed; the few that join two tables on a column neither is keyed by (a
    review and its business's categories) get the warning."""
    if reason := corpora.missing():
        unavailable(reason)
    snapshots: dict[str, CatalogSnapshot] = {}
    checked, warned = 0, 0
    for answer in corpora.gold("postgres"):
        snapshot = snapshots.get(answer.db) or snapshots.setdefault(
            answer.db,
            CatalogSnapshot(tuple(corpora.defog_tables(answer.db, "postgres")), "postgres"),
        )
        gated = check_sql(answer.sql, snapshot.gate_schema)
        if not gated.ok:
            continue
        checked += 1
        held = held_to_keys(gated, snapshot, row_limit=1000)
        assert replace(held, warnings=gated.warnings) == gated, answer.sql
        warned += held != gated
    assert checked > 300 and warned < checked / 20


# -- through the agent -----------------------------------------------------------------------


def agent(connector: Connector, *replies: str) -> tuple[Agent, ScriptedChatModel]:
    model = ScriptedChatModel(replies=list(replies))
    return Agent(AgentDeps(connector=connector, model=model), InMemorySaver()), model


def proposes_the_re_pointed_join(connector: Connector, fix: str) -> None:
    """The scripted model writes the self-join: the proposal holds the re-pointed SQL, its
    account the fix; approved, it runs as the right join does, and a schedule of it runs again
    unchanged."""
    bot, _ = agent(connector, reply(SELF_JOINED))
    proposal = bot.ask("t1", "units sold per product?", user="U1").proposal
    assert proposal is not None
    assert "ON oi.product_id = p.product_id" in proposal.sql
    account = bot.explain("t1", proposal.proposal_id)
    assert account is not None
    [step] = [s for s in account.steps if s["kind"] == "gate_fix"]
    assert fix in step.get("changes", [])
    outcome = bot.decide("t1", proposal.proposal_id, approved=True, user="U2")
    assert outcome.answer is not None
    right = connector.run(
        check_sql(RIGHT, bot.deps.catalog.gate_schema).sql, max_rows=1000, timeout_s=30
    )
    assert sorted(map(tuple, outcome.answer.rows)) == sorted(map(tuple, right.rows))
    job = ScheduledSql(
        question=proposal.question,
        sql=proposal.sql,
        sql_sha256=proposal.sql_sha256,
        proposal_id=proposal.proposal_id,
        approved_by="U2",
        owner="U1",
    )
    ran = bot.run_scheduled("t1", job, job_key="k1")
    assert not ran.stop and ran.answer is not None
    # approved before joins were held to keys: the self-join would now change, so it does not
    # run unseen; the fan-out a person approved is theirs to mean, so it runs (flagged)
    schema = bot.deps.catalog.gate_schema
    gated = check_sql(SELF_JOINED, schema).sql
    old = ScheduledSql(**{**vars(job), "sql": gated, "sql_sha256": sql_sha256(gated)})
    assert bot.run_scheduled("t1", old, job_key="k2").stop == SQL_CHANGED
    fanned = check_sql(FANNED, schema).sql
    meant = ScheduledSql(**{**vars(job), "sql": fanned, "sql_sha256": sql_sha256(fanned)})
    kept = bot.run_scheduled("t1", meant, job_key="k3")
    assert not kept.stop and kept.answer is not None


def repairs_the_fan_out(connector: Connector, key: str) -> None:
    """The scripted model joins on a key of neither table: the reason goes back as repair
    feedback naming the key, and the second reply is proposed."""
    bot, model = agent(connector, reply(FANNED), reply(KEYED))
    proposal = bot.ask("t2", "web revenue?", user="U1").proposal
    assert proposal is not None and "ON s.order_id = o.order_id" in proposal.sql
    repair = prompt_of(model, 1)
    assert "a key of neither table" in repair and f"Join them on {key} instead" in repair
    events = [e for e in bot.deps.audit.events("t2") if e["event"] == "gate_rejected"]
    assert [e["detail"]["codes"] for e in events] == [[FAN_OUT]]


FIX = (
    "join condition p.product_id = p.product_id compared a column with itself; joined on "
    "order_items.product_id = products.product_id"
)


def test_the_agent_on_duckdb(demo_connector: DuckDBConnector) -> None:
    proposes_the_re_pointed_join(demo_connector, FIX)
    repairs_the_fan_out(demo_connector, "sales.order_id = orders.order_id")
    # pasted by a person, who may mean it: proposed with the key in a warning, never sent to
    # the model
    pasting, model = agent(demo_connector)
    pasted = pasting.ask("t4", FANNED, user="U1").proposal
    assert pasted is not None and model.calls == 0
    assert any("Join them on sales.order_id = orders.order_id" in w for w in pasted.warnings)
    # no key relates them: proposed, with a warning for the person approving
    odd = "SELECT COUNT(*) AS n FROM customers AS c JOIN products AS p ON c.city = p.category"
    bot, _ = agent(demo_connector, reply(odd))
    proposal = bot.ask("t3", "customers in a city named as a category?", user="U1").proposal
    assert proposal is not None
    [warning] = proposal.warnings  # the card shows each (bot/blocks/messages.py)
    assert "a key of neither table" in warning and "no key relating them is known" in warning


# -- PostgreSQL ------------------------------------------------------------------------------

SHOP = """
CREATE TABLE products (product_id INTEGER PRIMARY KEY, product_name TEXT NOT NULL);
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, customer_name TEXT NOT NULL);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers,
    channel TEXT NOT NULL
);
CREATE TABLE order_items (
    order_item_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders,
    product_id INTEGER NOT NULL REFERENCES products,
    quantity INTEGER NOT NULL,
    price NUMERIC(10, 2) NOT NULL
);
CREATE VIEW sales AS
SELECT i.order_item_id, i.order_id, o.customer_id, i.quantity * i.price AS net_revenue
FROM order_items AS i JOIN orders AS o USING (order_id);
INSERT INTO products VALUES (1, 'Lamp'), (2, 'Desk'), (3, 'Chair');
INSERT INTO customers VALUES (7, 'Ada'), (8, 'Bo');
INSERT INTO orders VALUES (10, 7, 'web'), (11, 7, 'web'), (12, 8, 'store');
INSERT INTO order_items VALUES
    (100, 10, 1, 2, 5.00), (101, 10, 2, 1, 80.00), (102, 11, 1, 1, 5.00), (103, 12, 3, 4, 20.00);
"""


@pytest.fixture(scope="module")
def postgres() -> Iterator[SqlConnector]:
    """A scratch database and a login that may only read its tables. Dropped afterwards."""
    with postgres_reader(lambda admin: admin.execute(SHOP)) as url:
        connector = SqlConnector(url)
        try:
            yield connector
        finally:
            connector.close()


def test_postgres_re_points_and_refuses_as_duckdb_does(postgres: SqlConnector) -> None:
    tables = Catalog(postgres, profile=False).refresh()
    verdict = screened(SELF_JOINED, tables)
    assert verdict.ok and verdict.fixes == (FIX,)
    assert screened(verdict.sql, tables).sql == verdict.sql
    fanned = screened(FANNED, tables)
    assert [r.code for r in fanned.reasons] == [FAN_OUT]
    assert "Join them on sales.order_id = orders.order_id instead" in fanned.reasons[0].message


def test_the_agent_on_postgres(postgres: SqlConnector) -> None:
    proposes_the_re_pointed_join(postgres, FIX)
    repairs_the_fan_out(postgres, "sales.order_id = orders.order_id")
