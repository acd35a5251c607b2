"""Snowflake fixtures: fakesnow's server (once per session, only when a test asks for it), a
database seeded on it for each test, and the connector on that database, its driver calls
recorded (recording.py). When fakesnow cannot start, its tests fail under CI (CI=true) and are
skipped elsewhere, with the reason."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import snowflake.connector
from snowflake.connector import errors as sf

from connectors.limits import RunLimits
from connectors.snowflake.connector import SnowflakeConnector
from connectors.snowflake.session import Credentials
from tests.support.side_venv import cache_dir, serving
from tests.support.snowflake_recording import Recorder
from tests.support.snowflake_server import FakesnowServer, ensure_venv

#: The seeded database: two listed schemas and one the bot must never read.
SEED = [
    "CREATE SCHEMA {db}.SALES",
    "CREATE SCHEMA {db}.ARCHIVE",
    "CREATE SCHEMA {db}.PRIVATE",
    "CREATE TABLE {db}.SALES.ORDERS (ID INT, REGION VARCHAR, AMOUNT NUMBER(10, 2), "
    "PLACED_ON DATE, NOTE VARCHAR)",
    "CREATE TABLE {db}.SALES.CUSTOMERS (ID INT, NAME VARCHAR)",
    "CREATE VIEW {db}.SALES.BIG_ORDERS AS SELECT ID, AMOUNT FROM {db}.SALES.ORDERS "
    "WHERE AMOUNT > 100",
    "CREATE TABLE {db}.ARCHIVE.ORDERS (ID INT, REGION VARCHAR)",
    "CREATE TABLE {db}.PRIVATE.SALARIES (NAME VARCHAR, SALARY INT)",
    "INSERT INTO {db}.SALES.ORDERS SELECT g, CASE WHEN g % 3 = 0 THEN 'EU' WHEN g % 3 = 1 "
    "THEN 'US' ELSE 'APAC' END, g * 10, DATEADD(day, g, '2026-01-01'::date), REPEAT('x', g) "
    "FROM (SELECT SEQ4() + 1 AS g FROM TABLE(GENERATOR(ROWCOUNT => 30)))",
    "INSERT INTO {db}.SALES.CUSTOMERS VALUES (1, 'Ada'), (2, 'Grace')",
    "INSERT INTO {db}.ARCHIVE.ORDERS VALUES (1, 'EU')",
    "INSERT INTO {db}.PRIVATE.SALARIES VALUES ('Ada', 100)",
    "COMMENT ON TABLE {db}.SALES.ORDERS IS 'One row per order'",
]
#: fakesnow applies COMMENT ON COLUMN, then fails describing it: run, and ignore that error.
COLUMN_COMMENTS = [
    "COMMENT ON COLUMN {db}.SALES.ORDERS.REGION IS 'Sales region'",
    "COMMENT ON COLUMN {db}.SALES.ORDERS.AMOUNT IS 'In euros'",
]


@pytest.fixture(scope="session")
def fakesnow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakesnowServer]:
    log = tmp_path_factory.mktemp("fakesnow") / "log"

    def start() -> FakesnowServer:
        return FakesnowServer(ensure_venv(cache_dir() / "fakesnow-venv"), log)

    with serving(start, "fakesnow") as running:
        yield running


@dataclass
class Seeded:
    server: FakesnowServer
    database: str

    def execute(self, sql: str) -> list[tuple[object, ...]]:
        """Run `sql` as the admin would (not through the connector)."""
        with snowflake.connector.connect(**self.server.connect_kwargs()) as conn:
            cursor = conn.cursor()
            cursor.execute(sql.format(db=self.database))
            return [tuple(row) for row in cursor.fetchall()]


def seed(server: FakesnowServer) -> Seeded:
    """A fresh database (fakesnow's sessions share one in-memory instance) with SEED in it."""
    database = f"QB_{uuid.uuid4().hex[:10].upper()}"
    with snowflake.connector.connect(**server.connect_kwargs()) as conn:
        cursor = conn.cursor()
        cursor.execute(f"CREATE DATABASE {database}")
        for statement in SEED:
            cursor.execute(statement.format(db=database))
        for statement in COLUMN_COMMENTS:
            with contextlib.suppress(sf.ProgrammingError):
                cursor.execute(statement.format(db=database))
    return Seeded(server, database)


@pytest.fixture
def seeded(fakesnow_server: FakesnowServer) -> Seeded:
    """A database of the test's own, seeded."""
    return seed(fakesnow_server)


@pytest.fixture(scope="module")
def module_seeded(fakesnow_server: FakesnowServer) -> Seeded:
    """One seeded database for a whole module, for modules whose tests never write to it."""
    return seed(fakesnow_server)


@pytest.fixture
def recorder(fakesnow_server: FakesnowServer) -> Recorder:
    return Recorder(server=fakesnow_server.connect_kwargs())


def make_connector(
    seeded: Seeded, recorder: Recorder, *, limits: RunLimits | None = None, **options: object
) -> SnowflakeConnector:
    """A connector on the seeded database (schemas SALES, the default, and ARCHIVE) whose
    driver calls go through `recorder`."""
    return SnowflakeConnector(
        "myorg-acct",
        database=seeded.database,
        schemas=["SALES", "ARCHIVE"],
        warehouse="QUERYBOT_WH",
        role="QUERYBOT_READER",
        credentials=Credentials("QUERYBOT", password="pw"),
        limits=limits,
        connect=recorder.connect,
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def connector(seeded: Seeded, recorder: Recorder) -> Iterator[SnowflakeConnector]:
    made = make_connector(seeded, recorder)
    yield made
    made.close()
