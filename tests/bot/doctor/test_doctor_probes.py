"""`querybot doctor`'s read-only probe and sample query on connectors unlike the shipped ones:
one that really writes (the doctor must shout and drop the probe), one whose dry run refuses the
sample (as BigQuery's bytes cap does), and sessions that may write whose probe fails for another
reason (only a refusal proves read-only). Also how passwords are hidden in the report."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bot.config import Warehouse
from bot.doctor.deployment import (
    PROBE_TABLE,
    PROBE_WRITE,
    check_warehouse,
    hide_password,
    render,
    sample_query,
)
from connectors import open_connector
from connectors.base import ColumnInfo, CostEstimate, QueryResult, RunContext, TableInfo
from connectors.looker.metadata import DIMENSION, MEASURE
from connectors.sql.connector import flavor_for
from tests.support.sql_fixtures import (
    Sample,
    mysql_connect,
    mysql_sample,
    pg_connect,
    postgres_sample,
)
from tests.support.sql_text import one_line


@pytest.fixture(scope="module")
def pg() -> Iterator[Sample]:
    with postgres_sample() as sample:
        yield sample


@pytest.fixture(scope="module")
def maria() -> Iterator[Sample]:
    with mysql_sample() as sample:
        yield sample


# -- a connector that does write ------------------------------------------------------------------


@dataclass
class WritableDuckDB:
    """A connector that does not hold its connection read-only (none of the shipped ones is
    like this): what the doctor must shout about."""

    path: Path
    name: str = "duckdb"
    dialect: str = "duckdb"

    def __post_init__(self) -> None:
        self.con = duckdb.connect(str(self.path))

    def list_tables(self) -> list[TableInfo]:
        rows = self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        return [TableInfo(name=row[0], columns=()) for row in rows]

    def describe(self, table: str) -> TableInfo:
        raise NotImplementedError

    def estimate(self, sql: str) -> None:
        return None

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        cursor = self.con.execute(sql)
        rows: list[tuple[Any, ...]] = cursor.fetchall() if cursor.description else []
        columns = [d[0] for d in cursor.description or []]
        return QueryResult(columns, rows[:max_rows], len(rows), 0.0)

    def cancel(self, job_key: str) -> bool:
        return False

    def close(self) -> None:
        self.con.close()


def test_a_connector_that_writes_is_a_loud_failure_and_the_probe_is_dropped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "writable.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (x INT)")
        con.execute("INSERT INTO t VALUES (1)")
    warehouse = Warehouse("loose", f"duckdb:{path}", f"duckdb:{path}")
    result = check_warehouse(warehouse, lambda w: WritableDuckDB(path))
    out = render([result])
    assert (
        "✗ NOT READ-ONLY: the test write 'CREATE TABLE querybot_doctor_probe (x INT)' SUCCEEDED"
        in out
    )
    assert "give querybot a login with read access only" in out
    assert f"· the probe table {PROBE_TABLE} was dropped again" in out
    assert "✓ sample query passed the gate and ran: SELECT * FROM t LIMIT 1 -> 1 row" in out
    assert "1 problem found" in out
    with duckdb.connect(str(path), read_only=True) as con:
        tables = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    assert tables == [("t",)]


class CostlyDuckDB(WritableDuckDB):
    """A connector whose dry run says the sample query is over its bytes cap (as BigQuery's
    `maximum_bytes_billed` check does), or what it would scan."""

    refusal = ""

    def estimate(self, sql: str) -> CostEstimate:  # type: ignore[override]
        return CostEstimate(bytes_processed=2048, refusal=self.refusal)


def test_the_sample_query_heeds_the_cost_estimate(tmp_path: Path) -> None:
    path = tmp_path / "costly.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (x INT)")
    warehouse = Warehouse("costly", "x", "x")
    connector = CostlyDuckDB(path)
    out = render([check_warehouse(warehouse, lambda w: connector)])
    assert "-> 0 rows in " in out and ", 2 KiB estimated" in out
    connector = CostlyDuckDB(path)
    connector.refusal = "It would scan 2 KiB, over QUERYBOT_BQ_MAX_BYTES_BILLED."
    out = render([check_warehouse(warehouse, lambda w: connector)])
    assert "✗ sample query 'SELECT * FROM t LIMIT 1' not run: It would scan 2 KiB" in out


def test_the_sample_query_skips_columns_the_gate_refuses() -> None:
    """On Looker the first field may be a measure, readable only inside AGGREGATE(): the
    sample reads the first column the (real) Looker gate accepts."""
    import agent.gate.looker  # noqa: F401 - registers the "looker" dialect

    explore = TableInfo(
        "thelook.orders",
        (
            ColumnInfo("orders.count", "BIGINT", MEASURE),
            ColumnInfo("orders.status", "VARCHAR", DIMENSION),
        ),
    )
    verdict = sample_query([explore], "looker")
    assert not isinstance(verdict, str)
    assert one_line(verdict.sql) == "SELECT `orders.status` FROM `thelook`.`orders` LIMIT 1"
    only_measures = TableInfo("thelook.orders", explore.columns[:1])
    refusal = sample_query([only_measures], "looker")
    assert isinstance(refusal, str) and "only inside AGGREGATE()" in refusal


def test_passwords_are_hidden_but_variables_stay() -> None:
    assert hide_password("postgresql://u:secret@h:5/db") == "postgresql://u:***@h:5/db"
    assert hide_password("mysql://u:${PW}@h/db") == "mysql://u:${PW}@h/db"
    assert hide_password("postgresql://u@h/db") == "postgresql://u@h/db"
    assert hide_password("bigquery:proj/ds") == "bigquery:proj/ds"


# -- only a refusal proves read-only -------------------------------------------------------------


@dataclass
class WritableSession:
    """A connector over a real server on a session that may write (no shipped connector runs
    like this), whose engine errors are mapped as the shipped connector for `url` maps them."""

    url: str
    connect: Callable[[], Any]
    con: Any = field(init=False)

    def __post_init__(self) -> None:
        self.flavor = flavor_for(self.url)
        self.name = self.flavor.name
        self.dialect = self.flavor.dialect
        self.con = self.connect()

    def list_tables(self) -> list[TableInfo]:
        return [TableInfo("probe_only", ())]

    def describe(self, table: str) -> TableInfo:
        raise NotImplementedError

    def estimate(self, sql: str) -> None:
        return None

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        cursor = self.con.cursor()
        try:
            cursor.execute(sql)
            rows: list[tuple[Any, ...]] = list(cursor.fetchall()) if cursor.description else []
        except self.flavor.errors as exc:
            raise self.flavor.translate(exc, timeout_s) from exc
        columns = [d[0] for d in cursor.description or []]
        return QueryResult(columns, rows[:max_rows], len(rows), 0.0)

    def cancel(self, job_key: str) -> bool:
        return False

    def close(self) -> None:
        self.con.close()


def read_only_line(section: str) -> str:
    return next(line for line in section.splitlines() if "read-only" in line)


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_a_failed_probe_is_not_taken_for_read_only(
    engine: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The probe table already exists: on a session that may write (the PostgreSQL test login
    with its write grants, MariaDB's root), CREATE TABLE fails with "already exists", which
    says nothing about read-only. The shipped connector, on the same database, is refused before
    the engine looks for the table."""
    sample: Sample = request.getfixturevalue("pg" if engine == "postgresql" else "maria")
    name = sample.extra["name"]
    if engine == "postgresql":
        session = WritableSession(sample.url, lambda: pg_connect(name, user=name))
    else:
        session = WritableSession(sample.url, lambda: mysql_connect(database=name))
    warehouse = Warehouse(engine, sample.url, sample.url)
    sample.admin([PROBE_WRITE])
    try:
        line = read_only_line(render([check_warehouse(warehouse, lambda w: session)]))
        assert line.startswith(
            f"  · could not check read-only: the test write ({PROBE_WRITE}) failed without "
            "being refused:"
        ), line
        assert "already exists" in line
        assert line.endswith("Check by hand that querybot's login cannot write.")

        shipped = check_warehouse(warehouse, lambda w: open_connector(w.spec, data_dir=tmp_path))
        assert read_only_line(render([shipped])).startswith(
            f"  ✓ read-only: a test write ({PROBE_WRITE}) was refused"
        )
    finally:
        sample.admin([f"DROP TABLE {PROBE_TABLE}"])
