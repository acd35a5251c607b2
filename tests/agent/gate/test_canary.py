"""Every statement the gate accepts from the payload corpus, and every golden normalised
statement, runs on canary DuckDB, SQLite, MariaDB and PostgreSQL databases (through
`DuckDBConnector.run` and `SqlConnector.run`): no table changes, nothing leaks, and the engine
never has to refuse a write or a file access the gate let through.

Then the other way round: every statement of the harmful catalogue, which the gate rejects, is
sent to the connector's `run` anyway (as written, and aimed at a directory holding a secret file
the database could read and write): the canary and the files are unchanged and no result or
error message holds the secret or /etc/passwd. The engine's read-only settings alone hold.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import duckdb
import pytest

from agent.gate import Verdict
from connectors import open_connector
from connectors.base import PermissionDenied
from connectors.sql.connector import SqlConnector
from tests.agent.gate.conftest import PayloadVerdicts
from tests.support import canary
from tests.support.fixture_files import load_cases, load_harmful
from tests.support.needs import unavailable

GOLDEN = load_cases("normalise.sql")
HARMFUL = load_harmful()


class Canary(Protocol):
    def snapshot(self) -> dict[str, object]: ...

    def run(self, statements: list[str], *, hardened: bool) -> canary.Run: ...


def accepted(verdicts: list[tuple[str, Verdict]]) -> list[str]:
    return list(dict.fromkeys(v.sql for _, v in verdicts if v.ok))


def golden(dialect: str) -> list[str]:
    return [c.expected for c in GOLDEN if c.dialect == dialect and c.expected]


def assert_harmless(db: Canary, statements: list[str]) -> None:
    before = db.snapshot()
    for hardened in (True, False):
        run = db.run(statements, hardened=hardened)
        assert run.executed == len(statements)
        assert not run.blocked, f"the engine had to refuse (hardened={hardened}): {run.blocked}"
        assert not run.leaked, f"results leaked a secret (hardened={hardened}): {run.leaked}"
        assert db.snapshot() == before, f"the canary changed (hardened={hardened})"


def assert_runs(db: Canary, statements: list[str]) -> None:
    """The golden normalised SQL is valid for the engine, not only harmless."""
    assert statements
    run = db.run(statements, hardened=True)
    assert (run.executed, run.failed) == (len(statements), 0), "normalised SQL failed to run"


@pytest.mark.slow
def test_duckdb_canary(
    duckdb_canary: canary.DuckDBCanary, payload_verdicts: PayloadVerdicts
) -> None:
    statements = accepted(payload_verdicts["duckdb"])
    assert len(statements) > 100
    assert_harmless(duckdb_canary, statements + golden("duckdb"))


@pytest.mark.slow
def test_sqlite_canary(
    sqlite_canary: canary.SQLiteCanary, payload_verdicts: PayloadVerdicts
) -> None:
    statements = accepted(payload_verdicts["sqlite"])
    assert len(statements) > 100
    assert_harmless(sqlite_canary, statements + golden("sqlite"))


@pytest.mark.slow
def test_mariadb_canary(
    mariadb_canary: canary.MariaDBCanary, payload_verdicts: PayloadVerdicts
) -> None:
    statements = accepted(payload_verdicts["mysql"])
    assert len(statements) > 100
    assert_harmless(mariadb_canary, statements + golden("mysql"))


def test_golden_sql_runs_on_duckdb(duckdb_canary: canary.DuckDBCanary) -> None:
    assert_runs(duckdb_canary, golden("duckdb"))


def test_golden_sql_runs_on_sqlite(sqlite_canary: canary.SQLiteCanary) -> None:
    assert_runs(sqlite_canary, golden("sqlite"))


def test_golden_sql_runs_on_mariadb(mariadb_canary: canary.MariaDBCanary) -> None:
    assert_runs(mariadb_canary, golden("mysql"))


@pytest.fixture(scope="session")
def postgres_canary() -> Iterator[canary.PostgresCanary]:
    import psycopg

    try:
        postgres = canary.PostgresCanary()
    except psycopg.OperationalError as error:
        unavailable(
            f"PostgreSQL at 127.0.0.1:5432 is unreachable ({error}); start it with "
            "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`"
        )
    yield postgres
    postgres.drop()


@pytest.fixture
def server_directory() -> Iterator[Path]:
    directory = canary.server_directory()
    yield directory
    shutil.rmtree(directory)


@pytest.mark.slow
def test_postgres_canary(
    postgres_canary: canary.PostgresCanary, payload_verdicts: PayloadVerdicts
) -> None:
    statements = accepted(payload_verdicts["postgres"])
    assert len(statements) > 100
    assert_harmless(postgres_canary, statements + golden("postgres"))


def test_golden_sql_runs_on_postgres(postgres_canary: canary.PostgresCanary) -> None:
    assert_runs(postgres_canary, golden("postgres"))


def harmful(dialect: str, directory: Path) -> list[str]:
    return canary.aimed(
        [h.sql for h in HARMFUL if h.dialect == dialect] + canary.ESCAPES.get(dialect, []),
        directory,
    )


def assert_contained(db: Canary, url: str, statements: list[str], directory: Path) -> canary.Run:
    """Run `statements` through the connector at `url`: nothing changes, nothing leaks."""
    connector = SqlConnector(url, pool_size=1)
    try:
        run = canary.contain(connector, statements, db.snapshot, [directory])
    finally:
        connector.close()
    # shown with -s: what the engine refused, and what it ran as a harmless read
    print(f"\n{url.split(':')[0]}: {run.executed} statements, {dict(run.errors)}; ran: {run.ran}")
    assert run.executed == len(statements)
    assert not run.leaked, f"a secret reached a result or an error message: {run.leaked}"
    assert not run.changed, f"changed: {run.changed}"
    return run


@pytest.mark.slow
@pytest.mark.parametrize("writer", [False, True], ids=["select-only", "all-privileges"])
def test_harmful_catalogue_is_contained_by_postgres(
    postgres_canary: canary.PostgresCanary, server_directory: Path, writer: bool
) -> None:
    statements = harmful("postgres", server_directory)
    assert_contained(
        postgres_canary, postgres_canary.url(writer=writer), statements, server_directory
    )


@pytest.mark.slow
def test_harmful_catalogue_is_contained_by_mariadb(
    mariadb_canary: canary.MariaDBCanary, server_directory: Path
) -> None:
    statements = harmful("mysql", server_directory)
    assert_contained(mariadb_canary, mariadb_canary.url(), statements, server_directory)


def test_mariadb_user_that_may_write_is_refused(mariadb_canary: canary.MariaDBCanary) -> None:
    """With every privilege on the canary, `SET STATEMENT tx_read_only=0 FOR DROP TABLE ...`
    would escape the read-only transaction: the connector will not open as that user."""
    with pytest.raises(PermissionDenied, match="ALL PRIVILEGES ON querybot_gate_canary"):
        SqlConnector(mariadb_canary.url(writer=True))


def test_harmful_catalogue_is_contained_by_sqlite(
    sqlite_canary: canary.SQLiteCanary, server_directory: Path
) -> None:
    statements = harmful("sqlite", server_directory)
    assert_contained(sqlite_canary, sqlite_canary.url, statements, server_directory)
    assert_contained(sqlite_canary, sqlite_canary.url, statements, sqlite_canary.directory)


def test_the_secret_is_within_the_servers_reach(
    postgres_canary: canary.PostgresCanary,
    mariadb_canary: canary.MariaDBCanary,
    server_directory: Path,
) -> None:
    """Without the connector's guards the servers could read the secret: the containment tests
    above are not passing because the files were out of reach anyway."""
    secret = server_directory / "secret.txt"
    with postgres_canary._connect("postgres") as admin:
        read = admin.execute(f"SELECT pg_read_file('{secret}')").fetchone()
    assert canary.secret_text() in read[0]
    with mariadb_canary._root() as cur:
        cur.execute(f"SELECT LOAD_FILE('{secret}')")
        loaded = cur.fetchone()[0]
    assert canary.secret_text() in loaded.decode()


@pytest.mark.slow
def test_harmful_catalogue_is_contained_by_duckdb(duckdb_canary: canary.DuckDBCanary) -> None:
    """The whole catalogue (every dialect's: DuckDB reads much PostgreSQL and SQLite syntax) and
    DuckDB's own escapes, each as written and aimed at the directory holding the database and the
    secret, sent to the `DuckDBConnector` that `duckdb:PATH` opens. The snapshot goes through the
    same database instance, so a setting, an attached database or a macro left behind shows."""
    directory = duckdb_canary.directory
    statements = canary.aimed([h.sql for h in HARMFUL] + canary.ESCAPES["duckdb"], directory)
    connector = open_connector(duckdb_canary.spec, data_dir=directory)
    try:
        # ~/.duckdb: where INSTALL and CREATE PERSISTENT SECRET would write
        watched = [directory, Path.home() / ".duckdb"]
        run = canary.contain(connector, statements, duckdb_canary.snapshot, watched)
    finally:
        connector.close()
    print(f"\nduckdb: {run.executed} statements, {dict(run.errors)}; ran: {run.ran}")
    assert run.executed == len(statements) > len(HARMFUL)
    assert not run.leaked, f"a secret reached a result or an error message: {run.leaked}"
    assert not run.changed, f"changed: {run.changed}"
    assert not run.stopped, "every statement reached DuckDB: the engine held, not a check"
    assert run.errors["PermissionDenied"] > 0


def test_the_secret_is_within_duckdbs_reach(duckdb_canary: canary.DuckDBCanary) -> None:
    """The catalogue's reads of the secret, on a DuckDB connection without the connector's
    hardening, return it: the containment above is the connector's doing."""
    secret = f"{duckdb_canary.directory}/secret"
    statements = [h.sql for h in HARMFUL] + canary.ESCAPES["duckdb"]
    reads = [sql for sql in canary.aimed(statements, duckdb_canary.directory) if secret in sql]
    con = duckdb.connect()  # in memory: files reachable, no database to harm
    run = canary.Run()
    try:
        for sql in reads:
            try:
                run.record(sql, con.execute(sql).fetchall(), None)
            except duckdb.Error as exc:
                run.record(sql, None, exc)
    finally:
        con.close()
    assert len({sql for sql, secret in run.leaked if secret == canary.secret_text()}) >= 3
