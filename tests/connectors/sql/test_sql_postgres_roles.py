"""SqlConnector on PostgreSQL running as a mapped identity (`RunContext.identity`): `SET LOCAL
ROLE` inside the run's read-only transaction, so the role's grants and row-level security
policies apply and the pooled connection is the login again afterwards; `unreadable` asks the
engine which tables a role may not read. Other engines refuse a run naming an identity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from connectors.base import PermissionDenied, RunContext, acts_as
from connectors.sql.connector import SqlConnector
from tests.support.pg_roles import RlsWarehouse, rls_warehouse

SALES = "SELECT region, amount FROM shop.sales ORDER BY amount"


@pytest.fixture(scope="module")
def warehouse() -> Iterator[RlsWarehouse]:
    with rls_warehouse() as found:
        yield found


@pytest.fixture(scope="module")
def connector(warehouse: RlsWarehouse) -> Iterator[SqlConnector]:
    # one connection, so every run below reuses the connection the one before it used
    connector = SqlConnector(warehouse.url, pool_size=1)
    yield connector
    connector.close()


def run(connector: SqlConnector, sql: str, identity: str = "") -> list[tuple[object, ...]]:
    context = RunContext(identity=identity)
    return connector.run(sql, max_rows=100, timeout_s=10, context=context).rows


def test_each_role_sees_only_its_rows_and_the_login_none(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    assert acts_as(connector)
    assert run(connector, SALES, warehouse.east) == warehouse.rows_of("east")
    assert run(connector, SALES, warehouse.west) == warehouse.rows_of("west")
    # the role name is an identifier, quoted, never spliced into the statement
    assert run(connector, SALES, warehouse.odd) == warehouse.rows_of("east")
    # the login's own SELECT is for its catalog: row-level security shows it nothing
    assert run(connector, SALES) == []
    assert "shop.sales" in {t.name for t in connector.list_tables()}


def test_the_role_ends_with_the_run(connector: SqlConnector, warehouse: RlsWarehouse) -> None:
    who = "SELECT current_user::text, session_user::text"
    assert run(connector, who, warehouse.east) == [(warehouse.east, warehouse.login)]
    assert run(connector, who) == [(warehouse.login, warehouse.login)]


def test_grants_apply_to_the_role(connector: SqlConnector, warehouse: RlsWarehouse) -> None:
    salaries = "SELECT name, salary FROM shop.salaries"
    assert run(connector, salaries, warehouse.west) == [("ann", 100)]
    with pytest.raises(PermissionDenied, match="permission denied for table salaries"):
        run(connector, salaries, warehouse.east)
    # a failed run discards its connection; the next one works
    assert run(connector, SALES, warehouse.east) == warehouse.rows_of("east")


def test_unreadable_asks_the_engine_for_the_role(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    tables = ["shop.sales", "shop.salaries"]
    assert connector.unreadable(warehouse.west, tables) == []
    assert connector.unreadable(warehouse.east, tables) == ["shop.salaries"]
    # a name the catalog does not know is never "readable"
    assert connector.unreadable(warehouse.west, ["shop.nothing"]) == ["shop.nothing"]


@pytest.mark.parametrize("role", ["stranger", "missing"])
def test_a_role_the_login_may_not_assume_is_refused_with_what_to_do(
    connector: SqlConnector, warehouse: RlsWarehouse, role: str
) -> None:
    name = warehouse.stranger if role == "stranger" else "qb_no_such_role"
    with pytest.raises(PermissionDenied) as caught:
        run(connector, SALES, name)
    assert f"may not run queries as the PostgreSQL role {name!r}" in caught.value.message
    assert "GRANT" in caught.value.hint and "run_as" in caught.value.hint
    with pytest.raises(PermissionDenied):
        connector.unreadable(name, ["shop.sales"])
    assert run(connector, SALES, warehouse.west) == warehouse.rows_of("west")


def test_engines_without_roles_refuse_a_run_naming_an_identity(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "t.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    connector = SqlConnector(f"sqlite:///{path}")
    try:
        assert not acts_as(connector)
        with pytest.raises(PermissionDenied, match="it has no roles to act as"):
            run(connector, "SELECT a FROM t", "analyst")
        with pytest.raises(PermissionDenied, match="it has no roles to act as"):
            connector.unreadable("analyst", ["main.t"])
        assert run(connector, "SELECT a FROM t") == []
    finally:
        connector.close()


def test_a_role_name_postgresql_would_cut_is_refused(
    connector: SqlConnector, warehouse: RlsWarehouse
) -> None:
    # PostgreSQL cuts identifiers to 63 bytes: the cut name could be another role's
    name = warehouse.east + "x" * (64 - len(warehouse.east))
    with pytest.raises(PermissionDenied, match="at most 63 bytes"):
        run(connector, SALES, name)
    assert run(connector, SALES, warehouse.east) == warehouse.rows_of("east")
