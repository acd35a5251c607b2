"""A question runs as the asker's identity on MariaDB (roles), on DuckDB (a table allowlist
querybot enforces) and on BigQuery (an impersonated service account, through the scripted API),
over the real graph, gate and engines; the scripted model proposes. Each
asker's approved query reads what their identity may, a query over a table it may not read is
not proposed, and the audit log names the identity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from google.oauth2.credentials import Credentials
from langgraph.checkpoint.memory import InMemorySaver

from agent.context import AgentDeps
from agent.conversation import Agent
from agent.memory.audit import AuditLog
from agent.model.providers import ScriptedChatModel
from connectors.allowlist import TableAllowlist
from connectors.base import Connector
from connectors.bigquery.connector import BigQueryConnector
from connectors.bigquery.metadata import metadata_sql
from connectors.duckdb.connector import DuckDBConnector
from connectors.sql.connector import SqlConnector
from tests.agent.access_words import needs
from tests.agent.conftest import reply
from tests.connectors.bigquery.conftest import SALES_METADATA
from tests.support.bigquery_fake_api import Answer, FakeBigQuery, metadata_rows
from tests.support.mariadb_roles import SALARIES, SALES, RoleWarehouse, role_warehouse


def agent(connector: Connector, *sqls: str) -> Agent:
    model = ScriptedChatModel(replies=[reply(sql) for sql in sqls])
    deps = AgentDeps(connector=connector, model=model, audit=AuditLog(), run_as_required=True)
    return Agent(deps, InMemorySaver())


def answer(bot: Agent, thread: str, identity: str) -> list[tuple[object, ...]]:
    proposal = bot.ask(
        thread, "how much per sale, order or salary?", user="UASKER", identity=identity
    ).proposal
    assert proposal is not None and proposal.run_as == identity
    outcome = bot.decide(thread, proposal.proposal_id, approved=True, user="UBOSS")
    assert outcome.answer is not None, outcome.message
    events = {e["event"]: e for e in bot.deps.audit.events(thread)}
    assert events["executed"]["detail"]["ran_as"] == identity
    return [tuple(row) for row in outcome.answer.rows]


def not_proposed(bot: Agent, thread: str, identity: str) -> str:
    outcome = bot.ask(
        thread, "how much per sale, order or salary?", user="UASKER", identity=identity
    )
    assert outcome.kind == "failed" and outcome.proposal is None
    assert "proposed" not in [e["event"] for e in bot.deps.audit.events(thread)]
    return outcome.message


@pytest.fixture(scope="module")
def maria() -> Iterator[RoleWarehouse]:
    with role_warehouse() as found:
        yield found


@pytest.fixture
def maria_connector(maria: RoleWarehouse) -> Iterator[SqlConnector]:
    connector = SqlConnector(maria.url)
    yield connector
    connector.close()


def test_mariadb_roles_decide_what_each_asker_reads(
    maria: RoleWarehouse, maria_connector: SqlConnector
) -> None:
    sales = "SELECT region, amount FROM sales ORDER BY amount"
    salaries = "SELECT name, salary FROM salaries"
    bot = agent(maria_connector, sales, salaries, salaries)
    assert answer(bot, "m1", maria.east) == SALES
    message = not_proposed(bot, "m2", maria.east)
    # named as the model wrote it, as a table the warehouse lacks would be
    assert message.startswith(needs("salaries"))
    assert answer(bot, "m3", maria.west) == SALARIES


@pytest.fixture
def allowlisted(tmp_path: Path) -> Iterator[TableAllowlist]:
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE orders (region VARCHAR, amount INTEGER);"
        "INSERT INTO orders VALUES ('north', 10), ('south', 20);"
        "CREATE TABLE salaries (name VARCHAR, salary INTEGER);"
        "INSERT INTO salaries VALUES ('ann', 100);"
    )
    con.close()
    connector = DuckDBConnector(path)
    yield TableAllowlist(connector, {"seller": ["orders"], "payroll": ["orders", "salaries"]})
    connector.close()


def test_duckdb_allowlists_decide_what_each_asker_reads(allowlisted: TableAllowlist) -> None:
    orders = "SELECT region, amount FROM orders ORDER BY amount"
    salaries = "SELECT name, salary FROM salaries"
    hidden = "WITH o AS (SELECT * FROM orders) SELECT o.region, s.salary FROM o, salaries s"
    bot = agent(allowlisted, orders, salaries, hidden, salaries)
    assert answer(bot, "d1", "seller") == [("north", 10), ("south", 20)]
    for thread in ("d2", "d3"):
        message = not_proposed(bot, thread, "seller")
        assert message.startswith(needs("salaries"))
        assert "main.salaries" not in message
    assert answer(bot, "d4", "payroll") == [("ann", 100)]


def test_an_unlisted_table_is_refused_as_one_that_does_not_exist(
    allowlisted: TableAllowlist,
) -> None:
    """seller's list lacks salaries: the refusal names it only as written, in the words a table
    the file does not have gets, and lists seller's tables alone."""
    bot = agent(allowlisted, "SELECT name FROM salaries", "SELECT name FROM wages")
    hidden, missing = not_proposed(bot, "d6", "seller"), not_proposed(bot, "d7", "seller")
    assert hidden.startswith(needs("salaries")) and "main.salaries" not in hidden
    assert hidden == missing.replace("wages", "salaries")
    assert "Your access may read these tables: orders." in hidden


def test_an_approved_proposal_over_an_unlisted_table_is_refused_by_the_connector(
    allowlisted: TableAllowlist,
) -> None:
    """Were the check before the proposal skipped, the run itself refuses, naming the table."""
    bot = agent(allowlisted, "SELECT name, salary FROM salaries")
    proposal = bot.ask("d5", "salaries?", user="UASKER", identity="payroll").proposal
    assert proposal is not None
    allowlisted.allowlists["payroll"] = ("orders",)
    outcome = bot.decide("d5", proposal.proposal_id, approved=True, user="UBOSS")
    assert outcome.answer is None
    assert "shop.main.salaries" in outcome.message and "'payroll' may not read" in outcome.message


def test_bigquery_runs_the_askers_job_as_their_service_account() -> None:
    """Through the scripted BigQuery API (the emulator has no IAM): the job of an approved
    proposal carries the impersonated token of the asker's account, and a question over a table
    IAM says the account may not read is not proposed."""
    analyst = "analyst@proj.iam.gserviceaccount.com"
    fake = FakeBigQuery(project="proj", location="EU")
    fake.answer(metadata_sql("proj", "sales"), metadata_rows(SALES_METADATA))
    fake.impersonable.add(analyst)
    fake.can_read[analyst] = {"sales.orders"}
    orders = "SELECT id FROM sales.orders"
    # the fake answers the statement as the gate sends it on (qualified, with its row cap)
    sent = "SELECT\n  id\nFROM proj.sales.orders\nLIMIT 1000"
    fake.answer(sent, Answer(schema=[("id", "INT64")], rows=[(7,)], bytes_processed=10))
    fake.answer("SELECT\n  name\nFROM proj.sales.events\nLIMIT 1000", Answer(bytes_processed=10))
    connector = BigQueryConnector(
        "proj", datasets=["sales"], client=fake.client(Credentials(token="login-token"))
    )
    try:
        bot = agent(connector, orders, "SELECT name FROM sales.events")
        assert answer(bot, "b1", analyst) == [(7,)]
        [job] = [
            c
            for c in fake.calls
            if (c.body or {}).get("jobReference")
            and c.body
            and not c.body["configuration"].get("dryRun")
            and c.body["configuration"]["query"]["query"] == sent
        ]
        assert fake.tokens[job.authorization.removeprefix("Bearer ")] == analyst
        message = not_proposed(bot, "b2", analyst)
        assert message.startswith(needs("sales.events"))
    finally:
        connector.close()
