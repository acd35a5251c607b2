"""Shared fixtures for the gate tests: the corpora, the canary databases, payload verdicts."""

from __future__ import annotations

from collections.abc import Iterator

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


class PayloadVerdicts:
    """Every payload, alone and spliced, checked against the canary schema of a dialect: each
    dialect's built on first use, by the first worker of the run to ask (about 13 s each), so a
    test waits only for the dialect it reads, and workers can build different ones at once."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._factory = tmp_path_factory
        self._read: dict[str, list[tuple[str, Verdict]]] = {}

    def __getitem__(self, dialect: str) -> list[tuple[str, Verdict]]:
        if dialect not in self._read:
            name = f"payload-verdicts-{dialect}"
            self._read[dialect] = once(self._factory, name, lambda _folder: _verdicts(dialect))
        return self._read[dialect]


def _verdicts(dialect: str) -> list[tuple[str, Verdict]]:
    schema = canary.schema(dialect)
    return [
        (sql, check_sql(sql, schema))
        for payload in corpora.payloads()
        for sql in corpora.spliced(payload).values()
    ]


@pytest.fixture(scope="session")
def payload_verdicts(
    corpora_ready: None, tmp_path_factory: pytest.TempPathFactory
) -> PayloadVerdicts:
    return PayloadVerdicts(tmp_path_factory)


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
