"""Every statement the gate accepts from the payload corpus, and every golden normalised
statement, runs on canary DuckDB, SQLite and MariaDB databases: no table changes, nothing leaks,
and the engine never has to refuse a write or a file access the gate let through."""

from __future__ import annotations

from typing import Protocol

from agent.gate import Verdict
from tests.gate import canary
from tests.gate.fixture_files import load_cases

GOLDEN = load_cases("normalise.sql")


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


def test_duckdb_canary(
    duckdb_canary: canary.DuckDBCanary, payload_verdicts: dict[str, list[tuple[str, Verdict]]]
) -> None:
    statements = accepted(payload_verdicts["duckdb"])
    assert len(statements) > 100
    assert_harmless(duckdb_canary, statements + golden("duckdb"))


def test_sqlite_canary(
    sqlite_canary: canary.SQLiteCanary, payload_verdicts: dict[str, list[tuple[str, Verdict]]]
) -> None:
    statements = accepted(payload_verdicts["sqlite"])
    assert len(statements) > 100
    assert_harmless(sqlite_canary, statements + golden("sqlite"))


def test_mariadb_canary(
    mariadb_canary: canary.MariaDBCanary, payload_verdicts: dict[str, list[tuple[str, Verdict]]]
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
