"""The PostgreSQL warehouse with row-level security (tests/support/pg_roles.py) that the
run_as agent tests share, as fixtures: a module that imports them gets a warehouse of its own
(module scope) and a fresh connector per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.sql.connector import SqlConnector
from tests.support.pg_roles import RlsWarehouse, rls_warehouse


@pytest.fixture(scope="module")
def warehouse() -> Iterator[RlsWarehouse]:
    with rls_warehouse() as found:
        yield found


@pytest.fixture
def connector(warehouse: RlsWarehouse) -> Iterator[SqlConnector]:
    connector = SqlConnector(warehouse.url)
    yield connector
    connector.close()
