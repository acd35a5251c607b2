"""Shared fixtures for the gate tests: the corpora, the canary databases, payload verdicts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.gate import Verdict, check_sql
from tests.support import canary, corpora
from tests.support.needs import unavailable
from tests.support.once import once


@pytest.fixture(scope="session")
def corpora_ready() -> None:
    reason = corpora.missing()
    if reason:
        unavailable(reason)


@pytest.fixture(scope="session")
def payload_verdicts(
    corpora_ready: None, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[tuple[str, Verdict]]]:
    """Every payload, alone and spliced, checked in every dialect against the canary schema."""
    return once(tmp_path_factory, "payload-verdicts", _payload_verdicts)


def _payload_verdicts(_folder: Path) -> dict[str, list[tuple[str, Verdict]]]:
    verdicts: dict[str, list[tuple[str, Verdict]]] = {}
    for dialect in corpora.DIALECTS:
        schema = canary.schema(dialect)
        verdicts[dialect] = [
            (sql, check_sql(sql, schema))
            for payload in corpora.payloads()
            for sql in corpora.spliced(payload).values()
        ]
    return verdicts


@pytest.fixture(scope="session")
def duckdb_canary(tmp_path_factory: pytest.TempPathFactory) -> canary.DuckDBCanary:
    return canary.DuckDBCanary(tmp_path_factory.mktemp("duckdb-canary"))


@pytest.fixture(scope="session")
def sqlite_canary(tmp_path_factory: pytest.TempPathFactory) -> canary.SQLiteCanary:
    return canary.SQLiteCanary(tmp_path_factory.mktemp("sqlite-canary"))


@pytest.fixture(scope="session")
def mariadb_canary() -> Iterator[canary.MariaDBCanary]:
    import pymysql

    try:
        mariadb = canary.MariaDBCanary()
    except pymysql.MySQLError as error:
        unavailable(
            f"MariaDB at 127.0.0.1:3306 is unreachable ({error}); start it with "
            "`start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd`"
        )
    yield mariadb
    mariadb.drop()
