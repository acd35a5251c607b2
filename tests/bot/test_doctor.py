"""`querybot doctor` against real warehouses: the demo DuckDB file, a SQLite file, PostgreSQL and
MariaDB on this machine (the test logins of tests/connectors/sql_fixtures.py: the PostgreSQL one
holds every write grant on its database, so only the read-only transaction refuses the probe),
Looker's HSQLDB stand-in, a port nothing listens on, logins too powerful to be held read-only,
connectors that really write, and writable sessions whose probe fails for another reason."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bot.cli import main
from bot.config import Warehouse
from bot.doctor import (
    PROBE_TABLE,
    PROBE_WRITE,
    check_warehouse,
    hide_password,
    render,
    sample_query,
)
from connectors import open_connector
from connectors.base import ColumnInfo, CostEstimate, QueryResult, RunContext, TableInfo
from connectors.demo import ensure_demo
from connectors.looker_metadata import DIMENSION, MEASURE
from connectors.sql import flavor_for
from tests.connectors.sql_fixtures import (
    HOST,
    MYSQL_PORT,
    PG_PORT,
    Sample,
    closed_port,
    mysql_connect,
    mysql_sample,
    pg_connect,
    port_open,
    postgres_sample,
    require,
    sqlite_sample,
)
from tests.fixtures.looker import standin
from tests.sql_text import one_line


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def pg() -> Iterator[Sample]:
    with postgres_sample() as sample:
        yield sample


@pytest.fixture(scope="module")
def maria() -> Iterator[Sample]:
    with mysql_sample() as sample:
        yield sample


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Sample]:
    folder = tmp_path / "lite"
    folder.mkdir()
    with sqlite_sample(folder) as sample:
        yield sample


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A deployment's environment: scripted model, Slack secrets; the config file is written
    by each test."""
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"kind": "clarify", "message": "?"}) + "\n")
    monkeypatch.chdir(tmp_path)  # no .env from the project
    for name in ("QUERYBOT_WAREHOUSE", "SLACK_APP_TOKEN", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")
    config = tmp_path / "querybot.toml"
    monkeypatch.setenv("QUERYBOT_CONFIG", str(config))
    return config


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["doctor", *args])
    return code, capsys.readouterr().out


def section(out: str, title: str) -> str:
    """The lines of one section of the report."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), None)
    return "\n".join(lines[start:end])


def test_every_real_warehouse_passes_and_is_left_unchanged(
    env: Path,
    demo_file: Path,
    lite: Sample,
    pg: Sample,
    maria: Sample,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PG_URL", pg.url)
    env.write_text(
        'default = "shop"\n'
        f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n'
        f'[warehouses.lite]\nspec = "{lite.url}"\n'
        '[warehouses.pg]\nspec = "${PG_URL}"\n'
        f'[warehouses.maria]\nspec = "{maria.url}"\n'
        '[channels]\nC0PG000001 = "pg"\n'
    )
    before = [s.fingerprint() for s in (lite, pg, maria)]
    code, out = doctor(capsys)
    assert code == 0, out
    assert f"deployment: config file {env}" in out
    assert "· channel C0PG000001 -> pg" in out
    assert "· other channels and direct messages -> shop" in out
    for name, engine in [("shop", "duckdb"), ("lite", "sqlite"), ("pg", "postgresql")]:
        part = section(out, f"warehouse {name} ")
        assert f"✓ opens ({engine}" in part
        assert "✓ read-only: a test write (CREATE TABLE querybot_doctor_probe (x INT)) was " in part
        assert "✓ sample query passed the gate and ran: SELECT" in part and "-> 1 row" in part
    assert "✓ 7 tables visible" in section(out, "warehouse shop ")
    assert "read-only transaction" in section(out, "warehouse pg ")
    assert "(${PG_URL})" in out and pg.url not in out  # the expanded secret is never shown
    maria_part = section(out, "warehouse maria ")
    assert "✓ opens (mysql" in maria_part
    assert (
        "✓ read-only: a test write (CREATE TABLE querybot_doctor_probe (x INT)) was " in maria_part
    )
    assert "✓ 4 tables visible" in maria_part  # departments, employees, salaries and a view
    assert "✓ QUERYBOT_MODEL builds" in out and "the doctor calls no model" in out
    assert "✓ SLACK_BOT_TOKEN is set" in out and "the doctor does not call Slack" in out
    assert f"state (SQLite files in {env.parent / 'data'})" in out
    assert "✓ the data directory is writable" in out
    assert "Everything checked is fine." in out
    assert [s.fingerprint() for s in (lite, pg, maria)] == before


def test_failures_say_what_to_do_and_exit_non_zero(
    env: Path, demo_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = closed_port()
    env.write_text(
        f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n'
        f'[warehouses.dead]\nspec = "postgresql://querybot:hunter2@{HOST}:{dead}/x"\n'
        '[warehouses.gone]\nspec = "sqlite:///nowhere/at/all.db"\n'
        '[warehouses.odd]\nspec = "oracle://x"\n'
    )
    monkeypatch.delenv("SLACK_SIGNING_SECRET")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxp-user-token")
    code, out = doctor(capsys)
    assert code == 1
    assert "✓ opens (duckdb" in section(out, "warehouse shop ")
    dead_part = section(out, "warehouse dead ")
    assert f"(postgresql://querybot:***@{HOST}:{dead}/x)" in dead_part and "hunter2" not in out
    assert "✗ does not open:" in dead_part
    assert "· not checked: tables, read-only, sample query" in dead_part
    assert "✗ does not open:" in section(out, "warehouse gone ")
    assert "Unknown warehouse 'oracle://x'" in section(out, "warehouse odd ")
    assert "✗ SLACK_BOT_TOKEN does not start with xoxb-" in out
    assert "✗ neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (--http)" in out
    assert "5 problems found (marked ✗)" in out, out


def test_logins_too_powerful_are_refused_at_open(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No connector here lets its login write: PostgreSQL superusers and MariaDB's root (ALL
    PRIVILEGES) are refused when the connector opens, which the doctor reports as a failure."""
    require(port_open(PG_PORT), "PostgreSQL is not reachable")
    require(port_open(MYSQL_PORT), "MariaDB is not reachable")
    env.write_text(
        f'[warehouses.pgroot]\nspec = "postgresql://postgres@{HOST}:{PG_PORT}/postgres"\n'
        f'[warehouses.mariaroot]\nspec = "mysql://root@{HOST}:{MYSQL_PORT}/test"\n'
    )
    code, out = doctor(capsys)
    assert code == 1
    assert "✗ does not open:" in section(out, "warehouse pgroot ")
    assert "Refusing to query PostgreSQL as 'postgres'" in section(out, "warehouse pgroot ")
    mariaroot = section(out, "warehouse mariaroot ")
    assert "✗ does not open: Refusing to query MySQL as 'root" in mariaroot


def test_the_state_database(
    env: Path, demo_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    require(port_open(PG_PORT), "PostgreSQL is not reachable")
    env.write_text(f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n')
    monkeypatch.setenv("QUERYBOT_STATE_URL", f"postgresql://postgres@{HOST}:{PG_PORT}/postgres")
    code, out = doctor(capsys)
    assert code == 0, out
    assert "✓ PostgreSQL is reachable" in section(out, "state (QUERYBOT_STATE_URL=")
    dead = f"postgresql://querybot:hunter2@{HOST}:{closed_port()}/state"
    monkeypatch.setenv("QUERYBOT_STATE_URL", dead)
    code, out = doctor(capsys)
    assert code == 1
    state = section(out, "state (QUERYBOT_STATE_URL=")
    assert "querybot:***@" in state and "hunter2" not in out
    assert "✗ PostgreSQL cannot be reached:" in state and "Connection refused" in state


def test_only_one_warehouse(env: Path, demo_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env.write_text(
        f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n'
        '[warehouses.other]\nspec = "sqlite:///nowhere.db"\n'
    )
    code, out = doctor(capsys, "--warehouse", "shop")
    assert code == 0, out
    assert "warehouse other" not in out
    code, out = doctor(capsys, "--warehouse", "nope")
    assert code == 1 and "There is no warehouse named 'nope'" in out


def test_a_broken_config_file_is_one_failure_line(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env.write_text('[warehouses.a]\nspec = "postgresql://u:${NOT_SET_ANYWHERE}@h/db"\n')
    code, out = doctor(capsys)
    assert code == 1
    assert f"✗ {env}: warehouses.a.spec: ${{NOT_SET_ANYWHERE}} is used but" in out
    assert "Traceback" not in out


def test_without_a_config_file_the_single_warehouse_is_checked(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUERYBOT_CONFIG")
    monkeypatch.setenv("QUERYBOT_MODEL", "google_genai:gemini-2.5-flash")
    code, out = doctor(capsys)  # QUERYBOT_WAREHOUSE unset: the demo, built in the data dir
    assert code == 1  # no GOOGLE_API_KEY
    assert "deployment: QUERYBOT_WAREHOUSE, no config file" in out
    assert "✓ opens (duckdb" in section(out, "warehouse main (demo)")
    assert "✗ GOOGLE_API_KEY is not set" in out


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
    assert "-> 0 rows in " in out and ", 2,048 bytes estimated" in out
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


def test_looker_through_the_hsqldb_standin(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Looker connector over the JDBC stand-in: its Explores, the probe refused before it
    is sent (the connector runs queries only), a sample on the first field the Looker gate
    accepts; the stand-in unchanged."""
    url = standin.build("doctor_looker")
    for name, value in standin.env(url, LOOKER_SAMPLE_ROWS="0").items():
        monkeypatch.setenv(name, value)
    env.write_text('[warehouses.looker]\nspec = "looker://looker.example.com/shop"\n')
    code, out = doctor(capsys)
    assert code == 0, out
    part = section(out, "warehouse looker (looker://looker.example.com/shop)")
    assert "✓ opens (looker, looker SQL)" in part
    assert "✓ 2 tables visible (shop.orders, shop.users)" in part
    assert (
        f"✓ read-only: a test write ({PROBE_WRITE}) was refused (Looker runs queries only, and "
        "this statement starts with 'CREATE'" in part
    )
    assert (
        "✓ sample query passed the gate and ran: SELECT `orders.id` FROM `shop`.`orders` "
        "LIMIT 1 -> 1 row" in part
    )
    from connectors.jdbc import JdbcRunner  # the optional `looker` extra

    dba = JdbcRunner(
        name="HSQLDB",
        driver=standin.DRIVER,
        url=url,
        jars=[standin.require_jar()],
        properties={"user": "SA", "password": ""},
    )
    try:
        probes = dba.run(
            "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME LIKE 'QUERYBOT%'",
            max_rows=5,
            timeout_s=30,
        )
        assert probes.rows == []
    finally:
        dba.close()
